#pragma once
// Kinematic collision shapes (PBNG TOG §7.2): bodies that do not deform, against which each
// vertex finds its closest point x_bar and the unit outward normal n there; a vertex is
// penetrating when (x - x_bar) . n < 0. For each shape: the signed distance phi(x) (> 0
// outside, the admissible side; < 0 inside), its gradient (the unit outward normal, where
// defined) and Hessian, and the closest point on the surface. Stateless, header-only.
//
// Where phi has no derivative (the tests check finite differences away from these sets only):
//   plane:  none; phi is affine (Hessian 0).
//   sphere: the centre (every direction is the nearest); elsewhere phi = |x - c| - r is smooth.
//   box:    (a) the box's edges and corners (on the surface, where faces meet);
//           (b) inside, the medial set: points whose nearest face is not unique (two faces at
//               equal distance, which includes the two opposite faces of one axis at
//               x_i = c_i when that axis' slab is the nearest);
//           outside the box phi is C^1 (the distance to a convex set), but its Hessian jumps
//           on the planes |x_i - c_i| = h_i that separate the face, edge and corner regions.
// At these points the functions return one of the one-sided values (documented per shape),
// finite.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <variant>

#include "core/support/types.hpp"

namespace pbdlab {

// Half-space below the plane through `point` with unit outward `normal`.
struct PlaneCollider {
  Vec3 point = Vec3::Zero();
  Vec3 normal = Vec3::UnitZ();  // unit
};
// Solid ball; its outside is admissible.
struct SphereCollider {
  Vec3 center = Vec3::Zero();
  double radius = 1.0;  // > 0
};
// Solid axis-aligned box; its outside is admissible.
struct BoxCollider {
  Vec3 center = Vec3::Zero();
  Vec3 half_extents = Vec3::Ones();  // each > 0
};
using ColliderShape = std::variant<PlaneCollider, SphereCollider, BoxCollider>;

// Checked constructors: the plane's normal is normalized (throws std::invalid_argument on a
// zero or non-finite normal), the radius and half extents must be positive and finite.
inline PlaneCollider makePlaneCollider(const Vec3& point, const Vec3& normal) {
  const double length = normal.norm();
  if (!point.allFinite() || !std::isfinite(length) || !(length > 0.0))
    throw std::invalid_argument("plane collider: the normal must be a finite non-zero vector");
  return PlaneCollider{point, normal / length};
}
inline SphereCollider makeSphereCollider(const Vec3& center, double radius) {
  if (!center.allFinite() || !std::isfinite(radius) || !(radius > 0.0))
    throw std::invalid_argument("sphere collider: the radius must be positive and finite");
  return SphereCollider{center, radius};
}
inline BoxCollider makeBoxCollider(const Vec3& center, const Vec3& half_extents) {
  if (!center.allFinite() || !half_extents.allFinite() || !(half_extents.minCoeff() > 0.0))
    throw std::invalid_argument("box collider: the half extents must be positive and finite");
  return BoxCollider{center, half_extents};
}

// ---- plane: phi = (x - p) . n, gradient n, Hessian 0; closest point x - phi n.
inline double signedDistance(const PlaneCollider& plane, const Vec3& x, Vec3* gradient = nullptr,
                             Mat3* hessian = nullptr) {
  if (gradient) *gradient = plane.normal;
  if (hessian) hessian->setZero();
  return (x - plane.point).dot(plane.normal);
}
// The closest point on the surface; `normal` (may be null) receives the unit outward normal
// there (= the gradient of phi at x wherever it exists).
inline Vec3 closestPoint(const PlaneCollider& plane, const Vec3& x, Vec3* normal = nullptr) {
  if (normal) *normal = plane.normal;
  return x - (x - plane.point).dot(plane.normal) * plane.normal;
}

// ---- sphere: phi = |x - c| - r, gradient n = (x - c)/|x - c|, Hessian (I - n n^T)/|x - c|;
// closest point c + r n. At x = c (no derivative) n = e_z is chosen and the Hessian is 0.
inline double signedDistance(const SphereCollider& sphere, const Vec3& x, Vec3* gradient = nullptr,
                             Mat3* hessian = nullptr) {
  const Vec3 d = x - sphere.center;
  const double distance = d.norm();
  if (!(distance > 0.0)) {
    if (gradient) *gradient = Vec3::UnitZ();
    if (hessian) hessian->setZero();
    return -sphere.radius;
  }
  const Vec3 n = d / distance;
  if (gradient) *gradient = n;
  if (hessian) *hessian = (Mat3::Identity() - n * n.transpose()) / distance;
  return distance - sphere.radius;
}
inline Vec3 closestPoint(const SphereCollider& sphere, const Vec3& x, Vec3* normal = nullptr) {
  const Vec3 d = x - sphere.center;
  const double distance = d.norm();
  const Vec3 n = distance > 0.0 ? Vec3(d / distance) : Vec3(Vec3::UnitZ());
  if (normal) *normal = n;
  return sphere.center + sphere.radius * n;
}

// ---- axis-aligned box. With d = x - c and q_i = |d_i| - h_i:
//   outside (some q_i > 0): phi = |v|, v_i = sign(d_i) max(q_i, 0) (v = x - closest point),
//     gradient v/|v|, Hessian (I_A - v_hat v_hat^T)/|v| on the active axes A = {q_i > 0}
//     (0 in a face region, |A| = 1; rank one in an edge region; the sphere's in a corner region);
//     closest point c + clamp(d, -h, h).
//   inside (every q_i <= 0, the surface included): phi = max_i q_i <= 0, gradient
//     sign(d_k) e_k for the nearest face k = argmax q_i, Hessian 0; closest point: x moved
//     onto face k.
// Ties (the medial set, the box's edges and corners) pick the lowest axis k; sign(0) = +1.
inline double signedDistance(const BoxCollider& box, const Vec3& x, Vec3* gradient = nullptr,
                             Mat3* hessian = nullptr) {
  const Vec3 d = x - box.center;
  Vec3 sign, q;
  for (int i = 0; i < 3; ++i) {
    sign(i) = d(i) < 0.0 ? -1.0 : 1.0;
    q(i) = std::abs(d(i)) - box.half_extents(i);
  }
  if (q.maxCoeff() > 0.0) {
    const Vec3 v = sign.cwiseProduct(q.cwiseMax(0.0));
    const double distance = v.norm();
    const Vec3 n = v / distance;
    if (gradient) *gradient = n;
    if (hessian) {
      Mat3 active = Mat3::Zero();
      for (int i = 0; i < 3; ++i)
        if (q(i) > 0.0) active(i, i) = 1.0;
      *hessian = (active - n * n.transpose()) / distance;
    }
    return distance;
  }
  int k = 0;
  const double phi = q.maxCoeff(&k);
  if (gradient) *gradient = sign(k) * Vec3::Unit(k);
  if (hessian) hessian->setZero();
  return phi;
}
inline Vec3 closestPoint(const BoxCollider& box, const Vec3& x, Vec3* normal = nullptr) {
  const Vec3 d = x - box.center;
  Vec3 q;
  for (int i = 0; i < 3; ++i) q(i) = std::abs(d(i)) - box.half_extents(i);
  if (q.maxCoeff() > 0.0) {
    const Vec3 p = box.center + d.cwiseMax(-box.half_extents).cwiseMin(box.half_extents);
    if (normal) *normal = (x - p).normalized();
    return p;
  }
  int k = 0;
  q.maxCoeff(&k);
  const double s = d(k) < 0.0 ? -1.0 : 1.0;
  Vec3 p = x;
  p(k) = box.center(k) + s * box.half_extents(k);
  if (normal) *normal = s * Vec3::Unit(k);
  return p;
}

// ---- any shape.
inline double signedDistance(const ColliderShape& shape, const Vec3& x, Vec3* gradient = nullptr,
                             Mat3* hessian = nullptr) {
  return std::visit([&](const auto& s) { return signedDistance(s, x, gradient, hessian); }, shape);
}
inline Vec3 closestPoint(const ColliderShape& shape, const Vec3& x, Vec3* normal = nullptr) {
  return std::visit([&](const auto& s) { return closestPoint(s, x, normal); }, shape);
}

}  // namespace pbdlab
