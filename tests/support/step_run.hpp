#pragma once
// One step of a solver from a given state, with its result, log and positions: the solver
// tests of every family compare such steps (against Newton, between options). The solver
// must have been set up for `problem`.
#include "core/solver/solver.hpp"

namespace pbdlab::test {

struct StepRun {
  Positions x;
  StepResult result;
  IterationLog log;
};

// A budget of exactly `count` iterations (no residual target): what a position-based solver
// reaches in a fixed number of iterations.
inline Budget iterationBudget(int count) {
  Budget budget;
  budget.max_iterations = count;
  budget.target_relative_residual = 0.0;
  return budget;
}

inline StepRun runStep(Solver& solver, const Problem& problem, const State& start, const Budget& budget) {
  StepRun run;
  run.log = IterationLog(solver.logColumns());
  State state = start;
  run.result = advanceOneStep(solver, problem, state, budget, run.log);
  run.x = state.x;
  return run;
}

}  // namespace pbdlab::test
