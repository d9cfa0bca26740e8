// `pbdlab table ID`: regenerate a table from benchmarks/tables/ID.json, ours beside theirs.
#include <fmt/core.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "apps/data_dir.hpp"
#include "apps/validation_commands.hpp"
#include "core/fem/element_type.hpp"
#include "core/support/input_error.hpp"
#include "core/support/json_reader.hpp"
#include "solvers/registry.hpp"
#include "validation/runner.hpp"
#include "validation/scene.hpp"
#include "validation/scene_patch.hpp"
#include "apps/table_frame_time.hpp"
#include "apps/table_rows.hpp"

namespace pbdlab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// benchmarks/tables of the data directory (apps/data_dir.hpp); a missing folder is bad input.
fs::path tablesFolder() {
  const fs::path folder = dataDir() / "benchmarks" / "tables";
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw InputError(folder.string(), "(folder)",
                     "no benchmark tables here (data directory from " + dataDirOrigin() + ")");
  return folder;
}

// A table file, read strictly by the shared reader (core/support/json_reader.hpp): errors name the
// file and the field. Two layouts:
//  - "newton" (the default): per row a scene, run as it is by its own solver; columns are
//    Newton's iterations and its assembly and CHOLMOD time per iteration.
//  - "solvers": per row a scene and the solvers to time on it ({"name": {options}}), with an
//    optional scene_patch (as in a validation case: JSON pointer -> value, e.g. fewer frames);
//    one line per (row, solver): time and iterations per step, ours beside theirs. A row's
//    optional "solver_max_iterations" ({"solver": N}) gives a solver its own iteration budget
//    per step. When a row runs newton, Newton's breakdown follows: assembly ms per Newton
//    iteration and ms per linear iteration (a CG iteration or a Gauss-Seidel sweep).
//  - "time_to_tolerance": rows as in "solvers"; the table's "thresholds" (relative residuals in
//    (0, 1)) and "baseline" (a solver of every row): per (row, solver) the solver seconds of the
//    first step until its relative residual first reaches each threshold, and the baseline's
//    seconds divided by this solver's (> 1: this solver is faster), in one run.
//  - "frame_time": per row a scene (optional scene_patch) and its "runs", each {"label", "solver",
//    "options", optional "max_iterations" and "compare_to"}: one solver in several configurations
//    (multi-layer XPBD's layers against [0]). A run compares to its "compare_to" run, by default
//    the table's "baseline" (a run label; every row needs the runs it names). Per run, over
//    every frame: mean solver ms and iterations per frame, the frames its solver's own target
//    ended (solver_target), the relative true residual and the solver's secondary residual (a
//    secondary_residual log column) at the frame ends, the inverted elements
//    at the end, the share of the solver time spent building layers (a layer_build_seconds
//    column), and the improvement over the baseline as the multi-layer authors compute it,
//    100 t_against / t - 100 (%), beside theirs/values/<row>/<run>/improvement_percent.
//  - "probe": per row a scene (run as it is) and a probe of its output.probes; the table's
//    "references" ({"name": [ux, uy, uz]}) are displacements of that probe to measure against:
//    one line per row with the probe's final displacement and its distance to each reference,
//    beside theirs/values/<label>/error (an accuracy table, e.g. the high-order paper's Table 1).
json readTable(const fs::path& path) {
  const json table = readJsonFile(path.string());
  const JsonReader in(path.string());
  in.object(table, "");
  in.onlyKeys(table, "", {"id", "title", "layout", "note", "rows", "theirs", "references", "thresholds", "baseline"}, "of a table");
  in.nonEmptyString(in.required(table, "id", ""), "/id");
  if (table.contains("title")) in.string(table["title"], "/title");
  if (table.contains("note")) in.string(table["note"], "/note");
  const std::string layout =
      table.contains("layout")
          ? in.oneOf(table["layout"], "/layout", {"newton", "solvers", "probe", "time_to_tolerance", "frame_time"},
                     "table layout")
          : "newton";
  if (layout == "time_to_tolerance") {
    const json& thresholds = in.array(in.required(table, "thresholds", ""), "/thresholds");
    if (thresholds.empty()) in.fail("/thresholds", "names no threshold");
    for (size_t k = 0; k < thresholds.size(); ++k) {
      const double threshold = in.positive(thresholds[k], jsonPointerChild("/thresholds", k));
      if (threshold >= 1.0) in.fail(jsonPointerChild("/thresholds", k), "a relative residual threshold must be below 1");
    }
    in.nonEmptyString(in.required(table, "baseline", ""), "/baseline");
  } else if (layout == "frame_time") {
    in.nonEmptyString(in.required(table, "baseline", ""), "/baseline");
    if (table.contains("thresholds")) in.fail("/thresholds", "is read only by the \"time_to_tolerance\" layout");
  } else {
    for (const char* key : {"thresholds", "baseline"})
      if (table.contains(key)) in.fail(std::string("/") + key, "is read only by the \"time_to_tolerance\" layout");
  }
  if (layout == "probe") {
    const json& references = in.object(in.required(table, "references", ""), "/references");
    if (references.empty()) in.fail("/references", "names no reference displacement");
    for (const auto& [name, value] : references.items()) in.vec3(value, jsonPointerChild("/references", name));
  } else if (table.contains("references")) {
    in.fail("/references", "is read only by the \"probe\" layout");
  }
  const json& rows = in.array(in.required(table, "rows", ""), "/rows");
  for (size_t k = 0; k < rows.size(); ++k) {
    const std::string at = jsonPointerChild("/rows", k);
    in.object(rows[k], at);
    if (layout == "newton") {
      in.onlyKeys(rows[k], at, {"label", "scene"});
    } else if (layout == "probe") {
      in.onlyKeys(rows[k], at, {"label", "scene", "probe"});
      in.nonEmptyString(in.required(rows[k], "probe", at), at + "/probe");
    } else if (layout == "frame_time") {
      in.onlyKeys(rows[k], at, {"label", "scene", "scene_patch", "runs", "replay_from", "newton_distance"});
      readFrameTimeRow(in, rows[k], at, table["baseline"].get<std::string>(), path);
    } else {
      in.onlyKeys(rows[k], at, {"label", "scene", "solvers", "scene_patch", "solver_max_iterations"});
      const json& solvers = in.object(in.required(rows[k], "solvers", at), at + "/solvers");
      if (rows[k].contains("solver_max_iterations")) {  // {"solver": N}: its budget per step in place of the scene's
        const json& budgets = in.object(rows[k]["solver_max_iterations"], at + "/solver_max_iterations");
        for (const auto& [name, value] : budgets.items()) {
          const std::string field = jsonPointerChild(at + "/solver_max_iterations", name);
          if (!solvers.contains(name)) in.fail(field, "'" + name + "' is not one of the row's solvers");
          in.integerAtLeast(value, field, 1);
        }
      }
      if (solvers.empty()) in.fail(at + "/solvers", "names no solver");
      if (layout == "time_to_tolerance" && !solvers.contains(table["baseline"].get<std::string>()))
        in.fail(at + "/solvers", "does not run the table's baseline '" + table["baseline"].get<std::string>() + "'");
      const std::vector<std::string> known = solverNames();
      for (const auto& [name, options] : solvers.items()) {
        const std::string field = jsonPointerChild(at + "/solvers", name);
        if (std::find(known.begin(), known.end(), name) == known.end()) in.failUnknownName(field, name, known, "solver");
        makeSolver(name, options, path.string(), field);  // validates the options
      }
    }
    in.nonEmptyString(in.required(rows[k], "label", at), at + "/label");
    in.nonEmptyString(in.required(rows[k], "scene", at), at + "/scene");
    std::error_code ec;  // the non-throwing form: a name too long is "no such file", not an internal error
    if (!fs::is_regular_file(sceneOfRow(path, rows[k]), ec))
      in.fail(at + "/scene", "no such scene file: " + sceneOfRow(path, rows[k]));
    if (rows[k].contains("scene_patch"))
      readScenePatch(in, rows[k]["scene_patch"], at + "/scene_patch", sceneOfRow(path, rows[k]));
  }
  if (table.contains("theirs")) in.object(table["theirs"], "/theirs");
  return table;
}

// Layout "newton": the scene's own solver (Newton) with its assembly and factor timings.
std::vector<std::string> newtonRows(const json& table, const fs::path& path, const std::string& out_dir,
                                    json& environment) {
  const std::string id = table["id"];
  const json theirs = table.value("theirs", json::object());
  std::vector<std::string> lines;
  lines.push_back("| case | vertices | elements | Newton iterations (stop) | ours: assembly ms / iteration | "
                  "theirs: assembly ms / iteration | ours: CHOLMOD factor + solve ms / iteration | ours: solver s |");
  lines.push_back("|---|---|---|---|---|---|---|---|");
  for (size_t k = 0; k < table["rows"].size(); ++k) {
    const json& row = table["rows"][k];
    const std::string label = row.at("label");
    const Scene scene = loadScene(sceneOfRow(path, row));
    fmt::print(stderr, "[{}/{}] {}: {} ({} vertices)\n", k + 1, table["rows"].size(), id, label, scene.problem.numNodes());
    const RunResult run = runScene(scene, {rowOut(out_dir, id, label), false, 0.0, ""});
    environment = run.summary["environment"];
    std::vector<double> assembly, factor;
    for (const IterationRow& r : run.log.rows())
      if (r.iteration > 0 && run.log.columnIndex("assembly_seconds") >= 0) {
        assembly.push_back(1e3 * run.log.value(r, "assembly_seconds"));
        factor.push_back(1e3 * run.log.value(r, "factor_seconds"));
      }
    const json& step = run.summary["steps"][0];
    lines.push_back(fmt::format("| {} | {} | {} | {} ({}) | {:.1f} | {} | {:.1f} | {:.2f} |", label,
                                scene.problem.numNodes(), scene.problem.numElements(), step["iterations"].get<int>(),
                                step["stop_reason"].get<std::string>(), mean(assembly),
                                theirValue(theirs, label, {"assembly_ms_per_iteration"}), mean(factor),
                                step["solver_seconds"].get<double>()));
  }
  return lines;
}

// Row k's scene set up for one of its solvers: the row's options for it and its budget
// (solver_max_iterations), and the solver's reason to reject the scene ("" if it runs it).
struct RowRun {
  Scene scene;
  std::string rejection;
};
RowRun prepareRowRun(const fs::path& path, const json& row, size_t k, const Scene& base, const std::string& solver) {
  RowRun run{base, ""};
  const std::string field = jsonPointerChild(jsonPointerChild("/rows", k) + "/solvers", solver);
  const json& options = row["solvers"][solver];
  useSolver(run.scene, solver, options, path.string(), field);
  if (row.contains("solver_max_iterations") && row["solver_max_iterations"].contains(solver)) {
    const int budget = row["solver_max_iterations"][solver].get<int>();
    run.scene.solver.budget.max_iterations = budget;
    run.scene.resolved["solver"]["max_iterations"] = budget;
  }
  run.rejection = makeSolver(solver, options, path.string(), field)->rejectionReason(run.scene.problem);
  return run;
}

// Mean of a solver log column over the rows that have it, times `scale` ("–" if none has it).
std::string meanOfColumn(const IterationLog& log, const std::string& column, double scale) {
  const int index = log.columnIndex(column);
  if (index < 0) return "–";
  double sum = 0.0;
  int count = 0;
  for (const IterationRow& row : log.rows())
    if (std::isfinite(row.extra[index])) sum += row.extra[index], ++count;
  return count ? fmt::format("{:.2f}", scale * sum / count) : "–";
}

// Milliseconds per linear iteration of Newton's linear solver (factor_seconds over
// linear_iterations, summed over the run): a CG iteration or a Gauss-Seidel sweep.
std::string msPerLinearIteration(const IterationLog& log) {
  const int seconds = log.columnIndex("factor_seconds"), iterations = log.columnIndex("linear_iterations");
  if (seconds < 0 || iterations < 0) return "–";
  double total_seconds = 0.0, total_iterations = 0.0;
  for (const IterationRow& row : log.rows())
    if (std::isfinite(row.extra[seconds]) && std::isfinite(row.extra[iterations]))
      total_seconds += row.extra[seconds], total_iterations += row.extra[iterations];
  return total_iterations > 0 ? fmt::format("{:.2f}", 1e3 * total_seconds / total_iterations) : "–";
}

// The colors a solver reports in its log (its `colors` column at the first row that has one):
// PBNG's node colors, the XPBD family's constraint colors; "–" for a solver without colors.
std::string colorsOf(const IterationLog& log) {
  const int column = log.columnIndex("colors");
  if (column < 0) return "–";
  for (const IterationRow& row : log.rows())
    if (std::isfinite(row.extra[column])) return fmt::format("{:g}", row.extra[column]);
  return "–";
}

// Layout "solvers": each row's scene with each of its solvers; per step (the scene's dt) the
// mean solver time and iterations over the steps run. A solver that rejects the scene is
// "skipped"; a run that diverges says at which step (its time is then over the steps before).
std::vector<std::string> solverRows(const json& table, const fs::path& path, const std::string& out_dir,
                                    json& environment) {
  const std::string id = table["id"];
  const json theirs = table.value("theirs", json::object());
  std::vector<std::string> lines;
  // Newton's breakdown (assembly per Newton iteration, ms per linear iteration) when a row runs it.
  bool newton_columns = false;
  for (const json& row : table["rows"]) newton_columns |= row["solvers"].contains("newton");
  lines.push_back(std::string("| example | solver | vertices | elements | step dt (s) | steps | ours: ms / step | "
                              "theirs: ms / frame | ours: iterations / step | theirs: iterations / frame | ours: ms / iteration | "
                              "theirs: ms / iteration | ours: colors | theirs: colors |") +
                  (newton_columns ? " ours: Newton assembly ms / iteration | theirs: Newton overhead ms / iteration | "
                                    "ours: linear solve ms / linear iteration | theirs: ms / linear iteration |"
                                  : ""));
  lines.push_back(std::string("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|") +
                  (newton_columns ? "---|---|---|---|" : ""));
  size_t run_count = 0, run_index = 0;
  for (const json& row : table["rows"]) run_count += row["solvers"].size();
  for (size_t k = 0; k < table["rows"].size(); ++k) {
    const json& row = table["rows"][k];
    const std::string label = row.at("label");
    const Scene base = rowScene(path, row, k);
    for (const auto& [solver, options] : row["solvers"].items()) {
      ++run_index;
      const RowRun prepared = prepareRowRun(path, row, k, base, solver);
      const Scene& scene = prepared.scene;
      const std::string prefix = fmt::format("| {} | {} | {} | {} | {:g} |", label, solver, scene.problem.numNodes(),
                                             scene.problem.numElements(), scene.problem.time.dt);
      if (const std::string& reason = prepared.rejection; !reason.empty()) {
        lines.push_back(fmt::format("{} – | skipped: {} | {} | – | {} | – | {} | – | {} |{}", prefix, reason,
                                    theirValue(theirs, label, {solver, "ms_per_frame"}),
                                    theirValue(theirs, label, {solver, "iterations_per_frame"}),
                                    theirValue(theirs, label, {solver, "ms_per_iteration"}),
                                    theirValue(theirs, label, {solver, "colors"}), newton_columns ? " – | – | – | – |" : ""));
        continue;
      }
      fmt::print(stderr, "[{}/{}] {}: {} with {} ({} vertices, {} steps)\n", run_index, run_count, id, label, solver,
                 scene.problem.numNodes(), scene.problem.time.num_steps);
      const RunResult run = runScene(scene, {rowOut(out_dir, id, label, solver), false, 0.0, ""});
      environment = run.summary["environment"];
      std::vector<double> ms, iterations;
      int diverged_at = 0;
      for (const json& step : run.summary["steps"]) {
        if (step["stop_reason"] == "diverged") {
          diverged_at = step["step"].get<int>();
          break;
        }
        ms.push_back(1e3 * step["solver_seconds"].get<double>());
        iterations.push_back(step["iterations"].get<double>());
      }
      const double total_iterations = mean(iterations) * iterations.size();
      const std::string per_iteration =
          total_iterations > 0 ? fmt::format("{:.2f}", mean(ms) * ms.size() / total_iterations) : "–";
      const std::string steps = diverged_at ? fmt::format("{} (diverged at step {})", ms.size(), diverged_at)
                                            : std::to_string(ms.size());
      lines.push_back(fmt::format("{} {} | {:.1f} | {} | {:.1f} | {} | {} | {} | {} | {} |", prefix, steps, mean(ms),
                                  theirValue(theirs, label, {solver, "ms_per_frame"}), mean(iterations),
                                  theirValue(theirs, label, {solver, "iterations_per_frame"}), per_iteration,
                                  theirValue(theirs, label, {solver, "ms_per_iteration"}), colorsOf(run.log),
                                  theirValue(theirs, label, {solver, "colors"})) +
                      (newton_columns ? fmt::format(" {} | {} | {} | {} |", meanOfColumn(run.log, "assembly_seconds", 1e3),
                                                    theirValue(theirs, label, {solver, "newton_overhead_ms_per_iteration"}),
                                                    msPerLinearIteration(run.log),
                                                    theirValue(theirs, label, {solver, "ms_per_linear_iteration"}))
                                      : std::string()));
    }
  }
  return lines;
}

// Layout "time_to_tolerance": each row's scene with each of its solvers; the solver seconds of
// the first step until the relative residual first reaches each threshold, and the baseline's
// seconds over this solver's. The yardstick's own time is excluded (solver_seconds); a scene
// meant for this table records every iteration (record_every 1), else the first recorded
// iteration below a threshold is late by up to record_every - 1 iterations.
std::vector<std::string> timeToToleranceRows(const json& table, const fs::path& path, const std::string& out_dir,
                                             json& environment) {
  const std::string id = table["id"];
  const std::string baseline = table["baseline"];
  std::vector<double> thresholds;
  for (const json& t : table["thresholds"]) thresholds.push_back(t.get<double>());
  std::vector<std::string> lines;
  std::string header = "| example | solver | vertices | iterations |", rule = "|---|---|---|---|";
  for (double t : thresholds) {
    header += fmt::format(" ours: s to {:g} |", t);
    rule += "---|";
  }
  for (double t : thresholds) {
    header += fmt::format(" {} s ÷ this, at {:g} |", baseline, t);
    rule += "---|";
  }
  lines.push_back(header);
  lines.push_back(rule);
  size_t run_count = 0, run_index = 0;
  for (const json& row : table["rows"]) run_count += row["solvers"].size();
  for (size_t k = 0; k < table["rows"].size(); ++k) {
    const json& row = table["rows"][k];
    const std::string label = row.at("label");
    const Scene base = rowScene(path, row, k);
    std::map<std::string, std::vector<double>> seconds_to;  // solver -> seconds per threshold (NaN: never)
    // The baseline first, so that every other solver's ratio can be printed on its own line.
    std::vector<std::string> order = {baseline};
    for (const auto& [solver, options] : row["solvers"].items())
      if (solver != baseline) order.push_back(solver);
    for (const std::string& solver : order) {
      ++run_index;
      const RowRun prepared = prepareRowRun(path, row, k, base, solver);
      const Scene& scene = prepared.scene;
      if (!prepared.rejection.empty())
        throw InputError(path.string(), jsonPointerChild(jsonPointerChild("/rows", k) + "/solvers", solver),
                         "the solver rejects the row's scene: " + prepared.rejection);
      fmt::print(stderr, "[{}/{}] {}: {} with {} ({} vertices)\n", run_index, run_count, id, label, solver,
                 scene.problem.numNodes());
      const RunResult run = runScene(scene, {rowOut(out_dir, id, label, solver), false, 0.0, ""});
      environment = run.summary["environment"];
      const std::vector<IterationRow> rows = run.log.rowsOfStep(1);
      std::vector<double>& seconds = seconds_to[solver];
      for (double t : thresholds) {
        const auto hit = std::find_if(rows.begin(), rows.end(), [&](const IterationRow& r) { return r.relative_residual <= t; });
        seconds.push_back(hit == rows.end() ? NAN : hit->solver_seconds);
      }
      std::string line = fmt::format("| {} | {} | {} | {} |", label, solver, scene.problem.numNodes(),
                                     rows.empty() ? 0 : rows.back().iteration);
      for (double s : seconds) line += std::isfinite(s) ? fmt::format(" {:.4g} |", s) : std::string(" not reached |");
      for (size_t t = 0; t < thresholds.size(); ++t) {
        const double b = seconds_to[baseline][t], s = seconds[t];
        line += std::isfinite(b) && std::isfinite(s) && s > 0 ? fmt::format(" {:.2f} |", b / s) : std::string(" – |");
      }
      lines.push_back(line);
    }
  }
  return lines;
}

// Layout "probe": each row's scene run as it is; the final displacement of its probe and the
// distance to each of the table's reference displacements, beside the paper's error.
std::vector<std::string> probeRows(const json& table, const fs::path& path, const std::string& out_dir,
                                   json& environment) {
  const std::string id = table["id"];
  const json theirs = table.value("theirs", json::object());
  std::vector<std::string> lines;
  std::string header = "| example | element | vertices | elements | solver | ours: probe displacement (m) |";
  std::string rule = "|---|---|---|---|---|---|";
  for (const auto& [name, value] : table["references"].items()) {
    header += " ours: distance to " + name + " (m) |";
    rule += "---|";
  }
  lines.push_back(header + " theirs: error (m) | ours: solver s |");
  lines.push_back(rule + "---|---|");
  // Every row's scene and probe are checked before the first (possibly long) run.
  std::vector<Scene> scenes;
  for (size_t k = 0; k < table["rows"].size(); ++k) {
    scenes.push_back(loadScene(sceneOfRow(path, table["rows"][k])));
    const std::string probe = table["rows"][k].at("probe");
    if (!scenes.back().output.probe(probe))
      throw InputError(path.string(), jsonPointerChild("/rows", k) + "/probe",
                       "probe '" + probe + "' is not in the output.probes of " + scenes.back().path);
  }
  for (size_t k = 0; k < table["rows"].size(); ++k) {
    const json& row = table["rows"][k];
    const std::string label = row.at("label");
    const std::string probe = row.at("probe");
    const Scene& scene = scenes[k];
    fmt::print(stderr, "[{}/{}] {}: {} with {} ({} vertices)\n", k + 1, table["rows"].size(), id, label,
               scene.solver.name, scene.problem.numNodes());
    const RunResult run = runScene(scene, {rowOut(out_dir, id, label), true, 10.0, id + ": " + label});
    environment = run.summary["environment"];
    const json& u_json = run.summary["steps"].back()["probe_displacements"][probe];
    const Vec3 u(u_json[0].get<double>(), u_json[1].get<double>(), u_json[2].get<double>());
    std::string line = fmt::format("| {} | {} | {} | {} | {} | ({:.4f}, {:.4f}, {:.4f}) |", label,
                                   scene.problem.elementTypesName(), scene.problem.numNodes(),
                                   scene.problem.numElements(), scene.solver.name, u[0], u[1], u[2]);
    for (const auto& [name, value] : table["references"].items()) {
      const Vec3 reference(value[0].get<double>(), value[1].get<double>(), value[2].get<double>());
      line += fmt::format(" {:.4f} |", (u - reference).norm());
    }
    lines.push_back(line + fmt::format(" {} | {:.1f} |", theirValue(theirs, label, {"error"}),
                                       run.summary["totals"]["solver_seconds"].get<double>()));
  }
  return lines;
}

}  // namespace

// The reader above for a path (the libFuzzer target fuzz/fuzz_table.cpp declares it).
json readTableFile(const std::string& path) { return readTable(path); }

int tableCommand(const std::string& id, bool list, const std::string& out_dir) {
  if (list) {
    for (const auto& entry : fs::directory_iterator(tablesFolder()))
      if (entry.path().extension() == ".json") {
        const json table = readTable(entry.path());
        fmt::print("{:<24} {}\n", table["id"].get<std::string>(), table.value("title", ""));
      }
    return 0;
  }
  const fs::path path = tablesFolder() / (id + ".json");
  if (!fs::exists(path)) {
    fmt::print(stderr, "pbdlab: error: no table '{}' in {} (see pbdlab table --list)\n", id, tablesFolder().string());
    return kExitBadInput;
  }
  const json table = readTable(path);
  json environment = json::object();
  const std::string layout = table.value("layout", "newton");
  const std::vector<std::string> lines = layout == "solvers"             ? solverRows(table, path, out_dir, environment)
                                         : layout == "probe"             ? probeRows(table, path, out_dir, environment)
                                         : layout == "time_to_tolerance" ? timeToToleranceRows(table, path, out_dir, environment)
                                         : layout == "frame_time"        ? frameTimeRows(table, path, out_dir, environment)
                                                                         : newtonRows(table, path, out_dir, environment);
  fmt::print("## {}\n\n{}\n\n", table["id"].get<std::string>(), table.value("title", ""));
  for (const std::string& line : lines) fmt::print("{}\n", line);
  fmt::print("\nOurs: {}, {} OpenMP threads, {}, commit {}, {}.\n", environment.value("cpu", "?"),
             environment.value("omp_threads", 0), environment.value("dependencies", json::object()).value("blas", "?"),
             environment.value("git_commit", "?"), environment.value("build_type", "?"));
  const json theirs = table.value("theirs", json::object());
  if (theirs.contains("source"))
    fmt::print("Theirs: {} ({}).\n", theirs["source"].get<std::string>(), theirs.value("machine", "machine not given"));
  if (table.contains("note")) fmt::print("\n{}\n", table["note"].get<std::string>());
  return 0;
}

}  // namespace pbdlab::cli
