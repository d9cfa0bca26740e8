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
  std::string out_dir;   // created if missing
  bool progress = true;  // step lines on stderr (solver time, and wall time so far)
  // 0: a line every step; otherwise a line once this many wall seconds have passed since the
  // last one (none for a short run), so a long run says where it is without flooding.
  double progress_every_seconds = 0.0;
  std::string progress_label;  // what the lines start with; empty: the scene's name
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
