#include "meshes/bunny.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include <Eigen/Geometry>

#include "core/support/atomic_file.hpp"

namespace pbdlab {

namespace {

// A smooth bump of height `amplitude` around the unit direction `centre`:
// amplitude * exp(-(1 - d.c) / width), about exp(-angle^2 / (2 width)).
double bump(const Vec3& d, const Vec3& centre, double amplitude, double width) {
  return amplitude * std::exp(-(1.0 - d.dot(centre.normalized())) / width);
}

// Radius of the bunny in the unit direction d (x forward, y left, z up).
double radius(const Vec3& d) {
  const double body = 1.0 / std::sqrt(std::pow(d.x() / 0.55, 2) + std::pow(d.y() / 0.4, 2) + std::pow(d.z() / 0.42, 2));
  return body + bump(d, Vec3(1.0, 0.0, 0.75), 0.32, 0.05)  // head
         + bump(d, Vec3(0.55, 0.25, 1.0), 0.62, 0.008)       // left ear
         + bump(d, Vec3(0.55, -0.25, 1.0), 0.62, 0.008)      // right ear
         + bump(d, Vec3(-1.0, 0.0, 0.3), 0.12, 0.012)        // tail
         + bump(d, Vec3(0.6, 0.45, -1.0), 0.07, 0.03)        // front feet
         + bump(d, Vec3(0.6, -0.45, -1.0), 0.07, 0.03);
}

}  // namespace

Mesh makeBunnySurface(int subdivisions) {
  if (subdivisions < 0 || subdivisions > 6) {
    throw std::invalid_argument("makeBunnySurface: subdivisions must be in 0 .. 6, got " + std::to_string(subdivisions));
  }
  // Icosahedron.
  const double t = (1.0 + std::sqrt(5.0)) / 2.0;
  std::vector<Vec3> v = {Vec3(-1, t, 0), Vec3(1, t, 0), Vec3(-1, -t, 0), Vec3(1, -t, 0),
                         Vec3(0, -1, t), Vec3(0, 1, t), Vec3(0, -1, -t), Vec3(0, 1, -t),
                         Vec3(t, 0, -1), Vec3(t, 0, 1), Vec3(-t, 0, -1), Vec3(-t, 0, 1)};
  for (Vec3& p : v) p.normalize();
  std::vector<std::array<int, 3>> f = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                                       {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                       {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                                       {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
  for (int level = 0; level < subdivisions; ++level) {
    std::map<std::pair<int, int>, int> midpoint;
    auto mid = [&](int a, int b) {
      const std::pair<int, int> key(std::min(a, b), std::max(a, b));
      const auto it = midpoint.find(key);
      if (it != midpoint.end()) return it->second;
      v.push_back((v[static_cast<std::size_t>(a)] + v[static_cast<std::size_t>(b)]).normalized());
      const int index = static_cast<int>(v.size()) - 1;
      midpoint.emplace(key, index);
      return index;
    };
    std::vector<std::array<int, 3>> refined;
    refined.reserve(4 * f.size());
    for (const auto& tri : f) {
      const int ab = mid(tri[0], tri[1]), bc = mid(tri[1], tri[2]), ca = mid(tri[2], tri[0]);
      refined.push_back({tri[0], ab, ca});
      refined.push_back({tri[1], bc, ab});
      refined.push_back({tri[2], ca, bc});
      refined.push_back({ab, bc, ca});
    }
    f = std::move(refined);
  }

  Mesh mesh;
  mesh.source = "bunny surface (subdivisions " + std::to_string(subdivisions) + ")";
  mesh.element_type = ElementType::kTri3;
  mesh.rest_positions.resize(static_cast<Eigen::Index>(v.size()), 3);
  for (std::size_t i = 0; i < v.size(); ++i) mesh.rest_positions.row(static_cast<Eigen::Index>(i)) = (radius(v[i]) * v[i]).transpose();
  // Minimum corner at the origin, largest extent 1.
  const Eigen::RowVector3d lo = mesh.rest_positions.colwise().minCoeff();
  const double extent = (mesh.rest_positions.colwise().maxCoeff() - lo).maxCoeff();
  mesh.rest_positions = (mesh.rest_positions.rowwise() - lo) / extent;
  mesh.elements.resize(static_cast<Eigen::Index>(f.size()), 3);
  for (std::size_t e = 0; e < f.size(); ++e)
    for (int k = 0; k < 3; ++k) mesh.elements(static_cast<Eigen::Index>(e), k) = f[e][static_cast<std::size_t>(k)];
  return mesh;
}

std::string stlText(const Mesh& surface, const std::string& name) {
  if (surface.element_type != ElementType::kTri3) {
    throw std::invalid_argument("stlText (" + surface.source + "): STL holds triangles, got " +
                                elementTypeName(surface.element_type));
  }
  std::string out = "solid " + name + "\n";
  char line[160];
  for (int e = 0; e < surface.numElements(); ++e) {
    const Vec3 a = surface.restPosition(surface.elements(e, 0));
    const Vec3 b = surface.restPosition(surface.elements(e, 1));
    const Vec3 c = surface.restPosition(surface.elements(e, 2));
    Vec3 n = (b - a).cross(c - a);
    if (n.norm() > 0.0) n.normalize();
    std::snprintf(line, sizeof line, "facet normal %.9g %.9g %.9g\n outer loop\n", n.x(), n.y(), n.z());
    out += line;
    for (const Vec3& p : {a, b, c}) {
      std::snprintf(line, sizeof line, "  vertex %.9g %.9g %.9g\n", p.x(), p.y(), p.z());
      out += line;
    }
    out += " endloop\nendfacet\n";
  }
  out += "endsolid " + name + "\n";
  return out;
}

void writeStl(const std::string& path, const Mesh& surface, const std::string& name) {
  writeFileAtomically(path, stlText(surface, name));
}

}  // namespace pbdlab
