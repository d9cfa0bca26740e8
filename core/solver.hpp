#pragma once
// The one interface of every solver, reference or position-based (DESIGN.md, "Solvers"):
// advance a State of a Problem by one step within a Budget, appending a row to an
// IterationLog after every iteration through a StepMonitor, which evaluates the yardstick
// outside the solver's clock and decides when the budget is spent.
#include <chrono>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/iteration_log.hpp"
#include "core/yardstick.hpp"

namespace pbdlab {

struct State {
  Positions x;
  VecX v;
  int step = 0;  // index of the step that produced x (0 = initial state)
  double t = 0.0;
};
State initialState(const Problem& problem);

// Whichever limit comes first ends the step.
struct Budget {
  int max_iterations = 100;
  double max_seconds = std::numeric_limits<double>::infinity();  // solver seconds
  double target_relative_residual = 1e-8;
  double absolute_residual_floor = 0.0;  // stop also when |r| <= this
};

// kRoundoff: the solver's update fell to the round-off level of the positions before the
// target was met: the residual is at the floor double precision allows for this problem.
enum class StopReason { kNone, kConverged, kRoundoff, kIterationBudget, kTimeBudget, kDiverged, kStalled };
std::string stopReasonName(StopReason reason);

class StepMonitor {
 public:
  StepMonitor(const StepObjective& objective, const Budget& budget, IterationLog& log);

  // Records the state after `iteration` iterations (0 = the solver's initial guess) with
  // the solver's own columns, in the order of Solver::logColumns(). Returns true when the
  // step should stop. The yardstick's own cost is excluded from the solver's clock.
  bool record(int iteration, const Positions& x, const std::vector<double>& extra = {});
  // A solver that stops for its own reason (divergence, stagnation) says so here.
  void stopFor(StopReason reason) { reason_ = reason; }

  StopReason stopReason() const { return reason_; }
  double solverSeconds() const;
  double lastResidual() const { return last_residual_; }
  double lastRelativeResidual() const { return last_relative_; }
  double lastEnergy() const { return last_energy_; }
  int iterations() const { return iterations_; }
  const StepObjective& objective() const { return *objective_; }
  const Budget& budget() const { return budget_; }

 private:
  using Clock = std::chrono::steady_clock;
  const StepObjective* objective_;
  Budget budget_;
  IterationLog* log_;
  Clock::time_point start_;
  double excluded_seconds_ = 0.0;
  StopReason reason_ = StopReason::kNone;
  double last_residual_ = 0.0;
  double last_relative_ = 0.0;
  double last_energy_ = 0.0;
  int iterations_ = 0;
};

class Solver {
 public:
  virtual ~Solver() = default;
  virtual std::string name() const = 0;
  // Names of the solver's own log columns (beside the yardstick's).
  virtual std::vector<std::string> logColumns() const { return {}; }
  // Called once before the first step: colorings, symbolic factorizations, caches.
  virtual void setup(const Problem& problem) { (void)problem; }
  // Advances `state` by one step of `objective`. The solver chooses its initial guess,
  // calls monitor.record after every iteration and stops when it returns true.
  virtual void advance(const StepObjective& objective, State& state, StepMonitor& monitor) = 0;
};

}  // namespace pbdlab
