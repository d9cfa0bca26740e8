// Topology services: surface triangles of every solid element type (closed, outward, the
// box's area) and the hinges of triangle surfaces (closed and open).
#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include "core/topology/topology.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"

namespace pbdlab {
namespace {

TEST(SurfaceTriangles, CloseTheBoxOutwardsForEverySolidType) {
  BoxMeshRecipe box;
  box.size = Vec3(2.0, 1.0, 0.5);
  box.cells = {4, 2, 2};
  const Vec3 centre = box.size / 2;
  for (BoxFamily family : {BoxFamily::kFiveTet, BoxFamily::kHex, BoxFamily::kPrism, BoxFamily::kPyramid}) {
    for (int order : family == BoxFamily::kFiveTet ? std::vector<int>{1, 2} : std::vector<int>{1}) {
      box.family = family;
      box.order = order;
      const Mesh mesh = makeBoxMesh(box);
      const auto triangles = surfaceTriangles(mesh);
      double area = 0.0;
      for (const auto& t : triangles) {
        const Vec3 a = mesh.restPosition(t[0]), b = mesh.restPosition(t[1]), c = mesh.restPosition(t[2]);
        const Vec3 n = (b - a).cross(c - a);
        area += 0.5 * n.norm();
        EXPECT_GT(n.dot((a + b + c) / 3 - centre), 0.0) << mesh.source << ": a triangle faces inwards";
      }
      EXPECT_NEAR(area, 2 * (2.0 * 1.0 + 2.0 * 0.5 + 1.0 * 0.5), 1e-12) << mesh.source;
      // Closed and consistently oriented: every edge has a hinge, 3 edges per triangle / 2.
      EXPECT_EQ(surfaceHinges(triangles).size() * 2, triangles.size() * 3) << mesh.source;
    }
  }
}

TEST(SurfaceHinges, OpenRectangleHasOneHingePerInteriorEdge) {
  RectangleRecipe recipe;
  recipe.embedding = RectangleRecipe::Embedding::k3dSurface;
  recipe.cells = {3, 2};
  const Mesh cloth = makeRectangleMesh(recipe);
  const auto triangles = surfaceTriangles(cloth);
  ASSERT_EQ(triangles.size(), 12u);
  // Edges: 3x2 cells have 3*3 + 4*2 = 17 axis edges and 6 diagonals; 10 lie on the border.
  const auto hinges = surfaceHinges(triangles);
  EXPECT_EQ(hinges.size(), 23u - 10u);
  for (const Hinge& h : hinges) {
    // A flat, consistently oriented hinge: the two normals agree.
    const Vec3 x0 = cloth.restPosition(h.nodes[0]), x1 = cloth.restPosition(h.nodes[1]);
    const Vec3 n1 = (x1 - x0).cross(cloth.restPosition(h.nodes[2]) - x0);
    const Vec3 n2 = (x0 - x1).cross(cloth.restPosition(h.nodes[3]) - x1);
    EXPECT_GT(n1.dot(n2), 0.0);
  }
  // A flipped triangle is detected.
  auto flipped = triangles;
  std::swap(flipped[4][0], flipped[4][1]);
  EXPECT_THROW(surfaceHinges(flipped), std::invalid_argument);
}

}  // namespace
}  // namespace pbdlab
