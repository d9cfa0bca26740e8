#pragma once
// pbdlab's data directory: the files the command reads besides its inputs (validation/cases,
// validation/references, scenes, reports/make_report.py, benchmarks/tables and
// benchmarks/scenes). No path is compiled into the binary; the folder is, in this order:
//   1. --data-dir DIR (a global option),
//   2. the environment variable PBDLAB_DATA_DIR,
//   3. <executable dir>/../share/pbdlab, if it holds validation/cases (the layout that
//      `cmake --install BUILD --prefix P` makes: P/bin/pbdlab, P/share/pbdlab),
//   4. the source tree named by <executable dir>/pbdlab-data-dir.txt, a one-line file that
//      CMake writes next to the binary of a build tree at configure time.
// 1 and 2 are taken as given (the folder must exist); 3 and 4 only if the folder holds
// validation/cases. The executable's own path comes from /proc/self/exe (argv[0] if that
// fails).
#include <filesystem>
#include <stdexcept>
#include <string>

namespace pbdlab::cli {

// No data directory found, or a given one does not exist; the message names what was searched.
class DataDirError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Call once from main, before dataDir(): argv[0] (fallback for the executable's path) and the
// --data-dir value (empty: not given).
void configureDataDir(const std::string& argv0, const std::string& data_dir_option);

// The data directory, resolved on first use (throws DataDirError).
const std::filesystem::path& dataDir();
// How dataDir() was found, for messages ("--data-dir", "PBDLAB_DATA_DIR", "installed
// layout", "build tree (FILE)").
std::string dataDirOrigin();

// The search order above, for --help.
std::string dataDirHelp();

}  // namespace pbdlab::cli
