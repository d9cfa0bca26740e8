#pragma once
// `pbdlab table`'s "frame_time" layout (apps/table_command.cpp documents every layout): per row a
// scene and its "runs", one solver in several configurations (multi-layer XPBD's layers against
// [0]), timed per frame and judged by the true residual at every frame's end; free-running, or
// replayed from one run's states (every run starts each frame from the same state), optionally
// with each frame's distance to Newton's solution of the same step.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "core/support/json_reader.hpp"

namespace pbdlab::cli {

// Checks a frame_time row (the keys other than label, scene and scene_patch: runs, replay_from,
// newton_distance), errors naming the field; `baseline` is the table's.
void readFrameTimeRow(const JsonReader& in, const nlohmann::json& row, const std::string& at,
                      const std::string& baseline, const std::filesystem::path& path);
// The table's lines (header, rule, one line per run); `environment` gets the last run's.
std::vector<std::string> frameTimeRows(const nlohmann::json& table, const std::filesystem::path& path,
                                       const std::string& out_dir, nlohmann::json& environment);

}  // namespace pbdlab::cli
