// Validation case files: the shipped ones load; bad ones name the file and the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <Eigen/Geometry>

#include "core/support/input_error.hpp"
#include "meshes/box_mesh.hpp"
#include "validation/compare.hpp"
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

// A scene file of the source tree.
std::string sourceScene(const std::string& name) { return (fs::path(PBDLAB_SOURCE_DIR) / "scenes" / name).string(); }

// An empty folder under the GoogleTest temp dir (removed first if a crashed run left it).
fs::path freshFolder(const std::string& name) {
  const fs::path folder = fs::path(::testing::TempDir()) / name;
  fs::remove_all(folder);
  return folder;
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

// Case files are read like scene files (core/support/json_reader.hpp): duplicate keys and numbers too
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
// "claim" (the claims ledger): read strictly, every field named in its errors.
TEST(ValidationCase, ClaimsAreReadStrictly) {
  const std::string scene = sourceScene("sagging_block.json");
  const std::string head = R"({"name": "c", "paper": "pbng", "scene": ")" + scene + R"(", "solvers": ["newton"], )";
  const std::string metrics = R"("metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1, )"
                              R"("measured_value": 0.1, "measured": "x"}])";
  const std::string claim = R"({"source": "Fig. 9", "text": "three models alike", "verdict": "reproduces", )"
                            R"("ours": "5e-4", "theirs": "figure only", "readings": ["eq. 32 with (E, nu): alike"]})";
  const ValidationCase c = loadValidationCase(writeCase("claim.json", head + R"("claim": )" + claim + ", " + metrics + "}"));
  EXPECT_EQ(c.claim.source, "Fig. 9");
  EXPECT_EQ(c.claim.text, "three models alike");
  EXPECT_EQ(c.claim.verdict, "reproduces");
  EXPECT_EQ(c.claim.readings, std::vector<std::string>{"eq. 32 with (E, nu): alike"});
  EXPECT_TRUE(loadValidationCase(writeCase("none.json", head + metrics + "}")).claim.text.empty());
  auto with = [&](const std::string& field, const std::string& value) {
    nlohmann::json document = nlohmann::json::parse(claim);
    document[field] = nlohmann::json::parse(value);
    return head + R"("claim": )" + document.dump() + ", " + metrics + "}";
  };
  expectField(with("verdict", R"("holds")"), "/claim/verdict");
  expectField(with("text", R"("")"), "/claim/text");
  expectField(with("readings", R"("one")"), "/claim/readings");
  expectField(with("readings", R"([""])"), "/claim/readings/0");
  expectField(with("where", R"("Fig. 1")"), "/claim/where");
  // A claim is some paper's: the case must say which.
  std::string no_paper = head + R"("claim": )" + claim + ", " + metrics + "}";
  no_paper.replace(no_paper.find(R"("paper": "pbng", )"), std::string(R"("paper": "pbng", )").size(), "");
  expectField(no_paper, "/claim");
}

TEST(ValidationCase, SeriesGoesIntoMetricsJsonWhenGiven) {
  const std::string scene = sourceScene("sagging_block.json");
  const fs::path folder = freshFolder("pbdlab_series");
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
  const std::string scene = sourceScene("sagging_block.json");
  const fs::path folder = freshFolder("pbdlab_mesh_reference");
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
    // The signed curve behind it (the report's Fig. 5 profile): bump sin(pi x / L) per section.
    const TorsionAngleProfile profile = torsionAngleProfile(mesh, u, metric);
    ASSERT_EQ(profile.x.size(), 17u);
    ASSERT_EQ(profile.deviation_degrees.size(), 17u);
    for (int k = 0; k < 17; ++k) {
      EXPECT_NEAR(profile.x[k], 0.25 * k, 1e-12);
      EXPECT_NEAR(profile.deviation_degrees[k], bump * std::sin(M_PI * profile.x[k] / 4) * 180 / M_PI, 1e-9) << k;
    }
  }
}

// scene_patch: every pointer must name a value of the scene file and keep its JSON type; sweep:
// {name, parameter, value} or an array of them. Errors name the case file and the field.
TEST(ValidationCase, ScenePatchAndSweepErrorsNameTheCaseField) {
  const std::string scene = sourceScene("sagging_block.json");
  const std::string base = R"("name": "x", "scene": ")" + scene + R"(", )";
  const std::string rest = R"("metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1, "measured_value": 0.1, "measured": "x"}]})";
  // Loads when right; keys are pointers (escaped as field names: "/" is "~1").
  const ValidationCase good = loadValidationCase(writeCase("good.json",
      "{" + base + R"("scene_patch": {"/material/poisson_ratio": 0.45, "/time/steps": 2}, )" +
      R"("sweep": [{"name": "nu", "parameter": "Poisson ratio", "value": 0.45}, {"name": "n", "parameter": "steps", "value": 2}], )" + rest));
  EXPECT_EQ(good.scene_patch["/material/poisson_ratio"], 0.45);
  ASSERT_EQ(good.sweeps.size(), 2u);
  EXPECT_EQ(good.sweeps[1].parameter, "steps");
  EXPECT_EQ(good.sweeps[0].value, 0.45);
  expectField("{" + base + R"("scene_patch": {"/material/poisson": 0.45}, )" + rest, "/scene_patch/~1material~1poisson");
  expectField("{" + base + R"("scene_patch": {"/mesh/cells/7": 3}, )" + rest, "/scene_patch/~1mesh~1cells~17");
  expectField("{" + base + R"("scene_patch": {"/mesh/cells/x": 3}, )" + rest, "/scene_patch/~1mesh~1cells~1x");
  expectField("{" + base + R"("scene_patch": {"material/poisson_ratio": 0.45}, )" + rest,
              "/scene_patch/material~1poisson_ratio");
  expectField("{" + base + R"("scene_patch": {"": {}}, )" + rest, "/scene_patch/");
  expectField("{" + base + R"("scene_patch": {"/material/poisson_ratio": "0.45"}, )" + rest,
              "/scene_patch/~1material~1poisson_ratio");
  expectField("{" + base + R"("scene_patch": {"/time/steps": 1.5}, )" + rest, "/scene_patch/~1time~1steps");
  expectField("{" + base + R"("scene_patch": {"/mesh/cells": 3}, )" + rest, "/scene_patch/~1mesh~1cells");
  expectField("{" + base + R"("scene_patch": {}, )" + rest, "/scene_patch");
  expectField("{" + base + R"("scene_patch": [1], )" + rest, "/scene_patch");
  expectField(R"({"name": "x", "scene": "nosuch.json", "scene_patch": {"/time/steps": 2}, )" + rest, "/scene");
  expectField("{" + base + R"("sweep": {"name": "nu", "parameter": "Poisson ratio"}, )" + rest, "/sweep/value");
  expectField("{" + base + R"("sweep": {"name": "nu", "parameter": "Poisson ratio", "value": "0.3"}, )" + rest,
              "/sweep/value");
  expectField("{" + base + R"("sweep": {"name": "", "parameter": "Poisson ratio", "value": 0.3}, )" + rest, "/sweep/name");
  expectField("{" + base + R"("sweep": {"name": "nu", "parameter": "p", "value": 0.3, "valeu": 1}, )" + rest,
              "/sweep/valeu");
  expectField("{" + base + R"("sweep": "nu", )" + rest, "/sweep");
  expectField("{" + base + R"("sweep": [], )" + rest, "/sweep");
  expectField("{" + base + R"("sweep": [{"name": "nu", "parameter": "p", "value": 0.3}, {"name": "nu", "parameter": "q", "value": 1}], )" + rest,
              "/sweep/1/name");
}

// The patch is applied before the scene is validated and resolved: the problem and `resolved`
// carry the patched value, and a value the scene rejects is the case's error at its field.
TEST(ValidationCase, ScenePatchIsAppliedBeforeTheSceneIsResolved) {
  const std::string scene = sourceScene("sagging_block.json");
  const std::string rest = R"("metrics": [{"name": "m", "type": "final_relative_residual", "tolerance": 1, "measured_value": 0.1, "measured": "x"}]})";
  const auto caseWith = [&](const std::string& patch) {
    return loadValidationCase(writeCase("patched.json", R"({"name": "x", "scene": ")" + scene +
                                                            R"(", "scene_patch": )" + patch + ", " + rest));
  };
  const Scene patched = loadCaseScene(caseWith(R"({"/material/poisson_ratio": 0.45, "/solver/max_iterations": 7})"));
  EXPECT_EQ(patched.resolved["material"]["poisson_ratio"], 0.45);
  EXPECT_EQ(patched.problem.material.poisson_ratio, 0.45);
  EXPECT_EQ(patched.solver.budget.max_iterations, 7);
  EXPECT_EQ(patched.resolved["solver"]["max_iterations"], 7);
  EXPECT_EQ(patched.path, scene);  // relative paths in the scene resolve as for the scene itself
  const ValidationCase bad = caseWith(R"({"/material/poisson_ratio": 0.5})");
  try {
    loadCaseScene(bad);
    FAIL() << "nu = 0.5 accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), bad.path);
    EXPECT_EQ(error.field(), "/scene_patch/~1material~1poisson_ratio") << error.what();
    EXPECT_NE(std::string(error.what()).find("poisson_ratio"), std::string::npos) << error.what();
  }
}

// The cached Newton reference is keyed by the resolved (patched) scene: a variant with another
// Young's modulus in the same reference folder computes its own reference (Newton against it:
// round-off) instead of reusing the first variant's (a relative error near 0.5).
TEST(ValidationCase, PatchedVariantsDoNotShareANewtonReference) {
  const std::string scene = sourceScene("sagging_block.json");
  const fs::path folder = freshFolder("pbdlab_patch_reference");
  for (const std::string& youngs : {std::string("1e6"), std::string("2e6")}) {
    const std::string text = R"({"name": "c", "scene": ")" + scene + R"(", "scene_patch": {"/material/youngs_modulus": )" +
                             youngs + R"(}, "solvers": ["newton"], "metrics": [{"name": "rms", "type": "reference_rms_error", )" +
                             R"("tolerance": 1, "measured": "x"}]})";
    const ValidationCase c = loadValidationCase(writeCase("variant.json", text));
    const CaseRunResult result =
        runValidationCase(c, "newton", (folder / "run").string(), (folder / "references" / "c").string(), false);
    EXPECT_LT(result.metrics["metrics"][0]["value"].get<double>(), 1e-9) << "E = " << youngs;
    const nlohmann::json summary = nlohmann::json::parse(std::ifstream(folder / "run" / "summary.json"));
    EXPECT_EQ(summary["scene_resolved"]["material"]["youngs_modulus"], std::stod(youngs));
  }
  fs::remove_all(folder);
}

// The sweep points go into metrics.json (always as an array), like the series name.
TEST(ValidationCase, SweepGoesIntoMetricsJsonWhenGiven) {
  const std::string scene = sourceScene("sagging_block.json");
  const fs::path folder = freshFolder("pbdlab_sweep");
  const std::string rest = R"("scene": ")" + scene + R"(", "solvers": ["newton"], "metrics": [{"name": "m", )" +
                           R"("type": "final_relative_residual", "tolerance": 1, "measured_value": 0.1, "measured": "x"}]})";
  for (const std::string& sweep : {std::string(), std::string(R"({"name": "nu", "parameter": "Poisson ratio", "value": 0.3})")}) {
    const std::string text = R"({"name": "c", )" + (sweep.empty() ? std::string() : R"("sweep": )" + sweep + ", ") + rest;
    const ValidationCase c = loadValidationCase(writeCase("sweep.json", text));
    runValidationCase(c, "newton", (folder / "run").string(), (folder / "references" / "c").string(), false);
    const nlohmann::json written = nlohmann::json::parse(std::ifstream(folder / "run" / "metrics.json"));
    if (sweep.empty()) {
      EXPECT_FALSE(written.contains("sweep"));
    } else {
      EXPECT_EQ(written["sweep"], nlohmann::json::parse(R"([{"name": "nu", "parameter": "Poisson ratio", "value": 0.3}])"));
    }
  }
  fs::remove_all(folder);
}

// solver_max_iterations: each named solver runs with its own iteration budget per step (an
// equal time budget converted per solver), the others with the scene's.
TEST(ValidationCase, SolverMaxIterationsSetsThatSolversBudget) {
  const std::string scene = sourceScene("sagging_block.json");
  const fs::path folder = freshFolder("pbdlab_solver_budget");
  const std::string rest = R"("scene": ")" + scene + R"(", "converged_steps": "none", "metrics": [{"name": "m", )" +
                           R"("type": "final_relative_residual", "tolerance": 10, "measured_value": 1, "measured": "x"}]})";
  const ValidationCase c = loadValidationCase(
      writeCase("budget.json", R"({"name": "c", "solvers": ["newton", "xpbd_qs"], "solver_max_iterations": {"newton": 1}, )" + rest));
  runValidationCase(c, "newton", (folder / "run").string(), (folder / "references" / "c").string(), false);
  const nlohmann::json summary = nlohmann::json::parse(std::ifstream(folder / "run" / "summary.json"));
  EXPECT_EQ(summary["scene_resolved"]["solver"]["max_iterations"], 1);
  for (const auto& step : summary["steps"]) EXPECT_EQ(step["iterations"], 1) << step.dump();
  fs::remove_all(folder);
  expectField(R"({"name": "c", "solvers": ["newton"], "solver_max_iterations": {"xpbd": 3}, )" + rest,
              "/solver_max_iterations/xpbd");
  expectField(R"({"name": "c", "solvers": ["newton"], "solver_max_iterations": {"newton": 0}, )" + rest,
              "/solver_max_iterations/newton");
}

// Named variants: one solver with two option sets in one case, each run with its own options,
// named by its variant; the loader refuses clashing names and bad options at the variant's field.
TEST(ValidationCase, NamedVariantsRunOneSolverWithTheirOwnOptions) {
  const std::string scene = sourceScene("sagging_block.json");
  const fs::path folder = freshFolder("pbdlab_variants");
  const std::string rest = R"("scene": ")" + scene + R"(", "converged_steps": "none", "metrics": [{"name": "m", )" +
                           R"("type": "reference_rms_error", "tolerance": 10, "measured": "x"}]})";
  const ValidationCase c = loadValidationCase(writeCase(
      "variants.json",
      R"({"name": "c", "solvers": ["newton", {"name": "newton_no_ls", "solver": "newton", "options": {"line_search": false}}], )"
      R"("solver_max_iterations": {"newton_no_ls": 1}, )" + rest));
  ASSERT_EQ(c.solvers, (std::vector<std::string>{"newton", "newton_no_ls"}));
  EXPECT_EQ(c.solverOf("newton_no_ls"), "newton");
  EXPECT_EQ(c.solverOf("newton"), "newton");
  const CaseRunResult run = runValidationCase(c, "newton_no_ls", (folder / "newton_no_ls").string(),
                                              (folder / "references" / "c").string(), false);
  const nlohmann::json summary = nlohmann::json::parse(std::ifstream(folder / "newton_no_ls" / "summary.json"));
  EXPECT_EQ(summary["solver"], "newton");
  EXPECT_EQ(summary["scene_resolved"]["solver"]["options"]["line_search"], false);
  EXPECT_EQ(summary["scene_resolved"]["solver"]["max_iterations"], 1);
  EXPECT_EQ(run.metrics["solver"], "newton");
  EXPECT_EQ(run.metrics["run"], "newton_no_ls");
  EXPECT_EQ(run.metrics["label"], "newton_no_ls");
  // A variant of Newton is judged against the reference (one iteration is not it): gated.
  EXPECT_TRUE(run.metrics["metrics"][0]["pass"].is_boolean()) << run.metrics.dump();
  EXPECT_GT(run.metrics["metrics"][0]["value"].get<double>(), 0.0);
  fs::remove_all(folder);

  const std::string solvers = R"({"name": "c", "solvers": )";
  expectField(solvers + R"(["newton", {"name": "newton", "solver": "newton"}], )" + rest, "/solvers/1/name");
  expectField(solvers + R"([{"name": "a", "solver": "newton"}, {"name": "a", "solver": "pbng"}], )" + rest, "/solvers/1");
  expectField(solvers + R"(["pbng", "pbng"], )" + rest, "/solvers/1");
  expectField(solvers + R"([{"name": "../up", "solver": "newton"}], )" + rest, "/solvers/0/name");
  expectField(solvers + R"([{"name": "a", "solver": "nwton"}], )" + rest, "/solvers/0/solver");
  expectField(solvers + R"([{"name": "a", "solver": "pbng", "options": {"omega": 3}}], )" + rest, "/solvers/0/options/omega");
  expectField(solvers + R"([{"name": "a", "solver": "pbng", "optons": {}}], )" + rest, "/solvers/0/optons");
  expectField(solvers + R"([{"solver": "pbng"}], )" + rest, "/solvers/0/name");
}

// by_run: a run's own tolerance in place of the metric's (a claim that one variant beats
// another, each gated at a margin over its own measured value).
TEST(ValidationCase, ARunGateReplacesTheMetricsToleranceForThatRun) {
  const std::string scene = sourceScene("sagging_block.json");
  const fs::path folder = freshFolder("pbdlab_run_gate");
  const std::string head = R"({"name": "c", "scene": ")" + scene + R"(", "converged_steps": "none", )" +
                           R"("solvers": ["newton", {"name": "one_step", "solver": "newton", "options": {"line_search": false}}], )" +
                           R"("solver_max_iterations": {"one_step": 1}, )";
  const auto metric = [&](const std::string& by_run) {
    return head + R"("metrics": [{"name": "r", "type": "final_relative_residual", "tolerance": 10, "measured_value": 0.1, "measured": "x", "by_run": )" +
           by_run + "}]}";
  };
  // One Newton step without line search leaves a relative residual of 2.4: far above 1e-12, below 10.
  for (const std::string run_tolerance_text : {"1e-12", "10"}) {
    const double run_tolerance = std::stod(run_tolerance_text);
    const ValidationCase c = loadValidationCase(writeCase(
        "gate.json", metric(R"({"one_step": {"tolerance": )" + run_tolerance_text + R"(, "measured_value": 1e-13}})")));
    EXPECT_EQ(c.metrics[0].toleranceFor("one_step"), run_tolerance);
    EXPECT_EQ(c.metrics[0].toleranceFor("newton"), 10.0);
    const CaseRunResult run =
        runValidationCase(c, "one_step", (folder / "one_step").string(), (folder / "references" / "c").string(), false);
    const nlohmann::json& row = run.metrics["metrics"][0];
    EXPECT_EQ(row["tolerance"].get<double>(), run_tolerance);
    EXPECT_EQ(row["pass"].get<bool>(), run_tolerance == 10.0) << row.dump();
  }
  fs::remove_all(folder);
  expectField(metric(R"({"pbng": {"tolerance": 1, "measured_value": 0.1}})"), "/metrics/0/by_run/pbng");
  expectField(metric(R"({"one_step": {"tolerance": 0.2, "measured_value": 0.1}})"), "/metrics/0/by_run/one_step/tolerance");
  expectField(metric(R"({"one_step": {"tolerance": 1}})"), "/metrics/0/by_run/one_step/measured_value");
  expectField(metric(R"({"one_step": {"tolerance": 1, "measured_value": 0.1, "margin": 3}})"), "/metrics/0/by_run/one_step/margin");
  expectField(metric(R"({"one_step": 1})"), "/metrics/0/by_run/one_step");
}

// compare reads a null metric value (JSON's non-finite: a diverged run's residual) as NaN:
// finite -> null is a regression, null -> finite an improvement, null in both unchanged.
TEST(Compare, NonFiniteMetricValuesCompareByFiniteness) {
  const fs::path root = freshFolder("pbdlab_compare_null");
  const auto write = [&](const std::string& folder, const nlohmann::json& a, const nlohmann::json& b) {
    for (const auto& [name, value] : {std::pair{"a", a}, std::pair{"b", b}}) {
      fs::create_directories(root / folder / name);
      nlohmann::json metrics = {{"case", name}, {"label", "xpbd"}, {"totals", nlohmann::json::object()},
                                {"metrics", {{{"name", "r"}, {"value", value}, {"tolerance", 1.0}, {"pass", nullptr}}}}};
      std::ofstream(root / folder / name / "metrics.json") << metrics.dump();
    }
  };
  write("base", 0.1, nullptr);
  write("same", 0.1, nullptr);
  write("worse", nullptr, nullptr);
  write("better", 0.1, 0.2);
  const CompareResult same = compareValidationRuns((root / "base").string(), (root / "same").string(), {});
  EXPECT_TRUE(same.rows.empty()) << formatCompareTable(same);
  EXPECT_FALSE(same.accuracy_regression);
  const CompareResult worse = compareValidationRuns((root / "base").string(), (root / "worse").string(), {});
  ASSERT_EQ(worse.rows.size(), 1u) << formatCompareTable(worse);
  EXPECT_EQ(worse.rows[0].case_name, "a");
  EXPECT_EQ(worse.rows[0].verdict, "regression");
  EXPECT_TRUE(worse.accuracy_regression);
  const CompareResult better = compareValidationRuns((root / "base").string(), (root / "better").string(), {});
  ASSERT_EQ(better.rows.size(), 1u) << formatCompareTable(better);
  EXPECT_EQ(better.rows[0].case_name, "b");
  EXPECT_EQ(better.rows[0].verdict, "improved");
  EXPECT_FALSE(better.accuracy_regression);
  fs::remove_all(root);
}

// Writes runs/<case>/<label>/metrics.json under `folder`, one metric "r" each.
void writeMetrics(const fs::path& folder, const std::string& case_name, const nlohmann::json& value,
                  bool converged, double solver_seconds = 1.0) {
  fs::create_directories(folder / "runs" / case_name / "xpbd");
  const nlohmann::json metrics = {
      {"case", case_name}, {"label", "xpbd"},
      {"totals", {{"all_steps_converged", converged}, {"solver_seconds", solver_seconds}}},
      {"metrics", {{{"name", "r"}, {"value", value}, {"tolerance", 1.0}, {"pass", nullptr}}}}};
  std::ofstream(folder / "runs" / case_name / "xpbd" / "metrics.json") << metrics.dump();
}

// A smaller metric in a run that did not converge is a change, never an "improved"; the table
// ends with totals, shows no ratio to a zero baseline and no tolerance for timing rows.
TEST(Compare, TableHasTotalsAndNeverCallsANonConvergedRunImproved) {
  const fs::path root = freshFolder("pbdlab_compare_table");
  writeMetrics(root / "base", "a", 0.5, true);
  writeMetrics(root / "base", "b", 0.5, true);
  writeMetrics(root / "base", "z", 0.0, true, 1.0);
  writeMetrics(root / "now", "a", 0.1, true);
  writeMetrics(root / "now", "b", 0.1, false);  // smaller, but a step ended at its budget
  writeMetrics(root / "now", "z", 0.0, true, 5.0);  // 5x slower
  const CompareResult result = compareValidationRuns((root / "base").string(), (root / "now").string(), {});
  const std::string table = formatCompareTable(result);
  ASSERT_EQ(result.rows.size(), 3u) << table;
  EXPECT_EQ(result.rows[0].verdict, "improved") << table;
  EXPECT_EQ(result.rows[1].verdict, "changed (not converged)") << table;
  EXPECT_EQ(result.rows[2].verdict, "slower") << table;
  EXPECT_EQ(result.runs_compared, 3);
  EXPECT_EQ(result.metrics_compared, 3);
  EXPECT_NE(table.find("Total: 3 runs and 3 metrics compared"), std::string::npos) << table;
  // The timing row: ratio 5, no tolerance.
  const std::string slower = table.substr(table.find("| z "));
  EXPECT_NE(slower.find("|        5 |          – | slower"), std::string::npos) << table;
  // A zero baseline has no ratio.
  CompareRow zero{"c", "xpbd", "r", 0.0, 0.2, 1.0, "regression"};
  const std::string zero_table = formatCompareTable({{zero}, 1, 1, true, false});
  EXPECT_EQ(zero_table.find("| 0 "), std::string::npos) << zero_table;
  EXPECT_NE(zero_table.find("|        – |"), std::string::npos) << zero_table;
  fs::remove_all(root);
}

// Folders without validation output are bad input that says what a valid folder holds.
TEST(Compare, AFolderWithoutValidationOutputIsBadInput) {
  const fs::path root = freshFolder("pbdlab_compare_bad");
  fs::create_directories(root / "empty");
  fs::create_directories(root / "foreign" / "x");
  std::ofstream(root / "foreign" / "x" / "metrics.json") << R"({"x": 1})";
  for (const fs::path& folder : {root / "empty", root / "missing", root / "foreign"}) {
    try {
      compareValidationRuns(folder.string(), folder.string(), {});
      ADD_FAILURE() << folder << " was accepted";
    } catch (const InputError& error) {
      EXPECT_NE(std::string(error.what()).find("pbdlab validate --out"), std::string::npos) << error.what();
    }
  }
  fs::remove_all(root);
}

// expected_divergence: a solver that diverges at a sweep point passes only if it diverges.
// FP-PXPBD diverges at step 3 of the falling block on an 8^3 grid at nu = 0.4999 (measured
// 2026-11-23); Newton does not diverge on the sagging block, so expecting it to fails.
TEST(ValidationCase, ExpectedDivergencePassesOnlyWhenTheRunDiverges) {
  const std::string scenes = (fs::path(PBDLAB_SOURCE_DIR) / "scenes").string();
  const std::string metric = R"("metrics": [{"name": "r", "type": "final_relative_residual", "tolerance": 1e-3, "measured_value": 1e-4, "measured": "x"}]})";
  expectField(R"({"name": "x", "scene": "s.json", "solvers": ["newton"], "expected_divergence": {"pbd": "m"}, )" + metric,
              "/expected_divergence/pbd");
  expectField(R"({"name": "x", "scene": "s.json", "solvers": ["newton"], "expected_divergence": {"newton": ""}, )" + metric,
              "/expected_divergence/newton");
  expectField(R"({"name": "x", "scene": "s.json", "expected_divergence": ["newton"], )" + metric, "/expected_divergence");
  const fs::path folder = freshFolder("pbdlab_expected_divergence");
  const std::string diverging = R"({"name": "d", "scene": ")" + scenes + R"(/xpbd_falling_block_res16.json", )" +
                                R"("scene_patch": {"/mesh/nodes_per_side": 8, "/material/poisson_ratio": 0.4999, "/time/steps": 3}, )" +
                                R"("solvers": ["fp_pxpbd"], "converged_steps": "none", )";
  for (const bool expect : {false, true}) {
    const std::string text = diverging + (expect ? R"("expected_divergence": {"fp_pxpbd": "diverges at step 3"}, )" : "") + metric;
    const ValidationCase c = loadValidationCase(writeCase("diverging.json", text));
    const CaseRunResult result =
        runValidationCase(c, "fp_pxpbd", (folder / "run").string(), (folder / "references" / "d").string(), false);
    const nlohmann::json& rows = result.metrics["metrics"];
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(result.passed, expect) << rows.dump();
    if (expect) {
      EXPECT_TRUE(rows[0]["pass"].is_null()) << rows.dump();  // shown, not gated
      EXPECT_EQ(rows[1]["name"], "expected_divergence");
      EXPECT_EQ(rows[1]["pass"], true);
    } else {
      EXPECT_EQ(rows[1]["name"], "steps_converged");
      EXPECT_EQ(rows[1]["pass"], false);  // a diverged run fails a case that does not expect it
    }
  }
  const std::string converging = R"({"name": "n", "scene": ")" + scenes + R"(/sagging_block.json", "solvers": ["newton"], )" +
                                 R"("expected_divergence": {"newton": "x"}, )" + metric;
  const ValidationCase c = loadValidationCase(writeCase("converging.json", converging));
  const CaseRunResult result =
      runValidationCase(c, "newton", (folder / "run").string(), (folder / "references" / "n").string(), false);
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.metrics["metrics"][1]["value"], 1);
  EXPECT_EQ(result.metrics["metrics"][1]["pass"], false);
  fs::remove_all(folder);
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

namespace pbdlab {
namespace {

// Issue 12 (fuzzing): a scene path the system refuses (a name longer than NAME_MAX) made
// std::filesystem's throwing is_regular_file / exists escape as an internal error ("filesystem
// error: status: File name too long"); it is "no such scene file", an InputError naming the
// field. The same input is fed to the fuzz target by ctest (fuzz/regressions/).
TEST(ValidationCaseFuzzRegressions, AScenePathTooLongForTheSystemIsBadInput) {
  const std::string long_name(300, 'a');
  const std::string patched = writeCase("long_patched.json", R"({"name": "x", "scene": ")" + long_name +
                                                                 R"(/b.json", "scene_patch": {"/a": 1},
      "metrics": [{"type": "final_relative_residual", "tolerance": 1, "measured": "x"}]})");
  try {
    loadValidationCase(patched);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "/scene") << e.what();
  }
  const std::string reference = writeCase("long_reference.json", R"({"name": "x", "scene": "s.json",
      "metrics": [{"name": "m", "type": "mesh_reference_max_error", "reference_scene": ")" + long_name +
                                                                     R"(/b.json", "tolerance": 1, "measured": "x"}]})");
  try {
    loadValidationCase(reference);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "/metrics/0/reference_scene") << e.what();
  }
}

}  // namespace
}  // namespace pbdlab
