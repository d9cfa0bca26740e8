// Scene files: a valid scene parses with its defaults filled in; every kind of bad input is an
// InputError naming the file and the exact JSON pointer of the field.
#include "validation/scene.hpp"

#include <Eigen/Geometry>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "core/support/input_error.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/mesh_cache.hpp"
#include "meshes/mesh_recipe.hpp"
#include "meshes/msh_io.hpp"
#include "tests/support/temporary_mesh_cache.hpp"
#include "solvers/registry.hpp"
#include "validation/runner.hpp"

namespace pbdlab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A fresh folder per test under the GoogleTest temp dir, removed afterwards.
class TempFolder {
 public:
  TempFolder() {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("pbdlab_test_scene_") + std::to_string(::getpid()) + "_" +
                       std::to_string(counter++) + "_" + (info ? info->name() : "x");
    for (char& c : name)
      if (c == '/') c = '_';
    path_ = fs::path(::testing::TempDir()) / name;
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& file_name, const std::string& text) const {
    const std::string file = (path_ / file_name).string();
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
  std::string file(const std::string& file_name) const { return (path_ / file_name).string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The smallest valid scene: only the required fields.
json minimalScene() {
  return json::parse(R"({
    "mesh": {"type": "box", "cells": [2, 2, 2]},
    "material": {"model": "stable_neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.3},
    "time": {"dt": 0.5, "steps": 2}
  })");
}

// A small scene that sets every field (the example of docs/scene-format.md, smaller mesh).
json fullScene() {
  return json::parse(R"({
    "name": "torsion_tiny",
    "description": "twist a bar",
    "mesh": {"type": "box", "origin": [0, 0, 0], "size": [4, 1, 1], "cells": [4, 1, 1], "split": "five"},
    "material": {"model": "stable_neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.3,
                 "lame_mapping": "matched", "density": 1000},
    "gravity": [0, 0, -9.81],
    "dirichlet": [
      {"node_set": "x-min"},
      {"node_set": "x-max", "components": "zx",
       "motion": [{"type": "translate", "by": [1, 0, 0], "t_start": 0, "t_end": 1},
                  {"type": "rotate", "axis_point": [4, 0.5, 0.5], "axis_direction": [1, 0, 0],
                   "angle_degrees": 90, "t_start": 1, "t_end": 2},
                  {"type": "fixed"}]}],
    "time": {"integrator": "backward_euler", "dt": 0.25, "steps": 4},
    "solver": {"name": "newton", "max_iterations": 50, "max_seconds": 60, "target_relative_residual": 1e-6,
               "absolute_residual_floor": 1e-12, "options": {"line_search": true}},
    "output": {"vtu": "every_step"}
  })");
}

// Runs `load` and checks it throws an InputError naming `file` and `field` exactly.
template <typename Load>
void expectInputError(Load load, const std::string& file, const std::string& field) {
  try {
    load();
  } catch (const InputError& error) {
    EXPECT_EQ(error.field(), field) << error.what();
    EXPECT_EQ(error.file(), file) << error.what();
    // The message carries both, for the command line.
    EXPECT_NE(std::string(error.what()).find(field), std::string::npos) << error.what();
    return;
  } catch (const std::exception& error) {
    ADD_FAILURE() << "expected InputError at " << field << ", got another exception: " << error.what();
    return;
  }
  ADD_FAILURE() << "expected InputError at " << field << ", but the scene loaded";
}

TEST(Scene, MinimalSceneGetsEveryDefault) {
  TempFolder folder;
  const std::string path = folder.write("small_bar.json", minimalScene().dump(2));
  const Scene scene = loadScene(path);

  EXPECT_EQ(scene.path, path);
  EXPECT_EQ(scene.name, "small_bar");  // the file stem
  EXPECT_EQ(scene.problem.numNodes(), 27);
  EXPECT_EQ(scene.problem.material.model, MaterialModel::kStableNeoHookean);
  EXPECT_EQ(scene.problem.material.mapping, LameMapping::kMatchedToLinear);
  EXPECT_DOUBLE_EQ(scene.problem.material.density, 1000.0);
  EXPECT_EQ(scene.problem.gravity, Vec3::Zero());
  EXPECT_TRUE(scene.problem.dirichlet.empty());
  EXPECT_EQ(scene.problem.time.integrator, Integrator::kQuasistatic);
  EXPECT_DOUBLE_EQ(scene.problem.time.dt, 0.5);
  EXPECT_EQ(scene.problem.time.num_steps, 2);
  EXPECT_EQ(scene.solver.name, "newton");
  EXPECT_TRUE(scene.solver.options.is_object() && scene.solver.options.empty());
  const Budget defaults;
  EXPECT_EQ(scene.solver.budget.max_iterations, defaults.max_iterations);
  EXPECT_TRUE(std::isinf(scene.solver.budget.max_seconds));
  EXPECT_EQ(scene.solver.budget.target_relative_residual, defaults.target_relative_residual);
  EXPECT_EQ(scene.output.vtu, OutputSpec::Frames::kFinal);

  const json& r = scene.resolved;
  EXPECT_EQ(r["name"], "small_bar");
  EXPECT_EQ(r["mesh"]["type"], "box");
  EXPECT_EQ(r["mesh"]["origin"], json::array({0.0, 0.0, 0.0}));
  EXPECT_EQ(r["mesh"]["size"], json::array({1.0, 1.0, 1.0}));
  EXPECT_EQ(r["mesh"]["cells"], json::array({2, 2, 2}));
  EXPECT_EQ(r["mesh"]["family"], "five_tet");  // the older "split": "five" maps to it
  EXPECT_EQ(r["mesh"]["order"], 1);
  EXPECT_FALSE(r["mesh"].contains("split"));
  EXPECT_EQ(r["material"]["model"], "stable_neo_hookean");
  EXPECT_EQ(r["material"]["lame_mapping"], "matched");
  EXPECT_EQ(r["material"]["density"], 1000.0);
  EXPECT_EQ(r["gravity"], json::array({0.0, 0.0, 0.0}));
  EXPECT_EQ(r["dirichlet"], json::array());
  EXPECT_EQ(r["time"]["integrator"], "quasistatic");
  EXPECT_EQ(r["time"]["steps"], 2);
  EXPECT_EQ(r["solver"]["name"], "newton");
  EXPECT_EQ(r["solver"]["max_iterations"], defaults.max_iterations);
  EXPECT_TRUE(r["solver"]["max_seconds"].is_null());  // no limit
  EXPECT_EQ(r["solver"]["options"], json::object());
  EXPECT_EQ(r["output"]["vtu"], "final");
  EXPECT_EQ(r["initial_state"]["linear_map"], json::parse("[[1, 0, 0], [0, 1, 0], [0, 0, 1]]"));
  EXPECT_EQ(r["initial_state"]["fixed_point"], json::array({0.0, 0.0, 0.0}));
}

// initial_state maps the rest shape to the state at t = 0, x0 = p + A (X - p), before the
// boundary values at t = 0: a flattening mirror through y = 0.25 inverts every element
// (the high-order paper's flattened bunny) while the clamped face keeps its rest positions.
TEST(Scene, InitialStateMapsTheRestShapeThenTheBoundary) {
  json document = minimalScene();
  document["dirichlet"] = json::parse(R"([{"node_set": "y-min"}])");
  document["initial_state"] = json::parse(R"({"linear_map": [[1, 0, 0], [0, -0.1, 0], [0, 0, 1]], "fixed_point": [0, 0.25, 0]})");
  const Scene scene = parseScene(document, "initial.json");
  EXPECT_EQ(parseScene(scene.resolved, "again.json").resolved, scene.resolved);
  const State state = initialState(scene.problem);
  const Problem& problem = scene.problem;
  int clamped = 0;
  for (int i = 0; i < problem.numNodes(); ++i) {
    const Vec3 X = problem.mesh.restPosition(i);
    const Vec3 x = state.x.segment<3>(3 * i);
    if (X.y() == 0.0) {  // y-min: the boundary value (rest) wins
      EXPECT_EQ(x, X) << "node " << i;
      ++clamped;
      continue;
    }
    EXPECT_DOUBLE_EQ(x.x(), X.x());
    EXPECT_DOUBLE_EQ(x.y(), 0.25 - 0.1 * (X.y() - 0.25)) << "node " << i;
    EXPECT_DOUBLE_EQ(x.z(), X.z());
  }
  EXPECT_EQ(clamped, 9);
  EXPECT_EQ(state.v, VecX::Zero(problem.numDofs()));
  // Without initial_state the state at t = 0 is the rest shape.
  EXPECT_EQ(initialState(parseScene(minimalScene(), "rest.json").problem).x,
            parseScene(minimalScene(), "rest.json").problem.mesh.restPositionsFlat());
}

// initial_state's velocity field, v0 = u + w x (x0 - c) at the mapped positions, zero on the
// clamped DOFs: a spin about the cube's axis plus a drift (the multi-layer paper's spinning box).
TEST(Scene, InitialVelocityIsADriftPlusARigidSpin) {
  json document = minimalScene();
  document["time"] = json::parse(R"({"integrator": "backward_euler", "dt": 0.01, "steps": 1})");
  document["dirichlet"] = json::parse(R"([{"node_set": "y-min"}])");
  document["initial_state"] =
      json::parse(R"({"velocity": [0, 0, 0.5], "angular_velocity": [0, 2, 0], "spin_center": [0.5, 0, 0.5]})");
  const Scene scene = parseScene(document, "spin.json");
  EXPECT_EQ(parseScene(scene.resolved, "again.json").resolved, scene.resolved);
  const State state = initialState(scene.problem);
  const Vec3 u(0, 0, 0.5), w(0, 2, 0), c(0.5, 0, 0.5);
  int clamped = 0;
  for (int i = 0; i < scene.problem.numNodes(); ++i) {
    const Vec3 X = scene.problem.mesh.restPosition(i);
    const Vec3 v = state.v.segment<3>(3 * i);
    if (X.y() == 0.0) {
      EXPECT_EQ(v, Vec3::Zero()) << "node " << i;
      ++clamped;
      continue;
    }
    EXPECT_LT((v - (u + w.cross(X - c))).norm(), 1e-15) << "node " << i;
  }
  EXPECT_EQ(clamped, 9);
}

// "spin": "chord" gives the spin's velocity as the chord of one step's rotation, (r - R(-h w) r) / h
// (the multi-layer authors' setRigidMotion): a rigid step by h w from x0 - h v0 lands on x0.
TEST(Scene, ChordSpinIsTheVelocityOfOneRigidStep) {
  json document = minimalScene();
  document["time"] = json::parse(R"({"integrator": "backward_euler", "dt": 0.01, "steps": 1})");
  document["initial_state"] =
      json::parse(R"({"velocity": [0.1, 0, 0], "angular_velocity": [0, 30, 0], "spin_center": [0.5, 0.5, 0.5], "spin": "chord"})");
  const Scene scene = parseScene(document, "chord.json");
  EXPECT_EQ(scene.resolved["initial_state"]["spin"], "chord");
  EXPECT_EQ(parseScene(scene.resolved, "again.json").resolved, scene.resolved);
  const State state = initialState(scene.problem);
  const Vec3 u(0.1, 0, 0), w(0, 30, 0), c(0.5, 0.5, 0.5);
  const double h = 0.01;
  const Mat3 step = Eigen::AngleAxisd(h * w.norm(), w.normalized()).toRotationMatrix();
  double largest_tangent_gap = 0.0;
  for (int i = 0; i < scene.problem.numNodes(); ++i) {
    const Vec3 r = scene.problem.mesh.restPosition(i) - c;
    const Vec3 spin = state.v.segment<3>(3 * i) - u;
    // r - h spin, turned by the step's rotation, is r again.
    EXPECT_LT((step * (r - h * spin) - r).norm(), 1e-14) << "node " << i;
    largest_tangent_gap = std::max(largest_tangent_gap, (spin - w.cross(r)).norm());
  }
  EXPECT_GT(largest_tangent_gap, 1e-3);  // not the tangent form: O(h |w|^2 |r|)
}

// "node_sets" adds sets by region: the nodes whose rest position lies in a closed box (the
// base a curved mesh is clamped by); Dirichlet conditions use them like the mesh's own sets.
TEST(Scene, RegionNodeSetHoldsTheNodesInItsBox) {
  json document = minimalScene();  // unit cube, 2x2x2 cells: node coordinates 0, 0.5, 1
  document["node_sets"] = json::parse(R"([{"name": "base", "box": {"min": [-1, -1, -1], "max": [2, 0.6, 0.5]}}])");
  document["dirichlet"] = json::parse(R"([{"node_set": "base"}])");
  const Scene scene = parseScene(document, "region.json");
  EXPECT_EQ(parseScene(scene.resolved, "again.json").resolved, scene.resolved);
  const Mesh& mesh = scene.problem.mesh;
  std::vector<int> expected;
  for (int i = 0; i < mesh.numNodes(); ++i)
    if (mesh.restPosition(i).y() <= 0.6 && mesh.restPosition(i).z() <= 0.5) expected.push_back(i);
  EXPECT_EQ(expected.size(), 12u);  // y in {0, 0.5}, z in {0, 0.5}, x in {0, 0.5, 1}
  EXPECT_EQ(mesh.node_sets.at("base"), expected);
  for (int i : expected) EXPECT_TRUE(scene.problem.isFixedDof(3 * i + 1)) << "node " << i;
  EXPECT_EQ(scene.resolved["node_sets"][0]["box"]["max"], json::array({2.0, 0.6, 0.5}));
  // A scene with bodies names the body; the set becomes "body/name".
  json two = json::parse(R"({
    "bodies": [{"name": "a", "mesh": {"type": "box", "cells": [1, 1, 1]},
                "material": {"model": "neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.3}},
               {"name": "b", "mesh": {"type": "box", "origin": [2, 0, 0], "cells": [1, 1, 1]},
                "material": {"model": "neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.3}}],
    "node_sets": [{"name": "low", "body": "b", "box": {"min": [0, 0, 0], "max": [9, 0, 9]}}],
    "dirichlet": [{"node_set": "b/low"}],
    "time": {"dt": 0.5, "steps": 1}
  })");
  const Scene bodies = parseScene(two, "bodies.json");
  EXPECT_EQ(bodies.problem.mesh.node_sets.at("b/low").size(), 4u);
}

TEST(Scene, FullSceneReadsEveryField) {
  const Scene scene = parseScene(fullScene(), "<inline>");
  EXPECT_EQ(scene.path, "<inline>");
  EXPECT_EQ(scene.name, "torsion_tiny");
  EXPECT_EQ(scene.problem.numNodes(), 5 * 2 * 2);
  EXPECT_EQ(scene.problem.gravity, Vec3(0, 0, -9.81));
  EXPECT_EQ(scene.problem.time.integrator, Integrator::kBackwardEuler);
  EXPECT_EQ(scene.solver.budget.max_iterations, 50);
  EXPECT_DOUBLE_EQ(scene.solver.budget.max_seconds, 60.0);
  EXPECT_DOUBLE_EQ(scene.solver.budget.target_relative_residual, 1e-6);
  EXPECT_DOUBLE_EQ(scene.solver.budget.absolute_residual_floor, 1e-12);
  EXPECT_EQ(scene.solver.options, json({{"line_search", true}}));
  EXPECT_EQ(scene.output.vtu, OutputSpec::Frames::kEveryStep);

  ASSERT_EQ(scene.problem.dirichlet.size(), 2u);
  const DirichletCondition& fixed = scene.problem.dirichlet[0];
  EXPECT_EQ(fixed.node_set, "x-min");
  EXPECT_EQ(fixed.components, (std::array<bool, 3>{true, true, true}));
  EXPECT_TRUE(fixed.motion.stages.empty());
  const DirichletCondition& moving = scene.problem.dirichlet[1];
  EXPECT_EQ(moving.components, (std::array<bool, 3>{true, false, true}));
  ASSERT_EQ(moving.motion.stages.size(), 3u);
  EXPECT_EQ(moving.motion.stages[0].kind, MotionStage::Kind::kTranslate);
  EXPECT_EQ(moving.motion.stages[0].translation, Vec3(1, 0, 0));
  const MotionStage& rotate = moving.motion.stages[1];
  EXPECT_EQ(rotate.kind, MotionStage::Kind::kRotate);
  EXPECT_NEAR(rotate.angle, std::acos(-1.0) / 2, 1e-15);  // degrees in the file, radians in the stage
  EXPECT_EQ(rotate.axis_point, Vec3(4, 0.5, 0.5));
  EXPECT_DOUBLE_EQ(rotate.t_start, 1.0);
  EXPECT_DOUBLE_EQ(rotate.t_end, 2.0);
  EXPECT_EQ(moving.motion.stages[2].kind, MotionStage::Kind::kFixed);
  // Fixed DOFs: all 3 of the 4 x-min nodes, x and z of the 4 x-max nodes.
  EXPECT_EQ(scene.problem.fixedDofs().size(), 4u * 3 + 4u * 2);

  const json& r = scene.resolved;
  EXPECT_EQ(r["description"], "twist a bar");
  EXPECT_EQ(r["dirichlet"][0]["components"], "xyz");
  EXPECT_EQ(r["dirichlet"][0]["motion"], json::array());
  EXPECT_EQ(r["dirichlet"][1]["components"], "xz");  // normalized order
  EXPECT_EQ(r["dirichlet"][1]["motion"][1]["angle_degrees"], 90.0);
  // A stage without times runs over the whole run: t_start 0, t_end = steps * dt.
  EXPECT_EQ(r["dirichlet"][1]["motion"][2]["t_start"], 0.0);
  EXPECT_EQ(r["dirichlet"][1]["motion"][2]["t_end"], 1.0);
  EXPECT_EQ(r["solver"]["max_seconds"], 60.0);
}

TEST(Scene, ResolvedSceneIsAFixedPoint) {
  for (const json& document : {minimalScene(), fullScene()}) {
    const Scene scene = parseScene(document, "first.json");
    const Scene again = parseScene(scene.resolved, "second.json");
    EXPECT_EQ(again.resolved, scene.resolved);
  }
}

TEST(Scene, DiscretizationIsReadAndDefaulted) {
  json document = minimalScene();
  EXPECT_EQ(parseScene(document, "d.json").resolved["discretization"],
            (json{{"quadrature_degree", 0}, {"mass_lumping", "equal_share"}}));
  document["discretization"] = {{"quadrature_degree", 3}, {"mass_lumping", "hrz"}};
  const Scene scene = parseScene(document, "d.json");
  EXPECT_EQ(scene.problem.discretization.quadrature_degree, 3);
  EXPECT_EQ(scene.problem.discretization.mass_lumping, MassLumping::kHrz);
  EXPECT_EQ(scene.problem.elasticEnergy().quadratureDegree(), 3);
}

TEST(Scene, ProbesAreSampledAfterEveryStep) {
  json document = minimalScene();
  document["dirichlet"] = json::parse(R"([{"node_set": "x-min"}])");
  document["gravity"] = {0, 0, -9.81};
  document["output"] = json::parse(R"({"vtu": "none", "probes": {"tip": [1, 0.5, 0.5], "root": [0, 0.5, 0.5]}})");
  const Scene scene = parseScene(document, "probes.json");
  ASSERT_EQ(scene.output.probes.size(), 2u);
  TempFolder folder;
  const RunResult result = runScene(scene, {(folder.path() / "run").string(), false, 0.0, ""});
  const json& last = result.summary["steps"].back()["probe_displacements"];
  EXPECT_EQ(last["root"], json({0.0, 0.0, 0.0}));     // clamped
  EXPECT_LT(last["tip"][2].get<double>(), -1e-6);     // sags under gravity
  EXPECT_EQ(result.summary["steps"].size(), 2u);
}

TEST(Scene, ProbeOutsideTheMeshNamesTheProbe) {
  json document = minimalScene();
  document["output"] = json::parse(R"({"probes": {"far": [5, 0.5, 0.5]}})");
  const Scene scene = parseScene(document, "probes.json");
  TempFolder folder;
  expectInputError([&] { runScene(scene, {(folder.path() / "run").string(), false, 0.0, ""}); }, "probes.json",
                   "/output/probes/far");
  EXPECT_FALSE(fs::exists(folder.path() / "run" / "summary.json"));
}

// Every scene shipped with the project parses and builds its problem.
TEST(Scene, ShippedScenesAreValid) {
  int count = 0;
  for (const char* folder : {"scenes", "validation/references"})
    for (const auto& entry : fs::directory_iterator(fs::path(PBDLAB_SOURCE_DIR) / folder))
      if (entry.path().extension() == ".json") {
        SCOPED_TRACE(entry.path().string());
        EXPECT_NO_THROW(loadScene(entry.path().string()));
        ++count;
      }
  EXPECT_GE(count, 2);
}

TEST(Scene, LoadedFileMatchesParsedDocument) {
  TempFolder folder;
  const std::string path = folder.write("full.json", fullScene().dump(2));
  EXPECT_EQ(loadScene(path).resolved, parseScene(fullScene(), path).resolved);
}

// --- bad input: one case per kind ---------------------------------------------------------

struct BadCase {
  std::string name;
  json base;          // the valid scene to start from
  std::string where;  // JSON pointer to set (or remove)
  std::string raw;    // the raw JSON text put there; empty: remove the field
  std::string field;  // the expected InputError field
};

std::ostream& operator<<(std::ostream& os, const BadCase& c) { return os << c.name; }

// The scene text with `raw` spliced in verbatim at `where` (so 1e999 stays 1e999).
std::string sceneText(const BadCase& c) {
  json document = c.base;
  const json::json_pointer pointer(c.where);
  if (c.raw.empty()) {
    document[pointer.parent_pointer()].erase(pointer.back());
    return document.dump(2);
  }
  const std::string marker = "@@RAW_VALUE@@";
  document[pointer] = marker;
  std::string text = document.dump(2);
  text.replace(text.find('"' + marker + '"'), marker.size() + 2, c.raw);
  return text;
}

class BadScene : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadScene, NamesFileAndField) {
  const BadCase& c = GetParam();
  TempFolder folder;
  const std::string path = folder.write(c.name + ".json", sceneText(c));
  expectInputError([&] { loadScene(path); }, path, c.field);
}

const json kMin = minimalScene();
const json kFull = fullScene();

INSTANTIATE_TEST_SUITE_P(
    Material, BadScene,
    ::testing::Values(
        BadCase{"nu_half", kMin, "/material/poisson_ratio", "0.5", "/material/poisson_ratio"},
        BadCase{"nu_minus_one", kMin, "/material/poisson_ratio", "-1", "/material/poisson_ratio"},
        BadCase{"nu_0_7", kMin, "/material/poisson_ratio", "0.7", "/material/poisson_ratio"},
        BadCase{"nu_nan_string", kMin, "/material/poisson_ratio", "\"NaN\"", "/material/poisson_ratio"},
        BadCase{"nu_lowercase_nan_string", kMin, "/material/poisson_ratio", "\"nan\"", "/material/poisson_ratio"},
        BadCase{"E_zero", kMin, "/material/youngs_modulus", "0", "/material/youngs_modulus"},
        BadCase{"E_negative", kMin, "/material/youngs_modulus", "-1", "/material/youngs_modulus"},
        BadCase{"E_infinite", kMin, "/material/youngs_modulus", "1e999", "/material/youngs_modulus"},
        BadCase{"E_string", kMin, "/material/youngs_modulus", "\"1e5\"", "/material/youngs_modulus"},
        BadCase{"E_missing", kMin, "/material/youngs_modulus", "", "/material/youngs_modulus"},
        BadCase{"nu_missing", kMin, "/material/poisson_ratio", "", "/material/poisson_ratio"},
        BadCase{"model_missing", kMin, "/material/model", "", "/material/model"},
        BadCase{"model_unknown", kMin, "/material/model", "\"rubber\"", "/material/model"},
        BadCase{"mapping_unknown", kMin, "/material/lame_mapping", "\"linear\"", "/material/lame_mapping"},
        BadCase{"probe_not_a_point", kMin, "/output", "{\"probes\": {\"tip\": [1, 2]}}", "/output/probes/tip"},
        BadCase{"lumping_unknown", kMin, "/discretization", "{\"mass_lumping\": \"rowsum\"}",
                "/discretization/mass_lumping"},
        BadCase{"quadrature_negative", kMin, "/discretization", "{\"quadrature_degree\": -2}",
                "/discretization/quadrature_degree"},
        BadCase{"quadrature_too_high", kMin, "/discretization", "{\"quadrature_degree\": 40}",
                "/discretization/quadrature_degree"},
        BadCase{"discretization_unknown_key", kMin, "/discretization", "{\"lumping\": \"hrz\"}",
                "/discretization/lumping"},
        BadCase{"initial_map_two_rows", kMin, "/initial_state", "{\"linear_map\": [[1, 0, 0], [0, 1, 0]]}",
                "/initial_state/linear_map"},
        BadCase{"initial_map_short_row", kMin, "/initial_state", "{\"linear_map\": [[1, 0, 0], [0, 1], [0, 0, 1]]}",
                "/initial_state/linear_map/1"},
        BadCase{"initial_map_nan", kMin, "/initial_state", "{\"linear_map\": [[1, 0, 0], [0, \"NaN\", 0], [0, 0, 1]]}",
                "/initial_state/linear_map/1/1"},
        BadCase{"initial_map_singular", kMin, "/initial_state", "{\"linear_map\": [[1, 0, 0], [0, 0, 0], [0, 0, 1]]}",
                "/initial_state/linear_map"},
        BadCase{"initial_map_missing", kMin, "/initial_state", "{\"fixed_point\": [0, 0, 0]}",
                "/initial_state/fixed_point"},
        BadCase{"initial_velocity_nan", kMin, "/initial_state", "{\"velocity\": [0, \"NaN\", 0]}",
                "/initial_state/velocity/1"},
        BadCase{"initial_velocity_two_numbers", kMin, "/initial_state", "{\"velocity\": [0, 1]}",
                "/initial_state/velocity"},
        BadCase{"initial_velocity_quasistatic", kMin, "/initial_state", "{\"velocity\": [0, 1, 0]}",
                "/initial_state/velocity"},
        BadCase{"initial_spin_quasistatic", kMin, "/initial_state", "{\"angular_velocity\": [0, 0, 3]}",
                "/initial_state/angular_velocity"},
        BadCase{"initial_spin_center_alone", kMin, "/initial_state", "{\"spin_center\": [0, 0, 0]}",
                "/initial_state/spin_center"},
        BadCase{"initial_spin_form_alone", kMin, "/initial_state", "{\"spin\": \"chord\"}", "/initial_state/spin"},
        BadCase{"initial_spin_form_unknown", kMin, "/initial_state", "{\"angular_velocity\": [0, 0, 3], \"spin\": \"secant\"}",
                "/initial_state/spin"},
        BadCase{"initial_state_unknown_key", kMin, "/initial_state", "{\"linear_map\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], \"offset\": 1}",
                "/initial_state/offset"},
        BadCase{"region_set_empty", kMin, "/node_sets", R"([{"name": "none", "box": {"min": [5, 5, 5], "max": [6, 6, 6]}}])",
                "/node_sets/0/box"},
        BadCase{"region_set_min_above_max", kMin, "/node_sets", R"([{"name": "s", "box": {"min": [0, 1, 0], "max": [1, 0, 1]}}])",
                "/node_sets/0/box"},
        BadCase{"region_set_existing_name", kMin, "/node_sets", R"([{"name": "x-min", "box": {"min": [0, 0, 0], "max": [1, 1, 1]}}])",
                "/node_sets/0/name"},
        BadCase{"region_set_body_without_bodies", kMin, "/node_sets", R"([{"name": "s", "body": "a", "box": {"min": [0, 0, 0], "max": [1, 1, 1]}}])",
                "/node_sets/0/body"},
        BadCase{"region_set_nan", kMin, "/node_sets", R"([{"name": "s", "box": {"min": [0, "NaN", 0], "max": [1, 1, 1]}}])",
                "/node_sets/0/box/min/1"},
        BadCase{"region_set_no_box", kMin, "/node_sets", R"([{"name": "s"}])", "/node_sets/0/box"},
        BadCase{"region_set_unknown_key", kMin, "/node_sets", R"([{"name": "s", "sphere": 1, "box": {"min": [0, 0, 0], "max": [1, 1, 1]}}])",
                "/node_sets/0/sphere"},
        BadCase{"density_zero", kMin, "/material/density", "0", "/material/density"},
        BadCase{"density_negative_infinite", kMin, "/material/density", "-1e999", "/material/density"},
        BadCase{"material_missing", kMin, "/material", "", "/material"},
        BadCase{"material_not_object", kMin, "/material", "[1, 2]", "/material"},
        BadCase{"key_typo_youngs_modulos", kMin, "/material/youngs_modulos", "1e5", "/material/youngs_modulos"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Mesh, BadScene,
    ::testing::Values(
        BadCase{"mesh_missing", kMin, "/mesh", "", "/mesh"},
        BadCase{"mesh_type_unknown", kMin, "/mesh/type", "\"cone\"", "/mesh/type"},
        BadCase{"mesh_type_missing", kMin, "/mesh/type", "", "/mesh/type"},
        BadCase{"cells_zero", kMin, "/mesh/cells", "[0, 2, 2]", "/mesh/cells/0"},
        BadCase{"cells_negative", kMin, "/mesh/cells", "[2, -3, 2]", "/mesh/cells/1"},
        BadCase{"cells_fraction", kMin, "/mesh/cells", "[2, 2, 2.5]", "/mesh/cells/2"},
        BadCase{"cells_too_short", kMin, "/mesh/cells", "[2, 2]", "/mesh/cells"},
        BadCase{"cells_too_many", kMin, "/mesh/cells", "[100000, 100000, 1]", "/mesh/cells"},
        BadCase{"cells_missing", kMin, "/mesh/cells", "", "/mesh/cells"},
        BadCase{"size_zero", kMin, "/mesh/size", "[1, 0, 1]", "/mesh/size/1"},
        BadCase{"size_negative", kMin, "/mesh/size", "[1, 1, -2]", "/mesh/size/2"},
        BadCase{"size_too_long", kMin, "/mesh/size", "[1, 1, 1, 1]", "/mesh/size"},
        BadCase{"origin_infinite", kMin, "/mesh/origin", "[0, 1e999, 0]", "/mesh/origin/1"},
        BadCase{"split_unknown", kMin, "/mesh/split", "\"four\"", "/mesh/split"},
        BadCase{"family_unknown", kMin, "/mesh/family", "\"tetris\"", "/mesh/family"},
        BadCase{"split_and_family", kFull, "/mesh/family", "\"biased\"", "/mesh/split"},
        BadCase{"order_four", kMin, "/mesh/order", "4", "/mesh/order"},
        BadCase{"order_string", kMin, "/mesh/order", "\"2\"", "/mesh/order"},
        BadCase{"order_on_hex", kMin, "/mesh", R"({"type": "box", "family": "hex", "cells": [1, 1, 1], "order": 2})",
                "/mesh/order"},
        BadCase{"unstructured_without_size", kMin, "/mesh", R"({"type": "box", "family": "unstructured"})",
                "/mesh/target_size"},
        BadCase{"unstructured_with_cells", kMin, "/mesh",
                R"({"type": "box", "family": "unstructured", "target_size": 0.5, "cells": [1, 1, 1]})", "/mesh/cells"},
        BadCase{"res_box_too_small", kMin, "/mesh", R"({"type": "res_box", "nodes_per_side": 1})",
                "/mesh/nodes_per_side"},
        BadCase{"msh_missing_file", kMin, "/mesh", R"({"type": "msh", "file": "nowhere.msh"})", "/mesh/file"},
        BadCase{"msh_unknown_key", kMin, "/mesh", R"({"type": "msh", "file": "a.msh", "path": "b"})", "/mesh/path"},
        BadCase{"stl_missing_file", kMin, "/mesh", R"({"type": "stl", "file": "nowhere.stl"})", "/mesh/file"},
        BadCase{"rectangle_cells_3d", kMin, "/mesh", R"({"type": "rectangle", "cells": [2, 2, 2]})", "/mesh/cells"},
        BadCase{"mesh_not_object", kMin, "/mesh", "[1]", "/mesh"},
        BadCase{"mesh_unknown_key", kMin, "/mesh/cell", "[2, 2, 2]", "/mesh/cell"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    TimeAndGravity, BadScene,
    ::testing::Values(
        BadCase{"time_missing", kMin, "/time", "", "/time"},
        BadCase{"dt_zero", kMin, "/time/dt", "0", "/time/dt"},
        BadCase{"dt_missing", kMin, "/time/dt", "", "/time/dt"},
        BadCase{"steps_zero", kMin, "/time/steps", "0", "/time/steps"},
        BadCase{"steps_fraction", kMin, "/time/steps", "1.5", "/time/steps"},
        BadCase{"steps_huge", kMin, "/time/steps", "99999999999", "/time/steps"},
        BadCase{"integrator_unknown", kMin, "/time/integrator", "\"forward_euler\"", "/time/integrator"},
        BadCase{"gravity_too_short", kMin, "/gravity", "[0, -9.81]", "/gravity"},
        BadCase{"gravity_infinite", kMin, "/gravity", "[0, 0, -1e999]", "/gravity/2"},
        BadCase{"gravity_string", kFull, "/gravity/1", "\"down\"", "/gravity/1"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Dirichlet, BadScene,
    ::testing::Values(
        BadCase{"node_set_unknown", kFull, "/dirichlet/1/node_set", "\"x-maximum\"", "/dirichlet/1/node_set"},
        BadCase{"node_set_missing", kFull, "/dirichlet/0/node_set", "", "/dirichlet/0/node_set"},
        BadCase{"dirichlet_not_array", kFull, "/dirichlet", "{}", "/dirichlet"},
        BadCase{"components_not_subset", kFull, "/dirichlet/1/components", "\"xw\"", "/dirichlet/1/components"},
        BadCase{"components_empty", kFull, "/dirichlet/1/components", "\"\"", "/dirichlet/1/components"},
        BadCase{"components_repeated", kFull, "/dirichlet/1/components", "\"xx\"", "/dirichlet/1/components"},
        BadCase{"components_array", kFull, "/dirichlet/1/components", "[\"x\"]", "/dirichlet/1/components"},
        BadCase{"motion_type_unknown", kFull, "/dirichlet/1/motion/0/type", "\"shear\"",
                "/dirichlet/1/motion/0/type"},
        BadCase{"motion_type_missing", kFull, "/dirichlet/1/motion/2/type", "", "/dirichlet/1/motion/2/type"},
        BadCase{"motion_key_typo", kFull, "/dirichlet/1/motion/1/angle", "90", "/dirichlet/1/motion/1/angle"},
        BadCase{"motion_by_missing", kFull, "/dirichlet/1/motion/0/by", "", "/dirichlet/1/motion/0/by"},
        BadCase{"motion_by_too_short", kFull, "/dirichlet/1/motion/0/by", "[1, 0]", "/dirichlet/1/motion/0/by"},
        BadCase{"motion_angle_missing", kFull, "/dirichlet/1/motion/1/angle_degrees", "",
                "/dirichlet/1/motion/1/angle_degrees"},
        BadCase{"motion_axis_zero", kFull, "/dirichlet/1/motion/1/axis_direction", "[0, 0, 0]",
                "/dirichlet/1/motion/1/axis_direction"},
        BadCase{"motion_ends_before_start", kFull, "/dirichlet/1/motion/1/t_end", "0.5",
                "/dirichlet/1/motion/1/t_end"},
        BadCase{"condition_key_typo", kFull, "/dirichlet/0/component", "\"x\"", "/dirichlet/0/component"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    SolverOutputAndTopLevel, BadScene,
    ::testing::Values(
        BadCase{"solver_unknown", kFull, "/solver/name", "\"nosuch\"", "/solver/name"},
        BadCase{"solver_option_unknown", kFull, "/solver/options/line_serch", "true",
                "/solver/options/line_serch"},
        BadCase{"solver_option_wrong_type", kFull, "/solver/options/line_search", "\"yes\"",
                "/solver/options/line_search"},
        BadCase{"solver_options_not_object", kFull, "/solver/options", "[]", "/solver/options"},
        BadCase{"solver_key_typo", kFull, "/solver/max_iteration", "5", "/solver/max_iteration"},
        BadCase{"max_iterations_zero", kFull, "/solver/max_iterations", "0", "/solver/max_iterations"},
        BadCase{"max_seconds_negative", kFull, "/solver/max_seconds", "-1", "/solver/max_seconds"},
        BadCase{"target_nan_string", kFull, "/solver/target_relative_residual", "\"NaN\"",
                "/solver/target_relative_residual"},
        BadCase{"output_vtu_unknown", kFull, "/output/vtu", "\"always\"", "/output/vtu"},
        BadCase{"output_key_typo", kFull, "/output/vtk", "\"final\"", "/output/vtk"},
        BadCase{"top_level_typo", kFull, "/gravty", "[0, 0, 0]", "/gravty"},
        BadCase{"name_empty", kFull, "/name", "\"\"", "/name"},
        BadCase{"name_with_slash", kFull, "/name", "\"a/b\"", "/name"}),
    [](const auto& info) { return info.param.name; });

// kMin with solver `name` and its `options`.
json withSolver(const std::string& name, const json& options = json::object()) {
  json scene = minimalScene();
  scene["solver"] = {{"name", name}, {"options", options}};
  return scene;
}
json withDynamicSolver(const std::string& name) {
  json scene = withSolver(name);
  scene["time"]["integrator"] = "backward_euler";
  return scene;
}

// Every count option of every solver has one upper bound (kMaxSolverCount, core/
// solver_options.hpp; fp_pxpbd's per-element newton_iterations a tighter one), and every
// option is checked when the scene is read, before any mesh work: an XPBD split no material
// offers, or one the scene's material does not offer, is refused at /solver/options/split.
INSTANTIATE_TEST_SUITE_P(
    SolverOptionLimits, BadScene,
    ::testing::Values(
        BadCase{"xpbd_qs_sweeps_absurd", withSolver("xpbd_qs"), "/solver/options/iterations_per_pseudo_step",
                "1000000000", "/solver/options/iterations_per_pseudo_step"},
        BadCase{"xpbd_qs_sweeps_past_the_bound", withSolver("xpbd_qs"), "/solver/options/iterations_per_pseudo_step",
                "1000001", "/solver/options/iterations_per_pseudo_step"},
        BadCase{"explicit_substeps_absurd", withSolver("explicit_relaxation"), "/solver/options/substeps",
                "1000000000", "/solver/options/substeps"},
        BadCase{"newton_line_search_absurd", withSolver("newton"), "/solver/options/max_line_search_steps",
                "1000000000", "/solver/options/max_line_search_steps"},
        BadCase{"newton_linear_iterations_absurd", withSolver("newton", {{"linear_solver", "cg"}}),
                "/solver/options/linear_iterations", "1000000000", "/solver/options/linear_iterations"},
        BadCase{"fp_newton_iterations_absurd", withDynamicSolver("fp_pxpbd"), "/solver/options/newton_iterations",
                "1000000000", "/solver/options/newton_iterations"},
        BadCase{"xpbd_split_unknown", withSolver("xpbd_qs"), "/solver/options/split", "\"nope\"",
                "/solver/options/split"},
        BadCase{"xpbd_split_of_another_material", withSolver("xpbd_qs"), "/solver/options/split", "\"macklin_mueller\"",
                "/solver/options/split"}),
    [](const auto& info) { return info.param.name; });

// The bound itself is allowed, for every count option.
TEST(Scene, CountOptionsUpToTheSharedBoundAreRead) {
  EXPECT_NO_THROW(parseScene(withSolver("xpbd_qs", {{"iterations_per_pseudo_step", 1000000}}), "<inline>"));
  EXPECT_NO_THROW(parseScene(withSolver("explicit_relaxation", {{"substeps", 1000000}}), "<inline>"));
  EXPECT_NO_THROW(parseScene(withSolver("newton", {{"max_line_search_steps", 1000000}}), "<inline>"));
  EXPECT_NO_THROW(
      parseScene(withSolver("newton", {{"linear_solver", "cg"}, {"linear_iterations", 1000000}}), "<inline>"));
  EXPECT_NO_THROW(parseScene(withSolver("xpbd_qs", {{"split", "lame"}}), "<inline>"));
  EXPECT_NO_THROW(parseScene(withSolver("xpbd_qs", {{"split", "sqrt_psi"}}), "<inline>"));
}

// Bindings across a gap (offset): a malformed offset, and one that lands outside the body.
const json kGap = json::parse(std::ifstream(std::string(PBDLAB_SOURCE_DIR) + "/scenes/two_blocks_hanging_gap.json"));

INSTANTIATE_TEST_SUITE_P(
    Bindings, BadScene,
    ::testing::Values(
        BadCase{"binding_offset_two_numbers", kGap, "/bindings/0/offset", "[0, 0.25]", "/bindings/0/offset"},
        BadCase{"binding_offset_nan", kGap, "/bindings/0/offset", "[0, \"NaN\", 0]", "/bindings/0/offset/1"},
        BadCase{"binding_offset_outside_the_body", kGap, "/bindings/0/offset", "[0, 5, 0]", "/bindings/0"},
        BadCase{"binding_without_offset_across_the_gap", kGap, "/bindings/0/offset", "", "/bindings/0"}),
    [](const auto& info) { return info.param.name; });

// --- grid scenes (the grid-based scheme, docs/grid.md) -----------------------------------------

// A block (0.4 x 0.2 x 0.4, 2 x 1 x 2 cells) above a sticky floor of a trilinear grid of spacing
// 0.3 that covers it (default margin: 2 cells), backward Euler.
json gridScene() {
  return json::parse(R"({
    "mesh": {"type": "box", "origin": [0.05, 0.35, 0.05], "size": [0.4, 0.2, 0.4], "cells": [2, 1, 2]},
    "material": {"model": "fixed_corotated", "youngs_modulus": 1e4, "poisson_ratio": 0.3, "density": 100},
    "gravity": [0, -9.81, 0],
    "grid": {"spacing": 0.3, "walls": {"y-min": {"type": "sticky", "thickness": 2}}},
    "time": {"integrator": "backward_euler", "dt": 0.01, "steps": 2},
    "output": {"vtu": "none", "probes": {"centre": [0.25, 0.45, 0.25]}}
  })");
}

// The same with two such blocks, 0.2 apart (collisions between bodies can be asked for).
json gridTwoBodiesScene() {
  json scene = gridScene();
  const json mesh = scene["mesh"], material = scene["material"];
  scene.erase("mesh");
  scene.erase("material");
  json upper_mesh = mesh;
  upper_mesh["origin"] = {0.05, 0.75, 0.05};
  scene["bodies"] = {{{"name", "lower"}, {"mesh", mesh}, {"material", material}},
                     {{"name", "upper"}, {"mesh", upper_mesh}, {"material", material}}};
  scene["output"]["probes"]["upper_centre"] = {0.25, 0.85, 0.25};
  return scene;
}

TEST(SceneGrid, CoveringGridWallsAndDefaultsAreResolved) {
  const Scene scene = parseScene(gridScene(), "grid.json");
  ASSERT_TRUE(scene.grid.has_value());
  const BackgroundGrid& grid = scene.grid->grid;
  EXPECT_EQ(scene.grid->kernel, GridKernel::kTrilinear);
  EXPECT_DOUBLE_EQ(grid.spacing(), 0.3);
  // BackgroundGrid::covering of [0.05, 0.45] x [0.35, 0.55] x [0.05, 0.45] with 2 cells beyond:
  // ceil(0.4 / 0.3) + 4 = 6 cells along x and z, max(1, ceil(0.2 / 0.3)) + 4 = 5 along y.
  EXPECT_EQ(grid.nodeCounts(), Eigen::Vector3i(7, 6, 7));
  EXPECT_TRUE(grid.origin().isApprox(Vec3(0.05 - 0.6, 0.35 - 0.6, 0.05 - 0.6)));
  const GridWall& floor = scene.grid->walls.faces[static_cast<size_t>(GridWalls::faceIndex("y-min"))];
  EXPECT_EQ(floor.kind, GridWall::Kind::kSticky);
  EXPECT_EQ(floor.thickness, 2);
  EXPECT_EQ(scene.grid->walls.faces[static_cast<size_t>(GridWalls::faceIndex("x-max"))].kind, GridWall::Kind::kNone);

  const json& r = scene.resolved["grid"];
  EXPECT_EQ(r["spacing"], 0.3);
  EXPECT_EQ(r["kernel"], "trilinear");
  EXPECT_FALSE(r.contains("margin_cells"));  // the box says it
  const Vec3 far = grid.nodePosition(Eigen::Vector3i(6, 5, 6));
  EXPECT_EQ(r["box"], (json{{"min", {grid.origin().x(), grid.origin().y(), grid.origin().z()}},
                            {"max", {far.x(), far.y(), far.z()}}}));
  EXPECT_EQ(r["walls"].size(), 6u);
  EXPECT_EQ(r["walls"]["y-min"], (json{{"type", "sticky"}, {"thickness", 2}}));
  EXPECT_EQ(r["walls"]["z-max"], (json{{"type", "none"}, {"thickness", 1}}));

  // The resolved scene reads back to the same grid (its box's far corner is not one more cell).
  const Scene again = parseScene(scene.resolved, "again.json");
  EXPECT_EQ(again.resolved, scene.resolved);
  ASSERT_TRUE(again.grid.has_value());
  EXPECT_EQ(again.grid->grid.nodeCounts(), grid.nodeCounts());
  EXPECT_EQ(again.grid->grid.origin(), grid.origin());

  // A scene without "grid" has none, and no "grid" in its resolved scene (its hash is unchanged).
  EXPECT_FALSE(parseScene(minimalScene(), "m.json").grid.has_value());
  EXPECT_FALSE(parseScene(minimalScene(), "m.json").resolved.contains("grid"));
}

TEST(SceneGrid, BoxKernelAndMarginAreRead) {
  json document = gridScene();
  document["grid"]["box"] = {{"min", {-0.3, 0, -0.3}}, {"max", {0.75, 0.9, 0.6}}};
  document["grid"]["kernel"] = "quadratic_bspline";
  document["grid"]["walls"]["x-min"] = {{"type", "slip"}};
  const Scene boxed = parseScene(document, "box.json");
  EXPECT_EQ(boxed.grid->kernel, GridKernel::kQuadraticBSpline);
  EXPECT_EQ(boxed.grid->grid.origin(), Vec3(-0.3, 0, -0.3));
  // Whole cells from min: 1.05 / 0.3 = 3.5 -> 4 cells (the far face rounded up), 0.9 / 0.3 =
  // 3.0000000000000004 -> 3 cells (round-off of the division is not a fourth), 0.9 / 0.3 = 3.
  EXPECT_EQ(boxed.grid->grid.nodeCounts(), Eigen::Vector3i(5, 4, 4));
  EXPECT_EQ(boxed.grid->walls.faces[0].kind, GridWall::Kind::kSlip);
  EXPECT_EQ(boxed.grid->walls.faces[0].thickness, 1);
  EXPECT_EQ(boxed.resolved["grid"]["kernel"], "quadratic_bspline");
  EXPECT_EQ(boxed.resolved["grid"]["walls"]["x-min"], (json{{"type", "slip"}, {"thickness", 1}}));

  json margin = gridScene();
  margin["grid"]["margin_cells"] = 1;
  EXPECT_EQ(parseScene(margin, "m.json").grid->grid.nodeCounts(), Eigen::Vector3i(5, 4, 5));
}

// Moving walls: read with their motion stages (defaults filled in), written to the resolved
// scene only when given, read back the same; a block inside a translating wall moves with it.
TEST(SceneGrid, MovingWallsAreReadAndCarryTheBody) {
  json document = gridScene();
  document["gravity"] = {0, 0, 0};
  document["grid"]["box"] = {{"min", {-0.1, -0.1, -0.1}}, {"max", {1.1, 1.1, 1.1}}};
  document["grid"]["moving_walls"] = json::parse(R"([{"name": "carrier",
      "box": {"min": [-0.2, 0.1, -0.2], "max": [0.8, 0.9, 0.8]},
      "motion": [{"type": "translate", "by": [0.03, 0, 0]}]}])");
  const Scene scene = parseScene(document, "moving.json");
  ASSERT_EQ(scene.grid->walls.moving.size(), 1u);
  const GridMovingWall& wall = scene.grid->walls.moving[0];
  EXPECT_EQ(wall.name, "carrier");
  EXPECT_EQ(wall.box_max, Vec3(0.8, 0.9, 0.8));
  ASSERT_EQ(wall.motion.stages.size(), 1u);
  EXPECT_DOUBLE_EQ(wall.motion.stages[0].t_end, 0.02);  // the run's end
  const json& r = scene.resolved["grid"]["moving_walls"];
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]["motion"][0], (json{{"type", "translate"}, {"by", {0.03, 0, 0}}, {"t_start", 0.0}, {"t_end", 0.02}}));
  EXPECT_EQ(parseScene(scene.resolved, "again.json").resolved, scene.resolved);
  EXPECT_FALSE(parseScene(gridScene(), "g.json").resolved["grid"].contains("moving_walls"));

  TempFolder folder;
  const RunResult result = runScene(scene, {(folder.path() / "run").string(), false, 0.0, ""});
  EXPECT_TRUE(result.all_steps_converged);
  const VecX u = result.final_positions - scene.problem.mesh.restPositionsFlat();
  for (int p = 0; p < scene.problem.numNodes(); ++p) {
    EXPECT_NEAR(u[3 * p], 0.03, 1e-12) << p;
    EXPECT_NEAR(u[3 * p + 1], 0.0, 1e-12) << p;
  }
}

// Kinematic colliders in a grid scene: read as for a mesh scene, taken as grid boundary
// conditions (the nodes inside held, GridStep.ColliderHoldsTheGridNodesInsideIt), and each
// frame reports the mesh vertices' deepest penetration. The block sits 0.04 above a plane whose
// inside holds the floor's nodes (y < 0.31: the grid layers y = 0 and 0.3).
TEST(SceneGrid, CollidersAreGridBoundaryConditions) {
  json document = gridScene();
  document["grid"].erase("walls");
  document["grid"]["box"] = {{"min", {0, 0, 0}}, {"max", {0.6, 0.9, 0.6}}};  // node layers y = 0, 0.3, 0.6, 0.9
  document["colliders"] = json::parse(R"([{"name": "floor", "type": "plane", "point": [0, 0.31, 0], "normal": [0, 1, 0]}])");
  document["time"]["steps"] = 5;
  const Scene scene = parseScene(document, "collider.json");
  ASSERT_EQ(scene.problem.colliders.size(), 1u);
  EXPECT_EQ(scene.resolved["colliders"][0]["name"], "floor");
  TempFolder folder;
  const RunResult result = runScene(scene, {(folder.path() / "run").string(), false, 0.0, ""});
  EXPECT_TRUE(result.all_steps_converged);
  ASSERT_EQ(result.summary["steps"].size(), 5u);
  for (const json& step : result.summary["steps"]) {
    ASSERT_TRUE(step.contains("max_penetration"));
    EXPECT_EQ(step["max_penetration"].get<double>(), 0.0);  // held above the plane, within a cell
  }
  // The bottom vertices (y 0.35) weight the held layer y = 0.3 by 5/6: they barely move.
  const VecX u = result.final_positions - scene.problem.mesh.restPositionsFlat();
  for (int p : scene.problem.mesh.node_sets.at("y-min")) EXPECT_LT(std::abs(u[3 * p + 1]), 0.01) << p;
}

// A grid scene through the runner: each frame's entry has its grid record, the probes and the
// mesh state follow the particles (the block falls), the summary has the grid and the parts'
// total seconds.
TEST(SceneGrid, RunsThroughTheGridStepper) {
  // A box whose planes miss every vertex (y: 0.35 -> u = 1.5, ...), the floor one layer, so the
  // blocks fall freely for these two steps.
  json document = gridTwoBodiesScene();
  document["grid"]["box"] = {{"min", {-0.1, -0.1, -0.1}}, {"max", {1.1, 1.4, 1.1}}};
  document["grid"]["walls"]["y-min"]["thickness"] = 1;
  const Scene scene = parseScene(document, "grid.json");
  TempFolder folder;
  const RunResult result = runScene(scene, {(folder.path() / "run").string(), false, 0.0, ""});
  EXPECT_TRUE(result.all_steps_converged);
  const json& steps = result.summary["steps"];
  ASSERT_EQ(steps.size(), 2u);
  for (const json& step : steps) {
    const json& grid = step["grid"];
    for (const char* key : {"active_nodes", "free_dofs", "max_displacement_cells", "weights_p2g_seconds",
                            "problem_seconds", "setup_seconds", "solve_seconds", "g2p_seconds"})
      EXPECT_TRUE(grid.contains(key)) << key;
    EXPECT_GT(grid["active_nodes"].get<int>(), 0);
    EXPECT_GT(grid["free_dofs"].get<int>(), 0);
    EXPECT_GT(grid["max_displacement_cells"].get<double>(), 0.0);
    EXPECT_EQ(step["inverted_elements"], 0);
  }
  // Free fall for two steps (nothing under the blocks within a cell): -g dt^2 (1 + 2) = -2.9e-3.
  const double drop = steps[1]["probe_displacements"]["centre"][1].get<double>();
  EXPECT_NEAR(drop, -9.81 * 0.01 * 0.01 * 3, 1e-9);
  EXPECT_NEAR(steps[1]["probe_displacements"]["upper_centre"][1].get<double>(), drop, 1e-9);
  const VecX u = result.final_positions - scene.problem.mesh.restPositionsFlat();
  EXPECT_NEAR(u[1], drop, 1e-9);  // the mesh state is the stepper's
  EXPECT_EQ(result.summary["grid"]["nodes"], scene.grid->grid.numNodes());
  EXPECT_TRUE(result.summary["totals"]["grid"].contains("preprocessing_share"));
  EXPECT_FALSE(result.log.rows().empty());
  EXPECT_TRUE(fs::exists(folder.path() / "run" / "summary.json"));
}

// A solver that cannot solve the grid step's problem is refused before the run, at /solver,
// with a sentence saying it is the grid problem; sceneRejection (what validate asks) says the
// same. Newton runs it.
TEST(SceneGrid, SolverThatCannotRunTheGridProblemIsRefusedAtSolver) {
  Scene scene = parseScene(gridScene(), "grid.json");
  EXPECT_EQ(sceneRejection(*makeSolver("newton", json::object(), "<test>", "/solver/options"), scene), "");
  const std::string why = sceneRejection(*makeSolver("xpbd", json::object(), "<test>", "/solver/options"), scene);
  EXPECT_NE(why.find("grid problem"), std::string::npos) << why;
  // The mesh problem itself XPBD would take.
  EXPECT_EQ(makeSolver("xpbd", json::object(), "<test>", "/solver/options")->rejectionReason(scene.problem), "");
  scene.solver.name = "xpbd";
  TempFolder folder;
  expectInputError([&] { runScene(scene, {(folder.path() / "run").string(), false, 0.0, ""}); }, "grid.json",
                   "/solver");
  EXPECT_FALSE(fs::exists(folder.path() / "run" / "summary.json"));
}

// A body that falls out of a grid without a floor: the step that cannot be taken (a vertex's
// stencil leaves the grid) ends the run as a divergence naming the particle; the state before
// it is kept and written.
TEST(SceneGrid, ParticleLeavingTheGridEndsTheRunAsADivergence) {
  json document = gridScene();
  document["grid"].erase("walls");
  document["grid"]["margin_cells"] = 1;
  document["time"]["steps"] = 40;
  const Scene scene = parseScene(document, "fall.json");
  TempFolder folder;
  const RunResult result = runScene(scene, {(folder.path() / "run").string(), false, 0.0, ""});
  EXPECT_TRUE(result.diverged);
  const std::string reason = result.summary["divergence"]["reason"].get<std::string>();
  EXPECT_NE(reason.find("leaves the grid"), std::string::npos) << reason;
  EXPECT_TRUE(result.final_positions.allFinite());
  EXPECT_LT(result.summary["steps"].size(), 40u);
  EXPECT_TRUE(fs::exists(folder.path() / "run" / kDivergedStateName));
}

// Every bad grid field, at its pointer. A grid scene may not have what gridStepRejection
// refuses: the error is at the offending field with its sentence.
const json kGrid = gridScene();
const json kGridTwo = gridTwoBodiesScene();
json gridWithBox(const json& box) {
  json scene = gridScene();
  scene["grid"]["box"] = box;
  return scene;
}
json gridWithKernel(const std::string& kernel) {
  json scene = gridScene();
  scene["grid"]["kernel"] = kernel;
  return scene;
}

INSTANTIATE_TEST_SUITE_P(
    Grid, BadScene,
    ::testing::Values(
        BadCase{"grid_not_object", kGrid, "/grid", "[0.3]", "/grid"},
        BadCase{"grid_key_typo", kGrid, "/grid/spacng", "0.3", "/grid/spacng"},
        BadCase{"grid_spacing_missing", kGrid, "/grid/spacing", "", "/grid/spacing"},
        BadCase{"grid_spacing_zero", kGrid, "/grid/spacing", "0", "/grid/spacing"},
        BadCase{"grid_spacing_negative", kGrid, "/grid/spacing", "-0.3", "/grid/spacing"},
        BadCase{"grid_spacing_nan", kGrid, "/grid/spacing", "\"NaN\"", "/grid/spacing"},
        BadCase{"grid_spacing_infinite", kGrid, "/grid/spacing", "1e999", "/grid/spacing"},
        BadCase{"grid_spacing_absurdly_small", kGrid, "/grid/spacing", "1e-5", "/grid/spacing"},
        BadCase{"grid_spacing_below_the_elements", kGrid, "/grid/spacing", "0.05", "/grid/spacing"},
        BadCase{"grid_kernel_unknown", kGrid, "/grid/kernel", "\"quadratic\"", "/grid/kernel"},
        BadCase{"grid_kernel_not_string", kGrid, "/grid/kernel", "2", "/grid/kernel"},
        BadCase{"grid_margin_negative", kGrid, "/grid/margin_cells", "-1", "/grid/margin_cells"},
        BadCase{"grid_margin_fraction", kGrid, "/grid/margin_cells", "1.5", "/grid/margin_cells"},
        BadCase{"grid_margin_zero_quadratic", gridWithKernel("quadratic_bspline"), "/grid/margin_cells", "0",
                "/grid/margin_cells"},
        // 2 nodes along y: the embedded term's block needs 3.
        BadCase{"grid_margin_too_small_for_the_block", kGrid, "/grid/margin_cells", "0", "/grid/margin_cells"},
        BadCase{"grid_box_too_small_for_the_block", kGrid, "/grid/box",
                R"({"min": [0, 0.3, 0], "max": [0.6, 0.6, 0.6]})", "/grid/box"},
        BadCase{"grid_box_not_object", kGrid, "/grid/box", "[0, 1]", "/grid/box"},
        BadCase{"grid_box_key_typo", gridWithBox({{"min", {0, 0, 0}}, {"max", {1, 1, 1}}}), "/grid/box/maximum",
                "[1, 1, 1]", "/grid/box/maximum"},
        BadCase{"grid_box_max_missing", gridWithBox({{"min", {0, 0, 0}}, {"max", {1, 1, 1}}}), "/grid/box/max", "",
                "/grid/box/max"},
        BadCase{"grid_box_nan", gridWithBox({{"min", {0, 0, 0}}, {"max", {1, 1, 1}}}), "/grid/box/min/1", "\"NaN\"",
                "/grid/box/min/1"},
        BadCase{"grid_box_empty", gridWithBox({{"min", {0, 0, 0}}, {"max", {1, 1, 1}}}), "/grid/box/max/2", "0",
                "/grid/box"},
        BadCase{"grid_box_misses_the_bodies", gridWithBox({{"min", {0, 0, 0}}, {"max", {1, 1, 1}}}),
                "/grid/box/max/1", "0.5", "/grid/box"},
        BadCase{"grid_box_with_margin", gridWithBox({{"min", {0, 0, 0}}, {"max", {1, 1, 1}}}),
                "/grid/margin_cells", "1", "/grid/margin_cells"},
        // The quadratic kernel's stencil needs half a cell past the trilinear one's.
        BadCase{"grid_box_too_tight_for_quadratic", gridWithKernel("quadratic_bspline"), "/grid/box",
                R"({"min": [0, 0.2, 0], "max": [0.6, 0.8, 0.6]})", "/grid/box"},
        BadCase{"grid_walls_not_object", kGrid, "/grid/walls", "[]", "/grid/walls"},
        BadCase{"grid_wall_face_unknown", kGrid, "/grid/walls/y-bottom", R"({"type": "sticky"})",
                "/grid/walls/y-bottom"},
        BadCase{"grid_wall_type_missing", kGrid, "/grid/walls/y-min/type", "", "/grid/walls/y-min/type"},
        BadCase{"grid_wall_type_unknown", kGrid, "/grid/walls/y-min/type", "\"glue\"", "/grid/walls/y-min/type"},
        BadCase{"grid_wall_key_typo", kGrid, "/grid/walls/y-min/thick", "2", "/grid/walls/y-min/thick"},
        BadCase{"grid_wall_thickness_zero", kGrid, "/grid/walls/y-min/thickness", "0", "/grid/walls/y-min/thickness"},
        BadCase{"grid_wall_thickness_fraction", kGrid, "/grid/walls/y-min/thickness", "1.5",
                "/grid/walls/y-min/thickness"},
        BadCase{"grid_wall_thicker_than_the_grid", kGrid, "/grid/walls/y-min/thickness", "7",
                "/grid/walls/y-min/thickness"},
        BadCase{"grid_moving_walls_not_array", kGrid, "/grid/moving_walls", "{}", "/grid/moving_walls"},
        BadCase{"grid_moving_wall_name_missing", kGrid, "/grid/moving_walls",
                R"([{"box": {"min": [0, 0, 0], "max": [1, 1, 1]}, "motion": []}])", "/grid/moving_walls/0/name"},
        BadCase{"grid_moving_wall_name_with_slash", kGrid, "/grid/moving_walls",
                R"([{"name": "a/b", "box": {"min": [0, 0, 0], "max": [1, 1, 1]}, "motion": []}])",
                "/grid/moving_walls/0/name"},
        BadCase{"grid_moving_wall_names_repeated", kGrid, "/grid/moving_walls",
                R"([{"name": "a", "box": {"min": [0, 0, 0], "max": [1, 1, 1]}, "motion": []},
                    {"name": "a", "box": {"min": [0, 0, 0], "max": [1, 1, 1]}, "motion": []}])",
                "/grid/moving_walls/1/name"},
        BadCase{"grid_moving_wall_key_typo", kGrid, "/grid/moving_walls",
                R"([{"name": "a", "box": {"min": [0, 0, 0], "max": [1, 1, 1]}, "motoin": []}])",
                "/grid/moving_walls/0/motoin"},
        BadCase{"grid_moving_wall_box_inverted", kGrid, "/grid/moving_walls",
                R"([{"name": "a", "box": {"min": [0, 2, 0], "max": [1, 1, 1]}, "motion": []}])",
                "/grid/moving_walls/0/box"},
        BadCase{"grid_moving_wall_box_nan", kGrid, "/grid/moving_walls",
                R"([{"name": "a", "box": {"min": [0, "NaN", 0], "max": [1, 1, 1]}, "motion": []}])",
                "/grid/moving_walls/0/box/min/1"},
        BadCase{"grid_moving_wall_motion_missing", kGrid, "/grid/moving_walls",
                R"([{"name": "a", "box": {"min": [0, 0, 0], "max": [1, 1, 1]}}])", "/grid/moving_walls/0/motion"},
        BadCase{"grid_moving_wall_stage_unknown", kGrid, "/grid/moving_walls",
                R"([{"name": "a", "box": {"min": [0, 0, 0], "max": [1, 1, 1]}, "motion": [{"type": "spin"}]}])",
                "/grid/moving_walls/0/motion/0/type"},
        BadCase{"grid_moving_wall_zero_axis", kGrid, "/grid/moving_walls",
                R"([{"name": "a", "box": {"min": [0, 0, 0], "max": [1, 1, 1]}, "motion": [{"type": "rotate",
                    "axis_point": [0, 0, 0], "axis_direction": [0, 0, 0], "angle_degrees": 90}]}])",
                "/grid/moving_walls/0/motion/0/axis_direction"},
        BadCase{"grid_with_dirichlet", kGrid, "/dirichlet", R"([{"node_set": "x-min"}])", "/dirichlet"},
        BadCase{"grid_quasistatic", kGrid, "/time/integrator", "\"quasistatic\"", "/time/integrator"},
        BadCase{"grid_with_collisions", kGridTwo, "/collisions", R"({"k_n": 1e8})", "/collisions"}),
    [](const auto& info) { return info.param.name; });

// --- mesh recipes ---------------------------------------------------------------------------

json sceneWithMesh(const json& mesh) {
  json scene = minimalScene();
  scene["mesh"] = mesh;
  return scene;
}

TEST(SceneMesh, EveryBoxFamilyAndOrderLoads) {
  const json recipes[] = {
      json::parse(R"({"type": "box", "family": "biased", "cells": [2, 1, 1], "order": 2})"),
      json::parse(R"({"type": "box", "family": "hex", "cells": [2, 1, 1]})"),
      json::parse(R"({"type": "box", "family": "prism", "cells": [2, 1, 1]})"),
      json::parse(R"({"type": "box", "family": "pyramid", "cells": [1, 1, 1]})"),
      json::parse(R"({"type": "box", "family": "unstructured", "target_size": 0.5, "order": 3})"),
      json::parse(R"({"type": "res_box", "nodes_per_side": 3})"),
  };
  const ElementType types[] = {ElementType::kTet10, ElementType::kHex8, ElementType::kPrism6,
                               ElementType::kPyramid5, ElementType::kTet20, ElementType::kTet4};
  for (std::size_t i = 0; i < std::size(recipes); ++i) {
    SCOPED_TRACE(recipes[i].dump());
    const Scene scene = parseScene(sceneWithMesh(recipes[i]), "<inline>");
    EXPECT_EQ(scene.problem.mesh.element_type, types[i]);
    // The resolved mesh is the canonical recipe: it reads back to the same scene.
    EXPECT_EQ(parseScene(scene.resolved, "<inline>").resolved, scene.resolved);
  }
  const Scene res = parseScene(sceneWithMesh(recipes[5]), "<inline>");
  EXPECT_EQ(res.resolved["mesh"], json::parse(R"({"type": "res_box", "nodes_per_side": 3, "order": 1})"));
  EXPECT_EQ(res.problem.numNodes(), 27);
}

TEST(SceneMesh, OlderSplitKeyMapsToFamily) {
  json scene = minimalScene();
  scene["mesh"]["split"] = "gmsh_six";
  const Scene parsed = parseScene(scene, "<inline>");
  EXPECT_EQ(parsed.resolved["mesh"]["family"], "gmsh_six");
  EXPECT_EQ(parsed.problem.mesh.numElements(), 6 * 8);
}

TEST(SceneMesh, MshFileIsRelativeToTheScene) {
  TempFolder folder;
  fs::create_directories(fs::path(folder.file("meshes")));
  BoxMeshRecipe box;
  box.size = Vec3(2, 1, 1);
  box.cells = {2, 1, 1};
  writeMsh(folder.file("meshes/bar.msh"), makeBoxMesh(box));
  json scene = minimalScene();
  scene["mesh"] = json::parse(R"({"type": "msh", "file": "meshes/bar.msh", "order": 2})");
  const std::string path = folder.write("bar_scene.json", scene.dump(2));
  const Scene loaded = loadScene(path);
  EXPECT_EQ(loaded.problem.mesh.element_type, ElementType::kTet10);
  EXPECT_EQ(loaded.resolved["mesh"]["file"], "meshes/bar.msh");
  // The same scene from another working directory: the path follows the scene file.
  const fs::path cwd = fs::current_path();
  fs::current_path(fs::temp_directory_path());
  EXPECT_NO_THROW(loadScene(path));
  fs::current_path(cwd);
}

TEST(SceneMesh, ErrorsInsideAMshFileNameThatFile) {
  TempFolder folder;
  const std::string msh = folder.write("broken.msh", "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 4 1 4\n");
  json scene = minimalScene();
  scene["mesh"] = json::parse(R"({"type": "msh", "file": "broken.msh"})");
  const std::string path = folder.write("scene.json", scene.dump(2));
  try {
    loadScene(path);
    ADD_FAILURE() << "a truncated .msh loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), msh);
    EXPECT_EQ(e.field().rfind("line ", 0), 0u) << e.what();
  }
}

TEST(SceneMesh, UsesTheMeshCache) {
  json scene = minimalScene();
  scene["mesh"] = json::parse(R"({"type": "box", "family": "biased", "cells": [3, 1, 1]})");
  parseScene(scene, "<inline>");
  const fs::path dir = fs::path(std::getenv("PBDLAB_CACHE_DIR")) / "meshes";
  ASSERT_TRUE(fs::is_directory(dir));
  EXPECT_FALSE(fs::is_empty(dir));
  EXPECT_EQ(parseScene(scene, "<inline>").resolved, parseScene(scene, "<inline>").resolved);
}

// --- body placement (validation/body_placement.hpp) ------------------------------------------

const char* const kPlacedMaterial = R"({"model": "neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.3})";

// Two bodies of the same box recipe, the second placed by `placement`.
json placedBodiesScene(const json& placement) {
  const json mesh = json::parse(R"({"type": "box", "size": [2, 1, 0.5], "cells": [2, 1, 1]})");
  json second = {{"name", "b"}, {"mesh", mesh}, {"material", json::parse(kPlacedMaterial)}};
  if (!placement.is_null()) second["placement"] = placement;
  return {{"bodies", {{{"name", "a"}, {"mesh", mesh}, {"material", json::parse(kPlacedMaterial)}}, second}},
          {"time", {{"dt", 0.5}, {"steps", 1}}}};
}

double meshVolume(const Mesh& mesh) {
  double total = 0.0;
  for (double v : restVolumes(mesh)) total += v;
  return total;
}

Mesh unplacedBox() {
  return makeMesh(parseMeshRecipe(json::parse(R"({"type": "box", "size": [2, 1, 0.5], "cells": [2, 1, 1]})"),
                                  "<test>", "/mesh", ""));
}

TEST(ScenePlacement, QuarterTurnScaleAndTranslationAreExact) {
  // X' = p + s R (X - p) + t with R a quarter turn about z: (x, y, z) -> (-y, x, z), exactly.
  const Scene scene = parseScene(placedBodiesScene(json::parse(
      R"({"scale": 2, "rotation_deg": [0, 0, 90], "translation": [5, 0, -1], "pivot": [1, 0.5, 0.25]})")), "<inline>");
  const Mesh box = unplacedBox();
  ASSERT_EQ(scene.problem.bodies.size(), 2u);
  const Mesh& a = scene.problem.bodies[0].mesh;
  const Mesh& b = scene.problem.bodies[1].mesh;
  EXPECT_EQ(a.rest_positions, box.rest_positions) << "a body without placement is the mesh as made";
  const Vec3 p(1, 0.5, 0.25), t(5, 0, -1);
  ASSERT_EQ(b.numNodes(), box.numNodes());
  for (int n = 0; n < box.numNodes(); ++n) {
    const Vec3 d = box.restPosition(n) - p;
    const Vec3 expected = p + 2.0 * Vec3(-d.y(), d.x(), d.z()) + t;
    EXPECT_EQ(b.restPosition(n), expected) << "node " << n;
  }
  EXPECT_EQ(b.elements, box.elements);
  EXPECT_EQ(b.node_sets.at("x-min"), box.node_sets.at("x-min")) << "the mesh's own sets keep their nodes";
  // Volumes scale by s^3, every element still positive.
  EXPECT_NEAR(meshVolume(b), 8.0 * meshVolume(box), 1e-12);
  for (double v : restVolumes(b)) EXPECT_GT(v, 0.0);
}

TEST(ScenePlacement, RotationIsRzRyRxAboutThePivot) {
  const double rx = 30, ry = -45, rz = 100, s = 0.3;
  const Vec3 p(0.5, 0.5, 0.25), t(-1, 2, 3);
  const Scene scene = parseScene(placedBodiesScene({{"scale", s}, {"rotation_deg", {rx, ry, rz}},
                                                    {"translation", {t.x(), t.y(), t.z()}}, {"pivot", {p.x(), p.y(), p.z()}}}),
                                 "<inline>");
  const double deg = std::acos(-1.0) / 180.0;
  const Mat3 R = (Eigen::AngleAxisd(rz * deg, Vec3::UnitZ()) * Eigen::AngleAxisd(ry * deg, Vec3::UnitY()) *
                  Eigen::AngleAxisd(rx * deg, Vec3::UnitX()))
                     .toRotationMatrix();
  const Mesh box = unplacedBox();
  const Mesh& b = scene.problem.bodies[1].mesh;
  for (int n = 0; n < box.numNodes(); ++n)
    EXPECT_LT((b.restPosition(n) - (p + s * R * (box.restPosition(n) - p) + t)).norm(), 1e-14) << "node " << n;
  EXPECT_NEAR(meshVolume(b), s * s * s * meshVolume(box), 1e-14);
}

TEST(ScenePlacement, ResolvedSceneWritesItWithDefaultsAndReadsBackTheSame) {
  const Scene scene = parseScene(placedBodiesScene(json::parse(R"({"scale": 0.5})")), "<inline>");
  EXPECT_EQ(scene.resolved["bodies"][1]["placement"],
            json::parse(R"({"scale": 0.5, "rotation_deg": [0.0, 0.0, 0.0], "translation": [0.0, 0.0, 0.0],
                            "pivot": [0.0, 0.0, 0.0]})"));
  EXPECT_FALSE(scene.resolved["bodies"][0].contains("placement")) << "written only when given: older scenes unchanged";
  const Scene again = parseScene(scene.resolved, "again.json");
  EXPECT_EQ(again.resolved, scene.resolved);
  EXPECT_EQ(again.problem.mesh.rest_positions, scene.problem.mesh.rest_positions);
  // The single-body form takes it at the top level.
  json single = minimalScene();
  single["placement"] = json::parse(R"({"translation": [10, 0, 0]})");
  const Scene one = parseScene(single, "<inline>");
  EXPECT_EQ(one.resolved["placement"]["translation"], json::array({10.0, 0.0, 0.0}));
  EXPECT_EQ(parseScene(one.resolved, "again.json").resolved, one.resolved);
  EXPECT_DOUBLE_EQ(one.problem.mesh.rest_positions.col(0).minCoeff(), 10.0);
  EXPECT_FALSE(parseScene(minimalScene(), "<inline>").resolved.contains("placement"));
}

TEST(ScenePlacement, RegionNodeSetsAreSelectedOnThePlacedPositions) {
  json document = placedBodiesScene(json::parse(R"({"translation": [0, 0, 10]})"));
  document["node_sets"] = json::parse(R"([{"name": "low", "body": "b", "box": {"min": [-1, -1, 9.9], "max": [9, 9, 10.1]}}])");
  const Scene scene = parseScene(document, "<inline>");
  EXPECT_EQ(scene.problem.mesh.node_sets.at("b/low").size(), 6u);  // the 3 x 2 nodes of the box's lower face
  // The same box in the unplaced frame selects nothing.
  document["node_sets"][0]["box"] = json::parse(R"({"min": [-1, -1, -0.1], "max": [9, 9, 0.1]})");
  expectInputError([&] { parseScene(document, "<inline>"); }, "<inline>", "/node_sets/0/box");
}

TEST(ScenePlacement, BadPlacementsAreRefusedAtTheirField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"scale": 0})", "/bodies/1/placement/scale"},
      {R"({"scale": -2})", "/bodies/1/placement/scale"},
      {R"({"scale": "NaN"})", "/bodies/1/placement/scale"},
      {R"({"rotation_deg": [0, 90]})", "/bodies/1/placement/rotation_deg"},
      {R"({"rotation_deg": [0, 90, "x"]})", "/bodies/1/placement/rotation_deg/2"},
      {R"({"rotation_deg": [0, 0, 1e9]})", "/bodies/1/placement/rotation_deg/2"},
      {R"({"translation": [1, 2, 3, 4]})", "/bodies/1/placement/translation"},
      {R"({"pivot": 1})", "/bodies/1/placement/pivot"},
      {R"({"rotation": [0, 0, 90]})", "/bodies/1/placement/rotation"},
      {R"([1, 2])", "/bodies/1/placement"},
  };
  for (const auto& [placement, field] : cases) {
    SCOPED_TRACE(placement);
    expectInputError([&] { parseScene(placedBodiesScene(json::parse(placement)), "<inline>"); }, "<inline>", field);
  }
  // NaN and inf in a document built in memory.
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    expectInputError([&] { parseScene(placedBodiesScene({{"scale", bad}}), "<inline>"); }, "<inline>",
                     "/bodies/1/placement/scale");
    expectInputError([&] { parseScene(placedBodiesScene({{"translation", {0.0, bad, 0.0}}}), "<inline>"); },
                     "<inline>", "/bodies/1/placement/translation/1");
  }
  // A scene with bodies places each body, not the whole scene.
  json top = placedBodiesScene(json());
  top["placement"] = json::parse(R"({"scale": 2})");
  expectInputError([&] { parseScene(top, "<inline>"); }, "<inline>", "/placement");
  // A 2D (plane strain) mesh stays in z = 0: it turns about z only.
  json plane = minimalScene();
  plane["mesh"] = json::parse(R"({"type": "rectangle", "size": [2, 1], "cells": [2, 1]})");
  plane["placement"] = json::parse(R"({"rotation_deg": [0, 0, 45], "translation": [1, 1, 0]})");
  EXPECT_NO_THROW(parseScene(plane, "<inline>"));
  plane["placement"] = json::parse(R"({"rotation_deg": [90, 0, 0]})");
  expectInputError([&] { parseScene(plane, "<inline>"); }, "<inline>", "/placement/rotation_deg/0");
  plane["placement"] = json::parse(R"({"translation": [0, 0, 1]})");
  expectInputError([&] { parseScene(plane, "<inline>"); }, "<inline>", "/placement/translation/2");
}

TEST(ScenePlacement, SphereTorusAndPlacedBunnyInAGridScene) {
  // The glass box of PXPBD Fig. 1 in miniature: bodies of the new families and a placed STL
  // bunny, resolved onto a covering grid.
  json document = json::parse(R"({
    "bodies": [
      {"name": "ball", "mesh": {"type": "sphere", "center": [0.3, 0.4, 0.3], "radius": 0.15, "target_size": 0.1},
       "material": {"model": "fixed_corotated", "youngs_modulus": 1e4, "poisson_ratio": 0.3, "density": 100}},
      {"name": "ring", "mesh": {"type": "torus", "center": [0.8, 0.4, 0.3], "major_radius": 0.15, "minor_radius": 0.06,
                                "axis": "y", "target_size": 0.06},
       "material": {"model": "fixed_corotated", "youngs_modulus": 1e4, "poisson_ratio": 0.3, "density": 100}},
      {"name": "bunny", "mesh": {"type": "stl", "file": "meshes/data/bunny.stl", "target_size": 0.1},
       "material": {"model": "fixed_corotated", "youngs_modulus": 1e4, "poisson_ratio": 0.3, "density": 100},
       "placement": {"scale": 0.3, "rotation_deg": [0, 90, 0], "pivot": [0.5, 0.5, 0.5], "translation": [0.05, 0.3, -0.2]}}
    ],
    "gravity": [0, -9.81, 0],
    "grid": {"spacing": 0.2, "walls": {"y-min": {"type": "sticky", "thickness": 2}}},
    "time": {"integrator": "backward_euler", "dt": 0.01, "steps": 1}
  })");
  document["bodies"][2]["mesh"]["file"] = std::string(PBDLAB_SOURCE_DIR) + "/meshes/data/bunny.stl";
  const Scene scene = parseScene(document, "<inline>");
  ASSERT_EQ(scene.problem.bodies.size(), 3u);
  const Mesh& bunny = scene.problem.bodies[2].mesh;
  const Mesh unplaced = makeMesh(parseMeshRecipe(document["bodies"][2]["mesh"], "<test>", "/mesh", ""));
  const auto extent = [](const Mesh& m) -> Vec3 {
    return (m.rest_positions.colwise().maxCoeff() - m.rest_positions.colwise().minCoeff()).transpose();
  };
  // A quarter turn about y swaps the x and z extents; the scale shrinks them.
  const Vec3 expected = 0.3 * Vec3(extent(unplaced).z(), extent(unplaced).y(), extent(unplaced).x());
  EXPECT_LT((extent(bunny) - expected).norm(), 1e-12) << extent(bunny).transpose() << " against " << expected.transpose();
  // The ball and the ring are not placed: their meshes as made.
  EXPECT_EQ(scene.problem.bodies[0].mesh.rest_positions,
            makeMesh(parseMeshRecipe(document["bodies"][0]["mesh"], "<test>", "/mesh", "")).rest_positions);
  EXPECT_TRUE(scene.grid.has_value());
  EXPECT_EQ(parseScene(scene.resolved, "again.json").resolved, scene.resolved);
}

// --- file-level errors ----------------------------------------------------------------------

TEST(SceneFile, MalformedJsonNamesLineAndColumn) {
  TempFolder folder;
  std::string text = minimalScene().dump(2);
  text.resize(text.size() / 2);  // truncated
  const std::string path = folder.write("truncated.json", text);
  expectInputError([&] { loadScene(path); }, path, "(file)");
  try {
    loadScene(path);
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("line"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("column"), std::string::npos) << error.what();
  }
}

TEST(SceneFile, EmptyFileIsMalformed) {
  TempFolder folder;
  const std::string path = folder.write("empty.json", "");
  expectInputError([&] { loadScene(path); }, path, "(file)");
}

TEST(SceneFile, MissingFileCannotBeOpened) {
  TempFolder folder;
  const std::string path = folder.file("does_not_exist.json");
  expectInputError([&] { loadScene(path); }, path, "(file)");
  try {
    loadScene(path);
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot open"), std::string::npos) << error.what();
  }
}

TEST(SceneFile, DirectoryCannotBeOpened) {
  TempFolder folder;
  const std::string path = folder.file("");
  expectInputError([&] { loadScene(path); }, path, "(file)");
}

TEST(SceneFile, DuplicateKeyIsNamed) {
  TempFolder folder;
  std::string text = minimalScene().dump(2);
  // A second "dt" in "time": JSON would silently keep only one of them.
  text.replace(text.find("\"dt\""), 4, "\"dt\": 0.1, \"dt\"");
  const std::string path = folder.write("duplicate.json", text);
  expectInputError([&] { loadScene(path); }, path, "/time/dt");
}

TEST(SceneFile, DuplicateKeyInsideArrayIsNamed) {
  TempFolder folder;
  std::string text = fullScene().dump();
  text.replace(text.find("\"type\":\"fixed\""), 14, "\"type\":\"fixed\",\"type\":\"fixed\"");
  const std::string path = folder.write("duplicate_in_array.json", text);
  expectInputError([&] { loadScene(path); }, path, "/dirichlet/1/motion/2/type");
}

TEST(SceneDocument, NonFiniteNumbersInAParsedDocumentAreNamed) {
  // A document built in memory can hold inf and NaN, which a file cannot.
  json document = minimalScene();
  document["material"]["youngs_modulus"] = std::numeric_limits<double>::infinity();
  expectInputError([&] { parseScene(document, "<inline>"); }, "<inline>", "/material/youngs_modulus");
  document = minimalScene();
  document["time"]["dt"] = std::numeric_limits<double>::quiet_NaN();
  expectInputError([&] { parseScene(document, "<inline>"); }, "<inline>", "/time/dt");
}

// Keys with '/' or '~' are escaped in the field (RFC 6901), so the pointer finds them.
TEST(SceneDocument, PointersEscapeProbeNames) {
  json document = minimalScene();
  document["output"] = {{"probes", {{"tip/a~b", {1, 2}}}}};
  expectInputError([&] { parseScene(document, "<inline>"); }, "<inline>", "/output/probes/tip~1a~0b");
}

// Unknown solver options get the same "did you mean" as every other key.
TEST(SceneDocument, UnknownSolverOptionSuggestsTheNearest) {
  json document = minimalScene();
  document["solver"] = {{"options", {{"line_serch", true}}}};
  try {
    parseScene(document, "<inline>");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.field(), "/solver/options/line_serch");
    EXPECT_NE(std::string(error.what()).find("did you mean 'line_search'?"), std::string::npos) << error.what();
  }
}

TEST(SceneFile, TopLevelMustBeAnObject) {
  TempFolder folder;
  const std::string path = folder.write("array.json", "[1, 2, 3]");
  expectInputError([&] { loadScene(path); }, path, "(root)");
}

}  // namespace
}  // namespace pbdlab
