#include "core/solver/yardstick.hpp"

#include <algorithm>

#include "core/model/collision_detection.hpp"
#include "core/terms/weak_constraint_term.hpp"

namespace pbdlab {

StepObjective::StepObjective(const Problem& problem, const Positions& x_prev, const VecX& v_prev, int step)
    : problem_(&problem), step_(step), t_next_(problem.timeAt(step + 1)), x_prev_(x_prev), v_prev_(v_prev) {
  x_tilde_ = isDynamic() ? Positions(x_prev_ + dt() * v_prev_) : x_prev_;
  x_ref_ = x_prev_;
  applyBoundary(x_ref_);
  f_ext_ = problem.externalForce(t_next_);
  terms_ = problem.terms();
  if (const CollisionDetector* detector = problem.collisionDetector()) {
    std::vector<WeakConstraint> contacts = detector->detect(x_ref_);
    num_contacts_ = static_cast<int>(contacts.size());
    if (!contacts.empty())
      terms_.push_back(std::make_shared<WeakConstraintTerm>(std::move(contacts), problem.numNodes(), "collisions"));
  }
  reference_residual_ = residualNorm(x_ref_);
}

double StepObjective::energy(const Positions& x) const {
  const double potential = potentialEnergy(x);
  if (!isDynamic()) return potential;
  const VecX dx = x - x_tilde_;
  return 0.5 * dx.dot(problem_->dofMasses().cwiseProduct(dx)) + dt() * dt() * potential;
}

double StepObjective::potentialEnergy(const Positions& x) const {
  double potential = -f_ext_.dot(x);
  for (const auto& term : terms_) potential += term->energy(x, t_next_);
  return potential;
}

void StepObjective::gradient(const Positions& x, VecX& g) const {
  g = -f_ext_;
  for (const auto& term : terms_) term->addGradient(x, t_next_, 1.0, g);
  if (isDynamic()) g = problem_->dofMasses().cwiseProduct(x - x_tilde_) + dt() * dt() * g;
}

double StepObjective::residualNorm(const Positions& x) const {
  VecX g;
  gradient(x, g);
  for (const auto& collider : problem_->colliderTerms()) collider->projectResidual(x, g);
  double sum = 0.0;
  for (int dof : problem_->freeDofs()) sum += g[dof] * g[dof];
  return std::sqrt(sum);
}

double StepObjective::maxPenetration(const Positions& x) const {
  double deepest = 0.0;
  for (const auto& collider : problem_->colliderTerms()) deepest = std::max(deepest, collider->maxPenetration(x));
  // This step's contacts: each vertex's distance along the normal to the surface point it is
  // tied to (detected at x_ref, so at x = x_ref this is the penetration found there).
  if (num_contacts_ > 0) {
    const auto& contacts = static_cast<const WeakConstraintTerm&>(*terms_.back());
    for (int c = 0; c < contacts.numStencils(); ++c)
      deepest = std::max(deepest, std::abs(contacts.normal(c).dot(contacts.constraint(c, x))));
  }
  return deepest;
}

double StepObjective::relativeResidual(double residual_norm) const {
  // A step whose reference point is already in equilibrium has no scale: report |r| itself.
  return reference_residual_ > 0.0 ? residual_norm / reference_residual_ : residual_norm;
}

VecX velocitiesAfterStep(const StepObjective& objective, const Positions& x_next) {
  if (!objective.isDynamic()) return VecX::Zero(x_next.size());
  return (x_next - objective.previousPositions()) / objective.dt();
}

}  // namespace pbdlab
