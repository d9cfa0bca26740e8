// Benchmark table files (apps/table_command.cpp, `pbdlab table ID`): read and checked as the
// command does before running anything. The input is written as benchmarks/tables/fuzz.json
// of a temporary data layout whose benchmarks/scenes/ and scenes/ link to the source tree's.
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_common.hpp"

namespace pbdlab::cli {
// apps/table_command.cpp: the table reader `pbdlab table` uses.
nlohmann::json readTableFile(const std::string& path);
}  // namespace pbdlab::cli

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path root = [] {
    const std::filesystem::path r = pbdlab::fuzz::scratch() / "data";
    pbdlab::fuzz::link(std::filesystem::path(PBDLAB_SOURCE_DIR) / "benchmarks" / "scenes", r / "benchmarks" / "scenes");
    pbdlab::fuzz::link(std::filesystem::path(PBDLAB_SOURCE_DIR) / "scenes", r / "scenes");
    return r;
  }();
  const std::filesystem::path path = root / "benchmarks" / "tables" / "fuzz.json";
  pbdlab::fuzz::writeFile(path, pbdlab::fuzz::bytes(data, size));
  pbdlab::fuzz::expectInputErrorOnly("fuzz_table", [&] { pbdlab::cli::readTableFile(path.string()); });
  return 0;
}
