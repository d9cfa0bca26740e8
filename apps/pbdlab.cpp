// The pbdlab command line. Results go to files; progress and errors go to stderr.
// Exit codes: 0 success, 1 internal error, 2 bad input (scene, option, mesh), 3 a run that
// diverged.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <exception>
#include <filesystem>

#include "core/input_error.hpp"
#include "pbdlab/build_info.hpp"
#include "solvers/registry.hpp"
#include "validation/runner.hpp"
#include "validation/scene.hpp"

namespace {

constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitDiverged = 3;

int runCommand(const std::string& scene_path, const std::string& solver_override, std::string out_dir) {
  pbdlab::Scene scene = pbdlab::loadScene(scene_path);
  if (!solver_override.empty() && solver_override != scene.solver.name) {
    // Another solver's options do not carry over: it runs with its defaults.
    pbdlab::makeSolver(solver_override, nlohmann::json::object(), "--solver", "/solver/name");
    scene.solver.name = solver_override;
    scene.solver.options = nlohmann::json::object();
    scene.resolved["solver"]["name"] = solver_override;
    scene.resolved["solver"]["options"] = nlohmann::json::object();
  }
  if (out_dir.empty()) out_dir = (std::filesystem::path("runs") / scene.name).string();
  fmt::print(stderr, "pbdlab: {} with {} ({} nodes, {} elements, {} steps) -> {}\n", scene.path,
             scene.solver.name, scene.problem.numNodes(), scene.problem.mesh.numElements(),
             scene.problem.time.num_steps, out_dir);
  const pbdlab::RunResult result = pbdlab::runScene(scene, {out_dir, true});
  fmt::print("{}\n", (std::filesystem::path(out_dir) / "summary.json").string());
  if (result.diverged) {
    fmt::print(stderr, "pbdlab: the run diverged (see {}/iterations.csv)\n", out_dir);
    return kExitDiverged;
  }
  if (!result.all_steps_converged)
    fmt::print(stderr, "pbdlab: note: not every step reached its target residual within the budget\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pbdlab: position-based solvers for FEM hyperelasticity beside Newton/CHOLMOD references"};
  app.set_version_flag("--version", std::string("pbdlab ") + pbdlab::build_info::kVersion + " (" +
                                        pbdlab::build_info::kGitCommit + ")");
  app.require_subcommand(1);

  std::string scene_path, solver, out_dir;
  CLI::App* run = app.add_subcommand("run", "Run a scene file; writes iterations.csv, summary.json and .vtu");
  run->add_option("scene", scene_path, "Scene file (JSON), see docs/scene-format.md")->required();
  std::string solver_help = "Solver, overriding the scene's (with its default options). Known:";
  for (const std::string& name : pbdlab::solverNames()) solver_help += " " + name;
  run->add_option("--solver", solver, solver_help);
  run->add_option("--out", out_dir, "Output folder (default runs/<scene name>)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : kExitBadInput;
  }

  try {
    if (*run) return runCommand(scene_path, solver, out_dir);
  } catch (const pbdlab::InputError& error) {
    fmt::print(stderr, "pbdlab: error: {}\n", error.what());
    return kExitBadInput;
  } catch (const std::exception& error) {
    fmt::print(stderr, "pbdlab: internal error: {}\n", error.what());
    return kExitInternal;
  }
  return kExitInternal;
}
