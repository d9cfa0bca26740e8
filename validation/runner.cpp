#include "validation/runner.hpp"

#include <fmt/core.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <Eigen/Core>
#include <chrono>
#include <set>
#include <cstdio>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <thread>
#include <utility>

#include "core/fem/field_sampling.hpp"
#include "core/solver/grid_stepper.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/input_error.hpp"
#include "core/support/thread_settings.hpp"
#include "meshes/mesh_recipe.hpp"
#include "meshes/vtu_writer.hpp"
#include "pbdlab/build_info.hpp"
#include "reference/newton.hpp"
#include "solvers/registry.hpp"
#include "validation/measures.hpp"

namespace pbdlab {

namespace {

std::string cpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

// Now in UTC, ISO 8601 (when the run's summary was made).
std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// Progress goes to stderr and must never end a run: fmt::print throws when stderr cannot be
// written (a full disk under a redirect); a lost progress line is not worth the run.
template <typename... Args>
void progressLine(fmt::format_string<Args...> format, Args&&... args) {
  const std::string line = fmt::format(format, std::forward<Args>(args)...);
  std::fputs(line.c_str(), stderr);
}

std::string frameName(int step) { return fmt::format("step_{:04d}.vtu", step); }

// What a run writes into its folder (RunResult's file names); before writing, these are the
// files of an earlier run removed, so the folder never mixes two runs' frames.
bool isRunOutputName(const std::string& name) {
  // metrics.json: a validation case's verdict on the run (validation_commands), stale with it.
  if (name == "iterations.csv" || name == "summary.json" || name == "final.vtu" || name == "steps.pvd" ||
      name == "metrics.json" || name == kDivergedStateName)
    return true;
  // step_NNNN.vtu (any number of digits).
  if (name.size() < 13 || name.rfind("step_", 0) != 0 || name.compare(name.size() - 4, 4, ".vtu") != 0) return false;
  for (std::size_t k = 5; k + 4 < name.size(); ++k)
    if (name[k] < '0' || name[k] > '9') return false;
  return true;
}

// Removes an earlier run's outputs from `folder`, summary.json first (a folder without it
// holds no complete run); other files stay. Returns how many were removed.
int clearEarlierRun(const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return 0;
  int removed = 0;
  if (fs::remove(folder / "summary.json", ec)) ++removed;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec))
    if (const std::string name = entry.path().filename().string();
        entry.is_regular_file(ec) && (isRunOutputName(name) || isRunOutputName(deadWritersTarget(name))) &&
        fs::remove(entry.path(), ec))
      ++removed;  // also the temporary files of a killed earlier writer (NAME.tmp.<pid>)
  return removed;
}

}  // namespace

nlohmann::json environmentInfo() {
  utsname uts{};
  uname(&uts);
  const ThreadSettings threads = currentThreadSettings();
  return {
      {"cpu", cpuModel()},
      {"hardware_threads", static_cast<int>(std::thread::hardware_concurrency())},
      {"memory_bytes", static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE))},
      {"date", utcNow()},
      {"omp_threads", threads.omp_threads},
      {"threading",
       {{"omp_threads", threads.omp_threads},
        {"omp_wait_policy", threads.omp_wait_policy},
        {"omp_wait_policy_set_by", threads.omp_wait_policy_source},
        {"blas_threads", threads.blas_threads >= 0 ? nlohmann::json(threads.blas_threads) : nlohmann::json(nullptr)}}},
      {"os", std::string(uts.sysname) + " " + uts.release},
      {"pbdlab_version", build_info::kVersion},
      {"git_commit", build_info::kGitCommit},
      {"build_type", build_info::kBuildType},
      {"compiler", build_info::kCompiler},
      {"dependencies",
       {{"eigen", fmt::format("{}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION)},
        {"cholmod", cholmodVersion()},
        {"gmsh", gmshVersion()},
        {"blas", blasLibrary()},
        {"nlohmann_json", fmt::format("{}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR,
                                      NLOHMANN_JSON_VERSION_PATCH)},
        {"fmt", std::to_string(FMT_VERSION)}}},
  };
}

namespace {

// The scene's probe points, located once (a point outside the mesh is an error in the scene;
// every element block is searched, for bodies of different element types), and their
// displacements at a state.
class Probes {
 public:
  explicit Probes(const Scene& scene) : scene_(scene), sampler_(scene.problem.elementBlocks()) {
    for (const auto& probe : scene.output.probes)
      if (sampler_.locate(probe.point).block < 0)
        throw InputError(scene.path, "/output/probes/" + probe.name, "the point is outside the mesh");
  }
  nlohmann::json displacements(const Positions& x) const {
    nlohmann::json values = nlohmann::json::object();
    const VecX displacement = x - scene_.problem.mesh.restPositionsFlat();
    for (const auto& probe : scene_.output.probes) {
      const Vec3 u = sampler_.sample(displacement, probe.point);
      values[probe.name] = {u.x(), u.y(), u.z()};
    }
    return values;
  }

 private:
  const Scene& scene_;
  const BlockFieldSampler sampler_;
};

// What the substeps of one frame gave.
struct FrameOutcome {
  int iterations = 0;
  double solver_seconds = 0.0;
  // The stop reason of the first substep that did not reach its target ("converged" if all
  // did; "diverged" if one diverged).
  StopReason reason = StopReason::kConverged;
  bool all_converged = true;  // every substep converged or reached the round-off floor
  bool diverged = false;
  nlohmann::json divergence = nullptr;  // where and why, when a substep diverged
  nlohmann::json substeps = nlohmann::json::array();  // per substep, when a frame has several
  double reference_residual = 0.0;  // of the first substep
  double residual = 0.0, relative_residual = 0.0, energy = 0.0;  // of the last substep
  nlohmann::json grid = nullptr;  // a grid scene's: gridFrameEntry of the frame's substeps
};

// A grid scene's frame entry "grid" over its substeps' records: the last substep's active
// nodes and free DOFs, the largest move, each part's seconds summed.
nlohmann::json gridFrameEntry(const std::vector<GridStepRecord>& records) {
  double max_cells = 0.0, weights = 0.0, problem = 0.0, setup = 0.0, solve = 0.0, g2p = 0.0;
  for (const GridStepRecord& r : records) {
    max_cells = std::max(max_cells, r.max_displacement_cells);
    weights += r.weights_p2g_seconds;
    problem += r.problem_seconds;
    setup += r.setup_seconds;
    solve += r.solve_seconds;
    g2p += r.g2p_seconds;
  }
  const GridStepRecord last = records.empty() ? GridStepRecord{} : records.back();
  return {{"active_nodes", last.active_nodes},
          {"free_dofs", last.free_dofs},
          {"max_displacement_cells", max_cells},
          {"weights_p2g_seconds", weights},
          {"problem_seconds", problem},
          {"setup_seconds", setup},
          {"solve_seconds", solve},
          {"g2p_seconds", g2p}};
}

// One (sub)step of a grid scene: the stepper's step from state.step, then the mesh state
// follows its particles (x, v) and the step index and t advance as advanceOneStep's do. A
// step the stepper cannot take (a vertex's stencil leaves the grid, an element outgrew the
// embedded term's block: std::invalid_argument) ends the run as a divergence with that reason,
// the state left as before the step.
StepResult advanceOneGridStep(GridStepper& stepper, Solver& solver, const Problem& problem, State& state,
                              const Budget& budget, IterationLog& log, GridStepRecord& record) {
  const std::size_t rows_before = log.rows().size();
  StepResult r;
  try {
    record = stepper.step(solver, state.step, budget, log);
  } catch (const std::invalid_argument& error) {
    record = GridStepRecord{};
    record.step = state.step;
    r.reason = StopReason::kDiverged;
    r.divergence = std::string("the grid step could not be taken: ") + error.what();
    r.residual = r.relative_residual = r.energy = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  state.x = stepper.positions();
  state.v = stepper.velocities();
  state.step += 1;
  state.t = problem.timeAt(state.step);
  r.reason = record.reason;
  r.iterations = record.iterations;
  r.solver_seconds = record.solver_seconds;
  r.reference_residual = record.reference_residual;
  r.residual = record.residual;
  r.relative_residual = record.relative_residual;
  // The grid step's energy (in q) as its last logged row has it.
  r.energy = log.rows().size() > rows_before ? log.rows().back().energy : std::numeric_limits<double>::quiet_NaN();
  r.last_iteration = record.iterations;
  r.divergence = record.divergence;
  return r;
}

std::string progressLabel(const Scene& scene, const RunOptions& options) {
  return options.progress_label.empty() ? scene.name : options.progress_label;
}

// Advances `state` by frame `frame`: `substeps` steps of the yardstick, each judged on its own
// (the runner owns v, the step index and t). Stops at a diverged substep, leaving the
// solver's last finite iterate in `state` (or the state before that substep).
// A grid scene's (sub)steps go through `grid` (advanceOneGridStep), a mesh scene's (`grid` null)
// through advanceOneStep.
FrameOutcome runFrame(const Scene& scene, const RunOptions& options, Solver& solver, State& state, IterationLog& log,
                      int frame, GridStepper* grid) {
  const Problem& problem = scene.problem;
  const int substeps = problem.time.substeps;
  FrameOutcome outcome;
  std::vector<GridStepRecord> grid_records;
  for (int sub = 0; sub < substeps; ++sub) {
    const Budget budget = substepBudget(scene.solver.budget, substeps, sub, outcome.iterations, outcome.solver_seconds);
    const Positions x_before_step = state.x;  // the last finite state, should the step end in NaN
    GridStepRecord grid_record;
    const StepResult r = grid ? advanceOneGridStep(*grid, solver, problem, state, budget, log, grid_record)
                              : advanceOneStep(solver, problem, state, budget, log);
    if (grid) grid_records.push_back(grid_record);
    const StopReason reason = r.reason;
    // A step at the round-off floor is as converged as double precision allows.
    outcome.all_converged &= reason == StopReason::kConverged || reason == StopReason::kRoundoff;
    if (outcome.reason == StopReason::kConverged && reason != StopReason::kConverged) outcome.reason = reason;
    if (reason == StopReason::kDiverged) outcome.reason = reason;
    outcome.diverged |= reason == StopReason::kDiverged;
    outcome.iterations += r.iterations;
    outcome.solver_seconds += r.solver_seconds;
    if (sub == 0) outcome.reference_residual = r.reference_residual;
    if (substeps > 1) {
      outcome.substeps.push_back({{"substep", sub + 1},
                                  {"iterations", r.iterations},
                                  {"stop_reason", stopReasonName(reason)},
                                  {"reference_residual", r.reference_residual},
                                  {"residual", r.residual},
                                  {"relative_residual", r.relative_residual}});
      if (grid) outcome.substeps.back()["grid"] = gridFrameEntry({grid_record});
    }
    outcome.residual = r.residual;
    outcome.relative_residual = r.relative_residual;
    outcome.energy = r.energy;
    if (outcome.diverged) {
      // Solvers hand back their last finite iterate; one that does not leaves the state
      // before this step.
      const bool kept_iterate = state.x.allFinite();
      if (!kept_iterate) state.x = x_before_step;
      const std::string why = r.divergence.empty() ? "the step diverged" : r.divergence;
      outcome.divergence = {{"step", frame},
                            {"substep", sub + 1},
                            {"iteration", r.last_iteration},
                            {"reason", why},
                            {"state_file", kDivergedStateName},
                            {"state", kept_iterate ? "the solver's last finite iterate" : "the state before the step"}};
      progressLine("[{}] diverged in step {}/{}{} at iteration {}: {}\n", progressLabel(scene, options), frame,
                   problem.time.num_steps, substeps > 1 ? fmt::format(" (substep {})", sub + 1) : "",
                   r.last_iteration, why);
      break;
    }
  }
  if (grid) outcome.grid = gridFrameEntry(grid_records);
  return outcome;
}

// summary.json's entry of a frame: its outcome and measures of the state it ended in.
nlohmann::json frameEntry(const Problem& problem, int frame, const FrameOutcome& outcome, const State& state,
                          const Probes& probes, double rest_volume) {
  nlohmann::json entry = {{"step", frame},
                          {"time", state.t},
                          {"iterations", outcome.iterations},
                          {"stop_reason", stopReasonName(outcome.reason)},
                          {"solver_seconds", outcome.solver_seconds},
                          {"reference_residual", outcome.reference_residual},
                          {"residual", outcome.residual},
                          {"relative_residual", outcome.relative_residual},
                          {"energy", outcome.energy},
                          {"probe_displacements", probes.displacements(state.x)}};
  if (problem.time.substeps > 1) entry["substeps"] = outcome.substeps;
  if (!outcome.grid.is_null()) entry["grid"] = outcome.grid;
  // A diverged state may hold NaN: written as null (JSON has no NaN), never as a number.
  if (problem.hasElasticEnergy()) {
    const double ratio = deformedVolume(problem, state.x) / rest_volume;
    entry["volume_ratio"] = std::isfinite(ratio) ? nlohmann::json(ratio) : nlohmann::json(nullptr);
    // Per frame, so that a recovery from inversion has a timeline from one run.
    entry["inverted_elements"] = elementQuality(problem, state.x).inverted;
  }
  // A cloth's stretch, area and lowest point (PBNG Fig. 19's measures), every frame.
  if (isSurfaceProblem(problem)) {
    const SurfaceMeasures cloth = surfaceMeasures(problem, state.x);
    const auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    entry["edge_stretch_mean"] = number(cloth.stretch_mean);
    entry["edge_stretch_max"] = number(cloth.stretch_max);
    entry["area_ratio"] = number(cloth.area_ratio);
    entry["lowest_point"] = number(cloth.lowest_point);
  }
  // Reported beside the projected residual; contacts: those the next step's detection finds.
  if (!problem.colliderTerms().empty() || problem.collisionDetector()) {
    const StepObjective next(problem, state.x, state.v, state.step);
    entry["max_penetration"] = next.maxPenetration(state.x);
    if (problem.collisionDetector()) entry["contacts"] = next.numContacts();
  }
  return entry;
}

// summary.json's mesh entry, over the element blocks (one per element type; one block is the
// combined mesh itself). The element type and order are not always in `source` (a .msh file
// name); reports label mesh series by them. Mixed element types: element_type joins them
// ("tet4+hex8"); order is null unless the types share one.
nlohmann::json meshEntry(const Problem& problem) {
  nlohmann::json elements_per_type = nlohmann::json::object();
  int total_elements = 0;
  std::set<int> orders;
  for (const auto& block : problem.elementBlocks()) {
    const MeshSummary block_summary = summarize(*block);
    for (const auto& [type, count] : block_summary.elements_per_type) elements_per_type[type] = count;
    total_elements += block_summary.elements;
    orders.insert(elementOrder(block->element_type));
  }
  return {{"source", problem.mesh.source},
          {"nodes", problem.numNodes()},
          {"elements", total_elements},
          {"element_type", problem.elementTypesName()},
          {"order", orders.size() == 1 ? nlohmann::json(*orders.begin()) : nlohmann::json(nullptr)},
          {"elements_per_type", elements_per_type},
          {"free_dofs", problem.freeDofs().size()}};
}

// Said before a solver's reason for refusing a grid scene: the reasons are worded for the
// problems of mesh scenes.
constexpr const char* kGridRefusal =
    "on a grid scene the solver solves each step's grid problem (the grid nodes' positions are the unknowns, the "
    "meshes embedded: no body or element of its own, docs/grid.md) and cannot: ";

}  // namespace

std::string sceneRejection(const Solver& solver, const Scene& scene) {
  if (!scene.grid) return solver.rejectionReason(scene.problem);
  const std::string reason = solver.rejectionReason(gridStepProblemAtStart(scene.problem, *scene.grid));
  return reason.empty() ? reason : kGridRefusal + reason;
}

RunResult runScene(const Scene& scene, const RunOptions& options) {
  namespace fs = std::filesystem;
  const Problem& problem = scene.problem;
  const std::string label = progressLabel(scene, options);
  std::unique_ptr<Solver> solver = makeSolver(scene.solver.name, scene.solver.options, scene.path, "/solver/options");

  // Everything is computed first; files appear only at the end, each atomically.
  IterationLog log(solver->logColumns());
  State state = initialState(problem);
  // A grid scene: the solver is set up for the first step's grid problem here, as for a mesh
  // scene's problem (each step sets it up again: W changes), so a refusal comes before any work.
  std::unique_ptr<GridStepper> grid;
  try {
    if (scene.grid) {
      solver->setup(gridStepProblemAtStart(problem, *scene.grid));
      grid = std::make_unique<GridStepper>(problem, scene.grid->grid, scene.grid->kernel, scene.grid->walls);
    } else {
      solver->setup(problem);
    }
  } catch (const std::invalid_argument& error) {  // the solver cannot run this scene
    throw InputError(scene.path, "/solver", (scene.grid ? kGridRefusal : "") + std::string(error.what()));
  }
  const std::vector<std::string> warnings = solver->setupWarnings();
  for (const std::string& warning : warnings) progressLine("[{}] warning: {}\n", label, warning);
  const Probes probes(scene);
  // V(X), for each frame's volume_ratio V(x)/V(X) (solid and plane strain bodies only).
  const double rest_volume =
      problem.hasElasticEnergy() ? deformedVolume(problem, problem.mesh.restPositionsFlat()) : 0.0;

  // The frames.
  RunResult result;
  result.all_steps_converged = true;
  nlohmann::json steps = nlohmann::json::array();
  std::vector<std::pair<std::string, Positions>> frames;  // .vtu files to write: name, state
  std::vector<PvdEntry> collection;  // every_step: the frames' times, for steps.pvd
  double total_solver_seconds = 0.0;
  int total_iterations = 0;
  nlohmann::json divergence = nullptr;
  nlohmann::json grid_totals = nlohmann::json::object();  // a grid scene's seconds per part, summed
  const auto wall_start = std::chrono::steady_clock::now();
  double last_progress = 0.0;  // wall seconds at the last progress line
  for (int frame = 1; frame <= problem.time.num_steps && !result.diverged; ++frame) {
    const FrameOutcome outcome = runFrame(scene, options, *solver, state, log, frame, grid.get());
    result.all_steps_converged &= outcome.all_converged;
    result.diverged |= outcome.diverged;
    if (outcome.diverged) divergence = outcome.divergence;
    total_solver_seconds += outcome.solver_seconds;
    total_iterations += outcome.iterations;
    if (grid)
      for (const char* part : {"weights_p2g_seconds", "problem_seconds", "setup_seconds", "solve_seconds", "g2p_seconds"})
        grid_totals[part] = grid_totals.value(part, 0.0) + outcome.grid[part].get<double>();
    steps.push_back(frameEntry(problem, frame, outcome, state, probes, rest_volume));
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    const bool every_step = options.progress_every_seconds <= 0.0;
    if (options.progress && (every_step || wall - last_progress >= options.progress_every_seconds)) {
      last_progress = wall;
      progressLine(
          "[{}] step {}/{}  t = {:.4g}  {} iterations  |r| = {:.3e}  rel = {:.3e}  {:.3f} s solver  "
          "({:.1f} s wall so far)  {}\n",
          label, frame, problem.time.num_steps, state.t, outcome.iterations, outcome.residual,
          outcome.relative_residual, outcome.solver_seconds, wall, stopReasonName(outcome.reason));
    }
    if (scene.output.vtu == OutputSpec::Frames::kEveryStep && !outcome.diverged) {
      frames.emplace_back(frameName(frame), state.x);
      collection.push_back({state.t, frameName(frame)});
    }
  }
  // A diverged run's last state is written under a name that says it is not a result.
  if (result.diverged)
    frames.emplace_back(kDivergedStateName, state.x);
  else if (scene.output.vtu == OutputSpec::Frames::kFinal)
    frames.emplace_back("final.vtu", state.x);

  // A converged state can still hold collapsed or inverted elements: counted and said.
  const ElementQuality quality = elementQuality(problem, state.x);
  if (quality.inverted + quality.degenerate > 0)
    progressLine(
        "[{}] warning: the final state has {} inverted element(s) (det F <= 0) and {} degenerate one(s) "
        "(det F < {:g}) of {}\n",
        label, quality.inverted, quality.degenerate, quality.degenerate_below, problem.numElements());
  result.summary = {
      {"scene", scene.name},
      {"scene_file", scene.path},
      {"solver", solver->name()},
      {"mesh", meshEntry(problem)},
      {"steps", steps},
      {"totals", {{"iterations", total_iterations}, {"solver_seconds", total_solver_seconds},
                  {"all_steps_converged", result.all_steps_converged}, {"diverged", result.diverged}}},
      {"divergence", divergence},
      {"warnings", warnings},
      {"final_state",
       {{"inverted_elements", quality.inverted},
        {"degenerate_elements", quality.degenerate},
        {"degenerate_below", quality.degenerate_below}}},
      {"environment", environmentInfo()},
      {"scene_resolved", scene.resolved},
  };
  if (scene.grid) {
    const BackgroundGrid& g = scene.grid->grid;
    const double pre = grid_totals.value("weights_p2g_seconds", 0.0) + grid_totals.value("problem_seconds", 0.0) +
                       grid_totals.value("setup_seconds", 0.0);
    const double all = pre + grid_totals.value("solve_seconds", 0.0) + grid_totals.value("g2p_seconds", 0.0);
    grid_totals["preprocessing_share"] = all > 0.0 ? nlohmann::json(pre / all) : nlohmann::json(nullptr);
    result.summary["totals"]["grid"] = grid_totals;
    result.summary["grid"] = {{"kernel", gridKernelName(scene.grid->kernel)},
                              {"spacing", g.spacing()},
                              {"origin", {g.origin().x(), g.origin().y(), g.origin().z()}},
                              {"node_counts", {g.nodeCounts()[0], g.nodeCounts()[1], g.nodeCounts()[2]}},
                              {"nodes", g.numNodes()}};
  }

  // The files.
  fs::create_directories(options.out_dir);
  const fs::path out(options.out_dir);
  const int cleared = clearEarlierRun(out);
  if (cleared > 0 && options.progress)
    progressLine("[{}] removed {} file(s) of an earlier run from {}\n", label, cleared, out.string());
  // summary.json last: a folder holds a complete run exactly when it has one.
  writeFileAtomically((out / "iterations.csv").string(), log.toCsv());
  for (const auto& [name, x] : frames)
    writeVtu((out / name).string(), problem.elementBlocks(), x, {}, {}, vtuFormatFromName(scene.output.vtu_format));
  // After the frames, so the collection never names a missing file; ParaView plays it as a time series.
  if (!collection.empty()) writePvd((out / "steps.pvd").string(), collection);
  writeFileAtomically((out / "summary.json").string(), result.summary.dump(2) + "\n");
  result.final_positions = state.x;
  result.log = log;
  return result;
}

}  // namespace pbdlab
