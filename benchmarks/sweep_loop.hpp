#pragma once
// The timed loop of the sweep benchmarks (XPBD family, multi-layer XPBD's Voigt sweeps): one
// benchmark iteration is one `sweep(x)` from `x_start`; every `sweeps_per_step` sweeps a new
// step begins, outside the timing: x back to x_start and solver.resetMultipliers(). Returns
// the last positions.
#include <benchmark/benchmark.h>

#include "core/support/types.hpp"

namespace pbdlab::bench {

template <class SweepingSolver, class Sweep>
Positions timeSweepsFrom(benchmark::State& state, SweepingSolver& solver, const Positions& x_start,
                         int sweeps_per_step, Sweep sweep) {
  Positions x = x_start;
  solver.resetMultipliers();
  int sweeps = 0;
  for (auto _ : state) {
    if (++sweeps % sweeps_per_step == 0) {
      state.PauseTiming();
      x = x_start;
      solver.resetMultipliers();
      state.ResumeTiming();
    }
    sweep(x);
    benchmark::ClobberMemory();
  }
  return x;
}

}  // namespace pbdlab::bench
