#pragma once
// Compares two validation outputs (folders of runs with metrics.json): every metric and
// timing ratio that changed beyond its margin, and whether accuracy regressed. Timing never
// fails a comparison unless a threshold is given explicitly (machines are noisy).
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace pbdlab {

struct CompareOptions {
  double margin = 0.10;                   // relative growth of an accuracy metric that counts
  std::optional<double> time_threshold;   // fail when current / baseline solver time exceeds it
};

// A value a row does not have (the tolerance of a timing row; the values of a missing run)
// is NaN and is printed as "–".
struct CompareRow {
  std::string case_name, label, quantity;
  double baseline = std::numeric_limits<double>::quiet_NaN();
  double current = std::numeric_limits<double>::quiet_NaN();
  double tolerance = std::numeric_limits<double>::quiet_NaN();  // accuracy metrics: the case's
  // "regression", "improved", "changed (not converged)" (smaller, but in a run that did not
  // converge: never called an improvement), "slower", "faster", "missing", "new"
  std::string verdict;
};

struct CompareResult {
  std::vector<CompareRow> rows;  // only what changed beyond its margin
  int runs_compared = 0;         // runs present in both folders
  int metrics_compared = 0;      // their metrics present in both
  bool accuracy_regression = false;
  bool time_regression = false;
};

// Reads every metrics.json (with the run's totals) below both folders. A folder that is not
// a folder, or holds no metrics.json of `pbdlab validate`, is an InputError naming it.
CompareResult compareValidationRuns(const std::string& baseline_dir, const std::string& current_dir,
                                    const CompareOptions& options);
std::string formatCompareTable(const CompareResult& result);

}  // namespace pbdlab
