// `pbdlab table`'s "frame_time" layout (apps/table_frame_time.hpp).
#include "apps/table_frame_time.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "apps/table_rows.hpp"
#include "core/support/input_error.hpp"
#include "solvers/registry.hpp"
#include "validation/measures.hpp"
#include "validation/runner.hpp"
#include "validation/scene_patch.hpp"

namespace pbdlab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

void readFrameTimeRow(const JsonReader& in, const json& row, const std::string& at, const std::string& baseline,
                      const fs::path& path) {
  // Runs: labels unique and non-empty, a known solver whose options it accepts, an optional
  // budget, a compare_to naming a run of the row (by default the table's baseline).
  const json& runs = in.array(in.required(row, "runs", at), at + "/runs");
  if (runs.empty()) in.fail(at + "/runs", "names no run");
  const std::vector<std::string> known = solverNames();
  std::vector<std::string> labels;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::string run_at = jsonPointerChild(at + "/runs", r);
    in.object(runs[r], run_at);
    in.onlyKeys(runs[r], run_at, {"label", "solver", "options", "max_iterations", "compare_to"}, "of a run");
    const std::string label = in.nonEmptyString(in.required(runs[r], "label", run_at), run_at + "/label");
    if (std::find(labels.begin(), labels.end(), label) != labels.end())
      in.fail(run_at + "/label", "'" + label + "' labels an earlier run of this row");
    labels.push_back(label);
    const std::string solver = in.nonEmptyString(in.required(runs[r], "solver", run_at), run_at + "/solver");
    if (std::find(known.begin(), known.end(), solver) == known.end())
      in.failUnknownName(run_at + "/solver", solver, known, "solver");
    const json options = runs[r].value("options", json::object());
    makeSolver(solver, options, path.string(), run_at + "/options");  // validates the options
    if (runs[r].contains("max_iterations")) in.integerAtLeast(runs[r]["max_iterations"], run_at + "/max_iterations", 1);
  }
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::string against =
        runs[r].contains("compare_to")
            ? in.nonEmptyString(runs[r]["compare_to"], jsonPointerChild(at + "/runs", r) + "/compare_to")
            : baseline;
    if (std::find(labels.begin(), labels.end(), against) == labels.end())
      in.fail(runs[r].contains("compare_to") ? jsonPointerChild(at + "/runs", r) + "/compare_to" : at + "/runs",
              "names no run of this row: '" + against + "'" +
                  (runs[r].contains("compare_to") ? "" : " (the table's baseline)"));
  }
  if (row.contains("replay_from")) {
    const std::string from = in.nonEmptyString(row["replay_from"], at + "/replay_from");
    if (std::find(labels.begin(), labels.end(), from) == labels.end())
      in.fail(at + "/replay_from", "names no run of this row: '" + from + "'");
  }
  if (row.contains("newton_distance") && in.boolean(row["newton_distance"], at + "/newton_distance") &&
      !row.contains("replay_from"))
    in.fail(at + "/newton_distance", "needs replay_from: Newton solves each frame from the replayed state");
}

namespace {

// What a run did over its frames, free-running or replayed.
struct FrameStats {
  std::vector<double> ms, iterations, relative, secondary, newton_distance;  // per frame
  int own_target = 0;      // frames ended by solver_target
  int diverged = 0;        // frames that diverged (free-running: the run stopped there)
  int diverged_at = 0;     // free-running: the frame it diverged at
  double solver_seconds = 0.0, layer_seconds = 0.0;
  bool has_layer_column = false;
  int inverted = -1;       // inverted elements at the end (free-running), -1: not measured
};

void addStep(FrameStats& stats, const StepResult& step) {
  stats.ms.push_back(1e3 * step.solver_seconds);
  stats.solver_seconds += step.solver_seconds;
  stats.iterations.push_back(step.iterations);
  stats.relative.push_back(step.relative_residual);
  stats.own_target += step.reason == StopReason::kSolverTarget;
  stats.diverged += step.reason == StopReason::kDiverged;
}

// The log's per-frame values: the secondary residual at each frame's last row, the layer
// building seconds summed.
void addLogColumns(FrameStats& stats, const IterationLog& log) {
  const int secondary_column = log.columnIndex("secondary_residual");
  const int layer_column = log.columnIndex("layer_build_seconds");
  const std::vector<IterationRow>& rows = log.rows();
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool frame_end = i + 1 == rows.size() || rows[i + 1].step != rows[i].step;
    if (secondary_column >= 0 && frame_end && std::isfinite(rows[i].extra[secondary_column]))
      stats.secondary.push_back(rows[i].extra[secondary_column]);
    if (layer_column >= 0 && std::isfinite(rows[i].extra[layer_column])) stats.layer_seconds += rows[i].extra[layer_column];
  }
  stats.has_layer_column = layer_column >= 0;
}

// A run's scene: the row's scene with the run's solver, options and budget; the solver's
// rejection is bad input naming the run.
Scene sceneOfRun(const Scene& base, const json& spec, const fs::path& path, const std::string& field) {
  Scene scene = base;
  const json options = spec.value("options", json::object());
  useSolver(scene, spec["solver"], options, path.string(), field + "/options");
  if (spec.contains("max_iterations")) {
    scene.solver.budget.max_iterations = spec["max_iterations"].get<int>();
    scene.resolved["solver"]["max_iterations"] = scene.solver.budget.max_iterations;
  }
  if (const std::string why = makeSolver(spec["solver"], options, path.string(), field)->rejectionReason(scene.problem);
      !why.empty())
    throw InputError(path.string(), field, "the solver rejects the row's scene: " + why);
  return scene;
}

// Free-running: each run its own trajectory, through the runner (its folder under out_dir).
FrameStats runFree(const Scene& scene, const std::string& out, json& environment) {
  const RunResult run = runScene(scene, {out, false, 0.0, ""});
  environment = run.summary["environment"];
  FrameStats stats;
  for (const json& step : run.summary["steps"]) {
    if (step["stop_reason"] == "diverged") {
      stats.diverged_at = step["step"].get<int>();
      stats.diverged = 1;
      break;
    }
    StepResult result;
    result.solver_seconds = step["solver_seconds"].get<double>();
    result.iterations = step["iterations"].get<int>();
    result.relative_residual = step["relative_residual"].get<double>();
    result.reason = step["stop_reason"] == "solver_target" ? StopReason::kSolverTarget : StopReason::kNone;
    addStep(stats, result);
  }
  addLogColumns(stats, run.log);
  stats.inverted = run.summary["final_state"]["inverted_elements"].get<int>();
  return stats;
}

// Replayed: run `from` steps free; every other run starts each frame from its state (x^t, v^t;
// the runs see consecutive frames, so the strain-rate order has its x^{t-1}); with `newton`,
// Newton's solution of each frame from that state, and each run's |x - x_N| / |x_N - x^t|.
std::vector<FrameStats> runReplayed(const std::vector<Scene>& scenes, size_t from, bool newton,
                                    const std::string& what) {
  const Problem& problem = scenes[from].problem;
  std::vector<std::unique_ptr<Solver>> solvers;
  std::vector<IterationLog> logs;
  for (const Scene& scene : scenes) {
    solvers.push_back(makeSolver(scene.solver.name, scene.solver.options, scene.path, "/solver"));
    solvers.back()->setup(problem);
    logs.emplace_back(solvers.back()->logColumns());
  }
  std::unique_ptr<Solver> newton_solver;
  IterationLog newton_log;
  Budget newton_budget;
  if (newton) {
    newton_solver = makeSolver("newton", json::object(), "(frame_time)", "newton_distance");
    newton_solver->setup(problem);
    newton_log = IterationLog(newton_solver->logColumns());
    newton_budget.max_iterations = 100;
    newton_budget.target_relative_residual = 1e-10;
  }
  std::vector<FrameStats> stats(scenes.size());
  State reference = initialState(problem);
  const int frames = problem.time.num_steps;
  for (int frame = 0; frame < frames; ++frame) {
    Positions x_newton;
    if (newton) {
      State state = reference;
      advanceOneStep(*newton_solver, problem, state, newton_budget, newton_log);
      x_newton = state.x;
    }
    const double newton_move = newton ? (x_newton - reference.x).norm() : 0.0;
    auto stepFrom = [&](size_t r, State& state) {
      addStep(stats[r], advanceOneStep(*solvers[r], problem, state, scenes[r].solver.budget, logs[r]));
      if (newton) stats[r].newton_distance.push_back((state.x - x_newton).norm() / std::max(newton_move, 1e-300));
    };
    for (size_t r = 0; r < scenes.size(); ++r) {
      if (r == from) continue;
      State state = reference;  // a copy: this run's frame starts from the replayed state
      stepFrom(r, state);
    }
    stepFrom(from, reference);  // the replayed run moves the common state on
    if ((frame + 1) % std::max(1, frames / 10) == 0 || frame + 1 == frames)
      fmt::print(stderr, "  {}: frame {}/{}\n", what, frame + 1, frames);
  }
  for (size_t r = 0; r < scenes.size(); ++r) addLogColumns(stats[r], logs[r]);
  return stats;
}

// "median" or "median (max)" of per-frame values, "–" for none.
std::string medianCell(std::vector<double> values, bool with_max) {
  if (values.empty()) return "–";
  std::sort(values.begin(), values.end());
  const std::string median = fmt::format("{:.3g}", values[values.size() / 2]);
  return with_max ? median + fmt::format(" ({:.3g})", values.back()) : median;
}

}  // namespace

std::vector<std::string> frameTimeRows(const json& table, const fs::path& path, const std::string& out_dir,
                                       json& environment) {
  const std::string id = table["id"];
  const json theirs = table.value("theirs", json::object());
  bool newton_column = false;
  for (const json& row : table["rows"]) newton_column |= row.value("newton_distance", false);
  std::vector<std::string> lines;
  lines.push_back(std::string("| example | run | vertices | elements | frames | ours: ms / frame | ours: iterations / frame | "
                              "frames ended by the solver's target | relative true residual at frame end: median (max) | "
                              "secondary residual at frame end: median | ") +
                  (newton_column ? "distance to Newton's step, median (max) | " : "") +
                  "inverted elements at the end | ours: layer building, % of solver time | theirs: % | "
                  "ours: improvement, % (against) | theirs: % |");
  lines.push_back(std::string("|---|---|---|---|---|---|---|---|---|---|") + (newton_column ? "---|" : "") +
                  "---|---|---|---|---|");
  size_t run_count = 0;
  for (const json& row : table["rows"]) run_count += row["runs"].size();
  size_t run_index = 0;
  if (environment.empty()) environment = environmentInfo();
  for (size_t k = 0; k < table["rows"].size(); ++k) {
    const json& row = table["rows"][k];
    const std::string label = row.at("label");
    const Scene base = rowScene(path, row, k);
    // The replayed rows step the mesh problem directly (advanceOneStep): a grid scene's steps
    // are GridStepper's, which this table does not drive yet.
    if (base.grid)
      throw InputError(path, jsonPointerChild("/rows", k) + "/scene",
                       "a grid scene (\"grid\", docs/grid.md): frame-time tables run mesh scenes only");
    const json& runs = row["runs"];
    std::vector<Scene> scenes;
    for (size_t r = 0; r < runs.size(); ++r)
      scenes.push_back(sceneOfRun(base, runs[r], path, jsonPointerChild(jsonPointerChild("/rows", k) + "/runs", r)));
    std::vector<FrameStats> stats;
    std::string replayed;
    if (row.contains("replay_from")) {
      if (base.problem.time.substeps != 1)
        throw InputError(path.string(), jsonPointerChild("/rows", k) + "/replay_from",
                         "replays frames of one substep only; the scene has " +
                             std::to_string(base.problem.time.substeps));
      replayed = row["replay_from"].get<std::string>();
      size_t from = 0;
      while (runs[from]["label"] != replayed) ++from;
      run_index += runs.size();
      fmt::print(stderr, "[{}/{}] {}: {}, {} runs from {}'s states ({} vertices, {} frames)\n", run_index, run_count, id,
                 label, runs.size(), replayed, base.problem.numNodes(), base.problem.time.num_steps);
      stats = runReplayed(scenes, from, row.value("newton_distance", false), label);
    } else {
      for (size_t r = 0; r < runs.size(); ++r) {
        ++run_index;
        const std::string run_label = runs[r]["label"];
        fmt::print(stderr, "[{}/{}] {}: {} with {} ({} vertices, {} frames)\n", run_index, run_count, id, label,
                   run_label, base.problem.numNodes(), base.problem.time.num_steps);
        stats.push_back(runFree(scenes[r], rowOut(out_dir, id, label, run_label), environment));
      }
    }
    std::map<std::string, double> ms_per_frame;  // run label -> mean solver ms per frame
    for (size_t r = 0; r < runs.size(); ++r) ms_per_frame[runs[r]["label"]] = mean(stats[r].ms);
    for (size_t r = 0; r < runs.size(); ++r) {
      const FrameStats& run = stats[r];
      const std::string run_label = runs[r]["label"];
      const std::string against = runs[r].value("compare_to", table["baseline"].get<std::string>());
      const double t = ms_per_frame[run_label], t_against = ms_per_frame[against];
      std::string frames = std::to_string(run.ms.size());
      if (run.diverged_at) frames += fmt::format(" (diverged at frame {})", run.diverged_at);
      if (!replayed.empty())
        frames += run_label == replayed ? " (replayed by the others)" : " (from " + replayed + "'s states)";
      if (!replayed.empty() && run.diverged) frames += fmt::format(", {} diverged", run.diverged);
      const std::string newton_cell = newton_column ? " " + medianCell(run.newton_distance, true) + " |" : "";
      lines.push_back(fmt::format(
          "| {} | {} | {} | {} | {} | {:.2f} | {:.1f} | {} of {} | {} | {} |{} {} | {} | {} | {} | {} |", label, run_label,
          base.problem.numNodes(), base.problem.numElements(), frames, t, mean(run.iterations), run.own_target,
          run.ms.size(),
          medianCell(run.relative, true), medianCell(run.secondary, false), newton_cell, run.inverted >= 0 ? std::to_string(run.inverted) : std::string("–"),
          run.has_layer_column && run.solver_seconds > 0
              ? fmt::format("{:.2f}", 100.0 * run.layer_seconds / run.solver_seconds)
              : std::string("–"),
          theirValue(theirs, label, {run_label, "layer_build_percent"}),
          run_label == against || !(t > 0) ? std::string("–")
                                           : fmt::format("{:+.1f} ({})", 100.0 * t_against / t - 100.0, against),
          theirValue(theirs, label, {run_label, "improvement_percent"})));
    }
  }
  return lines;
}

}  // namespace pbdlab::cli
