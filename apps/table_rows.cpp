// Helpers shared by the layouts of `pbdlab table` (apps/table_command.cpp, apps/table_frame_time.cpp).
#include "apps/table_rows.hpp"

#include <algorithm>

#include "core/support/json_reader.hpp"
#include "validation/scene_patch.hpp"

namespace pbdlab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

std::string sceneOfRow(const fs::path& table_path, const json& row) {
  return (table_path.parent_path() / row.at("scene").get<std::string>()).lexically_normal().string();
}

double mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values) sum += v;
  return values.empty() ? 0.0 : sum / values.size();
}

std::string theirValue(const json& theirs, const std::string& label, std::initializer_list<std::string> keys) {
  if (!theirs.contains("values") || !theirs["values"].contains(label)) return "–";
  const json* value = &theirs["values"][label];
  for (const std::string& key : keys) {
    if (!value->is_object() || !value->contains(key) || (*value)[key].is_null()) return "–";
    value = &(*value)[key];
  }
  return value->dump();
}

namespace {

// A label as one folder name: "pi/4 rad/s" made nested folders, and ".." would leave out_dir.
std::string folderName(std::string label) {
  std::replace(label.begin(), label.end(), '/', '_');
  return label == "." || label == ".." ? "_" + label : label;
}

}  // namespace

std::string rowOut(const std::string& out_dir, const std::string& id, const std::string& label,
                   const std::string& solver) {
  const fs::path row = fs::path(out_dir) / id / folderName(label);
  return (solver.empty() ? row : row / folderName(solver)).string();
}

Scene rowScene(const fs::path& path, const json& row, size_t k) {
  return loadPatchedScene(sceneOfRow(path, row), row.value("scene_patch", json::object()), path.string(),
                          jsonPointerChild("/rows", k) + "/scene_patch");
}

}  // namespace pbdlab::cli
