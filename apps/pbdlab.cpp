// The pbdlab command line. Results go to files; progress and errors go to stderr.
// Exit codes: 0 success, 1 internal error or an output that could not be written (full disk,
// file-size limit: the message names the file and says why), 2 bad input (scene, option,
// mesh), 3 a run that diverged, 4 a validation metric outside its tolerance or a regression
// found by compare.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <csignal>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "apps/data_dir.hpp"
#include "apps/validation_commands.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/input_error.hpp"
#include "core/support/json_reader.hpp"
#include "core/support/openmp_wait_policy.hpp"
#include "meshes/bunny.hpp"
#include "meshes/gmsh_module.hpp"
#include "meshes/mesh_recipe.hpp"
#include "meshes/msh_io.hpp"
#include "meshes/vtu_writer.hpp"
#include "pbdlab/build_info.hpp"
#include "solvers/registry.hpp"
#include "validation/runner.hpp"
#include "validation/scene.hpp"

namespace {

using pbdlab::cli::kExitBadInput;
using pbdlab::cli::kExitDiverged;
using pbdlab::cli::kExitInternal;

// A command's output folder, made ready before any meshing or solving: created (with its
// missing parents) and probed by writing a file, so a place that cannot be written (/proc, a
// read-only mount, a path under a file) is bad input reported at once, not after the whole
// run. The folders it created are removed again if the command leaves them empty (a failed
// command leaves nothing behind; a run folder holds a complete run exactly when it holds
// summary.json).
class OutputFolder {
 public:
  OutputFolder() = default;
  explicit OutputFolder(const std::string& folder) { prepare(folder); }
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  ~OutputFolder() { pbdlab::removeEmptyFolders(created_); }
  void prepare(const std::string& folder) {
    const std::string problem = pbdlab::prepareOutputFolder(folder, created_);
    if (!problem.empty()) throw pbdlab::InputError("--out", folder, problem);
  }

 private:
  std::vector<std::string> created_;
};

int runCommand(const std::string& scene_path, const std::string& solver_override, std::string out_dir) {
  OutputFolder out_folder;
  if (!out_dir.empty()) out_folder.prepare(out_dir);
  pbdlab::Scene scene = pbdlab::loadScene(scene_path);
  if (!solver_override.empty() && solver_override != scene.solver.name) {
    // Another solver's options do not carry over: it runs with its defaults.
    pbdlab::makeSolver(solver_override, nlohmann::json::object(), "--solver", "/solver/name");
    scene.solver.name = solver_override;
    scene.solver.options = nlohmann::json::object();
    scene.resolved["solver"]["name"] = solver_override;
    scene.resolved["solver"]["options"] = nlohmann::json::object();
  }
  if (out_dir.empty()) {
    out_dir = (std::filesystem::path("runs") / scene.name).string();
    out_folder.prepare(out_dir);
  }
  fmt::print(stderr, "pbdlab: {} with {} ({} nodes, {} elements, {} steps) -> {}\n", scene.path,
             scene.solver.name, scene.problem.numNodes(), scene.problem.numElements(),
             scene.problem.time.num_steps, out_dir);
  const pbdlab::RunResult result = pbdlab::runScene(scene, {out_dir, true, 0.0, ""});
  fmt::print("{}\n", (std::filesystem::path(out_dir) / "summary.json").string());
  if (result.diverged) {
    fmt::print(stderr, "pbdlab: the run diverged (see {0}/summary.json \"divergence\" and {0}/iterations.csv; its last "
                       "finite state, not a result, is {0}/{1})\n",
               out_dir, pbdlab::kDivergedStateName);
    return kExitDiverged;
  }
  if (!result.all_steps_converged)
    fmt::print(stderr, "pbdlab: note: not every step reached its target residual within the budget\n");
  return 0;
}

// RECIPE is an inline JSON object or a file holding a recipe object (or a scene, whose "mesh"
// is used). Errors name the file (or "<inline>") and the field.
pbdlab::MeshRecipe readRecipeArgument(const std::string& argument) {
  const std::size_t first = argument.find_first_not_of(" \t\r\n");
  const bool inline_json = first != std::string::npos && argument[first] == '{';
  const std::string source = inline_json ? "<inline>" : argument;
  // The strict reader of every input (duplicate keys, 1e999, file errors with their pointer).
  const nlohmann::json document = inline_json ? pbdlab::parseJsonText(argument, source) : pbdlab::readJsonFile(argument);
  const std::string base_dir = inline_json ? std::string() : std::filesystem::path(argument).parent_path().string();
  if (document.is_object() && document.contains("mesh") && !document.contains("type")) {
    return pbdlab::parseMeshRecipe(document["mesh"], source, "/mesh", base_dir);
  }
  return pbdlab::parseMeshRecipe(document, source, "", base_dir);
}

std::string vec3Text(const pbdlab::Vec3& v) { return fmt::format("[{:.6g}, {:.6g}, {:.6g}]", v.x(), v.y(), v.z()); }

int meshCommand(const std::string& recipe_argument, const std::string& out_path, bool no_cache, bool as_json) {
  const pbdlab::MeshRecipe recipe = readRecipeArgument(recipe_argument);
  // Check the output before meshing, so a typo does not cost a long meshing run.
  std::string extension;
  if (!out_path.empty()) {
    extension = std::filesystem::path(out_path).extension().string();
    if (extension != ".vtu" && extension != ".msh" && extension != ".stl") {
      throw pbdlab::InputError("--out", out_path, "unknown output format '" + extension + "' (known: .vtu, .msh, .stl)");
    }
    const std::filesystem::path folder = std::filesystem::path(out_path).parent_path();
    std::error_code ec;
    if (!folder.empty() && !std::filesystem::is_directory(folder, ec)) {
      throw pbdlab::InputError("--out", out_path, "the folder '" + folder.string() + "' does not exist");
    }
    // The folder exists (nothing is created): can a file be written in it?
    std::vector<std::string> created;
    const std::string problem = pbdlab::prepareOutputFolder(folder.empty() ? "." : folder.string(), created);
    if (!problem.empty()) throw pbdlab::InputError("--out", out_path, problem);
  }
  const pbdlab::MeshCache cache = no_cache ? pbdlab::MeshCache() : pbdlab::MeshCache::fromEnvironment();
  const pbdlab::MeshLoad load = pbdlab::loadOrMakeMesh(recipe, cache);
  const pbdlab::Mesh& mesh = load.mesh;
  const pbdlab::MeshSummary s = pbdlab::summarize(mesh);

  if (!out_path.empty()) {
    if (extension == ".vtu") {
      pbdlab::writeVtu(out_path, mesh, mesh.restPositionsFlat());
    } else if (extension == ".msh") {
      pbdlab::writeMsh(out_path, mesh);
    } else {
      if (mesh.element_type != pbdlab::ElementType::kTri3) {
        throw pbdlab::InputError("--out", out_path, "an STL file holds triangles; this mesh is " +
                                                        pbdlab::elementTypeName(mesh.element_type));
      }
      pbdlab::writeStl(out_path, mesh, "pbdlab");
    }
  }

  nlohmann::json sets = nlohmann::json::object();
  for (const auto& [name, nodes] : mesh.node_sets) sets[name] = nodes.size();
  if (as_json) {
    nlohmann::json j = {{"recipe", recipe.canonical},
                        {"mesh", mesh.source},
                        {"element_type", pbdlab::elementTypeName(mesh.element_type)},
                        {"nodes", s.nodes},
                        {"elements", s.elements},
                        {"min_volume", s.min_volume},
                        {"max_volume", s.max_volume},
                        {"total_volume", s.total_volume},
                        {"bbox_min", {s.bbox_min.x(), s.bbox_min.y(), s.bbox_min.z()}},
                        {"bbox_max", {s.bbox_max.x(), s.bbox_max.y(), s.bbox_max.z()}},
                        {"min_dihedral_angle_deg", s.min_dihedral_angle_deg},
                        {"min_scaled_jacobian", s.min_scaled_jacobian},
                        {"node_sets", sets},
                        {"cache", pbdlab::cacheOutcomeName(load.cache)},
                        {"seconds", load.seconds}};
    if (!out_path.empty()) j["out"] = out_path;
    fmt::print("{}\n", j.dump());
    return 0;
  }
  std::string set_list;
  for (const auto& [name, nodes] : mesh.node_sets) set_list += fmt::format("{}{} ({})", set_list.empty() ? "" : ", ", name, nodes.size());
  fmt::print("recipe:              {}\n", recipe.canonical.dump());
  fmt::print("mesh:                {}\n", mesh.source);
  fmt::print("element type:        {}\n", pbdlab::elementTypeName(mesh.element_type));
  fmt::print("nodes:               {}\n", s.nodes);
  fmt::print("elements:            {}\n", s.elements);
  fmt::print("volume:              min {:.6g}, max {:.6g}, total {:.10g}{}\n", s.min_volume, s.max_volume, s.total_volume,
             pbdlab::elementDimension(mesh.element_type) == 2 ? " (areas)" : "");
  fmt::print("bounding box:        {} - {}\n", vec3Text(s.bbox_min), vec3Text(s.bbox_max));
  fmt::print("min dihedral angle:  {:.4g} deg{}\n", s.min_dihedral_angle_deg,
             mesh.element_type == pbdlab::ElementType::kTri3 ? " (smallest triangle angle)" : "");
  fmt::print("min scaled Jacobian: {:.4g}\n", s.min_scaled_jacobian);
  fmt::print("node sets:           {}\n", set_list);
  fmt::print("cache:               {}{}{} ({:.3f} s)\n", pbdlab::cacheOutcomeName(load.cache),
             load.entry.empty() ? "" : " " + load.entry, load.note.empty() ? "" : ": " + load.note, load.seconds);
  if (!out_path.empty()) fmt::print("written:             {}\n", out_path);
  return 0;
}

// The last message: never throws (fmt::print throws when stderr cannot be written, e.g. a log
// file on the full disk that failed the run, and a throw here would abort the program).
void printError(const char* prefix, const char* what) noexcept {
  std::fputs(prefix, stderr);
  std::fputs(what, stderr);
  std::fputs("\n", stderr);
}

}  // namespace

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) kills a process that writes past it with SIGXFSZ, leaving a
  // temporary file and no message. Ignored, the write fails with EFBIG instead, and the error
  // names the file (docs/crash-safety.md). Ignored signals stay ignored across the exec below.
  std::signal(SIGXFSZ, SIG_IGN);
  // Before anything else: may start the program again with OMP_WAIT_POLICY=passive.
  pbdlab::adoptPassiveOpenMpWaiting(argv);
  CLI::App app{"pbdlab: position-based solvers for FEM hyperelasticity beside Newton/CHOLMOD references"};
  app.set_version_flag("--version", std::string("pbdlab ") + pbdlab::build_info::kVersion + " (" +
                                        pbdlab::build_info::kGitCommit + ")");
  app.require_subcommand(1);
  // Global options may also follow the subcommand (pbdlab validate --data-dir DIR).
  app.fallthrough();
  std::string data_dir;
  app.add_option("--data-dir", data_dir,
                 "Folder of pbdlab's data (validation/cases, scenes, reports, benchmarks/tables); default: "
                 "$PBDLAB_DATA_DIR, else <executable dir>/../share/pbdlab, else the build tree's source "
                 "(see below)")
      ->option_text("DIR");
  app.footer(std::string("Examples:\n"
                         "  pbdlab run scenes/torsion_small.json                 # Newton; writes runs/torsion_small/\n"
                         "  pbdlab run scenes/xpbd_falling_block_res16.json --solver fp_pxpbd --out runs/fp\n"
                         "  pbdlab validate --label fast                         # the fast tier and its report\n"
                         "  pbdlab compare runs/validation-before runs/validation # what changed, exit 4 on a regression\n\n") +
             pbdlab::cli::dataDirHelp());

  std::string scene_path, solver, out_dir;
  CLI::App* run = app.add_subcommand("run", "Run a scene file; writes iterations.csv, summary.json and .vtu");
  run->add_option("scene", scene_path, "Scene file (JSON), see docs/scene-format.md")->required();
  std::string solver_help = "Solver, overriding the scene's (with its default options). Known:";
  for (const std::string& name : pbdlab::solverNames()) solver_help += " " + name;
  run->add_option("--solver", solver, solver_help);
  run->add_option("--out", out_dir, "Output folder (default runs/<scene name>)");

  std::string recipe, mesh_out;
  bool no_cache = false, as_json = false;
  CLI::App* mesh = app.add_subcommand("mesh", "Make the mesh of a recipe (docs/meshes.md), print its summary, write it");
  mesh->add_option("recipe", recipe, "A mesh recipe: a JSON object inline ('{\"type\": \"box\", ...}') or a file "
                                     "holding one (or a scene file: its \"mesh\")")
      ->required();
  mesh->add_option("--out", mesh_out, "Write the mesh to FILE: .vtu (ParaView), .msh (Gmsh 4.1) or .stl (tri3 only); "
                                      "written atomically");
  mesh->add_flag("--no-cache", no_cache, "Neither read nor write the mesh cache (PBDLAB_CACHE_DIR)");
  mesh->add_flag("--json", as_json, "Print the summary as JSON");

  pbdlab::cli::ValidateOptions validate_options;
  bool no_report = false;
  CLI::App* validate = app.add_subcommand("validate", "Run the validation cases, write runs, metrics and a report");
  validate->add_option("--label", validate_options.label, "fast (the ctest tier) or full (every case)")
      ->check(CLI::IsMember({"fast", "full"}));
  validate->add_option("--case", validate_options.case_names, "Only this case (its name; repeatable), whatever its label")
      ->option_text("NAME");
  validate->add_option("--solver", validate_options.solver, "Only the runs of this solver (a registered solver, all its variants; or one variant by its name)");
  validate->add_option("--out", validate_options.out_dir, "Output folder (default runs/validation)");
  validate->add_option("--cases", validate_options.cases_dir,
                       "Folder of case files (default: DATA/validation/cases, DATA the data directory, see --data-dir)");
  validate->add_flag("--no-report", no_report, "Skip the HTML/Markdown report");
  validate->add_option("--references", validate_options.references_dir,
                       "Folder of the cached Newton reference solutions (default OUT/references); point it at another "
                       "validate output made from the same case files to reuse its references");
  validate->add_option("--max-iterations", validate_options.max_iterations,
                       "Override every scene's iteration budget (e.g. 2, to see compare catch a degraded run)")
      ->check(CLI::PositiveNumber);

  std::string baseline_dir, current_dir;
  double margin = 0.10;
  std::optional<double> time_threshold;
  CLI::App* compare = app.add_subcommand("compare", "Compare two validation outputs; non-zero exit on an accuracy regression");
  compare->add_option("baseline", baseline_dir, "Baseline folder (pbdlab validate --out)")->required();
  compare->add_option("current", current_dir, "Current folder")->required();
  // NaN compares with nothing and would hide every regression; so would a negative margin.
  const CLI::Validator finite_non_negative(
      [](std::string& text) {
        const double value = std::strtod(text.c_str(), nullptr);
        return std::isfinite(value) && value >= 0.0 ? std::string() : "must be a finite number >= 0, got " + text;
      },
      "NUMBER >= 0");
  const CLI::Validator finite_positive(
      [](std::string& text) {
        const double value = std::strtod(text.c_str(), nullptr);
        return std::isfinite(value) && value > 0.0 ? std::string() : "must be a finite number > 0, got " + text;
      },
      "NUMBER > 0");
  compare->add_option("--margin", margin, "Relative growth of an accuracy metric that counts as a regression (0.10)")
      ->check(finite_non_negative);
  compare->add_option("--time-threshold", time_threshold,
                      "Also fail when current / baseline solver time exceeds this ratio (off by default)")
      ->check(finite_positive);

  std::vector<std::string> report_runs;
  std::string report_out = "runs/report";
  CLI::App* report = app.add_subcommand("report", "Build an HTML report (and a Markdown twin) from run folders");
  report->add_option("runs", report_runs,
                    "Run folders (each with summary.json and iterations.csv), or benchmark folders "
                    "(sweep_times.json of benchmarks/scaling_table.py --out-dir: the Sweep time section)")
      ->required();
  report->add_option("--out", report_out, "Output folder (default runs/report)");
  std::string report_skipped;
  report->add_option("--skipped", report_skipped, "skipped.json of `pbdlab validate`: list the runs it did not make")
      ->check(CLI::ExistingFile);

  std::string table_id, table_out = "runs/tables";
  bool table_list = false;
  CLI::App* table = app.add_subcommand("table", "Regenerate a table of benchmarks/tables/ (ours beside the paper's)");
  table->add_option("id", table_id, "Table id (see --list)");
  table->add_flag("--list", table_list, "List the tables");
  table->add_option("--out", table_out, "Folder for the runs behind the table (default runs/tables)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : kExitBadInput;
  }

  pbdlab::cli::configureDataDir(argc > 0 ? argv[0] : "", data_dir);
  try {
    if (*run) return runCommand(scene_path, solver, out_dir);
    if (*mesh) return meshCommand(recipe, mesh_out, no_cache, as_json);
    if (*validate) {
      if (validate_options.cases_dir.empty())
        validate_options.cases_dir = (pbdlab::cli::dataDir() / "validation" / "cases").string();
      validate_options.make_report = !no_report;
      const OutputFolder out_folder(validate_options.out_dir);
      return pbdlab::cli::validateCommand(validate_options);
    }
    if (*compare) return pbdlab::cli::compareCommand(baseline_dir, current_dir, margin, time_threshold);
    if (*report) {
      const OutputFolder out_folder(report_out);
      return pbdlab::cli::reportCommand(report_runs, report_out, report_skipped,
                                        (pbdlab::cli::dataDir() / "validation" / "cases").string());
    }
    if (*table) {
      if (!table_list && table_id.empty()) {
        fmt::print(stderr, "pbdlab: error: table needs an id or --list\n");
        return kExitBadInput;
      }
      OutputFolder out_folder;
      if (!table_list) out_folder.prepare(table_out);
      return pbdlab::cli::tableCommand(table_id, table_list, table_out);
    }
  } catch (const pbdlab::cli::DataDirError& error) {
    printError("pbdlab: error: ", error.what());
    return kExitBadInput;
  } catch (const pbdlab::InputError& error) {
    printError("pbdlab: error: ", error.what());
    return kExitBadInput;
  } catch (const pbdlab::OutputError& error) {
    // Full disk, file-size limit, permissions: the file named was left as it was.
    printError("pbdlab: error: ", error.what());
    return kExitInternal;
  } catch (const pbdlab::GmshModuleError& error) {
    // An installation without its Gmsh module: the message says where it was looked for.
    printError("pbdlab: error: ", error.what());
    return kExitInternal;
  } catch (const std::filesystem::filesystem_error& error) {
    // E.g. creating an output folder on a full disk; the message names the path.
    printError("pbdlab: error: ", error.what());
    return kExitInternal;
  } catch (const std::exception& error) {
    printError("pbdlab: internal error: ", error.what());
    return kExitInternal;
  }
  return kExitInternal;
}
