// Polygon and star recipes (meshes/polygon_mesh.hpp): the triangles are counter-clockwise and
// cover exactly the region (outline minus holes, by the shoelace formula), the outline and hole
// node sets hold the boundary nodes and only them, no node falls in a hole, the star's outline
// is the 2n-gon of its radii, and every malformed polygon is refused naming its field.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/support/input_error.hpp"
#include "meshes/mesh_recipe.hpp"
#include "meshes/polygon_mesh.hpp"

namespace pbdlab {
namespace {

using nlohmann::json;

MeshRecipe parseText(const std::string& text) { return parseMeshRecipe(json::parse(text), "recipe.json", "/mesh", ""); }

double shoelace(const std::vector<PolygonRecipe::Point>& loop) {
  double twice = 0.0;
  for (std::size_t i = 0; i < loop.size(); ++i) {
    const auto& a = loop[i];
    const auto& b = loop[(i + 1) % loop.size()];
    twice += a[0] * b[1] - b[0] * a[1];
  }
  return 0.5 * twice;
}

double meshArea(const Mesh& mesh) {
  double area = 0.0;
  for (int e = 0; e < mesh.numElements(); ++e) {
    const Vec3 a = mesh.restPosition(mesh.elements(e, 0)), b = mesh.restPosition(mesh.elements(e, 1)),
               c = mesh.restPosition(mesh.elements(e, 2));
    const double twice = (b - a).x() * (c - a).y() - (b - a).y() * (c - a).x();
    EXPECT_GT(twice, 0.0) << "element " << e;
    area += 0.5 * twice;
  }
  return area;
}

// Distance from x to the closed polyline.
double distanceToLoop(const Vec3& x, const std::vector<PolygonRecipe::Point>& loop) {
  double best = INFINITY;
  for (std::size_t k = 0; k < loop.size(); ++k) {
    const Vec3 a(loop[k][0], loop[k][1], 0.0), b(loop[(k + 1) % loop.size()][0], loop[(k + 1) % loop.size()][1], 0.0);
    const double t = std::clamp((x - a).dot(b - a) / (b - a).squaredNorm(), 0.0, 1.0);
    best = std::min(best, (x - (a + t * (b - a))).norm());
  }
  return best;
}

void expectBoundarySet(const Mesh& mesh, const std::vector<int>& set, const std::vector<PolygonRecipe::Point>& loop) {
  std::vector<char> in_set(static_cast<std::size_t>(mesh.numNodes()), 0);
  for (int i : set) in_set[static_cast<std::size_t>(i)] = 1;
  int on_loop = 0;
  for (int i = 0; i < mesh.numNodes(); ++i) {
    const bool on = distanceToLoop(mesh.restPosition(i), loop) < 1e-9;
    on_loop += on;
    EXPECT_EQ(on, in_set[static_cast<std::size_t>(i)] != 0) << "node " << i;
  }
  EXPECT_GE(on_loop, static_cast<int>(loop.size()));  // at least the vertices
}

TEST(PolygonMesh, AStarIsItsTwoRadiiPolygonCoveredExactly) {
  const MeshRecipe r = parseText(
      R"({"type": "star", "center": [1, 2], "points": 5, "outer_radius": 1, "inner_radius": 0.4, "target_size": 0.1})");
  ASSERT_EQ(r.polygon.outline.size(), 10u);
  EXPECT_NEAR(r.polygon.outline[0][0], 1.0, 1e-15);  // the first tip on +y
  EXPECT_NEAR(r.polygon.outline[0][1], 3.0, 1e-15);
  for (std::size_t k = 0; k < 10; ++k)
    EXPECT_NEAR(std::hypot(r.polygon.outline[k][0] - 1.0, r.polygon.outline[k][1] - 2.0), k % 2 == 0 ? 1.0 : 0.4, 1e-14);
  const Mesh mesh = makeMesh(r);
  ASSERT_EQ(mesh.element_type, ElementType::kTri3);
  EXPECT_GT(mesh.numElements(), 50);
  // Area of the star: 2n triangles (centre, tip, notch) of sides R, r at angle pi / n.
  const double exact = 5 * 2 * 0.5 * 1.0 * 0.4 * std::sin(M_PI / 5);
  EXPECT_NEAR(shoelace(r.polygon.outline), exact, 1e-14);
  EXPECT_NEAR(meshArea(mesh), exact, 1e-12);
  EXPECT_TRUE((mesh.rest_positions.col(2).array() == 0.0).all());
  expectBoundarySet(mesh, mesh.node_sets.at("outline"), r.polygon.outline);
  EXPECT_EQ(mesh.source, r.describe());
  EXPECT_EQ(parseText(r.canonical.dump()).canonical, r.canonical);
}

TEST(PolygonMesh, HolesAreLeftOutAndNamed) {
  const MeshRecipe r = parseText(R"({"type": "polygon", "points": [[0, 0], [0, 2], [4, 2], [4, 0]],
      "holes": [[[0.5, 0.5], [1.5, 0.5], [1.5, 1.5], [0.5, 1.5]], [[3, 0.5], [3.5, 1], [3, 1.5]]], "target_size": 0.2})");
  const Mesh mesh = makeMesh(r);
  EXPECT_NEAR(meshArea(mesh), 8.0 - 1.0 - 0.25, 1e-12);  // clockwise outline: its area counts positive
  expectBoundarySet(mesh, mesh.node_sets.at("outline"), r.polygon.outline);
  expectBoundarySet(mesh, mesh.node_sets.at("hole-0"), r.polygon.holes[0]);
  expectBoundarySet(mesh, mesh.node_sets.at("hole-1"), r.polygon.holes[1]);
  for (int i = 0; i < mesh.numNodes(); ++i) {
    const Vec3 x = mesh.restPosition(i);
    EXPECT_FALSE(x.x() > 0.5 + 1e-12 && x.x() < 1.5 - 1e-12 && x.y() > 0.5 + 1e-12 && x.y() < 1.5 - 1e-12) << i;
  }
  EXPECT_EQ(mesh.node_sets.at("x-min").size(), mesh.node_sets.at("x-max").size());
  EXPECT_EQ(parseText(r.canonical.dump()).canonical, r.canonical);
}

TEST(PolygonMesh, MalformedPolygonsNameTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"type": "polygon", "target_size": 0.1})", "/mesh/points"},
      {R"({"type": "polygon", "points": [[0, 0], [1, 0]], "target_size": 0.1})", "/mesh/points"},
      {R"({"type": "polygon", "points": [[0, 0], [1, 0], [1, "a"]], "target_size": 0.1})", "/mesh/points/2/1"},
      {R"({"type": "polygon", "points": [[0, 0], [1, 0], [1, 1]]})", "/mesh/target_size"},
      {R"({"type": "polygon", "points": [[0, 0], [1, 0], [1, 1]], "target_size": 0})", "/mesh/target_size"},
      {R"({"type": "polygon", "points": [[0, 0], [1, 0], [1, 1]], "target_size": 1e-9})", "/mesh/target_size"},
      // a bow tie, a repeated vertex, a spike folding back onto its edge, collinear vertices only
      {R"({"type": "polygon", "points": [[0, 0], [1, 1], [1, 0], [0, 1]], "target_size": 0.1})", "/mesh/points"},
      {R"({"type": "polygon", "points": [[0, 0], [1, 0], [1, 0], [0, 1]], "target_size": 0.1})", "/mesh/points"},
      {R"({"type": "polygon", "points": [[0, 0], [2, 0], [1, 0], [0, 1]], "target_size": 0.1})", "/mesh/points"},
      {R"({"type": "polygon", "points": [[0, 0], [1, 0], [2, 0]], "target_size": 0.1})", "/mesh/points"},
      // holes: outside, crossing the outline, touching it, inside another hole, too few vertices
      {R"({"type": "polygon", "points": [[0, 0], [4, 0], [4, 4], [0, 4]], "holes": [[[5, 5], [6, 5], [6, 6]]], "target_size": 0.5})", "/mesh/holes"},
      {R"({"type": "polygon", "points": [[0, 0], [4, 0], [4, 4], [0, 4]], "holes": [[[3, 1], [5, 1], [3, 2]]], "target_size": 0.5})", "/mesh/holes"},
      {R"({"type": "polygon", "points": [[0, 0], [4, 0], [4, 4], [0, 4]], "holes": [[[1, 0], [2, 1], [1, 1]]], "target_size": 0.5})", "/mesh/holes"},
      {R"({"type": "polygon", "points": [[0, 0], [4, 0], [4, 4], [0, 4]], "holes": [[[1, 1], [3, 1], [3, 3], [1, 3]], [[1.5, 1.5], [2, 1.5], [2, 2]]], "target_size": 0.5})", "/mesh/holes"},
      {R"({"type": "polygon", "points": [[0, 0], [4, 0], [4, 4], [0, 4]], "holes": [[[1, 1], [2, 1]]], "target_size": 0.5})", "/mesh/holes/0"},
      {R"({"type": "polygon", "points": [[0, 0], [4, 0], [4, 4]], "holes": {"a": 1}, "target_size": 0.5})", "/mesh/holes"},
      {R"({"type": "polygon", "points": [[0, 0], [4, 0], [4, 4]], "target_size": 0.5, "cells": [2, 2]})", "/mesh/cells"},
      {R"({"type": "star", "points": 1, "outer_radius": 1, "inner_radius": 0.5, "target_size": 0.1})", "/mesh/points"},
      {R"({"type": "star", "points": 5, "outer_radius": 1, "inner_radius": 1.5, "target_size": 0.1})", "/mesh/inner_radius"},
      {R"({"type": "star", "points": 5, "outer_radius": -1, "inner_radius": 0.5, "target_size": 0.1})", "/mesh/outer_radius"},
      {R"({"type": "star", "points": 5, "outer_radius": 1, "target_size": 0.1})", "/mesh/inner_radius"},
      {R"({"type": "star", "points": 5, "outer_radius": 1, "inner_radius": 0.5})", "/mesh/target_size"},
      {R"({"type": "star", "points": 5, "outer_radius": 1, "inner_radius": 0.5, "target_size": 0.1, "center": [0]})", "/mesh/center"},
  };
  for (const auto& [text, field] : cases) {
    SCOPED_TRACE(text);
    try {
      parseText(text);
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_EQ(e.file(), "recipe.json");
    }
  }
}

}  // namespace
}  // namespace pbdlab
