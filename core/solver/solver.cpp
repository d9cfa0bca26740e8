#include "core/solver/solver.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace pbdlab {

State initialState(const Problem& problem) {
  State state;
  state.x = problem.mesh.restPositionsFlat();
  if (problem.initial_map != Mat3::Identity()) {
    const Vec3& p = problem.initial_map_fixed_point;
    for (int i = 0; i < problem.numNodes(); ++i)
      state.x.segment<3>(3 * i) = p + problem.initial_map * (state.x.segment<3>(3 * i) - p);
  }
  state.v = VecX::Zero(state.x.size());
  if (!problem.initial_velocity.isZero(0.0) || !problem.initial_angular_velocity.isZero(0.0)) {
    const Vec3& w = problem.initial_angular_velocity;
    const double h = problem.stepDt();
    const Mat3 back = Eigen::AngleAxisd(-h * w.norm(), w.norm() > 0.0 ? Vec3(w.normalized()) : Vec3::UnitZ())
                          .toRotationMatrix();  // R(-h w), for the chord form
    for (int i = 0; i < problem.numNodes(); ++i) {
      const Vec3 r = state.x.segment<3>(3 * i) - problem.initial_spin_center;
      state.v.segment<3>(3 * i) = problem.initial_velocity + (problem.initial_spin_chord ? Vec3((r - back * r) / h)
                                                                                          : Vec3(w.cross(r)));
    }
    for (int dof : problem.fixedDofs()) state.v[dof] = 0.0;
  }
  problem.applyDirichlet(state.x, 0.0);
  return state;
}

std::string stopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kNone: return "none";
    case StopReason::kConverged: return "converged";
    case StopReason::kRoundoff: return "roundoff_floor";
    case StopReason::kIterationBudget: return "iteration_budget";
    case StopReason::kTimeBudget: return "time_budget";
    case StopReason::kDiverged: return "diverged";
    case StopReason::kStalled: return "stalled";
    case StopReason::kSolverTarget: return "solver_target";
  }
  return "unknown";
}

StepMonitor::StepMonitor(const StepObjective& objective, const Budget& budget, IterationLog& log)
    : objective_(&objective),
      budget_(budget),
      time_limited_(std::isfinite(budget.max_seconds)),
      log_(&log),
      start_(Clock::now()) {}

double StepMonitor::solverSeconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count() - excluded_seconds_;
}

void StepMonitor::stopFor(StopReason reason, const std::string& why) {
  reason_ = reason;
  if (reason == StopReason::kDiverged && divergence_.empty())
    divergence_ = why.empty() ? "the solver stopped the step as diverged" : why;
}

bool StepMonitor::stopIfNotFinite(int iteration, Positions& x, Positions& last_finite) {
  if (x.allFinite()) {
    last_finite = x;
    return false;
  }
  x = last_finite;
  stopFor(StopReason::kDiverged, "the positions became NaN or infinite in iteration " + std::to_string(iteration) +
                                     " (the last finite iterate is kept)");
  record(iteration, x);
  return true;
}

void StepMonitor::stopForNonFiniteStart(Positions& x, std::initializer_list<Value> values) {
  x = objective_->referencePositions();
  if (!x.allFinite()) x = objective_->problem().mesh.restPositionsFlat();
  objective_->applyBoundary(x);
  stopFor(StopReason::kDiverged, "the step starts from NaN or infinite positions or velocities");
  record(0, x, values);
}

bool StepMonitor::record(int iteration, const Positions& x, std::initializer_list<Value> values) {
  const Clock::time_point paused = Clock::now();
  const double solver_seconds = std::chrono::duration<double>(paused - start_).count() - excluded_seconds_;
  iterations_ = iteration;
  const bool budget_spent = iteration >= budget_.max_iterations || solver_seconds >= budget_.max_seconds;
  const int stride = std::max(1, budget_.record_every);
  if (iteration % stride != 0 && !budget_spent && reason_ == StopReason::kNone) {
    excluded_seconds_ += std::chrono::duration<double>(Clock::now() - paused).count();
    return false;
  }
  std::vector<double> extra(log_->extraColumns().size(), std::numeric_limits<double>::quiet_NaN());
  for (const Value& v : values) {
    const int k = log_->columnIndex(v.column);
    if (k < 0) throw std::logic_error(std::string("StepMonitor::record: the solver did not declare a column '") +
                                      v.column + "'");
    extra[k] = v.value;
  }

  last_residual_ = objective_->residualNorm(x);
  last_relative_ = objective_->relativeResidual(last_residual_);
  last_energy_ = objective_->energy(x);
  log_->append({objective_->frame(), objective_->substep(), iteration, solver_seconds, last_residual_,
                last_relative_, last_energy_, std::move(extra)});

  if (!recorded_) residual_scale_ = std::max(objective_->referenceResidualNorm(), last_residual_);
  recorded_ = true;
  // Built only for a message: a row is recorded every iteration.
  auto at_iteration = [iteration] { return "at iteration " + std::to_string(iteration); };
  if (!std::isfinite(last_residual_)) {
    stopFor(StopReason::kDiverged, "the residual is not finite " + at_iteration());
  } else if (!std::isfinite(last_energy_)) {
    stopFor(StopReason::kDiverged, "the energy is not finite " + at_iteration() +
                                       " (an element may be inverted where its material is undefined)");
  } else if (residual_scale_ > 0.0 && last_residual_ > budget_.divergence_factor * residual_scale_) {
    char why[200];
    std::snprintf(why, sizeof why, "the residual grew to %.3e %s, above divergence_factor %g times its scale %.3e",
                  last_residual_, at_iteration().c_str(), budget_.divergence_factor, residual_scale_);
    stopFor(StopReason::kDiverged, why);
  } else if (reason_ == StopReason::kNone) {
    if (last_relative_ <= budget_.target_relative_residual || last_residual_ <= budget_.absolute_residual_floor)
      reason_ = StopReason::kConverged;
    else if (iteration >= budget_.max_iterations)
      reason_ = StopReason::kIterationBudget;
    else if (solver_seconds >= budget_.max_seconds)
      reason_ = StopReason::kTimeBudget;
  }
  excluded_seconds_ += std::chrono::duration<double>(Clock::now() - paused).count();
  return reason_ != StopReason::kNone;
}

Budget substepBudget(const Budget& budget, int substeps, int substep, int iterations_used, double seconds_used) {
  if (budget.scope == Budget::Scope::kSubstep) return budget;
  Budget part = budget;
  const int later_substeps = substeps - substep - 1;
  part.max_iterations = std::max(0, budget.max_iterations - iterations_used - later_substeps);
  part.max_seconds = std::max(0.0, budget.max_seconds - seconds_used);
  return part;
}

StepResult advanceOneStep(Solver& solver, const Problem& problem, State& state, const Budget& budget,
                          IterationLog& log) {
  const StepObjective objective(problem, state.x, state.v, state.step);
  StepMonitor monitor(objective, budget, log);
  solver.advance(objective, state, monitor);
  state.v = velocitiesAfterStep(objective, state.x);
  if (objective.isDynamic()) solver.finishVelocities(objective, state.v);
  state.step += 1;
  state.t = objective.timeNext();
  return {monitor.stopReason(),          monitor.iterations(),   monitor.solverSeconds(),
          objective.referenceResidualNorm(), monitor.lastResidual(), monitor.lastRelativeResidual(),
          monitor.lastEnergy(),          monitor.iterations(),   monitor.divergence()};
}

}  // namespace pbdlab
