// Validation case files (validation/validation_case.hpp loadValidationCase). The input is
// written as validation/cases/fuzz.json of a temporary copy of the data layout whose scenes/
// and validation/references/ link to the source tree's, so relative scene paths resolve.
#include "fuzz/fuzz_common.hpp"
#include "validation/validation_case.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path root = [] {
    const std::filesystem::path r = pbdlab::fuzz::scratch() / "data";
    pbdlab::fuzz::link(std::filesystem::path(PBDLAB_SOURCE_DIR) / "scenes", r / "scenes");
    pbdlab::fuzz::link(std::filesystem::path(PBDLAB_SOURCE_DIR) / "validation" / "references", r / "validation" / "references");
    return r;
  }();
  const std::filesystem::path path = root / "validation" / "cases" / "fuzz.json";
  pbdlab::fuzz::writeFile(path, pbdlab::fuzz::bytes(data, size));
  pbdlab::fuzz::expectInputErrorOnly("fuzz_validation_case", [&] { pbdlab::loadValidationCase(path.string()); });
  return 0;
}
