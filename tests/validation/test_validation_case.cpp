// Validation case files: the shipped ones load; bad ones name the file and the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "validation/validation_case.hpp"

namespace pbdlab {
namespace {

namespace fs = std::filesystem;

std::string writeCase(const std::string& name, const std::string& text) {
  const fs::path folder = fs::path(::testing::TempDir()) / "pbdlab_cases";
  fs::create_directories(folder);
  const std::string path = (folder / name).string();
  std::ofstream(path) << text;
  return path;
}

void expectField(const std::string& text, const std::string& field) {
  const std::string path = writeCase("bad.json", text);
  try {
    loadValidationCase(path);
    FAIL() << "no error for " << text;
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), path);
    EXPECT_EQ(error.field(), field) << error.what();
  }
}

TEST(ValidationCase, ShippedCasesLoad) {
  const auto cases = loadValidationCases((fs::path(PBDLAB_SOURCE_DIR) / "validation" / "cases").string());
  ASSERT_GE(cases.size(), 4u);
  for (const ValidationCase& c : cases) {
    EXPECT_TRUE(fs::exists(c.scene_path)) << c.path;
    for (const MetricSpec& m : c.metrics) EXPECT_FALSE(m.measured.empty()) << c.path << " " << m.name;
  }
}

TEST(ValidationCase, BadFilesNameTheField) {
  const std::string base = R"("name": "x", "scene": "s.json", )";
  expectField("{" + base + R"("metrics": []})", "/metrics");
  expectField("{" + base + R"("metrics": [{"name": "m", "type": "nonsense", "tolerance": 1, "measured": "x"}]})",
              "/metrics/0/type");
  expectField("{" + base + R"("metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1}]})",
              "/metrics/0/measured");
  expectField("{" + base + R"("metrics": [{"name": "m", "type": "probe_error", "probe": "tip", "tolerance": 1, "measured": "x"}]})",
              "/metrics/0/expected");
  expectField("{" + base + R"("solvers": ["nosuch"], "metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1, "measured": "x"}]})",
              "/solvers/0");
  expectField("{" + base + R"("label": "slow", "metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1, "measured": "x"}]})",
              "/label");
  expectField("{" + base + R"("metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1, "measured": "x", "tolerence": 2}]})",
              "/metrics/0/tolerence");
}

TEST(ValidationCase, ConvergenceSummaryFindsTheFirstIterationBelowEachThreshold) {
  std::vector<IterationRow> rows;
  for (int k = 0; k < 5; ++k) rows.push_back({1, k, 0.1 * k, 0.0, std::pow(10.0, -1.5 * k), 0.0, {}});
  const auto summary = convergenceSummary(rows, {1e-2, 1e-4, 1e-9});
  EXPECT_EQ(summary["iterations_to"][0], 2);   // 1e-3
  EXPECT_EQ(summary["iterations_to"][1], 3);   // 10^-4.5
  EXPECT_TRUE(summary["iterations_to"][2].is_null());
}

}  // namespace
}  // namespace pbdlab
