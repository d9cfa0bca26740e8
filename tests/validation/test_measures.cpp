// validation/measures: the deformed volume by quadrature (exact for affine maps), NaN without
// an elastic term (cloth), and the runner's per-frame volume_ratio in summary.json.
#include "validation/measures.hpp"

#include <gtest/gtest.h>
#include <Eigen/Geometry>
#include <Eigen/LU>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/temporary_mesh_cache.hpp"
#include "validation/runner.hpp"
#include "validation/scene.hpp"

namespace pbdlab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json solidScene(int order) {
  json document = json::parse(R"({
    "mesh": {"type": "box", "size": [2, 1, 1], "cells": [2, 1, 1]},
    "material": {"model": "fixed_corotated", "youngs_modulus": 1000, "poisson_ratio": 0.3, "density": 10},
    "time": {"integrator": "backward_euler", "dt": 0.01, "steps": 2},
    "output": {"vtu": "none"}
  })");
  document["mesh"]["order"] = order;
  return document;
}

// x = A X + b maps every volume by det A; the quadrature of det F is exact for it.
Positions affineMap(const Problem& problem, const Mat3& a, const Vec3& b) {
  Positions x = problem.mesh.restPositionsFlat();
  for (int i = 0; i < problem.numNodes(); ++i) x.segment<3>(3 * i) = a * x.segment<3>(3 * i) + b;
  return x;
}

TEST(Measures, VolumeOfAnAffineMapIsDetATimesTheRestVolume) {
  for (int order : {1, 2}) {
    const Scene scene = parseScene(solidScene(order), "solid.json");
    const Problem& problem = scene.problem;
    EXPECT_NEAR(deformedVolume(problem, problem.mesh.restPositionsFlat()), 2.0, 1e-12) << "order " << order;
    Mat3 a;
    a << 1.3, 0.2, 0.0, -0.1, 0.8, 0.3, 0.05, 0.0, 1.1;
    const Positions x = affineMap(problem, a, Vec3(0.4, -2.0, 1.0));
    EXPECT_NEAR(deformedVolume(problem, x), 2.0 * a.determinant(), 1e-12) << "order " << order;
    EXPECT_NEAR(volumeRatio(problem, x), a.determinant(), 1e-12) << "order " << order;
    // Inversion counts negatively (det F < 0), as the quadrature of det F says.
    EXPECT_NEAR(volumeRatio(problem, affineMap(problem, -Mat3::Identity(), Vec3::Zero())), -1.0, 1e-12);
  }
}

// The rest-shape distance is zero for any rigid motion and sees a shape change: a stretch of
// x by 1 + s about the body's centre moves the 8 end nodes (x = 0 and 2) of the 12 by s from
// the rest shape after the best alignment (RMS s sqrt(2/3)); a mirror image is no rigid motion
// of the rest shape.
TEST(Measures, RestShapeDistanceIgnoresRigidMotionsOnly) {
  const Scene scene = parseScene(solidScene(1), "solid.json");
  const Problem& problem = scene.problem;
  const Mat3 rotation = Eigen::AngleAxisd(2.5, Vec3(1, -2, 0.5).normalized()).toRotationMatrix();
  EXPECT_LT(restShapeDistance(problem.mesh, affineMap(problem, rotation, Vec3(3, -1, 7))), 1e-12);
  const double s = 0.1;
  const Mat3 stretch = Vec3(1 + s, 1, 1).asDiagonal();
  const Positions stretched = affineMap(problem, rotation * stretch, Vec3(-(1 + s) + 1, 0, 0));
  EXPECT_NEAR(restShapeDistance(problem.mesh, stretched), s * std::sqrt(2.0 / 3.0), 1e-12);
  const Mat3 mirror = Vec3(1, -1, 1).asDiagonal();
  EXPECT_GT(restShapeDistance(problem.mesh, affineMap(problem, mirror, Vec3::Zero())), 0.1);
}

// Inverted (det F <= 0 somewhere) and degenerate (0 < det F < 1e-3) elements are counted; a
// state squashed to 1e-4 of its volume along x is degenerate everywhere, a mirrored one
// inverted everywhere, and a single node pushed through its neighbours inverts only its own.
TEST(Measures, ElementQualityCountsInvertedAndDegenerateElements) {
  const Scene scene = parseScene(solidScene(1), "solid.json");
  const Problem& problem = scene.problem;
  const int elements = problem.mesh.numElements();
  const Positions rest = problem.mesh.restPositionsFlat();
  ElementQuality quality = elementQuality(problem, rest);
  EXPECT_EQ(quality.inverted, 0);
  EXPECT_EQ(quality.degenerate, 0);
  const Mat3 squash = Vec3(1e-4, 1.0, 1.0).asDiagonal();
  quality = elementQuality(problem, affineMap(problem, squash, Vec3::Zero()));
  EXPECT_EQ(quality.inverted, 0);
  EXPECT_EQ(quality.degenerate, elements);
  quality = elementQuality(problem, affineMap(problem, Vec3(-1.0, 1.0, 1.0).asDiagonal(), Vec3::Zero()));
  EXPECT_EQ(quality.inverted, elements);
  EXPECT_EQ(quality.degenerate, 0);
  // Node 0 (a corner at the origin) pushed far past the opposite faces of its elements.
  Positions x = rest;
  x.segment<3>(0) = Vec3(5.0, 5.0, 5.0);
  quality = elementQuality(problem, x);
  EXPECT_GT(quality.inverted, 0);
  EXPECT_LT(quality.inverted, elements);
}

TEST(Measures, NoElasticTermGivesNaN) {
  const json cloth = json::parse(R"({
    "mesh": {"type": "rectangle", "embedding": "3d_surface", "size": [1, 1], "cells": [2, 2]},
    "material": {"model": "fixed_corotated", "youngs_modulus": 100, "poisson_ratio": 0.3, "density": 1},
    "discretization": {"triangles": "membrane"},
    "time": {"integrator": "backward_euler", "dt": 0.01, "steps": 1},
    "output": {"vtu": "none"}
  })");
  const Scene scene = parseScene(cloth, "cloth.json");
  ASSERT_FALSE(scene.problem.hasElasticEnergy());
  EXPECT_TRUE(std::isnan(deformedVolume(scene.problem, scene.problem.mesh.restPositionsFlat())));
  EXPECT_TRUE(std::isnan(volumeRatio(scene.problem, scene.problem.mesh.restPositionsFlat())));
  // (The runner writes volume_ratio only when hasElasticEnergy(); cli_body_kinds runs cloth
  // scenes through `pbdlab run`.)
}

json clothScene() {
  return json::parse(R"({
    "mesh": {"type": "rectangle", "embedding": "3d_surface", "plane": "xz", "size": [2, 1], "cells": [2, 2]},
    "material": {"model": "fixed_corotated", "youngs_modulus": 100, "poisson_ratio": 0.3, "density": 1},
    "gravity": [0, -9.8, 0],
    "dirichlet": [{"node_set": "z-max"}],
    "time": {"integrator": "backward_euler", "dt": 0.01, "steps": 3},
    "output": {"vtu": "none"}
  })");
}

// A cloth in the xz plane (2 x 1, 2 x 2 cells: edges along x of length 1, along z of 0.5,
// diagonals of length sqrt(1.25)) stretched by s along x: the x edges by s, the z edges not at all,
// the diagonals by sqrt(((1 + s)^2 + 0.25) / 1.25) - 1; the area by 1 + s. The lowest point is
// the smallest height along -gravity, here the smallest y.
TEST(Measures, ClothStretchAreaAndLowestPoint) {
  const Scene scene = parseScene(clothScene(), "cloth.json");
  const Problem& problem = scene.problem;
  ASSERT_TRUE(isSurfaceProblem(problem));
  const SurfaceMeasures rest = surfaceMeasures(problem, problem.mesh.restPositionsFlat());
  EXPECT_NEAR(rest.stretch_mean, 0.0, 1e-15);
  EXPECT_NEAR(rest.stretch_max, 0.0, 1e-15);
  EXPECT_NEAR(rest.area_ratio, 1.0, 1e-15);
  EXPECT_NEAR(rest.lowest_point, 0.0, 1e-15);
  const double s = 0.1;
  Positions x = affineMap(problem, Vec3(1 + s, 1, 1).asDiagonal(), Vec3(0, -0.5, 0));
  x[3 * 4 + 1] = -0.7;  // node 4 sags below the others (y = -0.5)
  const SurfaceMeasures m = surfaceMeasures(problem, affineMap(problem, Vec3(1 + s, 1, 1).asDiagonal(), Vec3::Zero()));
  // 16 unique edges: 6 along x, 6 along z, 4 diagonals.
  const double diagonal = std::sqrt(((1 + s) * (1 + s) + 0.25) / 1.25) - 1.0;
  EXPECT_NEAR(m.stretch_mean, (6 * s + 4 * diagonal) / 16.0, 1e-14);
  EXPECT_NEAR(m.stretch_max, s, 1e-14);
  EXPECT_NEAR(m.area_ratio, 1 + s, 1e-14);
  EXPECT_NEAR(surfaceMeasures(problem, x).lowest_point, -0.7, 1e-15);
  // A solid, and a diverged cloth, have none.
  EXPECT_FALSE(isSurfaceProblem(parseScene(solidScene(1), "solid.json").problem));
  EXPECT_TRUE(std::isnan(surfaceMeasures(parseScene(solidScene(1), "solid.json").problem,
                                         parseScene(solidScene(1), "solid.json").problem.mesh.restPositionsFlat())
                             .stretch_mean));
  x[0] = NAN;
  const SurfaceMeasures diverged = surfaceMeasures(problem, x);
  EXPECT_TRUE(std::isnan(diverged.stretch_mean) && std::isnan(diverged.stretch_max) && std::isnan(diverged.lowest_point));
}

// The runner writes them every frame of a cloth run: the hanging cloth stretches and sinks.
TEST(Measures, SummaryHasEachFramesClothMeasures) {
  const Scene scene = parseScene(clothScene(), "cloth.json");
  const fs::path out = fs::path(::testing::TempDir()) / ("pbdlab_test_cloth_run_" + std::to_string(::getpid()));
  const RunResult result = runScene(scene, {out.string(), false, 0.0, ""});
  const json& steps = result.summary["steps"];
  ASSERT_EQ(steps.size(), 3u);
  double previous_lowest = 0.0;
  for (const json& step : steps) {
    EXPECT_FALSE(step.contains("volume_ratio"));
    EXPECT_GT(step["edge_stretch_max"].get<double>(), 0.0);
    EXPECT_LT(step["lowest_point"].get<double>(), previous_lowest);
    previous_lowest = step["lowest_point"].get<double>();
  }
  const SurfaceMeasures last = surfaceMeasures(scene.problem, result.final_positions);
  EXPECT_DOUBLE_EQ(steps.back()["edge_stretch_mean"].get<double>(), last.stretch_mean);
  EXPECT_DOUBLE_EQ(steps.back()["area_ratio"].get<double>(), last.area_ratio);
  fs::remove_all(out);
}

TEST(Measures, SummaryHasEachFramesVolumeRatio) {
  json document = solidScene(1);
  // Stretch the bar by 10% along x over two quasistatic steps: its volume grows (nu < 0.5) and the last
  // frame's ratio is the one measured from the final positions.
  document["dirichlet"] = json::parse(R"([{"node_set": "x-min"},
    {"node_set": "x-max", "motion": [{"type": "translate", "by": [0.2, 0, 0]}]}])");
  document["time"] = json::parse(R"({"integrator": "quasistatic", "dt": 1, "steps": 2})");
  const Scene scene = parseScene(document, "stretch.json");
  const fs::path out = fs::path(::testing::TempDir()) / ("pbdlab_test_measures_run_" + std::to_string(::getpid()));
  const RunResult result = runScene(scene, {out.string(), false, 0.0, ""});
  const json& steps = result.summary["steps"];
  ASSERT_EQ(steps.size(), 2u);
  for (const json& step : steps) {
    ASSERT_TRUE(step.contains("volume_ratio"));
    EXPECT_GT(step["volume_ratio"].get<double>(), 1.0);
    EXPECT_EQ(step["inverted_elements"].get<int>(), 0);
  }
  EXPECT_EQ(steps.back()["inverted_elements"], result.summary["final_state"]["inverted_elements"]);
  EXPECT_DOUBLE_EQ(steps.back()["volume_ratio"].get<double>(), volumeRatio(scene.problem, result.final_positions));
  fs::remove_all(out);
}

}  // namespace
}  // namespace pbdlab
