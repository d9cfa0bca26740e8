#include "meshes/gmsh_meshes.hpp"

#include <gmsh.h>

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "meshes/gmsh_model.hpp"
#include "meshes/gmsh_session.hpp"
#include "meshes/node_sets.hpp"

namespace pbdlab {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kMaxEstimatedElements = 5e7;

void orientTetsPositively(Mesh& mesh) {
  for (int e = 0; e < mesh.numElements(); ++e) {
    const double v = signedTetVolume(mesh.restPosition(mesh.elements(e, 0)), mesh.restPosition(mesh.elements(e, 1)),
                                     mesh.restPosition(mesh.elements(e, 2)), mesh.restPosition(mesh.elements(e, 3)));
    if (v < 0.0) std::swap(mesh.elements(e, 2), mesh.elements(e, 3));
  }
}

// Options every generator here sets: one thread (Gmsh's Delaunay mesher with several threads
// is not deterministic), sizes only from `target_size`, fixed algorithms. General.NumThreads
// also sets the process's OpenMP thread count: the callers restore it (GmshSession::
// restoreThreadCount) after these options are restored.
void setSizeOptions(gmsh_model::ScopedOptions& options, double target_size) {
  options.set("General.NumThreads", 1);
  options.set("Mesh.MeshSizeMax", target_size);
  options.set("Mesh.MeshSizeMin", 0.0);
  options.set("Mesh.MeshSizeFromPoints", 0);
  options.set("Mesh.MeshSizeFromCurvature", 0);
  options.set("Mesh.MeshSizeExtendFromBoundary", 1);
  options.set("Mesh.Algorithm", 6);    // Frontal-Delaunay 2D
  options.set("Mesh.Algorithm3D", 1);  // Delaunay 3D
  options.set("Mesh.Optimize", 1);
}

}  // namespace

Mesh makeUnstructuredBox(const Vec3& origin, const Vec3& size, double target_size, const std::string& source) {
  if (!std::isfinite(target_size) || !(target_size > 0.0)) {
    throw std::invalid_argument(source + ": target_size must be positive and finite");
  }
  // A regular tet of edge h has volume h^3 / (6 sqrt 2); Delaunay meshes come out near that.
  const double estimate = size.prod() / (std::pow(target_size, 3) / (6.0 * std::sqrt(2.0)));
  if (estimate > kMaxEstimatedElements) {
    std::ostringstream message;
    message << source << ": target_size " << target_size << " would make about " << estimate
            << " tetrahedra (more than " << kMaxEstimatedElements << ")";
    throw std::invalid_argument(message.str());
  }
  Mesh mesh;
  {
    GmshSession session;
    {
      gmsh_model::ScopedModel model("pbdlab_unstructured_box");
      gmsh_model::ScopedOptions options;
      gmsh_model::call(source, "meshing the box", [&] {
        setSizeOptions(options, target_size);
        gmsh::model::occ::addBox(origin.x(), origin.y(), origin.z(), size.x(), size.y(), size.z());
        gmsh::model::occ::synchronize();
        gmsh::model::mesh::generate(3);
      });
      gmsh_model::call(source, "reading the mesh", [&] { mesh = gmsh_model::readElements(ElementType::kTet4, source); });
    }
    session.restoreThreadCount();
  }
  mesh.source = source;
  orientTetsPositively(mesh);
  return mesh;
}

std::string diagonalsName(RectangleRecipe::Diagonals diagonals) {
  switch (diagonals) {
    case RectangleRecipe::Diagonals::kLeft: return "left";
    case RectangleRecipe::Diagonals::kRight: return "right";
    case RectangleRecipe::Diagonals::kAlternate: return "alternate";
  }
  throw std::invalid_argument("unknown diagonals");
}

RectangleRecipe::Diagonals parseDiagonals(const std::string& name) {
  if (name == "left") return RectangleRecipe::Diagonals::kLeft;
  if (name == "right") return RectangleRecipe::Diagonals::kRight;
  if (name == "alternate") return RectangleRecipe::Diagonals::kAlternate;
  throw std::invalid_argument("unknown diagonals '" + name + "' (known: left, right, alternate)");
}

std::string RectangleRecipe::describe() const {
  std::ostringstream out;
  out.precision(6);
  out << "rectangle " << size[0] << "x" << size[1] << " m";
  if (embedding == Embedding::k3dSurface) out << " (surface in the " << plane << " plane)";
  if (!origin.isZero(0.0)) out << " at (" << origin.x() << ", " << origin.y() << ", " << origin.z() << ")";
  if (target_size > 0.0) {
    out << ", unstructured triangles, target size " << target_size;
  } else {
    out << ", " << cells[0] << "x" << cells[1] << " cells, " << diagonalsName(diagonals) << " diagonals";
  }
  return out.str();
}

Mesh makeRectangleMesh(const RectangleRecipe& recipe) {
  const std::string source = recipe.describe();
  int axis[2] = {0, 1};
  if (recipe.embedding == RectangleRecipe::Embedding::k3dSurface) {
    if (recipe.plane == "xy") axis[0] = 0, axis[1] = 1;
    else if (recipe.plane == "xz") axis[0] = 0, axis[1] = 2;
    else if (recipe.plane == "yz") axis[0] = 1, axis[1] = 2;
    else throw std::invalid_argument(source + ": plane must be \"xy\", \"xz\" or \"yz\", got '" + recipe.plane + "'");
  } else if (recipe.origin.z() != 0.0) {
    throw std::invalid_argument(source + ": a 2D rectangle lies in z = 0");
  }
  for (int d = 0; d < 2; ++d) {
    if (!std::isfinite(recipe.size[static_cast<std::size_t>(d)]) || !(recipe.size[static_cast<std::size_t>(d)] > 0.0))
      throw std::invalid_argument(source + ": size must be positive and finite");
  }
  if (!recipe.origin.allFinite()) throw std::invalid_argument(source + ": origin must be finite");
  const bool unstructured = recipe.target_size > 0.0;
  if (unstructured) {
    if (!std::isfinite(recipe.target_size)) throw std::invalid_argument(source + ": target_size must be finite");
    const double estimate = recipe.size[0] * recipe.size[1] / (std::sqrt(3.0) / 4.0 * recipe.target_size * recipe.target_size);
    if (estimate > kMaxEstimatedElements) throw std::invalid_argument(source + ": target_size is too small");
  } else {
    if (recipe.cells[0] < 1 || recipe.cells[1] < 1) throw std::invalid_argument(source + ": cells per axis must be >= 1");
    if (2.0 * recipe.cells[0] * recipe.cells[1] > kMaxEstimatedElements)
      throw std::invalid_argument(source + ": too many cells");
  }

  Mesh mesh;
  {
    GmshSession session;
    {
      gmsh_model::ScopedModel model("pbdlab_rectangle");
      gmsh_model::ScopedOptions options;
      gmsh_model::call(source, "meshing the rectangle", [&] {
        setSizeOptions(options, unstructured ? recipe.target_size : 1e22);
        const int surface = gmsh::model::occ::addRectangle(0.0, 0.0, 0.0, recipe.size[0], recipe.size[1]);
        gmsh::model::occ::synchronize();
        if (!unstructured) {
          gmsh::vectorpair curves;
          gmsh::model::getEntities(curves, 1);
          for (const auto& curve : curves) {
            double xmin, ymin, zmin, xmax, ymax, zmax;
            gmsh::model::getBoundingBox(1, curve.second, xmin, ymin, zmin, xmax, ymax, zmax);
            const int along = (xmax - xmin) > (ymax - ymin) ? 0 : 1;
            gmsh::model::mesh::setTransfiniteCurve(curve.second, recipe.cells[static_cast<std::size_t>(along)] + 1);
          }
          const char* arrangement = recipe.diagonals == RectangleRecipe::Diagonals::kLeft    ? "Left"
                                    : recipe.diagonals == RectangleRecipe::Diagonals::kRight ? "Right"
                                                                                             : "AlternateLeft";
          gmsh::model::mesh::setTransfiniteSurface(surface, arrangement);
        }
        gmsh::model::mesh::generate(2);
      });
      gmsh_model::call(source, "reading the mesh", [&] { mesh = gmsh_model::readElements(ElementType::kTri3, source); });
    }
    session.restoreThreadCount();
  }
  // Counter-clockwise in (u, v), then placed in the plane.
  for (int e = 0; e < mesh.numElements(); ++e) {
    const Vec3 a = mesh.restPosition(mesh.elements(e, 0)), b = mesh.restPosition(mesh.elements(e, 1)),
               c = mesh.restPosition(mesh.elements(e, 2));
    if ((b - a).cross(c - a).z() < 0.0) std::swap(mesh.elements(e, 1), mesh.elements(e, 2));
  }
  MatX3 placed = MatX3::Zero(mesh.numNodes(), 3);
  for (int n = 0; n < mesh.numNodes(); ++n) {
    placed.row(n) = recipe.origin.transpose();
    placed(n, axis[0]) += mesh.rest_positions(n, 0);
    placed(n, axis[1]) += mesh.rest_positions(n, 1);
  }
  mesh.rest_positions = std::move(placed);
  mesh.source = source;
  addFaceNodeSets(mesh);
  return mesh;
}

namespace {

// Every vertex coordinate of an STL file (binary: 80-byte header, triangle count, 50 bytes a
// triangle; else ASCII "vertex x y z" lines) must be finite before Gmsh reads it: a NaN
// aborts Gmsh's reader (an assertion in its vertex search tree) and an infinite one makes it
// drop triangles silently. Only the coordinates are scanned; Gmsh does the reading.
void checkStlCoordinatesFinite(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto fail = [&](std::size_t triangle, int vertex, double value) {
    throw std::runtime_error("triangle " + std::to_string(triangle + 1) + ", vertex " + std::to_string(vertex + 1) +
                             " has a non-finite coordinate (" + std::to_string(value) + ")");
  };
  std::uint32_t count = 0;
  if (bytes.size() >= 84) std::memcpy(&count, bytes.data() + 80, 4);
  if (bytes.size() >= 84 && bytes.size() == 84 + 50 * static_cast<std::size_t>(count)) {  // binary
    for (std::size_t t = 0; t < count; ++t)
      for (int v = 0; v < 3; ++v)
        for (int c = 0; c < 3; ++c) {
          float value;
          std::memcpy(&value, bytes.data() + 84 + 50 * t + 12 * (v + 1) + 4 * c, 4);
          if (!std::isfinite(value)) fail(t, v, value);
        }
    return;
  }
  std::istringstream text(bytes);
  std::string word;
  std::size_t vertex = 0;
  while (text >> word) {
    if (word != "vertex") continue;
    for (int c = 0; c < 3; ++c) {
      std::string number;
      if (!(text >> number)) return;  // truncated: the closedness check below says so
      const double value = std::strtod(number.c_str(), nullptr);
      if (!std::isfinite(value)) fail(vertex / 3, static_cast<int>(vertex % 3), value);
    }
    ++vertex;
  }
}

// The surface Gmsh read from an STL file must be finite and closed before it is classified and
// filled: a NaN vertex made Gmsh loop forever, and an open or truncated surface ended in its
// "No elements in volume 1", which does not say what is wrong with the file.
void checkClosedFiniteSurface() {
  std::vector<std::size_t> node_tags;
  std::vector<double> coords, parametric;
  gmsh::model::mesh::getNodes(node_tags, coords, parametric, 2, -1, true, false);
  for (std::size_t k = 0; k < node_tags.size(); ++k)
    for (int c = 0; c < 3; ++c)
      if (!std::isfinite(coords[3 * k + c]))
        throw std::runtime_error("vertex " + std::to_string(k + 1) + " has a non-finite coordinate (" +
                                 std::to_string(coords[3 * k + c]) + ")");
  std::vector<std::size_t> triangle_tags, triangle_nodes;
  gmsh::model::mesh::getElementsByType(2, triangle_tags, triangle_nodes, -1);
  if (triangle_tags.empty()) throw std::runtime_error("the file holds no triangles");
  // A closed surface: every edge is shared by exactly two triangles.
  std::map<std::pair<std::size_t, std::size_t>, int> edge_triangles;
  for (std::size_t t = 0; t < triangle_tags.size(); ++t)
    for (int e = 0; e < 3; ++e) {
      const std::size_t a = triangle_nodes[3 * t + e], b = triangle_nodes[3 * t + (e + 1) % 3];
      ++edge_triangles[{std::min(a, b), std::max(a, b)}];
    }
  int open = 0, shared_by_more = 0;
  for (const auto& [edge, count] : edge_triangles) {
    open += count == 1;
    shared_by_more += count > 2;
  }
  if (open > 0 || shared_by_more > 0)
    throw std::runtime_error("the surface is not closed: of its " + std::to_string(edge_triangles.size()) + " edges, " +
                             std::to_string(open) + " belong to one triangle only and " +
                             std::to_string(shared_by_more) +
                             " to more than two (a hole, a truncated file, or a non-manifold surface); a volume "
                             "mesh needs a closed surface");
}

}  // namespace

Mesh tetrahedralizeStl(const std::string& path, double target_size, double feature_angle_deg,
                       const std::string& source) {
  if (!std::isfinite(target_size) || !(target_size > 0.0)) {
    throw std::invalid_argument(source + ": target_size must be positive and finite");
  }
  if (!(feature_angle_deg > 0.0 && feature_angle_deg <= 180.0)) {
    throw std::invalid_argument(source + ": feature_angle must lie in (0, 180] degrees");
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw std::runtime_error(source + ": cannot open the STL file '" + path + "'");
  }
  try {
    checkStlCoordinatesFinite(path);
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(source + ": the STL file '" + path + "': " + error.what());
  }
  Mesh mesh;
  {
    GmshSession session;
    {
      gmsh_model::ScopedModel model("pbdlab_stl");
      gmsh_model::ScopedOptions options;
      gmsh_model::call(source, "reading and meshing '" + path + "'", [&] {
        setSizeOptions(options, target_size);
        gmsh::merge(path);
        gmsh::vectorpair triangles;
        gmsh::model::getEntities(triangles, 2);
        if (triangles.empty()) throw std::runtime_error("the file holds no triangles");
        checkClosedFiniteSurface();
        // Split the surface into patches that can each be parametrized, give them a geometry,
        // remesh them at target_size and fill the volume.
        gmsh::model::mesh::classifySurfaces(feature_angle_deg * kPi / 180.0, true, true, kPi);
        gmsh::model::mesh::createGeometry();
        gmsh::vectorpair patches;
        gmsh::model::getEntities(patches, 2);
        std::vector<int> surface_tags;
        for (const auto& patch : patches) surface_tags.push_back(patch.second);
        const int loop = gmsh::model::geo::addSurfaceLoop(surface_tags);
        gmsh::model::geo::addVolume({loop});
        gmsh::model::geo::synchronize();
        gmsh::model::mesh::generate(3);
      });
      gmsh_model::call(source, "reading the mesh", [&] { mesh = gmsh_model::readElements(ElementType::kTet4, source); });
    }
    session.restoreThreadCount();
  }
  mesh.source = source;
  orientTetsPositively(mesh);
  addFaceNodeSets(mesh);
  return mesh;
}

}  // namespace pbdlab
