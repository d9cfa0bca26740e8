#include "core/terms/point_triangle.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>

namespace pbdlab {
namespace {

// Closest point of segment [a, b] to p as the weight t of b (point a + t (b - a)).
double segmentParameter(const Vec3& p, const Vec3& a, const Vec3& b) {
  const Vec3 ab = b - a;
  const double length_sq = ab.squaredNorm();
  if (!(length_sq > 0.0)) return 0.0;
  return std::clamp((p - a).dot(ab) / length_sq, 0.0, 1.0);
}

}  // namespace

PointTriangleClosest pointTriangleClosest(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  PointTriangleClosest out;
  const Vec3 ab = b - a, ac = c - a, bc = c - b;
  const Vec3 cross = ab.cross(ac);
  const double twice_area = cross.norm();
  const double longest_sq = std::max({ab.squaredNorm(), ac.squaredNorm(), bc.squaredNorm()});
  auto finish = [&](const Vec3& w, TriangleRegion region) {
    out.weights = w;
    out.closest = w(0) * a + w(1) * b + w(2) * c;
    out.distance = (p - out.closest).norm();
    out.region = region;
    return out;
  };

  if (!(twice_area > kPointTriangleDegenerate * longest_sq)) {
    out.degenerate = true;
    const double t_ab = segmentParameter(p, a, b), t_bc = segmentParameter(p, b, c), t_ca = segmentParameter(p, c, a);
    const Vec3 candidates[3] = {Vec3(1.0 - t_ab, t_ab, 0.0), Vec3(0.0, 1.0 - t_bc, t_bc), Vec3(t_ca, 0.0, 1.0 - t_ca)};
    const TriangleRegion edges[3] = {TriangleRegion::kEdgeAB, TriangleRegion::kEdgeBC, TriangleRegion::kEdgeCA};
    int best = 0;
    double best_sq = 0.0;
    for (int k = 0; k < 3; ++k) {
      const Vec3 q = candidates[k](0) * a + candidates[k](1) * b + candidates[k](2) * c;
      const double sq = (p - q).squaredNorm();
      if (k == 0 || sq < best_sq) best = k, best_sq = sq;
    }
    const Vec3& w = candidates[best];
    TriangleRegion region = edges[best];
    if (w(0) == 1.0) region = TriangleRegion::kVertexA;
    else if (w(1) == 1.0) region = TriangleRegion::kVertexB;
    else if (w(2) == 1.0) region = TriangleRegion::kVertexC;
    return finish(w, region);
  }
  out.normal = cross / twice_area;

  // Ericson's region tests.
  const Vec3 ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0.0 && d2 <= 0.0) return finish(Vec3(1.0, 0.0, 0.0), TriangleRegion::kVertexA);
  const Vec3 bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0.0 && d4 <= d3) return finish(Vec3(0.0, 1.0, 0.0), TriangleRegion::kVertexB);
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
    const double v = d1 / (d1 - d3);
    return finish(Vec3(1.0 - v, v, 0.0), TriangleRegion::kEdgeAB);
  }
  const Vec3 cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0.0 && d5 <= d6) return finish(Vec3(0.0, 0.0, 1.0), TriangleRegion::kVertexC);
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
    const double w = d2 / (d2 - d6);
    return finish(Vec3(1.0 - w, 0.0, w), TriangleRegion::kEdgeCA);
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
    const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    return finish(Vec3(0.0, 1.0 - w, w), TriangleRegion::kEdgeBC);
  }
  const double denominator = va + vb + vc;  // = |ab x ac|^2 > 0
  const double v = vb / denominator, w = vc / denominator;
  return finish(Vec3(1.0 - v - w, v, w), TriangleRegion::kInterior);
}

}  // namespace pbdlab
