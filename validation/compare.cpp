#include "validation/compare.hpp"

#include <cmath>
#include <filesystem>
#include <limits>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/core.h>

#include "core/support/input_error.hpp"

namespace pbdlab {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kValidFolder =
    "a validation output folder holds runs/<case>/<solver>/metrics.json, as `pbdlab validate --out DIR` writes it";

// (case, label) -> metrics.json of every run below `folder`.
std::map<std::pair<std::string, std::string>, json> readRuns(const std::string& folder) {
  if (!fs::is_directory(folder)) throw InputError(folder, "", std::string("not a folder; ") + kValidFolder);
  std::map<std::pair<std::string, std::string>, json> runs;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    if (entry.path().filename() != "metrics.json") continue;
    std::ifstream in(entry.path());
    const json metrics = json::parse(in, nullptr, false);
    if (metrics.is_discarded() || !metrics.contains("case") || !metrics.contains("label"))
      throw InputError(entry.path().string(), metrics.is_discarded() ? "" : "/case",
                       std::string("not a metrics.json of pbdlab validate; ") + kValidFolder);
    runs[{metrics["case"].get<std::string>(), metrics["label"].get<std::string>()}] = metrics;
  }
  if (runs.empty()) throw InputError(folder, "", std::string("holds no metrics.json; ") + kValidFolder);
  return runs;
}

// A metric's value; null (how JSON writes a non-finite value, e.g. the residual of a run that
// was expected to diverge) reads as NaN.
double metricValue(const json& value) {
  return value.is_number() ? value.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

// A number of the table, or "–" where there is none (NaN: no tolerance, no value).
std::string cell(double value, const char* format) {
  return std::isnan(value) ? std::string("–") : fmt::format(fmt::runtime(format), value);
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
      result.rows.push_back({key.first, key.second, "(run)", kNone, kNone, kNone, "missing"});
      result.accuracy_regression = true;
      continue;
    }
    const json& now = found->second;
    ++result.runs_compared;
    // A smaller metric of a run that did not converge (a budget or a stall ended a step) is
    // not an improvement of the solver: it is reported as a change.
    const bool now_converged = now.value("totals", json::object()).value("all_steps_converged", true);
    std::map<std::string, json> now_metrics;
    for (const json& metric : now["metrics"]) now_metrics[metric["name"].get<std::string>()] = metric;
    for (const json& metric : base["metrics"]) {
      const std::string name = metric["name"];
      auto m = now_metrics.find(name);
      if (m == now_metrics.end()) {
        result.rows.push_back({key.first, key.second, name, metricValue(metric["value"]), kNone, kNone, "missing"});
        result.accuracy_regression = true;
        continue;
      }
      ++result.metrics_compared;
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
        result.rows.push_back({key.first, key.second, name, b, c, tolerance, now_converged ? "improved" : "changed (not converged)"});
      }
    }
    const double tb = base["totals"].value("solver_seconds", 0.0), tc = now["totals"].value("solver_seconds", 0.0);
    if (tb > 0.0 && tc > 0.0) {
      const double ratio = tc / tb;
      const double threshold = options.time_threshold.value_or(1.0 + options.margin);
      if (ratio > threshold) {
        result.rows.push_back({key.first, key.second, "solver_seconds", tb, tc, kNone, "slower"});
        if (options.time_threshold) result.time_regression = true;
      } else if (ratio < 1.0 / threshold) {
        result.rows.push_back({key.first, key.second, "solver_seconds", tb, tc, kNone, "faster"});
      }
    }
  }
  for (const auto& [key, unused] : current)
    if (!baseline.count(key)) result.rows.push_back({key.first, key.second, "(run)", kNone, kNone, kNone, "new"});
  return result;
}

std::string formatCompareTable(const CompareResult& result) {
  std::ostringstream out;
  out << fmt::format("| {:<24} | {:<20} | {:<28} | {:>12} | {:>12} | {:>8} | {:>10} | {} |\n", "case", "run",
                     "quantity", "baseline", "current", "ratio", "tolerance", "verdict");
  out << "|" << std::string(26, '-') << "|" << std::string(22, '-') << "|" << std::string(30, '-') << "|"
      << std::string(14, '-') << "|" << std::string(14, '-') << "|" << std::string(10, '-') << "|"
      << std::string(12, '-') << "|---------|\n";
  for (const CompareRow& row : result.rows) {
    // No ratio to a zero (or missing) baseline.
    const double ratio = row.baseline != 0.0 ? row.current / row.baseline : kNone;
    out << fmt::format("| {:<24} | {:<20} | {:<28} | {:>12} | {:>12} | {:>8} | {:>10} | {} |\n", row.case_name,
                       row.label, row.quantity, cell(row.baseline, "{:.4g}"), cell(row.current, "{:.4g}"),
                       cell(ratio, "{:.3g}"), cell(row.tolerance, "{:.3g}"), row.verdict);
  }
  if (result.rows.empty()) out << "(nothing changed beyond its margin)\n";
  std::map<std::string, int> verdicts;
  for (const CompareRow& row : result.rows) ++verdicts[row.verdict];
  std::string counts;
  for (const auto& [verdict, count] : verdicts) counts += fmt::format(", {} {}", count, verdict);
  out << fmt::format("\nTotal: {} runs and {} metrics compared{}; accuracy {}{}.\n", result.runs_compared,
                     result.metrics_compared, counts, result.accuracy_regression ? "REGRESSED" : "not regressed",
                     result.time_regression ? ", solver time REGRESSED" : "");
  return out.str();
}

}  // namespace pbdlab
