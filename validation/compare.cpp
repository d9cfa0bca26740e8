#include "validation/compare.hpp"

#include <cmath>
#include <filesystem>
#include <limits>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/core.h>

namespace pbdlab {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// (case, label) -> metrics.json of every run below `folder`.
std::map<std::pair<std::string, std::string>, json> readRuns(const std::string& folder) {
  if (!fs::is_directory(folder)) throw std::runtime_error(folder + ": not a folder");
  std::map<std::pair<std::string, std::string>, json> runs;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    if (entry.path().filename() != "metrics.json") continue;
    std::ifstream in(entry.path());
    const json metrics = json::parse(in, nullptr, false);
    if (metrics.is_discarded() || !metrics.contains("case") || !metrics.contains("label"))
      throw std::runtime_error(entry.path().string() + ": not a metrics.json of pbdlab validate");
    runs[{metrics["case"].get<std::string>(), metrics["label"].get<std::string>()}] = metrics;
  }
  if (runs.empty()) throw std::runtime_error(folder + ": no metrics.json found (run `pbdlab validate --out` first)");
  return runs;
}

// A metric's value; null (how JSON writes a non-finite value, e.g. the residual of a run that
// was expected to diverge) reads as NaN.
double metricValue(const json& value) {
  return value.is_number() ? value.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

CompareResult compareValidationRuns(const std::string& baseline_dir, const std::string& current_dir,
                                    const CompareOptions& options) {
  const auto baseline = readRuns(baseline_dir);
  const auto current = readRuns(current_dir);
  CompareResult result;
  for (const auto& [key, base] : baseline) {
    auto found = current.find(key);
    if (found == current.end()) {
      result.rows.push_back({key.first, key.second, "(run)", 0, 0, 0, "missing"});
      result.accuracy_regression = true;
      continue;
    }
    const json& now = found->second;
    std::map<std::string, json> now_metrics;
    for (const json& metric : now["metrics"]) now_metrics[metric["name"].get<std::string>()] = metric;
    for (const json& metric : base["metrics"]) {
      const std::string name = metric["name"];
      auto m = now_metrics.find(name);
      if (m == now_metrics.end()) {
        result.rows.push_back({key.first, key.second, name, metricValue(metric["value"]), 0, 0, "missing"});
        result.accuracy_regression = true;
        continue;
      }
      const double b = metricValue(metric["value"]), c = metricValue(m->second["value"]);
      const double tolerance = m->second["tolerance"].get<double>();
      // A metric without a verdict (pass null: e.g. Newton against its own reference) cannot fail.
      const bool now_fails = m->second["pass"].is_boolean() && !m->second["pass"].get<bool>();
      // Non-finite values (a diverged run's residual) compare by finiteness: finite -> non-finite
      // is a regression, the reverse an improvement, non-finite in both is unchanged.
      const bool became_non_finite = std::isfinite(b) && !std::isfinite(c);
      if (now_fails || became_non_finite || (std::isfinite(c) && c > b * (1 + options.margin) + 1e-300)) {
        // Worse than the baseline beyond the margin, or outside the case's tolerance.
        result.rows.push_back({key.first, key.second, name, b, c, tolerance, "regression"});
        result.accuracy_regression = true;
      } else if ((!std::isfinite(b) && std::isfinite(c)) || c < b * (1 - options.margin)) {
        result.rows.push_back({key.first, key.second, name, b, c, tolerance, "improved"});
      }
    }
    const double tb = base["totals"].value("solver_seconds", 0.0), tc = now["totals"].value("solver_seconds", 0.0);
    if (tb > 0.0 && tc > 0.0) {
      const double ratio = tc / tb;
      const double threshold = options.time_threshold.value_or(1.0 + options.margin);
      if (ratio > threshold) {
        result.rows.push_back({key.first, key.second, "solver_seconds", tb, tc, 0, "slower"});
        if (options.time_threshold) result.time_regression = true;
      } else if (ratio < 1.0 / threshold) {
        result.rows.push_back({key.first, key.second, "solver_seconds", tb, tc, 0, "faster"});
      }
    }
  }
  for (const auto& [key, unused] : current)
    if (!baseline.count(key)) result.rows.push_back({key.first, key.second, "(run)", 0, 0, 0, "new"});
  return result;
}

std::string formatCompareTable(const CompareResult& result) {
  std::ostringstream out;
  out << fmt::format("| {:<24} | {:<20} | {:<28} | {:>12} | {:>12} | {:>8} | {:>10} | {} |\n", "case", "run",
                     "quantity", "baseline", "current", "ratio", "tolerance", "verdict");
  out << "|" << std::string(26, '-') << "|" << std::string(22, '-') << "|" << std::string(30, '-') << "|"
      << std::string(14, '-') << "|" << std::string(14, '-') << "|" << std::string(10, '-') << "|"
      << std::string(12, '-') << "|---------|\n";
  for (const CompareRow& row : result.rows)
    out << fmt::format("| {:<24} | {:<20} | {:<28} | {:>12.4g} | {:>12.4g} | {:>8.3g} | {:>10.3g} | {} |\n",
                       row.case_name, row.label, row.quantity, row.baseline, row.current,
                       row.baseline != 0.0 ? row.current / row.baseline : 0.0, row.tolerance, row.verdict);
  if (result.rows.empty()) out << "(nothing changed beyond its margin)\n";
  return out.str();
}

}  // namespace pbdlab
