#pragma once
// Closest point of a triangle (a, b, c) to a point p, for vertex-triangle collisions created
// each step: barycentric weights of the closest point, the distance, and the triangle's unit
// normal. The Voronoi-region walk of Ericson (Real-Time Collision Detection, 2005, §5.1.5):
// the vertex and edge regions are decided by exact sign tests on dot products, so a point
// whose closest point is a vertex gets exactly that vertex's weights (1, 0, 0) and a point
// closest to an edge exactly one zero weight. Stateless, no allocation; the bodies are in the .cpp.
#include <Eigen/Core>

#include "core/support/types.hpp"

namespace pbdlab {

enum class TriangleRegion { kInterior, kVertexA, kVertexB, kVertexC, kEdgeAB, kEdgeBC, kEdgeCA };

struct PointTriangleClosest {
  Vec3 weights = Vec3::Zero();  // barycentric (w_a, w_b, w_c) of the closest point, >= 0, sum 1
  Vec3 closest = Vec3::Zero();  // w_a a + w_b b + w_c c
  double distance = 0.0;        // |p - closest|
  Vec3 normal = Vec3::Zero();   // unit normal (b - a) x (c - a) / |...|; zero if degenerate
  TriangleRegion region = TriangleRegion::kInterior;
  bool degenerate = false;      // zero-area triangle (see below)
};

// A triangle is degenerate when |(b - a) x (c - a)| <= kPointTriangleDegenerate * (longest
// edge)^2: its normal is undefined and the interior formula would divide by ~0. Then the
// closest point is taken over the three edges (segments; a zero-length one is its vertex),
// `normal` is zero and `degenerate` true.
constexpr double kPointTriangleDegenerate = 1e-14;

PointTriangleClosest pointTriangleClosest(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c);

}  // namespace pbdlab
