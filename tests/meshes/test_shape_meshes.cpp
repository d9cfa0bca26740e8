// The curved solids of meshes/shape_meshes.hpp (sphere, torus): the volume converging to the
// exact one as the target size shrinks (from below, about h^2), every element positive, the
// boundary a closed surface of the right topology (Euler characteristic 2 for the ball, 0 for
// the torus) on the exact surface, the "surface" and "all" sets, the axis and centre as exact
// coordinate maps, P2 through the recipe, determinism, and bad recipes refused at their field.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/fem/mesh.hpp"
#include "core/support/input_error.hpp"
#include "mesh_checks.hpp"
#include "meshes/mesh_recipe.hpp"
#include "meshes/shape_meshes.hpp"

namespace pbdlab {
namespace {

using nlohmann::json;

MeshRecipe parse(const std::string& text) { return parseMeshRecipe(json::parse(text), "recipe.json", "/mesh", ""); }

// V - E + F of the mesh's boundary (tet4 corner faces).
int boundaryEulerCharacteristic(const Mesh& mesh) {
  const test::FaceReport faces = test::faceReport(mesh);
  std::set<int> vertices;
  std::set<std::pair<int, int>> edges;
  for (const std::vector<int>& f : faces.boundary)
    for (std::size_t k = 0; k < f.size(); ++k) {
      vertices.insert(f[k]);
      const int a = f[k], b = f[(k + 1) % f.size()];
      edges.insert({std::min(a, b), std::max(a, b)});
    }
  return static_cast<int>(vertices.size()) - static_cast<int>(edges.size()) + faces.boundary_faces;
}

// The nodes of the boundary faces.
std::vector<int> boundaryNodes(const Mesh& mesh) {
  std::set<int> nodes;
  for (const std::vector<int>& f : test::faceReport(mesh).boundary) nodes.insert(f.begin(), f.end());
  return {nodes.begin(), nodes.end()};
}

// Every element positive (restVolumes validates), the boundary closed with Euler characteristic
// `euler`, "surface" = the boundary's nodes, "all" = every node.
void expectSolidWithSurface(const Mesh& mesh, int euler) {
  ASSERT_EQ(mesh.element_type, ElementType::kTet4);
  for (double v : restVolumes(mesh)) ASSERT_GT(v, 0.0);
  const test::FaceReport faces = test::faceReport(mesh);
  EXPECT_EQ(faces.max_share, 2);
  EXPECT_TRUE(test::closedSurface(faces.boundary));
  EXPECT_EQ(boundaryEulerCharacteristic(mesh), euler);
  EXPECT_EQ(mesh.node_sets.at("surface"), boundaryNodes(mesh));
  EXPECT_EQ(mesh.node_sets.at("all").size(), static_cast<std::size_t>(mesh.numNodes()));
  for (const char* face : {"x-min", "x-max", "y-min", "y-max", "z-min", "z-max"})
    EXPECT_FALSE(mesh.node_sets.at(face).empty()) << face;
}

TEST(SphereMesh, VolumeConvergesFromBelowAndTheSurfaceIsTheSphere) {
  const Vec3 center(0.5, -1.0, 2.0);
  double previous_error = 1.0;
  for (double h : {0.5, 0.25}) {
    SCOPED_TRACE(h);
    const Mesh mesh = makeMesh(parse(R"({"type": "sphere", "center": [0.5, -1, 2], "radius": 1, "target_size": )" +
                                     std::to_string(h) + "}"));
    expectSolidWithSurface(mesh, 2);
    const double exact = sphereVolume(1.0), volume = test::totalVolume(mesh);
    const double error = (exact - volume) / exact;
    // The polyhedron's vertices lie on the sphere: it is inside the ball.
    EXPECT_GT(error, 0.0);
    EXPECT_LT(error, 0.4 * h * h) << "volume " << volume << " against " << exact;
    EXPECT_LT(error, previous_error / 2.5) << "halving h shrinks the error about 4 times";
    previous_error = error;
    // Surface nodes on the sphere, the others inside.
    std::vector<char> on_surface(static_cast<std::size_t>(mesh.numNodes()), 0);
    for (int n : mesh.node_sets.at("surface")) {
      on_surface[static_cast<std::size_t>(n)] = 1;
      EXPECT_NEAR((mesh.restPosition(n) - center).norm(), 1.0, 1e-9) << "node " << n;
    }
    for (int n = 0; n < mesh.numNodes(); ++n)
      if (!on_surface[static_cast<std::size_t>(n)]) EXPECT_LT((mesh.restPosition(n) - center).norm(), 1.0 - 1e-9);
  }
  // Errors at h = 0.5 and 0.25 (measured): 7.2% and 2.1%.
  EXPECT_LT(previous_error, 0.03);
}

// Distance from the torus's tube surface (axis `axis` through `center`).
double torusSurfaceDistance(const Vec3& X, const Vec3& center, int axis, double R, double r) {
  const Vec3 d = X - center;
  const double along = d[axis];
  const double radial = std::sqrt(d.squaredNorm() - along * along);
  return std::hypot(radial - R, along) - r;
}

TEST(TorusMesh, VolumeConvergesAndTheSurfaceIsTheTorus) {
  const double R = 1.0, r = 0.3;
  double previous_error = 1.0;
  for (double h : {0.3, 0.15}) {
    SCOPED_TRACE(h);
    const Mesh mesh = makeMesh(parse(R"({"type": "torus", "major_radius": 1, "minor_radius": 0.3, "target_size": )" +
                                     std::to_string(h) + "}"));
    expectSolidWithSurface(mesh, 0);  // a genus-1 boundary
    const double exact = torusVolume(R, r), volume = test::totalVolume(mesh);
    const double error = (exact - volume) / exact;
    EXPECT_GT(error, 0.0);
    EXPECT_LT(error, previous_error / 2.5) << "volume " << volume << " against " << exact;
    previous_error = error;
    for (int n : mesh.node_sets.at("surface"))
      EXPECT_NEAR(torusSurfaceDistance(mesh.restPosition(n), Vec3::Zero(), 2, R, r), 0.0, 1e-9) << "node " << n;
    // Nothing near the axis: the hole.
    for (int n = 0; n < mesh.numNodes(); ++n) EXPECT_GT(mesh.restPosition(n).head<2>().norm(), 0.9 * (R - r));
  }
  // Errors at h = 0.3 and 0.15 (measured): 11% and 2.9%.
  EXPECT_LT(previous_error, 0.04);
}

// The axis and the centre are exact maps of the mesh about the origin with axis z: a cyclic
// permutation of the coordinates, then a translation.
TEST(TorusMesh, AxisAndCentreAreExactMapsOfTheZTorus) {
  const Mesh z = makeMesh(parse(R"({"type": "torus", "major_radius": 1, "minor_radius": 0.4, "target_size": 0.4})"));
  const Mesh x = makeMesh(parse(
      R"({"type": "torus", "center": [1, 2, 3], "major_radius": 1, "minor_radius": 0.4, "axis": "x", "target_size": 0.4})"));
  const Mesh y = makeMesh(parse(
      R"({"type": "torus", "major_radius": 1, "minor_radius": 0.4, "axis": "y", "target_size": 0.4})"));
  ASSERT_EQ(x.numNodes(), z.numNodes());
  ASSERT_EQ(y.numNodes(), z.numNodes());
  EXPECT_EQ(x.elements, z.elements);
  EXPECT_EQ(y.elements, z.elements);
  for (int n = 0; n < z.numNodes(); ++n) {
    const Vec3 p = z.restPosition(n);
    EXPECT_EQ(x.restPosition(n), Vec3(p.z() + 1.0, p.x() + 2.0, p.y() + 3.0)) << n;
    EXPECT_EQ(y.restPosition(n), Vec3(p.y(), p.z(), p.x())) << n;
  }
  EXPECT_EQ(x.node_sets.at("surface"), z.node_sets.at("surface"));
  EXPECT_DOUBLE_EQ(test::totalVolume(x), test::totalVolume(z));
}

TEST(ShapeMeshes, HigherOrderKeepsTheSurfaceSetOnTheBoundary) {
  // P2: every boundary face adds its 3 edge nodes to "surface" (shared by two faces), and no
  // node of an interior edge joins it (raiseOrder's set rule would add one whose ends are both
  // on the surface).
  for (const char* text : {R"({"type": "sphere", "radius": 1, "target_size": 0.5, "order": 2})",
                           R"({"type": "torus", "major_radius": 1, "minor_radius": 0.4, "target_size": 0.4, "order": 2})"}) {
    SCOPED_TRACE(text);
    const MeshRecipe recipe = parse(text);
    const Mesh p2 = makeMesh(recipe);
    ASSERT_EQ(p2.element_type, ElementType::kTet10);
    MeshRecipe linear_recipe = recipe;
    linear_recipe.order = 1;
    const Mesh p1 = makeMesh(linear_recipe);
    const std::size_t boundary_faces = static_cast<std::size_t>(test::faceReport(p1).boundary_faces);
    EXPECT_EQ(p2.node_sets.at("surface").size(), p1.node_sets.at("surface").size() + boundary_faces * 3 / 2);
    EXPECT_NEAR(test::totalVolume(p2), test::totalVolume(p1), 1e-12 * test::totalVolume(p1));
    for (double v : restVolumes(p2)) ASSERT_GT(v, 0.0);
  }
}

TEST(ShapeMeshes, SameRecipeSameMesh) {
  for (const char* text : {R"({"type": "sphere", "radius": 0.7, "target_size": 0.2})",
                           R"({"type": "torus", "major_radius": 1, "minor_radius": 0.3, "axis": "y", "target_size": 0.2})"}) {
    SCOPED_TRACE(text);
    const MeshRecipe recipe = parse(text);
    test::expectSameMesh(makeMesh(recipe), makeMesh(recipe));
  }
}

TEST(ShapeMeshes, CanonicalRecipesAreFixedPoints) {
  const MeshRecipe sphere = parse(R"({"type": "sphere", "radius": 2, "target_size": 0.5})");
  EXPECT_EQ(sphere.canonical, json::parse(R"({"type": "sphere", "center": [0.0, 0.0, 0.0], "radius": 2.0,
                                              "target_size": 0.5, "order": 1})"));
  const MeshRecipe torus = parse(R"({"type": "torus", "major_radius": 2, "minor_radius": 0.5, "target_size": 0.25})");
  EXPECT_EQ(torus.canonical, json::parse(R"({"type": "torus", "center": [0.0, 0.0, 0.0], "major_radius": 2.0,
                                             "minor_radius": 0.5, "axis": "z", "target_size": 0.25, "order": 1})"));
  for (const MeshRecipe& r : {sphere, torus}) {
    const MeshRecipe again = parseMeshRecipe(r.canonical, "recipe.json", "/mesh", "");
    EXPECT_EQ(again.canonical, r.canonical);
    EXPECT_EQ(meshRecipeKey(again), meshRecipeKey(r));
  }
  EXPECT_NE(meshRecipeKey(parse(R"({"type": "sphere", "radius": 2, "target_size": 0.4})")), meshRecipeKey(sphere));
}

TEST(ShapeMeshes, BadRecipesNameTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"type": "sphere", "target_size": 0.1})", "/mesh/radius"},
      {R"({"type": "sphere", "radius": 0, "target_size": 0.1})", "/mesh/radius"},
      {R"({"type": "sphere", "radius": -1, "target_size": 0.1})", "/mesh/radius"},
      {R"({"type": "sphere", "radius": "1", "target_size": 0.1})", "/mesh/radius"},
      {R"({"type": "sphere", "radius": 1})", "/mesh/target_size"},
      {R"({"type": "sphere", "radius": 1, "target_size": 0})", "/mesh/target_size"},
      {R"({"type": "sphere", "radius": 1, "target_size": 1.5})", "/mesh/target_size"},
      {R"({"type": "sphere", "radius": 1, "target_size": 1e-4})", "/mesh/target_size"},
      {R"({"type": "sphere", "radius": 1, "target_size": 0.1, "center": [0, 0]})", "/mesh/center"},
      {R"({"type": "sphere", "radius": 1, "target_size": 0.1, "order": 4})", "/mesh/order"},
      {R"({"type": "sphere", "radius": 1, "target_size": 0.1, "radius_mm": 2})", "/mesh/radius_mm"},
      {R"({"type": "torus", "minor_radius": 0.2, "target_size": 0.1})", "/mesh/major_radius"},
      {R"({"type": "torus", "major_radius": 1, "target_size": 0.1})", "/mesh/minor_radius"},
      {R"({"type": "torus", "major_radius": 1, "minor_radius": 1, "target_size": 0.1})", "/mesh/minor_radius"},
      {R"({"type": "torus", "major_radius": 1, "minor_radius": 2, "target_size": 0.1})", "/mesh/minor_radius"},
      {R"({"type": "torus", "major_radius": 1, "minor_radius": 0, "target_size": 0.1})", "/mesh/minor_radius"},
      {R"({"type": "torus", "major_radius": 1, "minor_radius": 0.2, "target_size": 0.3})", "/mesh/target_size"},
      {R"({"type": "torus", "major_radius": 1, "minor_radius": 0.2, "target_size": 0.1, "axis": "w"})", "/mesh/axis"},
      {R"({"type": "torus", "major_radius": 1, "minor_radius": 0.2, "target_size": 0.1, "axis": 2})", "/mesh/axis"},
      {R"({"type": "torus", "major_radius": 1, "minor_radius": 0.2, "target_size": 0.1, "radius": 1})", "/mesh/radius"},
  };
  for (const auto& [text, field] : cases) {
    SCOPED_TRACE(text);
    try {
      parse(text);
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_EQ(e.file(), "recipe.json");
    }
  }
  // Too large for this machine: refused with the memory estimate.
  try {
    parse(R"({"type": "sphere", "radius": 1000, "target_size": 0.001})");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "/mesh/target_size");
    EXPECT_NE(std::string(e.what()).find("would need about "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pbdlab
