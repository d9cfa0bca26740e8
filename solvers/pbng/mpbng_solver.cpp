#include "solvers/pbng/mpbng_solver.hpp"

#include <cmath>
#include <stdexcept>

namespace pbdlab {

double MpbngSolver::kappa(int l, int k_max, double r_pad) {
  const double r_des = k_max + r_pad;
  const double ratio = l / r_des;
  return ratio >= 1.0 ? 0.0 : std::sqrt(1.0 - ratio * ratio);
}

std::string MpbngSolver::coarseLevels(const Problem& problem, std::vector<Mesh>& coarse) const {
  coarse = options_.coarse_meshes;
  if (!coarse.empty() || options_.levels == 1) return "";
  std::string why;
  for (int levels : options_.levels > 0 ? std::vector<int>{options_.levels} : std::vector<int>{3, 2}) {
    why = coarsenStructuredGrid(problem.bodies[0].mesh, levels, coarse);
    if (why.empty()) return "";
  }
  return "MPBNG's \"levels\": " + (options_.levels > 0 ? std::to_string(options_.levels) : std::string("2 or 3")) +
         " coarsens a structured grid by every other lattice line, and " + why +
         "; give the coarse levels as mesh recipes (\"levels\": [recipe, ...])";
}

std::string MpbngSolver::rejectionReason(const Problem& problem) const {
  const std::string rejection = mpbngProblemRejection(problem);
  if (!rejection.empty()) return rejection;
  std::vector<Mesh> coarse;
  return coarseLevels(problem, coarse);
}

void MpbngSolver::setup(const Problem& problem) {
  const std::string rejection = mpbngProblemRejection(problem);
  if (!rejection.empty()) throw std::invalid_argument(rejection);
  std::vector<Mesh> coarse;
  const std::string why = coarseLevels(problem, coarse);
  if (!why.empty()) throw std::invalid_argument(why);
  levels_ = std::make_unique<MpbngLevels>(buildMpbngLevels(problem, coarse, options_.level_options));
  sweeper_ = PbngSolver(options_.pbng);
  sweeper_.setup(levels_->problem);
  const int L = levels_->numLevels();
  const int n = levels_->problem.numNodes();
  coarsest_.assign(n, 0);
  multi_level_.assign(n, 0);
  finest_.assign(n, 0);
  for (int i = levels_->first_node[L - 1]; i < n; ++i) coarsest_[i] = 1;
  // The union over i != n (all levels but the coarsest), or every level; one level: itself.
  const int multi_end = L == 1 || options_.multi_level == MpbngOptions::MultiLevel::kAll ? n : levels_->first_node[L - 1];
  for (int i = 0; i < multi_end; ++i) multi_level_[i] = 1;
  for (int i = 0; i < levels_->numFineNodes(); ++i) finest_[i] = 1;
  own_step_ = -1;
}

void MpbngSolver::scale(double coarse, double bindings) {
  const Problem& p = levels_->problem;
  PbngSolver::Scaling scaling;
  scaling.node.assign(p.numNodes(), 1.0);
  for (int i = levels_->numFineNodes(); i < p.numNodes(); ++i) scaling.node[i] = coarse;
  scaling.force = options_.scale_gravity;
  scaling.added_force = added_force_;
  if (levels_->binding_term >= 0) {
    scaling.term.assign(p.terms().size() - p.colliderTerms().size(), 1.0);
    scaling.term[levels_->binding_term] = bindings;
  }
  sweeper_.setScaling(std::move(scaling));
}

void MpbngSolver::advance(const StepObjective& objective, State& state, StepMonitor& monitor) {
  const MpbngLevels& levels = *levels_;
  const int fine_dofs = 3 * levels.numFineNodes();
  const int dofs = levels.problem.numDofs();
  // The levels' x^n and v^n: level 0's are the user's; the coarse levels' restricted from them
  // or kept from the last step (coarse_state).
  Positions x_prev(dofs);
  VecX v_prev(dofs);
  const bool own = options_.coarse_state == MpbngOptions::CoarseState::kOwn && own_step_ == objective.step();
  if (own) {
    x_prev = own_x_;
    v_prev = own_v_;
  }
  x_prev.head(fine_dofs) = objective.previousPositions();
  v_prev.head(fine_dofs) = objective.previousVelocities();
  if (!own) {
    levels.restrictToCoarse(x_prev);
    levels.restrictToCoarse(v_prev);
  }
  // The levels' objective also evaluates its own reference residual (one gradient of every
  // level), which MPBNG never reads: its construction is kept off the solver's clock (what MPBNG
  // uses of it, x~ and f_ext, is a few vector operations).
  const std::unique_ptr<const StepObjective> levels_objective_owner = [&] {
    const StepMonitor::ClockPause pause(monitor);
    return std::make_unique<const StepObjective>(levels.problem, x_prev, v_prev, objective.step());
  }();
  const StepObjective& levels_objective = *levels_objective_owner;
  // The user's loads other than gravity (each level has its own weight), shared among the levels.
  const Problem& original = objective.problem();
  VecX loads = objective.externalForce();
  for (int i = 0; i < original.numNodes(); ++i) loads.segment<3>(3 * i) -= original.nodeMasses()[i] * original.gravity;
  added_force_ = loads.lpNorm<Eigen::Infinity>() > 0.0 ? levels.distributeForce(loads) : VecX();

  Positions x;
  sweeper_.beginStep(levels_objective, x);
  const double colors = sweeper_.numColors();
  const auto fine = [&]() { return Positions(x.head(fine_dofs)); };
  if (!x.allFinite()) {
    Positions start;
    monitor.stopForNonFiniteStart(start, {{"colors", colors}});
    state.x = start;
    return;
  }
  const std::vector<std::vector<int>> coarsest = sweeper_.sweepGroups(coarsest_);
  const std::vector<std::vector<int>> multi_level = sweeper_.sweepGroups(multi_level_);
  const std::vector<std::vector<int>> finest = sweeper_.sweepGroups(finest_);
  const auto count = [](const std::vector<std::vector<int>>& groups) {
    double nodes = 0.0;
    for (const auto& group : groups) nodes += static_cast<double>(group.size());
    return nodes;
  };
  const double fine_nodes = std::max(count(finest), 1.0);
  const double coarsest_share = count(coarsest) / fine_nodes, multi_share = count(multi_level) / fine_nodes;

  const int k_max = monitor.budget().max_iterations;
  double kappa_now = 1.0;
  double fine_sweeps = 0.0;
  scale(1.0, 1.0);
  Positions x_fine = fine();
  Positions last_finite = x_fine;
  bool stop = monitor.record(0, x_fine, {{"colors", colors}, {"kappa", kappa_now}, {"fine_sweeps", fine_sweeps}});
  for (int l = 1; !stop; ++l) {
    if (options_.coarsest_pass == MpbngOptions::CoarsestPass::kEveryIteration || l == 1) {
      for (int s = 0; s < options_.coarsest_sweeps; ++s) sweeper_.sweep(x, coarsest);
      fine_sweeps += options_.coarsest_sweeps * coarsest_share;
    }
    sweeper_.sweep(x, multi_level);
    fine_sweeps += multi_share;
    const double kappa_l = kappa(l, k_max, options_.r_pad);
    kappa_now = options_.kappa == MpbngOptions::Kappa::kAbsolute ? kappa_l : kappa_now * kappa_l;
    scale(kappa_now, kappa_now);
    if (l >= k_max) {
      // The final pass on level 0 (its bindings at kappa_kmax, or off).
      if (!options_.final_bindings) scale(kappa_now, 0.0);
      for (int s = 0; s < options_.final_sweeps; ++s) sweeper_.sweep(x, finest);
      fine_sweeps += options_.final_sweeps;
    }
    x_fine = fine();
    if (monitor.stopIfNotFinite(l, x_fine, last_finite)) break;
    stop = monitor.record(l, x_fine, {{"kappa", kappa_now}, {"fine_sweeps", fine_sweeps}});
  }
  state.x = x_fine;
  if (options_.coarse_state == MpbngOptions::CoarseState::kOwn) {
    own_x_ = x;
    own_x_.head(fine_dofs) = x_fine;
    own_v_ = levels_objective.isDynamic() ? VecX((own_x_ - x_prev) / levels_objective.dt()) : VecX::Zero(dofs);
    own_step_ = objective.step() + 1;
  }
}

}  // namespace pbdlab
