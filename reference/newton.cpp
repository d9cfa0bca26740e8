#include "reference/newton.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace pbdlab {

namespace {
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

enum HessianUsed { kUsedTrue = 0, kUsedProjected = 1, kUsedShifted = 2 };
// Relative size of a Newton update at the round-off level of the positions.
constexpr double kRoundoffStep = 1e-12;
}  // namespace

std::string cholmodVersion() {
  return "CHOLMOD " + std::to_string(CHOLMOD_MAIN_VERSION) + "." + std::to_string(CHOLMOD_SUB_VERSION) + "." +
         std::to_string(CHOLMOD_SUBSUB_VERSION);
}

std::string blasLibrary() {
  // Debian switches BLAS through the alternatives system; name the library actually used.
  std::error_code error;
  for (const char* link : {"/etc/alternatives/libblas.so.3-x86_64-linux-gnu", "/etc/alternatives/libblas.so.3"}) {
    const auto target = std::filesystem::canonical(link, error);
    if (!error) return target.string();
  }
  return "unknown";
}

NewtonOptions::Hessian defaultHessian(LinearSolverKind kind) {
  switch (kind) {
    case LinearSolverKind::kCholmod: return NewtonOptions::Hessian::kAuto;
    case LinearSolverKind::kConjugateGradient:
    case LinearSolverKind::kGaussSeidel: return NewtonOptions::Hessian::kProjected;
    case LinearSolverKind::kBiCgStab:
    case LinearSolverKind::kLu: return NewtonOptions::Hessian::kTrue;
  }
  return NewtonOptions::Hessian::kAuto;
}

NewtonSolver::NewtonSolver(NewtonOptions options) : options_(options) {
  if (options_.linear_solver == LinearSolverKind::kCholmod) return;
  if (options_.hessian == NewtonOptions::Hessian::kAuto) options_.hessian = defaultHessian(options_.linear_solver);
  if (options_.linear_iterations < 1 || !(options_.linear_tolerance >= 0.0) ||
      !(options_.sor_omega > 0.0 && options_.sor_omega < 2.0))
    throw std::invalid_argument("NewtonOptions: linear_iterations >= 1, linear_tolerance >= 0, 0 < sor_omega < 2");
  linear_solver_ = std::make_unique<SparseLinearSolver>(SparseLinearSolver::Options{
      options_.linear_solver, options_.linear_iterations, options_.linear_tolerance, options_.sor_omega});
}

void NewtonSolver::setup(const Problem& problem) {
  problem_ = &problem;
  hessian_.reset();  // built at the first step, from its objective's terms
  // CHOLMOD's messages about non-definite matrices are expected here: we test info().
  cholesky_.cholmod().print = 0;
}

void NewtonSolver::preparePattern(const StepObjective& objective) {
  if (hessian_ && hessian_->matches(objective)) return;
  hessian_ = std::make_unique<FreeDofHessian>(objective, options_.pattern);
  // Symbolic analysis (or the full matrix's pattern), once per set of stencils.
  if (linear_solver_)
    linear_solver_->analyzePattern(hessian_->pattern());
  else
    cholesky_.analyzePattern(hessian_->pattern());
  ++symbolic_analyses_;
}

bool NewtonSolver::factorUnshifted() {
  cholesky_.factorize(hessian_->matrix());
  return cholesky_.info() == Eigen::Success;
}

double NewtonSolver::factorShifted(double first_shift) {
  // Shift by growing multiples of the mean diagonal until the factorization succeeds.
  const SparseMatrix& H = hessian_->matrix();
  double shift = first_shift > 0.0 ? first_shift : 1e-8 * H.diagonal().cwiseAbs().mean();
  for (int attempt = 0; attempt < 40; ++attempt, shift *= 10.0) {
    shifted_ = H;
    for (int i = 0; i < shifted_.rows(); ++i) shifted_.coeffRef(i, i) += shift;
    cholesky_.factorize(shifted_);
    if (cholesky_.info() == Eigen::Success) return shift;
  }
  return std::numeric_limits<double>::infinity();
}

NewtonSolver::Direction NewtonSolver::cholmodDirection(const StepObjective& objective, const Positions& x,
                                                       const VecX& g_free) {
  Direction result;
  const Clock::time_point assembly_start = Clock::now();
  const bool projected_first = options_.hessian == NewtonOptions::Hessian::kProjected;
  HessianKind kind = projected_first ? HessianKind::kProjected : HessianKind::kTrue;
  hessian_->assemble(objective, x, kind);
  result.assembly_seconds = secondsSince(assembly_start);

  // Factor; fall back to the projected Hessian, then to a shift (see the header). A failed
  // true factorization goes straight to the projection: shifting an indefinite true Hessian
  // first would cost a factorization per tried shift.
  const Clock::time_point factor_start = Clock::now();
  VecX& d = result.d;
  auto solveIsDescent = [&]() {
    d = -cholesky_.solve(g_free);
    return g_free.dot(d) < 0.0;
  };
  bool descent = factorUnshifted() && solveIsDescent();
  const bool may_project = options_.hessian == NewtonOptions::Hessian::kAuto && kind == HessianKind::kTrue;
  if (!descent && may_project) {
    const Clock::time_point reassembly = Clock::now();
    kind = HessianKind::kProjected;
    hessian_->assemble(objective, x, kind);
    result.assembly_seconds += secondsSince(reassembly);
    descent = factorUnshifted() && solveIsDescent();
  }
  double& shift = result.shift;
  for (double try_shift = 0.0; !descent; try_shift = 10.0 * shift) {
    shift = factorShifted(try_shift);
    if (!std::isfinite(shift)) break;
    descent = solveIsDescent();
  }
  result.factor_seconds = secondsSince(factor_start);  // factor(s) and solve(s)
  result.hessian_used = shift > 0.0 ? kUsedShifted : (kind == HessianKind::kProjected ? kUsedProjected : kUsedTrue);
  if (!std::isfinite(shift) || !d.allFinite()) {
    result.hessian_used = kUsedShifted;
    result.failure = "the Newton direction is not finite (no finite shift makes the Hessian solvable)";
    return result;
  }
  result.linear_residual = relativeResidualOfLower(hessian_->matrix(), d, -g_free);
  return result;
}

NewtonSolver::Direction NewtonSolver::linearSolverDirection(const StepObjective& objective, const Positions& x,
                                                            const VecX& g_free) {
  Direction result;
  const Clock::time_point assembly_start = Clock::now();
  const bool projected = options_.hessian == NewtonOptions::Hessian::kProjected;
  const SparseMatrix& H = hessian_->assemble(objective, x, projected ? HessianKind::kProjected : HessianKind::kTrue);
  result.hessian_used = projected ? kUsedProjected : kUsedTrue;
  result.assembly_seconds = secondsSince(assembly_start);
  // The linear solver's own time: the full matrix's values, the Jacobi preconditioner or the
  // LU factorization, and the solve.
  const Clock::time_point solve_start = Clock::now();
  linear_solver_->setMatrix(H);
  const LinearSolveResult solved = linear_solver_->solve(-g_free, result.d);
  result.factor_seconds = secondsSince(solve_start);
  result.linear_iterations = solved.iterations;
  result.linear_residual = solved.relative_residual;
  if (!result.d.allFinite())
    result.failure = "the Newton direction of linear solver '" + linearSolverName(options_.linear_solver) +
                     "' is not finite" + (solved.success ? "" : " (the solver failed: singular matrix or breakdown)");
  return result;
}

void NewtonSolver::advance(const StepObjective& objective, State& state, StepMonitor& monitor) {
  if (problem_ != &objective.problem()) setup(objective.problem());
  preparePattern(objective);

  Positions x = objective.isDynamic() ? objective.inertialTarget() : objective.previousPositions();
  objective.applyBoundary(x);
  bool stop = monitor.record(0, x);

  VecX g, g_trial;
  double energy = objective.energy(x);
  objective.gradient(x, g);
  for (int iteration = 1; !stop; ++iteration) {
    const VecX g_free = hessian_->restrictToFree(g);
    const Direction direction =
        linear_solver_ ? linearSolverDirection(objective, x, g_free) : cholmodDirection(objective, x, g_free);
    const VecX& d = direction.d;
    const double shift = direction.shift;
    // The row of this iteration, with or without the line search's columns.
    auto record = [&](double line_search_steps, double step_length) {
      return monitor.record(iteration, x, {{"line_search_steps", line_search_steps}, {"step_length", step_length},
                                           {"hessian", double(direction.hessian_used)}, {"shift", shift},
                                           {"assembly_seconds", direction.assembly_seconds},
                                           {"factor_seconds", direction.factor_seconds},
                                           {"linear_iterations", double(direction.linear_iterations)},
                                           {"linear_residual", direction.linear_residual}});
    };
    if (!direction.failure.empty()) {
      monitor.stopFor(StopReason::kDiverged, direction.failure + " at iteration " + std::to_string(iteration));
      monitor.record(iteration, x, {{"hessian", double(direction.hessian_used)}, {"shift", shift},
                                    {"assembly_seconds", direction.assembly_seconds},
                                    {"factor_seconds", direction.factor_seconds},
                                    {"linear_iterations", double(direction.linear_iterations)},
                                    {"linear_residual", direction.linear_residual}});
      break;
    }

    // A Newton update below the round-off level of the positions cannot improve them: the
    // residual is at its floor in double precision (E |x| eps / h for stiff materials under
    // small loads can be far above a relative 1e-8). Stop instead of line-searching noise.
    if (shift == 0.0 && d.lpNorm<Eigen::Infinity>() <= kRoundoffStep * std::max(1.0, x.lpNorm<Eigen::Infinity>())) {
      monitor.stopFor(StopReason::kRoundoff);
      record(0, 0.0);
      break;
    }

    // Backtracking line search on the energy. Where the predicted decrease is below what the
    // energy can resolve in double precision (close to the solution), the residual norm is the
    // merit function instead.
    // With a linear solver other than CHOLMOD the direction may not descend (slope >= 0):
    // then the residual norm is the merit function.
    const double slope = g_free.dot(d);  // < 0 for CHOLMOD's directions
    const double roundoff_scale =
        std::abs(energy) + objective.elasticScale() * std::abs(objective.externalForce().dot(x));
    const bool resolvable = -slope > 1e-10 * roundoff_scale;
    double alpha = 1.0;
    int line_search_steps = 0;
    Positions x_trial = x;
    double energy_trial = energy;
    bool accepted = false;
    for (;;) {
      x_trial = x;
      hessian_->addFromFree(alpha * d, x_trial);
      energy_trial = objective.energy(x_trial);
      objective.gradient(x_trial, g_trial);
      if (!options_.line_search) { accepted = true; break; }
      if (resolvable ? energy_trial <= energy + options_.armijo * alpha * slope
                     : hessian_->restrictToFree(g_trial).norm() < g_free.norm()) {
        accepted = true;
        break;
      }
      if (++line_search_steps > options_.max_line_search_steps) break;
      alpha *= 0.5;
    }
    if (!accepted) {
      monitor.stopFor(StopReason::kStalled);
      record(line_search_steps, 0.0);
      break;
    }
    x.swap(x_trial);
    g.swap(g_trial);
    energy = energy_trial;
    stop = record(line_search_steps, alpha);
  }
  state.x = x;
}

}  // namespace pbdlab
