#pragma once
// VBD: Vertex Block Descent (A. H. Chen, Z. Liu, Y. Yang, C. Yuksel, "Vertex Block Descent",
// ACM TOG 43(4), SIGGRAPH 2024), built on PBNG's machinery (pbng_solver.hpp: the node
// coloring, the node -> (term, stencil) table, the per-node step, the colliders, Chebyshev).
// Both minimize the step's incremental potential one node at a time,
//   x_i <- x_i - A_i^-1 g_i,  g_i = m_i (x_i - x~_i) + dt^2 (dPE/dx_i - f_ext_i),
// and differ, line by line (docs/vbd.md):
//  - A_i: PBNG, eq. 32-34's SPD approximation (2 mu |g|^2 I + lambda c c^T for an element);
//    VBD, the exact node block of each term's Hessian, made positive semi-definite
//    (node_block "projected_terms": each term's 3x3 block with its negative eigenvalues
//    clamped; "projected_sum": the sum clamped once), plus m_i I. P1 tetrahedra of closed-form
//    materials take it in closed form on PBNG's lane kernel (p1_visit.hpp, H_i = V g^T dP/dF g);
//    other elements and materials, addNodeBlock with HessianKind::kTrue.
//  - The initial guess: PBNG, x~ = x^n + dt v^n; VBD, the adaptive x^n + dt v^n + dt^2 a~
//    (a~ the last step's acceleration along the gravity, clamped to [0, |g|]); "inertial",
//    "previous" and "pbd_prediction" as PBNG's.
//  - Damping (option, VBD's k_d): (k_d / dt) H_i (x_i - x_i^n) in the row and (k_d / dt) H_i in
//    the block; off by default (it changes the equations the true residual measures).
//  - Chebyshev: VBD's form is PBNG's with gamma = 1 (x^{l+1} = w (x^^{l+1} - x^{l-1}) +
//    x^{l-1}); off by default (chebyshev_rho 0), as the scene-dependent rho must be chosen.
// A node whose block is not positive definite (a zero block: no mass, no stiffness) is not
// moved, as in PBNG.
#include "solvers/pbng/pbng_solver.hpp"

namespace pbdlab {

// VBD's defaults on PbngOptions.
inline PbngOptions vbdDefaultOptions() {
  PbngOptions options;
  options.node_block = PbngOptions::NodeBlock::kProjectedTerms;
  options.initial_guess = PbngOptions::InitialGuess::kAdaptive;
  options.chebyshev_gamma = 1.0;
  return options;
}

class VbdSolver : public PbngSolver {
 public:
  explicit VbdSolver(PbngOptions options = vbdDefaultOptions()) : PbngSolver(options) {}
  std::string name() const override { return "vbd"; }
};

}  // namespace pbdlab
