#pragma once
// Multi-layer XPBD's contacts with kinematic colliders (Mercier-Aubin & Kry 2024 eq. 28; spec
// §6): per vertex, C = min(n.(x - p), 0) with the collider's closest point p and unit outward
// normal n frozen for the step (eq. 28 prints d.(p - x): the sign is ours, n outward), a soft
// constraint of compliance alpha = 1 / k, k the collider's stiffness, so that
// 1/2 C^2 / alpha = k/2 min(0, phi)^2 is the penalty Newton minimizes for the same collider
// (core/terms/collider_term.hpp); the paper's alpha = 1e-4 is a collider of stiffness 1e4.
// An elastic vertex is projected by eq. 5 (a fixed point of inverse mass 0 on the other side);
// a vertex of a rigid body by projectFixedPointContact (rigid_body.hpp) in its body's Jacobi
// pass. The multiplier is zero at the step's start and kept across iterations and layers.
// Restitution (eq. 29, as intended: the printed min(-eps vn, 0) never bounces): after the step,
// at a contact that pushed (lambda > 0) with a pre-solve normal velocity vn~ = n.(v^t + h g) < 0,
// the normal velocity becomes -eps vn~, or 0 when |vn~| <= 2 |g| h (Mueller et al. 2020's
// threshold against jitter at rest); off by default (the velocity the projection leaves).
#include <memory>
#include <vector>

#include "core/model/problem.hpp"

namespace pbdlab::ml_xpbd {

struct VertexContact {
  int node = 0;
  Vec3 point = Vec3::Zero();   // p, on the collider's surface
  Vec3 normal = Vec3::UnitY(); // n, unit, outward (z = 0 in plane strain)
  double compliance = 0.0;     // alpha = 1 / stiffness (alpha~ = alpha / h^2 at projection)
  double lambda = 0.0;         // >= 0: a contact only pushes out
  double approach_speed = 0.0; // vn~ = n.(x~ - x^t)/h, the pre-solve normal velocity (eq. 29)
};

// The step's contacts: every node with a free DOF whose position at the step's start or whose
// prediction (x~: x^t + h v^t + h^2 M^-1 f_ext) lies inside a collider (phi < 0), against the
// collider it is deepest in at the prediction; p and n are the closest point and normal there.
// `planar`: plane strain (normals and motion in x, y only).
std::vector<VertexContact> detectContacts(const Problem& problem, const Positions& x_start,
                                          const Positions& x_predicted, bool planar);

// Eq. 5 for one contact of an elastic vertex of inverse mass `inverse_mass`: moves x_i along n.
void projectVertexContact(VertexContact& contact, double inverse_mass, double inv_h2, Positions& x);

// Eq. 29 on the velocities after the step (see above), restitution `eps` in [0, 1], `gravity`
// the magnitude |g|, h the step. Skips nodes with `movable`[node] == 0.
void applyRestitution(const std::vector<VertexContact>& contacts, double eps, double gravity, double h,
                      const VecX& movable, VecX& v);

}  // namespace pbdlab::ml_xpbd
