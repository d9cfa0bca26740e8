#pragma once
// The timed loop of the PBNG sweep benchmarks: sweeps of a set-up solver from the first step's
// start (beginStep: the initial guess, the warm rotations' SVD start, outside the timing), a new
// step every 40 sweeps (the paper's iterations a frame; outside the timing). Returns the last
// positions.
#include <benchmark/benchmark.h>

#include "solvers/pbng/pbng_solver.hpp"

namespace pbdlab::bench {

inline Positions timePbngSweeps(benchmark::State& state, PbngSolver& solver, const Problem& problem) {
  solver.setup(problem);
  const State start = initialState(problem);
  const StepObjective objective(problem, start.x, start.v, 0);
  Positions x0;
  solver.beginStep(objective, x0);
  Positions x = x0;
  int sweeps = 0;
  for (auto _ : state) {
    if (++sweeps % 40 == 0) {
      state.PauseTiming();
      x = x0;
      state.ResumeTiming();
    }
    solver.sweep(x);
    benchmark::ClobberMemory();
  }
  return x;
}

}  // namespace pbdlab::bench
