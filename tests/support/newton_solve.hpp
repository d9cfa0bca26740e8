#pragma once
// Every (sub)step of a problem solved by Newton from its initial state, asserting (GoogleTest)
// that each step converged, or stopped at the round-off floor; with `require_target`, also
// that each step's relative residual is <= target. The model tests' reference solution.
#include <gtest/gtest.h>

#include "core/solver/solver.hpp"
#include "reference/newton.hpp"

namespace pbdlab::test {

inline Positions solveWithNewton(const Problem& problem, double target = 1e-10, IterationLog* log_out = nullptr,
                                 bool require_target = false) {
  NewtonSolver newton;
  newton.setup(problem);
  IterationLog log(newton.logColumns());
  Budget budget;
  budget.max_iterations = 60;
  budget.target_relative_residual = target;
  State state = initialState(problem);
  for (int k = 0; k < problem.time.numSubsteps(); ++k) {
    const StepResult r = advanceOneStep(newton, problem, state, budget, log);
    EXPECT_TRUE(r.reason == StopReason::kConverged || r.reason == StopReason::kRoundoff)
        << "step " << k + 1 << ": " << stopReasonName(r.reason) << ", relative residual " << r.relative_residual;
    if (require_target) {
      EXPECT_LE(r.relative_residual, target) << "step " << k + 1;
    }
  }
  if (log_out) *log_out = log;
  return state.x;
}

}  // namespace pbdlab::test
