#include "apps/validation_commands.hpp"

#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "apps/data_dir.hpp"
#include "core/support/atomic_file.hpp"
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
                  const std::string& skipped_json, const std::string& cases_dir) {
  const char* python = std::getenv("PBDLAB_PYTHON");
  const std::string script = (dataDir() / "reports" / "make_report.py").string();
  if (!fs::exists(script)) {
    fmt::print(stderr, "pbdlab: error: the report generator {} is missing (data directory from {})\n", script,
               dataDirOrigin());
    return kExitInternal;
  }
  std::vector<std::string> argv = {python ? python : "/usr/bin/python3", script, "--out", out_dir};
  if (!skipped_json.empty()) argv.insert(argv.end(), {"--skipped", skipped_json});
  if (!cases_dir.empty()) argv.insert(argv.end(), {"--cases", cases_dir});  // descriptions, metric definitions
  argv.insert(argv.end(), run_dirs.begin(), run_dirs.end());
  const int status = runProcess(argv);
  if (status != 0) {
    fmt::print(stderr, "pbdlab: error: the report generator failed (exit {})\n", status);
    return status == 2 ? kExitBadInput : kExitInternal;
  }
  fmt::print("{}\n", (fs::path(out_dir) / "report.html").string());
  return 0;
}

int validateCommand(const ValidateOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  const auto wall = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(); };
  std::vector<ValidationCase> cases;
  std::set<std::string> unmatched(options.case_names.begin(), options.case_names.end());
  const bool by_name = !options.case_names.empty();
  for (ValidationCase& c : loadValidationCases(options.cases_dir)) {
    const bool wanted = by_name ? unmatched.count(c.name) > 0 : (options.label == "full" || c.label == options.label);
    if (!wanted) continue;
    unmatched.erase(c.name);
    cases.push_back(std::move(c));
  }
  if (!unmatched.empty()) {
    fmt::print(stderr, "pbdlab: error: --case {}: no such case in {}\n", *unmatched.begin(), options.cases_dir);
    return kExitBadInput;
  }
  int total = 0;
  for (const ValidationCase& c : cases)
    for (const std::string& solver : c.solvers)
      if (options.solver.empty() || solver == options.solver || c.solverOf(solver) == options.solver) ++total;
  if (total == 0) {
    fmt::print(stderr, "pbdlab: no case in {} matches label '{}' and solver '{}'\n", options.cases_dir, options.label,
               options.solver);
    return kExitBadInput;
  }
  const fs::path references_root =
      options.references_dir.empty() ? fs::path(options.out_dir) / "references" : fs::path(options.references_dir);
  int index = 0, failed = 0, not_converged = 0, metrics_passed = 0, metrics_failed = 0;
  std::vector<std::string> run_dirs;
  nlohmann::json skipped = nlohmann::json::array();  // (case, solver) pairs whose solver rejects the scene
  for (const ValidationCase& c : cases)
    for (const std::string& solver : c.solvers) {
      if (!options.solver.empty() && solver != options.solver && c.solverOf(solver) != options.solver) continue;
      const std::string run_dir = (fs::path(options.out_dir) / "runs" / c.name / solver).string();
      const std::string reference_dir = (references_root / c.name).string();
      const double run_start = wall();
      // metrics.json is a validation run's last file, written after the runner's summary.json,
      // and the runner does not clear it: an earlier run's would otherwise stay beside this
      // run's files if this one is interrupted or fails, and compare would take it for this
      // run's. Removed first, a folder holds a metrics.json only once this run is complete.
      std::error_code stale_error;
      fs::remove(fs::path(run_dir) / "metrics.json", stale_error);
      const CaseRunResult result = runValidationCase(c, solver, run_dir, reference_dir, true, options.max_iterations);
      if (!result.skipped.empty()) {
        fmt::print(stderr, "[{}/{}] {} with {}: skipped ({})\n", ++index, total, c.name, solver, result.skipped);
        skipped.push_back({{"case", c.name}, {"solver", solver}, {"reason", result.skipped}});
        continue;
      }
      std::string values;
      for (const auto& metric : result.metrics["metrics"]) {
        values += fmt::format(" {}={:.3g}{}", metric["name"].get<std::string>(), metric["value"].get<double>(),
                              metric["pass"].is_boolean() ? (metric["pass"].get<bool>() ? "" : "(FAIL)") : "(n/a)");
        if (metric["pass"].is_boolean()) ++(metric["pass"].get<bool>() ? metrics_passed : metrics_failed);
      }
      const nlohmann::json& totals = result.metrics["totals"];
      const bool converged = totals.value("all_steps_converged", true);
      fmt::print(stderr, "[{}/{}] {} with {}: {} in {:.2f} s solver, {:.1f} s wall{};{}\n", ++index, total, c.name,
                 solver, result.passed ? "pass" : "FAIL", totals["solver_seconds"].get<double>(), wall() - run_start,
                 converged ? "" : " (not every step converged)", values);
      failed += result.passed ? 0 : 1;
      not_converged += converged ? 0 : 1;
      run_dirs.push_back(run_dir);
    }
  int status = failed ? kExitFailed : 0;
  fs::create_directories(options.out_dir);
  writeFileAtomically((fs::path(options.out_dir) / "skipped.json").string(), skipped.dump(2) + "\n");
  if (options.make_report) {
    fmt::print(stderr, "pbdlab: writing the report of {} runs (matplotlib) ...\n", run_dirs.size());
    const double report_start = wall();
    const int report_status = reportCommand(run_dirs, (fs::path(options.out_dir) / "report").string(),
                                            (fs::path(options.out_dir) / "skipped.json").string(), options.cases_dir);
    fmt::print(stderr, "pbdlab: report written in {:.1f} s\n", wall() - report_start);
    if (report_status != 0 && status == 0) status = report_status;
  }
  // The verdict, as the report's summary gives it.
  fmt::print(stderr,
             "pbdlab: validate: {} runs: {} passed, {} failed, {} skipped; {} not converged; metrics: {} passed, {} "
             "failed; {:.0f} s wall\n",
             total, total - failed - static_cast<int>(skipped.size()), failed, skipped.size(), not_converged,
             metrics_passed, metrics_failed, wall());
  if (!skipped.empty()) fmt::print(stderr, "pbdlab: the skipped runs and why: {}\n", (fs::path(options.out_dir) / "skipped.json").string());
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
