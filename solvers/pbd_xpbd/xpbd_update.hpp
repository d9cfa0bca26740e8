#pragma once
// The arithmetic of one XPBD / B-PXPBD constraint visit and XPBD's prediction, written once for
// the solvers of this folder: XpbdSolver on mesh vertices (xpbd_solver.cpp) and the grid-based
// solvers on grid nodes (grid_xpbd_solver.hpp).
//
// PXPBD (Chen et al. 2023), with the multiplier step of the papers' README (eq. 16 misplaces
// lambda in the denominator):
//   dlambda = -(C + alpha~ lambda) / (grad C M^-1 grad C^T + alpha~),  alpha~ = alpha / dt^2
//   XPBD:    dx = dlambda M^-1 grad C^T                                  (eq. 15, 17)
//   B-PXPBD: dx_fp = (lambda + dlambda) M^-1 grad C^T - dx_total         (eq. 22, eq. 20
//                                                                         restricted to C's DOFs)
//            dx    = zeta dlambda M^-1 grad C^T + (1 - zeta) dx_fp       (eq. 19, 21)
//            dx_total += dx                                              (Algorithm 1, step 5)
#include <cmath>
#include <vector>

#include "core/solver/yardstick.hpp"

namespace pbdlab {

// dlambda of one constraint, `weighted_norm` = grad C M^-1 grad C^T. False (no update) when
// the denominator is not positive: zero compliance at a point where grad C (or every mass
// it sees) vanishes, nothing to project.
inline bool xpbdMultiplierStep(double C, double lambda, double weighted_norm, double alpha_tilde,
                               double& delta_lambda) {
  const double denominator = weighted_norm + alpha_tilde;
  if (!(denominator > 0.0)) return false;
  delta_lambda = -(C + alpha_tilde * lambda) / denominator;
  return true;
}

// B-PXPBD's displacement of one visit (eq. 19-22), `weighted` = M^-1 grad C^T over the
// constraint's DOFs, `total` its accumulated displacement of this step (updated). lambda is
// the multiplier before the visit. zeta = 1 gives XPBD's dlambda weighted.
template <class Weighted, class Total>
inline Weighted blendedPrimalDisplacement(double zeta, double lambda, double delta_lambda, const Weighted& weighted,
                                          Total&& total) {
  const Weighted fixed_point = (lambda + delta_lambda) * weighted - total;  // eq. 22
  const Weighted dx = zeta * delta_lambda * weighted + (1.0 - zeta) * fixed_point;  // eq. 19, 21
  total += dx;
  return dx;
}

// |g| and |h| of eq. 11-12 from the constraint forces sum_c lambda_c grad C_c (`force`, all
// DOFs) and each constraint's h_c^2 (in constraint order: deterministic):
// g = M (x - x_pred) - force over the free DOFs.
inline void xpbdResidualNorms(const Problem& problem, const Positions& x, const Positions& x_pred, const VecX& force,
                              const std::vector<double>& secondary_squared, double& primal, double& secondary) {
  const VecX& mass = problem.dofMasses();
  double g2 = 0.0;
  for (int dof : problem.freeDofs()) {
    const double g = mass[dof] * (x[dof] - x_pred[dof]) - force[dof];
    g2 += g * g;
  }
  double h2 = 0.0;
  for (double value : secondary_squared) h2 += value;
  primal = std::sqrt(g2);
  secondary = std::sqrt(h2);
}

// x <- x + dt^2 M^-1 f_ext on the free DOFs, this step's boundary values on the others: x~
// (passed in x) becomes XPBD's prediction, in place (dt: the step's, or XPBD-QS's pseudo-step).
inline void addExternalPrediction(const StepObjective& objective, double dt, Positions& x) {
  const Problem& problem = objective.problem();
  const VecX& f_ext = objective.externalForce();
  for (int dof : problem.freeDofs()) x[dof] += dt * dt * f_ext[dof] / problem.dofMasses()[dof];
  objective.applyBoundary(x);
}

// XPBD's initial guess and the x~ of its primal residual g (eq. 11, PXPBD's x~ with the
// external force folded in): x^n + dt v^n + dt^2 M^-1 f_ext. Backward Euler.
inline Positions xpbdPrediction(const StepObjective& objective) {
  Positions x = objective.inertialTarget();
  addExternalPrediction(objective, objective.dt(), x);
  return x;
}

}  // namespace pbdlab
