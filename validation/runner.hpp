#pragma once
// Takes a scene through its solver, step by step, and writes the run's files:
//   iterations.csv  one row per iteration (the yardstick's columns, then the solver's)
//   summary.json    per-step results, totals, machine, threads, commit, dependency versions
//   *.vtu           final.vtu (or step_NNNN.vtu every step, and steps.pvd), for ParaView
//   diverged_last_finite_state.vtu   instead of final.vtu when a step diverged (NaN or
//                   infinite positions, residual or energy, or a residual grown beyond
//                   Budget::divergence_factor): the last finite state, not a result;
//                   summary.json "divergence" says in which step and iteration, and why
// Every file is written to a temporary name and renamed, so an interrupted or failed run
// leaves no half-written output. An earlier run's files in the folder are removed first
// (other files stay), and summary.json is written last: a folder holds a complete run
// exactly when it has a summary.json.
#include <nlohmann/json.hpp>
#include <string>

#include "validation/scene.hpp"

namespace pbdlab {

// The name a diverged run's last finite state is written under.
inline constexpr const char* kDivergedStateName = "diverged_last_finite_state.vtu";

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

// A scene with a "grid" runs every (sub)step through one GridStepper (core/solver/
// grid_stepper.hpp) instead of advanceOneStep: the solver solves the grid step's problem, the
// mesh state follows the particles (positions() and velocities()), so probes, frame measures,
// the .vtu files and summary.json read the mesh as for any scene; each frame's entry gains
// "grid" (docs/scene-format.md, "grid"). Throws InputError at /solver when the solver cannot
// run the scene (for a grid scene: the first step's grid problem).
RunResult runScene(const Scene& scene, const RunOptions& options);

// Why `solver` cannot run `scene`, or "": its rejectionReason of the scene's problem, or of a
// grid scene's first grid step problem (gridStepProblemAtStart), with a sentence saying so.
// `validate` lists such a pair as skipped.
std::string sceneRejection(const Solver& solver, const Scene& scene);

// Machine, thread count, build and dependency versions, for run summaries and reports.
nlohmann::json environmentInfo();

}  // namespace pbdlab
