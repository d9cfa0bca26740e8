#pragma once
// The timed loop of the XPBD-family benchmarks: sweeps of a set-up solver from the prediction
// of the problem's first step (x^0 + dt^2 M^-1 f_ext), a new step (prediction and multipliers
// reset, outside the timing) every `sweeps_per_step` sweeps (sweep_loop.hpp), after one untimed
// sweep (set-up: the warm rotations' SVD start). Returns the last positions.
#include <benchmark/benchmark.h>

#include "benchmarks/sweep_loop.hpp"
#include "solvers/pbd_xpbd/xpbd_solver.hpp"

namespace pbdlab::bench {

inline Positions timeXpbdSweeps(benchmark::State& state, XpbdSolver& solver, const Problem& problem,
                                int sweeps_per_step) {
  const double dt = problem.stepDt();
  Positions x_pred = problem.mesh.restPositionsFlat();
  const VecX f_ext = problem.externalForce(problem.timeAt(1));  // the first step's
  for (int dof : problem.freeDofs()) x_pred[dof] += dt * dt * f_ext[dof] / problem.dofMasses()[dof];
  // One sweep outside the timing: the lanes' first sweep starts every element's warm rotation
  // with an SVD (set-up, as PBNG's beginStep does it before its timed sweeps).
  Positions warm_up = x_pred;
  solver.sweep(warm_up, 1.0 / (dt * dt), 0.0);
  return timeSweepsFrom(state, solver, x_pred, sweeps_per_step,
                        [&](Positions& x) { solver.sweep(x, 1.0 / (dt * dt), 0.0); });
}

}  // namespace pbdlab::bench
