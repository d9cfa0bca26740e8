#pragma once
// Geometric and topological checks the mesh tests share: faces by their corner nodes,
// boundary area, unique edges, temporary folders, one mesh of every element type.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Geometry>

#include "core/fem/mesh.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"

namespace pbdlab::test {

namespace fs = std::filesystem;

// A fresh folder under the system temp dir, removed at scope exit.
class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("pbdlab_test_" + name + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name), std::ios::binary) << text;
    return file(name);
  }

 private:
  fs::path path_;
};

inline std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Faces of each element type by local corner nodes (Gmsh order), as cycles.
inline std::vector<std::vector<int>> cornerFaces(ElementType type) {
  switch (type) {
    case ElementType::kTet4:
    case ElementType::kTet10:
    case ElementType::kTet20: return {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};
    case ElementType::kHex8: return {{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};
    case ElementType::kPrism6: return {{0, 1, 2}, {3, 4, 5}, {0, 1, 4, 3}, {1, 2, 5, 4}, {2, 0, 3, 5}};
    case ElementType::kPyramid5: return {{0, 1, 2, 3}, {0, 1, 4}, {1, 2, 4}, {2, 3, 4}, {3, 0, 4}};
    case ElementType::kTri3: return {{0, 1, 2}};
  }
  return {};
}

// Area of a planar polygon (triangle or quad) given as a cycle of points.
inline double polygonArea(const std::vector<Vec3>& p) {
  Vec3 twice = Vec3::Zero();
  for (std::size_t i = 0; i < p.size(); ++i) twice += p[i].cross(p[(i + 1) % p.size()]);
  return 0.5 * twice.norm();
}

struct FaceReport {
  int max_share = 0;            // the most elements sharing one face
  int boundary_faces = 0;
  int interior_faces = 0;
  double boundary_area = 0.0;
  bool boundary_on_box = true;  // every boundary face lies in one face of the box
  std::vector<std::vector<int>> boundary;  // boundary faces (mesh nodes), as in the element
};

// Counts how many elements share each face (by sorted corner nodes).
inline FaceReport faceReport(const Mesh& mesh, const Vec3& box_min = Vec3::Zero(), const Vec3& box_max = Vec3::Zero(),
                             bool check_box = false) {
  std::map<std::vector<int>, std::pair<int, std::vector<int>>> faces;
  const auto local = cornerFaces(mesh.element_type);
  for (int e = 0; e < mesh.numElements(); ++e) {
    for (const auto& f : local) {
      std::vector<int> nodes;
      for (int k : f) nodes.push_back(mesh.elements(e, k));
      std::vector<int> key = nodes;
      std::sort(key.begin(), key.end());
      auto& entry = faces[key];
      ++entry.first;
      entry.second = nodes;
    }
  }
  FaceReport out;
  const double tol = 1e-9 * std::max(1.0, (box_max - box_min).norm());
  for (const auto& [key, entry] : faces) {
    out.max_share = std::max(out.max_share, entry.first);
    if (entry.first != 1) {
      ++out.interior_faces;
      continue;
    }
    ++out.boundary_faces;
    out.boundary.push_back(entry.second);
    std::vector<Vec3> p;
    for (int n : entry.second) p.push_back(mesh.restPosition(n));
    out.boundary_area += polygonArea(p);
    if (check_box) {
      bool on_one_face = false;
      for (int d = 0; d < 3; ++d) {
        for (double plane : {box_min[d], box_max[d]}) {
          bool all = true;
          for (const Vec3& q : p) all = all && std::abs(q[d] - plane) < tol;
          on_one_face = on_one_face || all;
        }
      }
      out.boundary_on_box = out.boundary_on_box && on_one_face;
    }
  }
  return out;
}

// Unique undirected edges between corner nodes of a simplex mesh (tets or triangles).
inline std::set<std::pair<int, int>> simplexEdges(const Mesh& mesh) {
  const int corners = cornerNodesPerElement(mesh.element_type);
  std::set<std::pair<int, int>> edges;
  for (int e = 0; e < mesh.numElements(); ++e)
    for (int a = 0; a < corners; ++a)
      for (int b = a + 1; b < corners; ++b)
        edges.insert(std::minmax(mesh.elements(e, a), mesh.elements(e, b)));
  return edges;
}

inline double totalVolume(const Mesh& mesh) {
  double total = 0.0;
  for (double v : restVolumes(mesh)) total += v;
  return total;
}

inline double boxSurfaceArea(const Vec3& s) { return 2.0 * (s.x() * s.y() + s.y() * s.z() + s.z() * s.x()); }

// Volume enclosed by a closed, outward-oriented triangle surface (divergence theorem).
inline double enclosedVolume(const Mesh& surface) {
  double v = 0.0;
  for (int e = 0; e < surface.numElements(); ++e) {
    v += surface.restPosition(surface.elements(e, 0))
             .dot(surface.restPosition(surface.elements(e, 1)).cross(surface.restPosition(surface.elements(e, 2)))) /
         6.0;
  }
  return v;
}

// True if every directed edge of the triangles appears exactly once and its reverse exactly
// once: a closed, consistently oriented surface.
inline bool closedAndOriented(const std::vector<std::array<int, 3>>& triangles) {
  std::map<std::pair<int, int>, int> directed;
  for (const auto& t : triangles)
    for (int k = 0; k < 3; ++k) ++directed[{t[k], t[(k + 1) % 3]}];
  for (const auto& [edge, count] : directed) {
    if (count != 1) return false;
    const auto reverse = directed.find({edge.second, edge.first});
    if (reverse == directed.end() || reverse->second != 1) return false;
  }
  return true;
}

// True if every edge of the polygons is shared by exactly two of them (a closed surface).
inline bool closedSurface(const std::vector<std::vector<int>>& faces) {
  std::map<std::pair<int, int>, int> edges;
  for (const auto& f : faces)
    for (std::size_t k = 0; k < f.size(); ++k) ++edges[std::minmax(f[k], f[(k + 1) % f.size()])];
  for (const auto& [edge, count] : edges)
    if (count != 2) return false;
  return !edges.empty();
}

inline void expectSameMesh(const Mesh& a, const Mesh& b) {
  EXPECT_EQ(a.element_type, b.element_type);
  EXPECT_EQ(a.rest_positions, b.rest_positions);
  EXPECT_EQ(a.elements, b.elements);
  EXPECT_EQ(a.node_sets, b.node_sets);
  EXPECT_EQ(a.source, b.source);
}

// One mesh of every element type: tet4/tet10/tet20 (five-tet), hex8, prism6 and pyramid5 on
// the given box, and tri3 on the given rectangle.
inline std::vector<Mesh> oneMeshOfEveryType(BoxMeshRecipe box, const RectangleRecipe& rectangle) {
  std::vector<Mesh> meshes;
  for (BoxFamily family : {BoxFamily::kFiveTet, BoxFamily::kHex, BoxFamily::kPrism, BoxFamily::kPyramid}) {
    box.family = family;
    const std::vector<int> orders = family == BoxFamily::kFiveTet ? std::vector<int>{1, 2, 3} : std::vector<int>{1};
    for (int order : orders) {
      box.order = order;
      meshes.push_back(makeBoxMesh(box));
    }
  }
  meshes.push_back(makeRectangleMesh(rectangle));
  return meshes;
}

}  // namespace pbdlab::test
