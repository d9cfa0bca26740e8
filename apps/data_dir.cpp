#include "apps/data_dir.hpp"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <vector>

namespace pbdlab::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kEnvironmentVariable = "PBDLAB_DATA_DIR";
constexpr const char* kMarkerFile = "pbdlab-data-dir.txt";

struct State {
  std::string argv0;
  std::string option;
  std::optional<fs::path> dir;
  std::string origin;
};

State& state() {
  static State s;
  return s;
}

bool isDirectory(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// A folder that holds pbdlab's data (checked for the searched places, not the given ones).
bool holdsData(const fs::path& dir) { return isDirectory(dir / "validation" / "cases"); }

// The folder of the running executable: /proc/self/exe, else argv[0] made absolute; empty if
// neither works.
fs::path executableDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) {
    const std::string& argv0 = state().argv0;
    if (argv0.find('/') == std::string::npos) return {};  // found on PATH: no folder to go by
    exe = fs::weakly_canonical(fs::absolute(argv0, ec), ec);
    if (ec) return {};
  }
  return exe.parent_path();
}

// The first line of `file`, trimmed; empty if unreadable.
std::string firstLine(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  const auto first = line.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = line.find_last_not_of(" \t\r\n");
  return line.substr(first, last - first + 1);
}

void resolve() {
  State& s = state();
  if (!s.option.empty()) {
    if (!isDirectory(s.option)) throw DataDirError("--data-dir " + s.option + ": no such folder");
    s.dir = fs::path(s.option);
    s.origin = "--data-dir";
    return;
  }
  const char* env = std::getenv(kEnvironmentVariable);
  if (env && *env) {
    if (!isDirectory(env))
      throw DataDirError(std::string(kEnvironmentVariable) + "=" + env + ": no such folder");
    s.dir = fs::path(env);
    s.origin = kEnvironmentVariable;
    return;
  }
  std::vector<std::string> searched = {"--data-dir: not given", std::string(kEnvironmentVariable) + ": not set"};
  const fs::path exe_dir = executableDir();
  if (exe_dir.empty()) {
    searched.push_back("the executable's folder: unknown (neither /proc/self/exe nor argv[0] '" + s.argv0 +
                       "' gives it)");
  } else {
    const fs::path installed = (exe_dir / ".." / "share" / "pbdlab").lexically_normal();
    if (holdsData(installed)) {
      s.dir = installed;
      s.origin = "installed layout";
      return;
    }
    searched.push_back(installed.string() + ": " +
                       (isDirectory(installed) ? "no validation/cases in it" : "no such folder"));
    const fs::path marker = exe_dir / kMarkerFile;
    std::error_code ec;
    if (!fs::exists(marker, ec)) {
      searched.push_back(marker.string() + ": no such file");
    } else {
      const std::string named = firstLine(marker);
      if (named.empty()) {
        searched.push_back(marker.string() + ": empty or unreadable");
      } else if (!holdsData(named)) {
        searched.push_back(marker.string() + " names " + named + ": " +
                           (isDirectory(named) ? "no validation/cases in it" : "no such folder"));
      } else {
        s.dir = fs::path(named);
        s.origin = "build tree (" + marker.string() + ")";
        return;
      }
    }
  }
  std::string message =
      "cannot find pbdlab's data directory (validation cases and references, scenes, the report generator, "
      "benchmark tables). Searched:";
  for (const std::string& line : searched) message += "\n  " + line;
  message += "\nGive --data-dir DIR or set " + std::string(kEnvironmentVariable) +
             " to a folder holding validation/cases: the source tree, or PREFIX/share/pbdlab after "
             "`cmake --install BUILD --prefix PREFIX`.";
  throw DataDirError(message);
}

}  // namespace

void configureDataDir(const std::string& argv0, const std::string& data_dir_option) {
  State& s = state();
  s.argv0 = argv0;
  s.option = data_dir_option;
  s.dir.reset();
  s.origin.clear();
}

const fs::path& dataDir() {
  if (!state().dir) resolve();
  return *state().dir;
}

std::string dataDirOrigin() {
  dataDir();
  return state().origin;
}

std::string dataDirHelp() {
  return std::string(
             "Data directory: validate, report and table read pbdlab's own files (validation/cases,\n"
             "validation/references, scenes, reports/make_report.py, benchmarks/tables, benchmarks/scenes)\n"
             "from the first of:\n"
             "  1. --data-dir DIR\n"
             "  2. the environment variable ") +
         kEnvironmentVariable +
         "\n"
         "  3. <executable dir>/../share/pbdlab, if it holds validation/cases (the installed layout:\n"
         "     cmake --install BUILD --prefix PREFIX gives PREFIX/bin/pbdlab and PREFIX/share/pbdlab)\n"
         "  4. the source tree named by <executable dir>/" +
         kMarkerFile +
         ", a file CMake writes next to\n"
         "     the binary of a build tree\n"
         "No path is compiled into pbdlab.";
}

}  // namespace pbdlab::cli
