// `pbdlab table ID`: regenerate a table from benchmarks/tables/ID.json, ours beside theirs.
#include <fmt/core.h>
#include <omp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "apps/validation_commands.hpp"
#include "core/input_error.hpp"
#include "validation/runner.hpp"
#include "validation/scene.hpp"

namespace pbdlab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path tablesFolder() { return fs::path(PBDLAB_SOURCE_DIR) / "benchmarks" / "tables"; }

json readTable(const fs::path& path) {
  std::ifstream in(path);
  const json table = json::parse(in, nullptr, false);
  if (table.is_discarded() || !table.contains("id") || !table.contains("rows") || !table["rows"].is_array())
    throw InputError(path.string(), "(file)", "not a table file (needs id and rows)");
  return table;
}

double mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values) sum += v;
  return values.empty() ? 0.0 : sum / values.size();
}

}  // namespace

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
  const json theirs = table.value("theirs", json::object());
  std::vector<std::string> lines;
  json environment;
  for (size_t k = 0; k < table["rows"].size(); ++k) {
    const json& row = table["rows"][k];
    const std::string label = row.at("label");
    const Scene scene = loadScene((path.parent_path() / row.at("scene").get<std::string>()).lexically_normal().string());
    fmt::print(stderr, "[{}/{}] {}: {} ({} vertices)\n", k + 1, table["rows"].size(), id, label, scene.problem.numNodes());
    const RunResult run = runScene(scene, {(fs::path(out_dir) / id / label).string(), false});
    environment = run.summary["environment"];
    std::vector<double> assembly, factor;
    for (const IterationRow& r : run.log.rows())
      if (r.iteration > 0 && r.extra.size() == 6) {
        assembly.push_back(1e3 * r.extra[4]);
        factor.push_back(1e3 * r.extra[5]);
      }
    const json& step = run.summary["steps"][0];
    const auto theirValue = [&](const std::string& column) -> std::string {
      if (theirs.contains("values") && theirs["values"].contains(label) && theirs["values"][label].contains(column))
        return fmt::format("{}", theirs["values"][label][column].dump());
      return "–";
    };
    lines.push_back(fmt::format("| {} | {} | {} | {} ({}) | {:.1f} | {} | {:.1f} | {:.2f} |", label, scene.problem.numNodes(),
                                scene.problem.mesh.numElements(), step["iterations"].get<int>(),
                                step["stop_reason"].get<std::string>(), mean(assembly),
                                theirValue("assembly_ms_per_iteration"), mean(factor),
                                step["solver_seconds"].get<double>()));
  }
  fmt::print("## {}\n\n{}\n\n", table["id"].get<std::string>(), table.value("title", ""));
  fmt::print("| case | vertices | elements | Newton iterations (stop) | ours: assembly ms / iteration | theirs: assembly ms / iteration | ours: CHOLMOD factor + solve ms / iteration | ours: solver s |\n");
  fmt::print("|---|---|---|---|---|---|---|---|\n");
  for (const std::string& line : lines) fmt::print("{}\n", line);
  fmt::print("\nOurs: {}, {} OpenMP threads, {}, commit {}, {}.\n", environment.value("cpu", "?"),
             environment.value("omp_threads", 0), environment["dependencies"].value("blas", "?"),
             environment.value("git_commit", "?"), environment.value("build_type", "?"));
  if (theirs.contains("source"))
    fmt::print("Theirs: {} ({}).\n", theirs["source"].get<std::string>(), theirs.value("machine", "machine not given"));
  return 0;
}

}  // namespace pbdlab::cli
