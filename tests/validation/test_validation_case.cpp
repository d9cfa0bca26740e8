// Validation case files: the shipped ones load; bad ones name the file and the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <Eigen/Geometry>

#include "core/input_error.hpp"
#include "meshes/box_mesh.hpp"
#include "validation/validation_case.hpp"

namespace pbdlab {
namespace {

namespace fs = std::filesystem;

// One folder per test: ctest runs the tests of this file side by side, and a shared
// bad.json raced (one test read the file another had just written).
std::string writeCase(const std::string& name, const std::string& text) {
  const fs::path folder = fs::path(::testing::TempDir()) / "pbdlab_cases" /
                          ::testing::UnitTest::GetInstance()->current_test_info()->name();
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
  // Residual gates: the measured value is required, and the tolerance keeps a 3x margin over it.
  expectField("{" + base + R"("metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1e-8, "measured": "x"}]})",
              "/metrics/0/measured_value");
  expectField("{" + base + R"("metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1e-8, "measured_value": 7.7e-9, "measured": "x"}]})",
              "/metrics/0/tolerance");
  expectField("{" + base + R"("metrics": [{"name": "m", "type": "probe_error", "probe": "tip", "tolerance": 1, "measured": "x"}]})",
              "/metrics/0/expected");
  expectField("{" + base + R"("metrics": [{"name": "m", "type": "probe_error", "probe": "tip", "expected": 0, "relative": true, "tolerance": 1, "measured": "x"}]})",
              "/metrics/0/expected");
  expectField("{" + base + R"("solvers": ["nosuch"], "metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1, "measured_value": 0.1, "measured": "x"}]})",
              "/solvers/0");
  expectField("{" + base + R"("label": "slow", "metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1, "measured_value": 0.1, "measured": "x"}]})",
              "/label");
  expectField("{" + base + R"("metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1, "measured_value": 0.1, "measured": "x", "tolerence": 2}]})",
              "/metrics/0/tolerence");
  expectField("{" + base + R"("series": "", "metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1, "measured_value": 0.1, "measured": "x"}]})",
              "/series");
  expectField("{" + base + R"("series": 3, "metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1, "measured_value": 0.1, "measured": "x"}]})",
              "/series");
}

// Case files are read like scene files (core/json_reader.hpp): duplicate keys and numbers too
// large for a double are errors at their JSON pointer, not silently kept or made infinite.
TEST(ValidationCase, DuplicateKeysAndHugeNumbersAreNamed) {
  const std::string base = R"("name": "x", "scene": "s.json", )";
  const std::string metric = R"({"name": "m", "type": "final_relative_residual", "measured": "x", )";
  expectField("{" + base + R"("name": "y", "metrics": [)" + metric + R"("tolerance": 1}]})", "/name");
  expectField("{" + base + R"("metrics": [)" + metric + R"("tolerance": 1, "tolerance": 2}]})", "/metrics/0/tolerance");
  expectField("{" + base + R"("metrics": [)" + metric + R"("tolerance": 1e999}]})", "/metrics/0/tolerance");
  expectField("{" + base + R"("metrics": [)" + metric + R"("tolerance": 1},])", "(file)");
  expectField("[1]", "(root)");
  const std::string path = writeCase("huge.json", "{" + base + R"("metrics": [)" + metric + R"("tolerance": -1e999}]})");
  try {
    loadValidationCase(path);
    FAIL() << "1e999 accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()).rfind(path + ": /metrics/0/tolerance: must be a finite number", 0), 0u)
        << error.what();
  }
}

// Unknown keys get the reader's suggestion; solver options are checked when the case loads.
TEST(ValidationCase, UnknownKeysSuggestAndSolverOptionsAreChecked) {
  const std::string rest = R"("metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1, "measured_value": 0.1, "measured": "x"}]})";
  const std::string path = writeCase("typo.json", R"({"name": "x", "scene": "s.json", "metrix": 1, )" + rest);
  try {
    loadValidationCase(path);
    FAIL() << "typo accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.field(), "/metrix");
    EXPECT_NE(std::string(error.what()).find("did you mean 'metrics'?"), std::string::npos) << error.what();
  }
  const std::string base = R"({"name": "x", "scene": "s.json", )";
  expectField(base + R"("solver_options": {"newton": {"line_serch": true}}, )" + rest,
              "/solver_options/newton/line_serch");
  expectField(base + R"("solver_options": {"explicit_relaxation": {"damping": -1}}, )" + rest,
              "/solver_options/explicit_relaxation/damping");
  expectField(base + R"("solver_options": {"nwton": {}}, )" + rest, "/solver_options/nwton");
  expectField(base + R"("metrics": [{"name": "m", "type": "probe_error", "probe": "tip", "expected": 1, "component": 3, "tolerance": 1, "measured": "x"}]})",
              "/metrics/0/component");
  expectField(base + R"("metrics": [{"name": "m", "type": "torsion_angle_deviation", "axis_point": [0, 0], "radius": 1, "sections": 5, "tolerance": 1, "measured": "x"}]})",
              "/metrics/0/axis_point");
  expectField(base + R"("metrics": [{"name": "m", "type": "torsion_angle_deviation", "axis_point": [0, 0, 0], "radius": 1, "sections": 2, "tolerance": 1, "measured": "x"}]})",
              "/metrics/0/sections");
}

// The series name is optional; metrics.json carries it only for a case that has one.
TEST(ValidationCase, SeriesGoesIntoMetricsJsonWhenGiven) {
  const std::string scene = (fs::path(PBDLAB_SOURCE_DIR) / "scenes" / "sagging_block.json").string();
  const fs::path folder = fs::path(::testing::TempDir()) / "pbdlab_series";
  fs::remove_all(folder);
  const std::string rest = R"("scene": ")" + scene + R"(", "solvers": ["newton"], "metrics": [{"name": "m", )" +
                           R"("type": "final_relative_residual", "tolerance": 1, "measured_value": 0.1, "measured": "x"}]})";
  for (const std::string series : {"", "sagging_meshes"}) {
    const std::string text =
        R"({"name": "c", )" + (series.empty() ? std::string() : R"("series": ")" + series + R"(", )") + rest;
    const ValidationCase c = loadValidationCase(writeCase("series.json", text));
    EXPECT_EQ(c.series, series);
    runValidationCase(c, "newton", (folder / "run").string(), (folder / "references" / "c").string(), false);
    const nlohmann::json written = nlohmann::json::parse(std::ifstream(folder / "run" / "metrics.json"));
    if (series.empty()) {
      EXPECT_FALSE(written.contains("series"));
    } else {
      EXPECT_EQ(written["series"], series);
    }
  }
  // The report labels a series' lines by the element type and order in summary.json.
  const nlohmann::json summary = nlohmann::json::parse(std::ifstream(folder / "run" / "summary.json"));
  EXPECT_EQ(summary["mesh"]["element_type"], "tet4");
  EXPECT_EQ(summary["mesh"]["order"], 1);
  fs::remove_all(folder);
}

// Against the Newton solution of the same scene on the same mesh, the sampled comparison is
// exact; the metric must then be at round-off, and a coarser mesh must give a larger error.
TEST(ValidationCase, MeshReferenceErrorIsZeroAgainstItselfAndGrowsOnACoarserMesh) {
  const std::string scene = (fs::path(PBDLAB_SOURCE_DIR) / "scenes" / "sagging_block.json").string();
  const fs::path folder = fs::path(::testing::TempDir()) / "pbdlab_mesh_reference";
  fs::remove_all(folder);
  fs::create_directories(folder);
  nlohmann::json coarse = nlohmann::json::parse(std::ifstream(scene));
  coarse["name"] = "sagging_block_coarse";
  coarse["mesh"]["cells"] = {2, 1, 1};
  std::ofstream(folder / "coarse.json") << coarse.dump();
  const std::string metric = R"({"name": "l2", "type": "mesh_reference_l2_error", "reference_scene": ")" + scene +
                             R"(", "tolerance": 1, "measured": "test"})";
  for (const std::string& which : {std::string(scene), (folder / "coarse.json").string()}) {
    const std::string text = R"({"name": "c", "scene": ")" + which + R"(", "solvers": ["newton"], "metrics": [)" + metric + "]}";
    std::ofstream(folder / "case.json") << text;
    const ValidationCase c = loadValidationCase((folder / "case.json").string());
    const CaseRunResult result =
        runValidationCase(c, "newton", (folder / "run").string(), (folder / "references" / "c").string(), false);
    const double value = result.metrics["metrics"][0]["value"].get<double>();
    if (which == scene) EXPECT_LT(value, 1e-9);
    else EXPECT_GT(value, 1e-3);
  }
  fs::remove_all(folder);
}

// A twist linear in x has no deviation; adding 0.1 rad sin(pi x / L) gives 0.1 rad at mid-span
// (5.73 degrees), also through a 180-degree total twist (the angles must unwrap).
TEST(ValidationCase, TorsionAngleDeviationOfKnownFields) {
  BoxMeshRecipe recipe;
  recipe.size = Vec3(4, 1, 1);
  recipe.cells = {16, 4, 4};
  const Mesh mesh = makeBoxMesh(recipe);
  MetricSpec metric;
  metric.type = "torsion_angle_deviation";
  metric.axis_point = Vec3(0, 0.5, 0.5);
  metric.radius = 0.5;
  metric.sections = 17;
  for (double bump : {0.0, 0.1}) {
    VecX u(3 * mesh.numNodes());
    for (int i = 0; i < mesh.numNodes(); ++i) {
      const Vec3 X = mesh.restPosition(i);
      const double angle = M_PI * X.x() / 4 + bump * std::sin(M_PI * X.x() / 4);
      const Vec3 centre(X.x(), 0.5, 0.5);
      u.segment<3>(3 * i) = centre + Eigen::AngleAxisd(angle, Vec3::UnitX()) * (X - centre) - X;
    }
    EXPECT_NEAR(torsionAngleDeviationDegrees(mesh, u, metric), bump * 180 / M_PI, 1e-9);
  }
}

TEST(ValidationCase, ConvergenceSummaryFindsTheFirstIterationBelowEachThreshold) {
  std::vector<IterationRow> rows;
  for (int k = 0; k < 5; ++k) {
    IterationRow row;  // by field name: IterationRow gains columns (substep)
    row.step = 1;
    row.iteration = k;
    row.solver_seconds = 0.1 * k;
    row.relative_residual = std::pow(10.0, -1.5 * k);
    rows.push_back(row);
  }
  const auto summary = convergenceSummary(rows, {1e-2, 1e-4, 1e-9});
  EXPECT_EQ(summary["iterations_to"][0], 2);   // 1e-3
  EXPECT_EQ(summary["iterations_to"][1], 3);   // 10^-4.5
  EXPECT_TRUE(summary["iterations_to"][2].is_null());
}

}  // namespace
}  // namespace pbdlab
