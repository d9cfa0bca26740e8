#pragma once
// Kinematic collision shapes (PBNG TOG §7.2): bodies that do not deform, against which each
// vertex finds its closest point x_bar and the unit outward normal n there; a vertex is
// penetrating when (x - x_bar) . n < 0. For each shape: the signed distance phi(x) (> 0
// outside, the admissible side; < 0 inside), its gradient (the unit outward normal, where
// defined) and Hessian, and the closest point on the surface. Stateless (bodies in the .cpp).
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
PlaneCollider makePlaneCollider(const Vec3& point, const Vec3& normal);
SphereCollider makeSphereCollider(const Vec3& center, double radius);
BoxCollider makeBoxCollider(const Vec3& center, const Vec3& half_extents);

// ---- plane: phi = (x - p) . n, gradient n, Hessian 0; closest point x - phi n.
double signedDistance(const PlaneCollider& plane, const Vec3& x, Vec3* gradient = nullptr,
                      Mat3* hessian = nullptr);
// The closest point on the surface; `normal` (may be null) receives the unit outward normal
// there (= the gradient of phi at x wherever it exists).
Vec3 closestPoint(const PlaneCollider& plane, const Vec3& x, Vec3* normal = nullptr);

// ---- sphere: phi = |x - c| - r, gradient n = (x - c)/|x - c|, Hessian (I - n n^T)/|x - c|;
// closest point c + r n. At x = c (no derivative) n = e_z is chosen and the Hessian is 0.
double signedDistance(const SphereCollider& sphere, const Vec3& x, Vec3* gradient = nullptr,
                      Mat3* hessian = nullptr);
Vec3 closestPoint(const SphereCollider& sphere, const Vec3& x, Vec3* normal = nullptr);

// ---- axis-aligned box. With d = x - c and q_i = |d_i| - h_i:
//   outside (some q_i > 0): phi = |v|, v_i = sign(d_i) max(q_i, 0) (v = x - closest point),
//     gradient v/|v|, Hessian (I_A - v_hat v_hat^T)/|v| on the active axes A = {q_i > 0}
//     (0 in a face region, |A| = 1; rank one in an edge region; the sphere's in a corner region);
//     closest point c + clamp(d, -h, h).
//   inside (every q_i <= 0, the surface included): phi = max_i q_i <= 0, gradient
//     sign(d_k) e_k for the nearest face k = argmax q_i, Hessian 0; closest point: x moved
//     onto face k.
// Ties (the medial set, the box's edges and corners) pick the lowest axis k; sign(0) = +1.
double signedDistance(const BoxCollider& box, const Vec3& x, Vec3* gradient = nullptr,
                      Mat3* hessian = nullptr);
Vec3 closestPoint(const BoxCollider& box, const Vec3& x, Vec3* normal = nullptr);

// ---- any shape.
double signedDistance(const ColliderShape& shape, const Vec3& x, Vec3* gradient = nullptr,
                      Mat3* hessian = nullptr);
Vec3 closestPoint(const ColliderShape& shape, const Vec3& x, Vec3* normal = nullptr);

}  // namespace pbdlab
