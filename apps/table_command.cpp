// `pbdlab table ID`: regenerate a table from benchmarks/tables/ID.json, ours beside theirs.
#include <fmt/core.h>
#include <omp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "apps/data_dir.hpp"
#include "apps/validation_commands.hpp"
#include "core/input_error.hpp"
#include "core/json_reader.hpp"
#include "validation/runner.hpp"
#include "validation/scene.hpp"

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

// A table file, read strictly by the shared reader (core/json_reader.hpp): errors name the
// file and the field.
json readTable(const fs::path& path) {
  const json table = readJsonFile(path.string());
  const JsonReader in(path.string());
  in.object(table, "");
  in.onlyKeys(table, "", {"id", "title", "rows", "theirs"}, "of a table");
  in.nonEmptyString(in.required(table, "id", ""), "/id");
  if (table.contains("title")) in.string(table["title"], "/title");
  const json& rows = in.array(in.required(table, "rows", ""), "/rows");
  for (size_t k = 0; k < rows.size(); ++k) {
    const std::string at = jsonPointerChild("/rows", k);
    in.object(rows[k], at);
    in.onlyKeys(rows[k], at, {"label", "scene"});
    in.nonEmptyString(in.required(rows[k], "label", at), at + "/label");
    in.nonEmptyString(in.required(rows[k], "scene", at), at + "/scene");
  }
  if (table.contains("theirs")) in.object(table["theirs"], "/theirs");
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
      if (r.iteration > 0 && run.log.columnIndex("assembly_seconds") >= 0) {
        assembly.push_back(1e3 * run.log.value(r, "assembly_seconds"));
        factor.push_back(1e3 * run.log.value(r, "factor_seconds"));
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
