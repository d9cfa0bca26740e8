#pragma once
// Takes a scene through its solver, step by step, and writes the run's files:
//   iterations.csv  one row per iteration (the yardstick's columns, then the solver's)
//   summary.json    per-step results, totals, machine, threads, commit, dependency versions
//   *.vtu           final state (or every step), for ParaView
// Every file is written to a temporary name and renamed, so an interrupted or failed run
// leaves no half-written output.
#include <nlohmann/json.hpp>
#include <string>

#include "validation/scene.hpp"

namespace pbdlab {

struct RunOptions {
  std::string out_dir;          // created if missing
  bool progress = true;         // one line per step on stderr
};

struct RunResult {
  nlohmann::json summary;
  bool all_steps_converged = false;
  bool diverged = false;
  Positions final_positions;  // the state after the last step run
  IterationLog log;            // every iteration's row (as in iterations.csv)
};

RunResult runScene(const Scene& scene, const RunOptions& options);

// Machine, thread count, build and dependency versions, for run summaries and reports.
nlohmann::json environmentInfo();

}  // namespace pbdlab
