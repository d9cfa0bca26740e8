#include "apps/validation_commands.hpp"

#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "apps/data_dir.hpp"
#include "core/atomic_file.hpp"
#include "validation/compare.hpp"
#include "validation/validation_case.hpp"

namespace pbdlab::cli {

namespace fs = std::filesystem;

namespace {

// Runs argv[0] with arguments (no shell), returns its exit status.
int runProcess(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return kExitInternal;
  if (pid == 0) {
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : kExitInternal;
}

}  // namespace

int reportCommand(const std::vector<std::string>& run_dirs, const std::string& out_dir,
                  const std::string& skipped_json) {
  const char* python = std::getenv("PBDLAB_PYTHON");
  const std::string script = (dataDir() / "reports" / "make_report.py").string();
  if (!fs::exists(script)) {
    fmt::print(stderr, "pbdlab: error: the report generator {} is missing (data directory from {})\n", script,
               dataDirOrigin());
    return kExitInternal;
  }
  std::vector<std::string> argv = {python ? python : "/usr/bin/python3", script, "--out", out_dir};
  if (!skipped_json.empty()) argv.insert(argv.end(), {"--skipped", skipped_json});
  argv.insert(argv.end(), run_dirs.begin(), run_dirs.end());
  const int status = runProcess(argv);
  if (status != 0) {
    fmt::print(stderr, "pbdlab: error: the report generator failed (exit {})\n", status);
    return status == 2 ? kExitBadInput : kExitInternal;
  }
  fmt::print("{}\n", (fs::path(out_dir) / "report.html").string());
  return 0;
}

int validateCommand(const std::string& label, const std::string& solver_filter, const std::string& out_dir,
                    const std::string& cases_dir, bool make_report, int max_iterations,
                    const std::string& references_dir) {
  std::vector<ValidationCase> cases;
  for (ValidationCase& c : loadValidationCases(cases_dir))
    if (label == "full" || c.label == label) cases.push_back(std::move(c));
  int total = 0;
  for (const ValidationCase& c : cases)
    for (const std::string& solver : c.solvers)
      if (solver_filter.empty() || solver == solver_filter) ++total;
  if (total == 0) {
    fmt::print(stderr, "pbdlab: no case in {} matches label '{}' and solver '{}'\n", cases_dir, label, solver_filter);
    return kExitBadInput;
  }
  const fs::path references_root = references_dir.empty() ? fs::path(out_dir) / "references" : fs::path(references_dir);
  int index = 0, failed = 0;
  std::vector<std::string> run_dirs;
  nlohmann::json skipped = nlohmann::json::array();  // (case, solver) pairs whose solver rejects the scene
  for (const ValidationCase& c : cases)
    for (const std::string& solver : c.solvers) {
      if (!solver_filter.empty() && solver != solver_filter) continue;
      const std::string run_dir = (fs::path(out_dir) / "runs" / c.name / solver).string();
      const std::string reference_dir = (references_root / c.name).string();
      const CaseRunResult result = runValidationCase(c, solver, run_dir, reference_dir, false, max_iterations);
      if (!result.skipped.empty()) {
        fmt::print(stderr, "[{}/{}] {} with {}: skipped ({})\n", ++index, total, c.name, solver, result.skipped);
        skipped.push_back({{"case", c.name}, {"solver", solver}, {"reason", result.skipped}});
        continue;
      }
      std::string values;
      for (const auto& metric : result.metrics["metrics"])
        values += fmt::format(" {}={:.3g}{}", metric["name"].get<std::string>(), metric["value"].get<double>(),
                              metric["pass"].is_boolean() ? (metric["pass"].get<bool>() ? "" : "(FAIL)") : "(n/a)");
      fmt::print(stderr, "[{}/{}] {} with {}: {} in {:.2f} s;{}\n", ++index, total, c.name, solver,
                 result.passed ? "pass" : "FAIL", result.metrics["totals"]["solver_seconds"].get<double>(), values);
      failed += result.passed ? 0 : 1;
      run_dirs.push_back(run_dir);
    }
  int status = failed ? kExitFailed : 0;
  if (failed) fmt::print(stderr, "pbdlab: {} of {} runs failed a metric\n", failed, total);
  if (!skipped.empty()) fmt::print(stderr, "pbdlab: {} of {} runs skipped (listed in skipped.json)\n", skipped.size(), total);
  fs::create_directories(out_dir);
  writeFileAtomically((fs::path(out_dir) / "skipped.json").string(), skipped.dump(2) + "\n");
  if (make_report) {
    const int report_status =
        reportCommand(run_dirs, (fs::path(out_dir) / "report").string(), (fs::path(out_dir) / "skipped.json").string());
    if (report_status != 0 && status == 0) status = report_status;
  }
  return status;
}

int compareCommand(const std::string& baseline, const std::string& current, double margin,
                   std::optional<double> time_threshold) {
  const CompareResult result = compareValidationRuns(baseline, current, {margin, time_threshold});
  fmt::print("{}", formatCompareTable(result));
  if (result.accuracy_regression) fmt::print(stderr, "pbdlab: accuracy regression\n");
  if (result.time_regression) fmt::print(stderr, "pbdlab: solver time regression beyond the threshold\n");
  return (result.accuracy_regression || result.time_regression) ? kExitFailed : 0;
}

}  // namespace pbdlab::cli
