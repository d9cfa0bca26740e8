#pragma once
// Helpers shared by the layouts of `pbdlab table` (apps/table_command.cpp: newton, solvers,
// time_to_tolerance, probe; apps/table_frame_time.cpp: frame_time): a row's scene, its output
// folder, the paper's values.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "validation/scene.hpp"

namespace pbdlab::cli {

// A row's scene file, relative to the table file.
std::string sceneOfRow(const std::filesystem::path& table_path, const nlohmann::json& row);
// Row k's scene with its scene_patch applied (errors name the table file and the field).
Scene rowScene(const std::filesystem::path& path, const nlohmann::json& row, size_t k);
// The folder of a row's run: OUT/ID/LABEL[/SOLVER], each '/' of LABEL and SOLVER made '_' (one folder each).
std::string rowOut(const std::string& out_dir, const std::string& id, const std::string& label,
                   const std::string& solver = "");
// The paper's value at theirs/values/<label>/<keys...>, printed as given; "–" if absent.
std::string theirValue(const nlohmann::json& theirs, const std::string& label, std::initializer_list<std::string> keys);
double mean(const std::vector<double>& values);

}  // namespace pbdlab::cli
