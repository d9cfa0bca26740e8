#pragma once
// The one interface of every solver, reference or position-based (DESIGN.md, "Solvers"):
// advance the positions of a State of a Problem by one step (or substep) within a Budget,
// appending a row to an IterationLog through a StepMonitor, which evaluates the yardstick
// outside the solver's clock (every iteration, or every k-th: Budget::record_every) and
// decides when the budget is spent. The runner owns the State's velocities, step and time:
// after a step it sets v = (x^{n+1} - x^n) / dt (backward Euler) or 0 (quasistatic), which a
// solver may then change (Solver::finishVelocities: a restitution). A
// solver keeps its own data across steps (multipliers, rotations, colorings) as members.
#include <chrono>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/solver/iteration_log.hpp"
#include "core/solver/yardstick.hpp"

namespace pbdlab {

struct State {
  Positions x;
  VecX v;
  int step = 0;  // index of the (sub)step that produced x (0 = initial state)
  double t = 0.0;
};
// The rest shape mapped by the problem's initial_map (identity by default), with the boundary
// values at t = 0; the problem's initial velocity field (zero by default) at the mapped
// positions, zero on prescribed DOFs.
State initialState(const Problem& problem);

// Whichever limit comes first ends the step.
struct Budget {
  int max_iterations = 100;
  double max_seconds = std::numeric_limits<double>::infinity();  // solver seconds
  double target_relative_residual = 1e-8;
  double absolute_residual_floor = 0.0;  // stop also when |r| <= this
  // The yardstick is evaluated (and a row logged) at iteration 0, every record_every-th
  // iteration and when the step ends; the residual target is checked only there. 1: every
  // iteration. Cheap sweeps (one Gauss-Seidel sweep costs less than the yardstick) use more.
  int record_every = 1;
  // Blow-up detection: a step whose residual grows above divergence_factor times its scale
  // (the larger of |r(x_ref)| and |r| at the solver's initial guess) stops as diverged, before
  // the positions reach infinity. Infinity turns the check off. NaN or infinite positions,
  // residuals or energies always stop a step as diverged.
  double divergence_factor = 1e8;
  // What max_iterations and max_seconds bound: each substep (the default; every step when a
  // frame has one substep), or a whole frame of substeps (the papers' "equal budget per frame"
  // with substepping): then what one substep leaves, the next may use (substepBudget below).
  enum class Scope { kSubstep, kFrame };
  Scope scope = Scope::kSubstep;
};

// The budget of substep `substep` (0-based) of a frame of `substeps` under `budget`, after the
// frame's earlier substeps used `iterations_used` iterations and `seconds_used` solver seconds.
// Scope kSubstep: `budget` itself. Scope kFrame: what is left of the frame's iterations, less
// one for each later substep (so every substep may iterate at least once; the scene loader
// requires max_iterations >= substeps), and what is left of its seconds.
Budget substepBudget(const Budget& budget, int substeps, int substep, int iterations_used, double seconds_used);

// kRoundoff: the solver's update fell to the round-off level of the positions before the
// target was met: the residual is at the floor double precision allows for this problem.
// kSolverTarget: the solver's own stopping rule, not the yardstick's target (multi-layer XPBD's
// frame stop on its secondary residual): the step is not called converged.
enum class StopReason { kNone, kConverged, kRoundoff, kIterationBudget, kTimeBudget, kDiverged, kStalled, kSolverTarget };
std::string stopReasonName(StopReason reason);

class StepMonitor {
 public:
  StepMonitor(const StepObjective& objective, const Budget& budget, IterationLog& log);

  // One of the solver's own log values, by column name (Solver::logColumns()).
  struct Value {
    const char* column;
    double value;
  };
  // Records the state after `iteration` iterations (0 = the solver's initial guess) with
  // the solver's own values by name (a column not given is left empty; a name the solver did
  // not declare throws std::logic_error). Returns true when the step should stop. The
  // yardstick's own cost is excluded from the solver's clock. Between record_every strides
  // only the iteration and time budgets are checked (no yardstick, no row).
  bool record(int iteration, const Positions& x, std::initializer_list<Value> values = {});
  // A solver that stops for its own reason (divergence, stagnation) says so here; `why`
  // (for a divergence) is said in the log and the run's messages.
  void stopFor(StopReason reason, const std::string& why = "");
  // After a solver's iteration: if x is not finite, hands back the last finite iterate (never
  // NaN), records it and stops the step as diverged, returning true; else remembers x as the
  // last finite iterate and returns false.
  bool stopIfNotFinite(int iteration, Positions& x, Positions& last_finite);
  // A step whose start is not finite (x^n or v^n): nothing to iterate on. Sets x to x^n with
  // the boundary values (the rest shape where x^n is not finite either), never NaN, records it
  // as iteration 0 with the solver's `values` and stops the step as diverged, saying why.
  void stopForNonFiniteStart(Positions& x, std::initializer_list<Value> values = {});
  // Whether the step's solver seconds (Budget::max_seconds) are spent, for a solver's inner
  // loops (sweeps of a pseudo-step, substeps of a logged iteration) that run many units of
  // work between two records: it breaks out, then records the iterate, and record() ends the
  // step as time_budget. Records nothing; without a time limit it does not read the clock.
  bool timeSpent() const { return time_limited_ && solverSeconds() >= budget_.max_seconds; }

  // A solver's own diagnostics (e.g. its primal and secondary residuals, computed only for
  // the log) are not solver time: the clock stands still while a ClockPause lives,
  //   { const StepMonitor::ClockPause pause(monitor); g = primalResidual(...); }
  class ClockPause {
   public:
    explicit ClockPause(StepMonitor& monitor) : monitor_(monitor), paused_(Clock::now()) {}
    ~ClockPause() { monitor_.excluded_seconds_ += std::chrono::duration<double>(Clock::now() - paused_).count(); }
    ClockPause(const ClockPause&) = delete;
    ClockPause& operator=(const ClockPause&) = delete;

   private:
    StepMonitor& monitor_;
    std::chrono::steady_clock::time_point paused_;
  };

  StopReason stopReason() const { return reason_; }
  // Why the step diverged, naming the iteration ("" when it did not).
  const std::string& divergence() const { return divergence_; }
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
  bool time_limited_ = false;  // budget_.max_seconds is finite
  IterationLog* log_;
  Clock::time_point start_;
  double excluded_seconds_ = 0.0;
  StopReason reason_ = StopReason::kNone;
  std::string divergence_;
  bool recorded_ = false;          // a row has been recorded in this step
  double residual_scale_ = 0.0;    // max(|r(x_ref)|, |r| at the first record): blow-up scale
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
  // Why this solver cannot run `problem` (e.g. a quasistatic-only solver on a backward Euler
  // scene), or "" if it can. Cheap: validation skips such pairs with this reason.
  virtual std::string rejectionReason(const Problem& problem) const {
    (void)problem;
    return "";
  }
  // An option this solver cannot use with `material` (an XPBD split the model does not
  // offer): the option's key and why; an empty key when there is none. Needs no mesh: the
  // scene loader asks for every material of the scene before any mesh work, so the error
  // names the option's field (/solver/options/KEY) before anything runs.
  struct OptionConflict {
    std::string option;
    std::string reason;
  };
  virtual OptionConflict materialConflict(const Material& material) const {
    (void)material;
    return {};
  }
  // Called once before the first step: colorings, symbolic factorizations, caches.
  virtual void setup(const Problem& problem) { (void)problem; }
  // After setup: conditions under which the method, as configured, is known to misbehave on
  // this problem (e.g. beyond a stability limit it measured), one sentence each. The runner
  // prints them and keeps them in summary.json ("warnings"); the run goes on.
  virtual std::vector<std::string> setupWarnings() const { return {}; }
  // Advances `state` by one step of `objective`. The solver chooses its initial guess,
  // calls monitor.record after every iteration and stops when it returns true.
  virtual void advance(const StepObjective& objective, State& state, StepMonitor& monitor) = 0;
  // After the step, once the runner has set v = (x^{n+1} - x^n) / dt (backward Euler): a solver
  // whose method changes the velocity after the solve (multi-layer XPBD's restitution, eq. 29)
  // does it here. Most solvers do not.
  virtual void finishVelocities(const StepObjective& objective, VecX& v) {
    (void)objective;
    (void)v;
  }
};

struct StepResult {
  StopReason reason = StopReason::kNone;
  int iterations = 0;
  double solver_seconds = 0.0;
  double reference_residual = 0.0;  // |r(x_ref)| of the step
  double residual = 0.0;
  double relative_residual = 0.0;
  double energy = 0.0;
  int last_iteration = 0;  // the iteration the step ended at
  std::string divergence;  // StepMonitor::divergence()
};

// The one place that owns v, the step index and t: advances `state` (at (sub)step
// state.step) by one (sub)step of `problem` with `solver`, then sets v, step and t.
StepResult advanceOneStep(Solver& solver, const Problem& problem, State& state, const Budget& budget,
                          IterationLog& log);

}  // namespace pbdlab
