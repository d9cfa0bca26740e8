#include "meshes/gmsh/gmsh_generators.hpp"

#include <gmsh.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "meshes/gmsh/gmsh_model.hpp"
#include "meshes/gmsh/gmsh_state.hpp"

namespace pbdlab::gmsh_generators {

namespace {

constexpr double kPi = 3.14159265358979323846;
using Options = gmsh_model::ScopedOptions;

// Options every generator here sets: one thread (Gmsh's Delaunay mesher with several threads
// is not deterministic), sizes only from `target_size`, fixed algorithms. General.NumThreads
// also sets the process's OpenMP thread count: the generators restore it
// (gmsh_state::restoreThreadCount) after these options are restored.
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

const char* transfiniteArrangement(RectangleRecipe::Diagonals diagonals) {
  return diagonals == RectangleRecipe::Diagonals::kLeft    ? "Left"
         : diagonals == RectangleRecipe::Diagonals::kRight ? "Right"
                                                           : "AlternateLeft";
}

Vec3 pointCoordinates(int point_tag) {
  std::vector<double> xyz;
  gmsh::model::getValue(0, point_tag, {}, xyz);
  return Vec3(xyz.at(0), xyz.at(1), xyz.at(2));
}

// Builds the transfinite box in the current Gmsh model and meshes it: hexahedra when
// `recombine`, Gmsh's transfinite tetrahedra otherwise.
void generateTransfiniteBox(const BoxMeshRecipe& recipe, bool recombine) {
  const int volume = gmsh::model::occ::addBox(recipe.origin.x(), recipe.origin.y(), recipe.origin.z(),
                                              recipe.size.x(), recipe.size.y(), recipe.size.z());
  gmsh::model::occ::synchronize();

  // Every curve of the box is parallel to one axis: find it from its end points.
  gmsh::vectorpair curves;
  gmsh::model::getEntities(curves, 1);
  for (const auto& curve : curves) {
    gmsh::vectorpair ends;
    gmsh::model::getBoundary({curve}, ends, false, false, false);
    if (ends.size() != 2) throw std::runtime_error("a box edge without two end points");
    const Vec3 extent = (pointCoordinates(ends[1].second) - pointCoordinates(ends[0].second)).cwiseAbs();
    int axis = 0;
    extent.maxCoeff(&axis);
    gmsh::model::mesh::setTransfiniteCurve(curve.second, recipe.cells[axis] + 1);
  }
  gmsh::vectorpair surfaces;
  gmsh::model::getEntities(surfaces, 2);
  for (const auto& surface : surfaces) {
    gmsh::model::mesh::setTransfiniteSurface(surface.second);
    // Per-surface recombination only: Mesh.Recombine3DAll stays off (TOOLCHAIN.md).
    if (recombine) gmsh::model::mesh::setRecombine(2, surface.second);
  }
  gmsh::model::mesh::setTransfiniteVolume(volume);
  gmsh::model::mesh::generate(3);
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

// One generator's Gmsh work: a session, a model `name` removed after, options restored after,
// `build(options)` meshing it (Gmsh's failures named by `step`), the elements of `type` read
// back, and the OpenMP thread count restored (General.NumThreads sets it).
template <class Build>
Mesh generate(const std::string& name, ElementType type, const std::string& source, const std::string& step,
              Build&& build) {
  Mesh mesh;
  gmsh_state::Session session;
  {
    gmsh_model::ScopedModel model(name);
    gmsh_model::ScopedOptions options;
    gmsh_model::call(source, step, [&] { build(options); });
    gmsh_model::call(source, "reading the mesh", [&] { mesh = gmsh_model::readElements(type, source); });
  }
  gmsh_state::restoreThreadCount();
  return mesh;
}

}  // namespace

Mesh unstructuredBox(const Vec3& origin, const Vec3& size, double target_size, const std::string& source) {
  return generate("pbdlab_unstructured_box", ElementType::kTet4, source, "meshing the box", [&](Options& options) {
    setSizeOptions(options, target_size);
    gmsh::model::occ::addBox(origin.x(), origin.y(), origin.z(), size.x(), size.y(), size.z());
    gmsh::model::occ::synchronize();
    gmsh::model::mesh::generate(3);
  });
}

Mesh transfiniteBox(const BoxMeshRecipe& recipe, ElementType type, const std::string& what) {
  const bool hexes = type == ElementType::kHex8;
  if (!hexes && type != ElementType::kTet4) throw std::logic_error("transfiniteBox: hexahedra or tetrahedra only");
  Mesh mesh;
  gmsh_state::Session session;
  gmsh_model::ScopedModel model("pbdlab_box");
  gmsh_model::call(what, "meshing the box", [&] { generateTransfiniteBox(recipe, hexes); });
  gmsh_state::restoreThreadCount();
  gmsh_model::call(what, "reading the mesh", [&] {
    mesh = gmsh_model::readElements(type, what);
    const std::size_t expected =
        (hexes ? 1u : 6u) * static_cast<std::size_t>(recipe.cells[0]) * recipe.cells[1] * recipe.cells[2];
    if (static_cast<std::size_t>(mesh.numElements()) != expected) {
      throw std::runtime_error("Gmsh produced " + std::to_string(mesh.numElements()) +
                               (hexes ? " hexahedra" : " tetrahedra") + ", expected " + std::to_string(expected));
    }
  });
  return mesh;
}

Mesh rectangle(const RectangleRecipe& recipe, const std::string& source) {
  const bool unstructured = recipe.target_size > 0.0;
  return generate("pbdlab_rectangle", ElementType::kTri3, source, "meshing the rectangle", [&](Options& options) {
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
      gmsh::model::mesh::setTransfiniteSurface(surface, transfiniteArrangement(recipe.diagonals));
    }
    gmsh::model::mesh::generate(2);
  });
}

Mesh quadrilateral(const QuadrilateralRecipe& recipe, const std::string& source) {
  const std::string step = "meshing the quadrilateral";
  return generate("pbdlab_quadrilateral", ElementType::kTri3, source, step, [&](Options& options) {
    options.set("General.NumThreads", 1);
    options.set("Mesh.MeshSizeMax", 1e22);
    options.set("Mesh.MeshSizeMin", 0.0);
    options.set("Mesh.MeshSizeFromPoints", 0);
    options.set("Mesh.MeshSizeFromCurvature", 0);
    int points[4], lines[4];
    for (int k = 0; k < 4; ++k) {
      const std::array<double, 2>& p = recipe.corners[static_cast<std::size_t>(k)];
      points[k] = gmsh::model::geo::addPoint(p[0], p[1], 0.0);
    }
    for (int k = 0; k < 4; ++k) lines[k] = gmsh::model::geo::addLine(points[k], points[(k + 1) % 4]);
    const int loop = gmsh::model::geo::addCurveLoop({lines[0], lines[1], lines[2], lines[3]});
    const int surface = gmsh::model::geo::addPlaneSurface({loop});
    for (int k = 0; k < 4; ++k)
      gmsh::model::geo::mesh::setTransfiniteCurve(lines[k], recipe.cells[static_cast<std::size_t>(k % 2)] + 1);
    gmsh::model::geo::mesh::setTransfiniteSurface(surface, transfiniteArrangement(recipe.diagonals),
                                                  {points[0], points[1], points[2], points[3]});
    gmsh::model::geo::synchronize();
    gmsh::model::mesh::generate(2);
  });
}

Mesh polygon(const PolygonRecipe& recipe, const std::string& source) {
  return generate("pbdlab_polygon", ElementType::kTri3, source, "meshing the polygon", [&](Options& options) {
    setSizeOptions(options, recipe.target_size);
    std::vector<int> loops;
    const auto addLoop = [&](const std::vector<PolygonRecipe::Point>& vertices) {
      std::vector<int> points, lines;
      for (const PolygonRecipe::Point& p : vertices) points.push_back(gmsh::model::geo::addPoint(p[0], p[1], 0.0));
      for (std::size_t k = 0; k < points.size(); ++k)
        lines.push_back(gmsh::model::geo::addLine(points[k], points[(k + 1) % points.size()]));
      loops.push_back(gmsh::model::geo::addCurveLoop(lines));
    };
    addLoop(recipe.outline);  // the first loop bounds the surface, the others are its holes
    for (const auto& hole : recipe.holes) addLoop(hole);
    gmsh::model::geo::addPlaneSurface(loops);
    gmsh::model::geo::synchronize();
    gmsh::model::mesh::generate(2);
  });
}

Mesh stlVolume(const std::string& gmsh_input, const std::string& path, double target_size, double feature_angle_deg,
               const std::string& source) {
  const std::string step = "reading and meshing '" + path + "'";
  return generate("pbdlab_stl", ElementType::kTet4, source, step, [&](Options& options) {
    setSizeOptions(options, target_size);
    gmsh::merge(gmsh_input);
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
}

Mesh sphere(double radius, double target_size, const std::string& source) {
  return generate("pbdlab_sphere", ElementType::kTet4, source, "meshing the sphere", [&](Options& options) {
    setSizeOptions(options, target_size);
    gmsh::model::occ::addSphere(0.0, 0.0, 0.0, radius);
    gmsh::model::occ::synchronize();
    gmsh::model::mesh::generate(3);
  });
}

Mesh torus(double major_radius, double minor_radius, double target_size, const std::string& source) {
  return generate("pbdlab_torus", ElementType::kTet4, source, "meshing the torus", [&](Options& options) {
    setSizeOptions(options, target_size);
    // Gmsh 4.8's addTorus has no axis argument: its axis is z.
    gmsh::model::occ::addTorus(0.0, 0.0, 0.0, major_radius, minor_radius);
    gmsh::model::occ::synchronize();
    gmsh::model::mesh::generate(3);
  });
}

}  // namespace pbdlab::gmsh_generators
