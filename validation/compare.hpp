#pragma once
// Compares two validation outputs (folders of runs with metrics.json): every metric and
// timing ratio that changed beyond its margin, and whether accuracy regressed. Timing never
// fails a comparison unless a threshold is given explicitly (machines are noisy).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace pbdlab {

struct CompareOptions {
  double margin = 0.10;                   // relative growth of an accuracy metric that counts
  std::optional<double> time_threshold;   // fail when current / baseline solver time exceeds it
};

struct CompareRow {
  std::string case_name, label, quantity;
  double baseline = 0.0, current = 0.0;
  double tolerance = 0.0;  // accuracy metrics: the case's tolerance
  std::string verdict;     // "regression", "improved", "slower", "faster", "missing", "new"
};

struct CompareResult {
  std::vector<CompareRow> rows;  // only what changed beyond its margin
  bool accuracy_regression = false;
  bool time_regression = false;
};

// Reads every */*/metrics.json (and the run's summary.json totals) under both folders.
CompareResult compareValidationRuns(const std::string& baseline_dir, const std::string& current_dir,
                                    const CompareOptions& options);
std::string formatCompareTable(const CompareResult& result);

}  // namespace pbdlab
