#pragma once
// The yardstick of DESIGN.md: ONE definition of the discrete equations of a step, by which
// every solver is judged. For the step from t^n to t^{n+1}:
//   backward Euler: E(x) = 1/2 (x - x~)^T M (x - x~) + dt^2 (PE(x) - f_ext . x),
//                   r(x) = M (x - x~) + dt^2 (grad PE(x) - f_ext),  x~ = x^n + dt v^n;
//   quasistatic:    E(x) = PE(x) - f_ext . x,  r(x) = grad PE(x) - f_ext,
// and at a node in contact with a kinematic collider, r_i loses the part the collider's
// normal force can balance (core/terms/collider_term.hpp);
// f_ext = f_ext(t^{n+1}) (gravity and the loads at the step's time, Problem::externalForce;
// held here, computed once per step: every solver reads the objective's, so a load that
// changes with time is the same for the yardstick and the solver),
// PE the sum of the Problem's energy terms at t^{n+1}, plus this step's collision contacts
// (vertex-triangle weak constraints detected at x_ref, core/model/collision_detection.hpp). With substeps, a step here is one
// substep (dt = the frame's dt / substeps): each substep is judged on its own.
// r is taken over the free DOFs only, with the Euclidean norm. The relative residual divides
// by |r(x_ref)|, x_ref = x^n with this step's boundary values applied: the same reference
// for every solver, whatever its own initial guess.
#include "core/model/problem.hpp"

namespace pbdlab {

class StepObjective {
 public:
  // The step that takes (x_prev, v_prev) at (sub)step index `step` to step + 1.
  StepObjective(const Problem& problem, const Positions& x_prev, const VecX& v_prev, int step);

  const Problem& problem() const { return *problem_; }
  int step() const { return step_; }  // the global (sub)step index, from 0
  // The frame (1-based) and the substep within it (1-based) of this step, for logs.
  int frame() const { return step_ / problem_->time.substeps + 1; }
  int substep() const { return step_ % problem_->time.substeps + 1; }
  double timeNext() const { return t_next_; }
  double dt() const { return problem_->stepDt(); }
  bool isDynamic() const { return problem_->time.integrator == Integrator::kBackwardEuler; }

  const Positions& previousPositions() const { return x_prev_; }
  const VecX& previousVelocities() const { return v_prev_; }
  // x~ = x^n + dt v^n (backward Euler), x^n (quasistatic).
  const Positions& inertialTarget() const { return x_tilde_; }
  // x^n with this step's boundary values applied: the common reference point.
  const Positions& referencePositions() const { return x_ref_; }
  // The energy terms of this step: the Problem's terms(), then (with collisions enabled and
  // some detected) the step's contacts as one weak-constraint term. Solvers iterate these.
  const std::vector<std::shared_ptr<const EnergyTerm>>& terms() const { return terms_; }
  // This step's external force f_ext(t^{n+1}) over all DOFs (Problem::externalForce). Backward
  // Euler takes it at the end of the step; quasistatic at the step's time, like the boundary
  // motions.
  const VecX& externalForce() const { return f_ext_; }
  // The contacts created for this step (0 without collisions).
  int numContacts() const { return num_contacts_; }
  // Sets the prescribed DOFs of x to this step's boundary values.
  void applyBoundary(Positions& x) const { problem_->applyDirichlet(x, t_next_); }

  // E(x) above.
  double energy(const Positions& x) const;
  // PE(x) - f_ext . x: the potential part of E (what a quasistatic E is).
  double potentialEnergy(const Positions& x) const;
  // Full gradient dE/dx (all DOFs, prescribed ones included; callers restrict as needed).
  void gradient(const Positions& x, VecX& g) const;
  // |r(x)| over the free DOFs, with the colliders' projection at nodes in contact
  // (core/terms/collider_term.hpp).
  double residualNorm(const Positions& x) const;
  // The deepest penetration at x: of any collider, and of this step's collision contacts
  // (|n . C| of each; 0 without either).
  double maxPenetration(const Positions& x) const;
  // |r(x_ref)|, computed once.
  double referenceResidualNorm() const { return reference_residual_; }
  double relativeResidual(double residual_norm) const;

  // The scale of the elastic and inertial terms in E: backward Euler multiplies PE by dt^2.
  double elasticScale() const { return isDynamic() ? dt() * dt() : 1.0; }

 private:
  const Problem* problem_;
  int step_;
  double t_next_;
  Positions x_prev_;
  VecX v_prev_;
  Positions x_tilde_;
  Positions x_ref_;
  VecX f_ext_;
  std::vector<std::shared_ptr<const EnergyTerm>> terms_;
  int num_contacts_ = 0;
  double reference_residual_ = 0.0;
};

// Velocities after the step: (x^{n+1} - x^n) / dt for backward Euler, zero for quasistatic.
VecX velocitiesAfterStep(const StepObjective& objective, const Positions& x_next);

}  // namespace pbdlab
