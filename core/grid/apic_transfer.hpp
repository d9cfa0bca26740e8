#pragma once
// APIC transfers (Jiang et al. 2015, "The Affine Particle-In-Cell Method") between the
// embedded vertices, APIC's particles p (mass m_p, velocity v_p, affine velocity C_p, at x_p of
// the weights), and the background grid: PXPBD §5.5 takes the grid's masses and momenta from
// the vertices before a step and gives the velocities back after it.
//   P2G: m_i = sum_p w_ip m_p,  m_i v_i = sum_p w_ip m_p (v_p + C_p (x_i - x_p)); v_i = 0 where
//        m_i = 0 (such a node has w_ip = 0 for every particle of positive mass: no momentum).
//   G2P: v_p = sum_i w_ip v_i,  C_p = B_p D_p^-1 with B_p = sum_i w_ip v_i (x_i - x_p)^T,
//        D_p = sum_i w_ip (x_i - x_p)(x_i - x_p)^T.
// Conservation (APIC's proofs, which need only the partition of unity, affine reproduction and
// C_p D_p = B_p; tests/core/test_grid.cpp checks each for both kernels): with the particles'
// angular momentum L_P = sum_p m_p (x_p x v_p + eps : (C_p D_p)^T), (eps : M^T)_a = eps_abc M_cb,
// and the grid's L_G = sum_i m_i x_i x v_i, P2G keeps mass, linear momentum and L; G2P keeps
// linear momentum and L given the grid masses of the same weights.
// C_p per kernel:
//  - quadratic B-spline: D_p = h^2/4 I wherever x_p is, so C_p = 4/h^2 B_p;
//  - trilinear: D_p = h^2 diag(f(1 - f)) (f: x_p's fraction of its cell per axis) is singular
//    on a grid plane. APIC's C_p = sum_i v_i grad w_ip^T is used: per tensor factor
//    w_ip (x_i - x_p)^T D_p^-1 = grad w_ip^T, so it is B_p D_p^-1 off the planes, it is defined on
//    them, and C_p D_p = B_p everywhere, which keeps L exact. It reproduces an affine field
//    (C_p = A) wherever the stencil's nodes have mass. On a plane it reads nodes of zero weight
//    (the cell above); given the grid masses, the column across a plane whose upper nodes have
//    no mass (a body's upper face lying on it) is taken from the side below instead, so C_p
//    still reproduces an affine field there (without them: -v/h from nodes that only rest).
//    The same holds within round-off of a plane, on either side: the far side's nodes then get
//    a weight of ~1e-16 and, under the grid step's massless floor, no mass (GridStepper passes
//    the grid problem's masses, where they are 0).
#include <vector>

#include "core/grid/grid_weights.hpp"

namespace pbdlab {

// Per grid node: m_i and v_i (3 per node).
struct GridMomentum {
  VecX mass;
  Positions velocity;
};

// Per particle: v_p (3 per particle) and C_p.
struct ParticleVelocities {
  Positions velocity;
  std::vector<Mat3> affine;
};

// P2G at the weights' points. `affine` empty means C_p = 0 (PIC's transfer, e.g. a first step).
// Throws std::invalid_argument when a size does not match the weights' points.
GridMomentum particlesToGrid(const GridWeights& weights, const VecX& mass, const Positions& velocity,
                             const std::vector<Mat3>& affine);

// G2P of the grid velocities (3 per node) to the weights' points. `grid_mass` (per node: the
// step's P2G masses, or the grid problem's with the massless floor applied; empty: not used)
// decides the trilinear C_p's side where one side of a point's cell has no mass.
ParticleVelocities gridToParticles(const GridWeights& weights, const Positions& grid_velocity,
                                   const VecX& grid_mass = VecX());

}  // namespace pbdlab
