#pragma once
// `pbdlab validate`, `pbdlab compare` and `pbdlab report` (docs/validation.md, docs/reports.md).
#include <optional>
#include <string>
#include <vector>

namespace pbdlab::cli {

struct ValidateOptions {
  std::string label = "fast";            // cases of this label ("full": every case)
  std::vector<std::string> case_names;   // only these cases (any label); empty: by label
  std::string solver;                    // only this solver; empty: each case's solvers
  std::string out_dir = "runs/validation";
  std::string cases_dir;
  bool make_report = true;
  // > 0 overrides every scene's iteration budget (e.g. to check that compare catches a
  // Newton capped at 2 iterations).
  int max_iterations = 0;
  std::string references_dir;  // empty: OUT/references
};
// Prints a line per run (and progress of long runs, reference computations and the report),
// then the verdict: runs passed, failed, skipped and not converged, metrics passed and failed.
int validateCommand(const ValidateOptions& options);
int compareCommand(const std::string& baseline, const std::string& current, double margin,
                   std::optional<double> time_threshold);
// Regenerates benchmarks/tables/ID.json (ours beside theirs) as Markdown; `list` shows all.
int tableCommand(const std::string& id, bool list, const std::string& out_dir);
// Runs reports/make_report.py (Debian's /usr/bin/python3 with matplotlib; PBDLAB_PYTHON overrides).
// skipped_json: a skipped.json of `validate` to list in the report ("" for none); cases_dir:
// the folder of the case files, whose descriptions and metric definitions the report shows.
int reportCommand(const std::vector<std::string>& run_dirs, const std::string& out_dir,
                  const std::string& skipped_json = "", const std::string& cases_dir = "");

// Exit codes shared by the commands.
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitDiverged = 3;
constexpr int kExitFailed = 4;  // a validation metric outside its tolerance, or a regression

}  // namespace pbdlab::cli
