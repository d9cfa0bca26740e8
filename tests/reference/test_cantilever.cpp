// A slender cantilever (10 x 1 x 1, length/height = 10) clamped at x = 0 under its own
// weight, a small load, solved by Newton on refinements of every element type.
//  - P1 (five-tet): the tip-deflection error falls with refinement, and the Richardson-
//    extrapolated deflection is within 3% of the Timoshenko beam value. P1 tets lock in
//    bending, so coarse meshes are far off; the trend and the extrapolation are gated.
//  - Every element type: the error against a mesh-extrapolated P3 value falls with
//    refinement; P2 and P3 beat P1 at (no more than) the same number of vertices. Observed
//    orders are printed with the table.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "core/fem/field_sampling.hpp"
#include "meshes/box_mesh.hpp"
#include "reference/newton.hpp"

namespace pbdlab {
namespace {

constexpr double kLength = 10.0, kHeight = 1.0;
constexpr double kYoung = 1e7, kPoisson = 0.3, kDensity = 1.0, kGravity = 1.0;

double timoshenkoTipDeflection() {
  const double area = kHeight * kHeight, inertia = std::pow(kHeight, 4) / 12.0;
  const double q = kDensity * kGravity * area;
  const double shear_modulus = kYoung / (2 * (1 + kPoisson));
  const double kappa = 10 * (1 + kPoisson) / (12 + 11 * kPoisson);
  return q * std::pow(kLength, 4) / (8 * kYoung * inertia) + q * kLength * kLength / (2 * kappa * shear_modulus * area);
}

struct Result {
  int vertices = 0;
  double deflection = 0.0;
};

Result tipDeflection(BoxFamily family, int order, int n) {
  Problem problem;
  BoxMeshRecipe recipe;
  recipe.size = Vec3(kLength, kHeight, kHeight);
  recipe.cells = {10 * n, n, n};
  recipe.family = family;
  recipe.order = order;
  problem.mesh = makeBoxMesh(recipe);
  problem.material = {MaterialModel::kStableNeoHookean, kYoung, kPoisson, LameMapping::kMatchedToLinear, kDensity};
  problem.gravity = Vec3(0, -kGravity, 0);
  problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
  problem.time = {Integrator::kQuasistatic, 1.0, 1};
  problem.finalize("cantilever");

  NewtonSolver newton;
  IterationLog log(newton.logColumns());
  State state = initialState(problem);
  newton.setup(problem);
  StepObjective objective(problem, state.x, state.v, 0);
  StepMonitor monitor(objective, Budget{}, log);
  newton.advance(objective, state, monitor);
  EXPECT_TRUE(monitor.stopReason() == StopReason::kConverged || monitor.stopReason() == StopReason::kRoundoff);
  EXPECT_LT(monitor.lastRelativeResidual(), 1e-5);
  const VecX displacement = state.x - problem.mesh.restPositionsFlat();
  const Vec3 tip = FieldSampler(problem.mesh).sample(displacement, Vec3(kLength, kHeight / 2, kHeight / 2));
  return {problem.numNodes(), -tip.y()};
}

// d(h) = d_inf + C h^p through three (h, d) pairs: p by bisection on the ratio of
// differences, then d_inf.
double extrapolate(const std::array<double, 3>& h, const std::array<double, 3>& d, double* order) {
  const double target = (d[0] - d[1]) / (d[1] - d[2]);
  auto ratio = [&](double p) { return (std::pow(h[0], p) - std::pow(h[1], p)) / (std::pow(h[1], p) - std::pow(h[2], p)); };
  double lo = 0.1, hi = 12.0;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    ((ratio(mid) < target) ? lo : hi) = mid;
  }
  *order = 0.5 * (lo + hi);
  const double C = (d[1] - d[2]) / (std::pow(h[1], *order) - std::pow(h[2], *order));
  return d[2] - C * std::pow(h[2], *order);
}

TEST(Cantilever, EveryElementTypeConvergesAndHighOrderBeatsP1) {
  const double timoshenko = timoshenkoTipDeflection();
  struct Config {
    std::string name;
    BoxFamily family;
    int order;
    std::vector<int> refinements;
  };
  const std::vector<Config> configs = {
      {"tet4 five-tet", BoxFamily::kFiveTet, 1, {2, 4, 6, 8}},
      {"tet4 biased", BoxFamily::kBiased, 1, {2, 4}},
      {"tet10 five-tet", BoxFamily::kFiveTet, 2, {2, 4}},
      {"tet20 five-tet", BoxFamily::kFiveTet, 3, {2, 3, 4}},
      {"hex8", BoxFamily::kHex, 1, {2, 4, 8}},
      {"prism6", BoxFamily::kPrism, 1, {2, 4}},
      {"pyramid5", BoxFamily::kPyramid, 1, {2, 4}},
  };
  std::map<std::string, std::map<int, Result>> results;
  for (const Config& config : configs)
    for (int n : config.refinements) results[config.name][n] = tipDeflection(config.family, config.order, n);

  // The mesh-extrapolated P3 value from n = 2, 3, 4 (h = 1/n).
  const auto& p3 = results["tet20 five-tet"];
  double p3_order = 0.0;
  const double extrapolated = extrapolate({0.5, 1.0 / 3, 0.25}, {p3.at(2).deflection, p3.at(3).deflection,
                                                                 p3.at(4).deflection}, &p3_order);
  std::printf("[ table    ] Timoshenko %.6e; extrapolated P3 %.6e (observed order %.2f, %+.3f%% vs Timoshenko)\n",
              timoshenko, extrapolated, p3_order, 100 * (extrapolated - timoshenko) / timoshenko);
  std::printf("[ table    ] %-15s %3s %8s %14s %12s %12s %7s\n", "element", "n", "vertices", "tip deflection",
              "err vs Tim.", "err vs P3x", "order");
  for (const Config& config : configs) {
    const auto& r = results[config.name];
    double previous_error = NAN;
    int previous_n = 0;
    for (int n : config.refinements) {
      const double error = std::abs(r.at(n).deflection - extrapolated) / extrapolated;
      const double order = previous_n ? std::log(previous_error / error) / std::log(double(n) / previous_n) : NAN;
      std::printf("[ table    ] %-15s %3d %8d %14.6e %+11.3f%% %+11.3f%% %7.2f\n", config.name.c_str(), n,
                  r.at(n).vertices, r.at(n).deflection, 100 * (r.at(n).deflection - timoshenko) / timoshenko,
                  100 * (r.at(n).deflection - extrapolated) / extrapolated, order);
      if (previous_n) {
        EXPECT_LT(error, previous_error) << config.name << ": the error must fall from n = " << previous_n << " to " << n;
      }
      previous_error = error;
      previous_n = n;
    }
  }
  // The extrapolated P3 value and Timoshenko agree to the 3D clamp's effect, which beam
  // theory lacks (measured: -0.88%; the gate leaves a margin of about 2x).
  EXPECT_LT(std::abs(extrapolated - timoshenko), 0.02 * timoshenko);

  // P2 on n cells across has no more vertices than P1 on 2n (five-tet P2 adds no cell-centre
  // node), P3 on n no more than P1 on 3n; the higher order must still be more accurate.
  const auto& p1 = results["tet4 five-tet"];
  const auto& p2 = results["tet10 five-tet"];
  auto err = [&](const Result& r) { return std::abs(r.deflection - extrapolated); };
  for (int n : {2}) {
    ASSERT_LE(p2.at(n).vertices, p1.at(2 * n).vertices);
    EXPECT_LT(err(p2.at(n)), err(p1.at(2 * n)));
    ASSERT_LE(p3.at(n).vertices, p1.at(3 * n).vertices);
    EXPECT_LT(err(p3.at(n)), err(p1.at(3 * n)));
  }
  ASSERT_LE(p2.at(4).vertices, p1.at(8).vertices);
  EXPECT_LT(err(p2.at(4)), err(p1.at(8)));
}

TEST(Cantilever, TipDeflectionConvergesToTimoshenko) {
  const double reference = timoshenkoTipDeflection();
  const std::vector<int> refinements = {2, 4, 8};
  std::vector<double> deflection;
  std::printf("[ table    ] cells across | tip deflection | error vs Timoshenko (%.6e)\n", reference);
  for (int n : refinements) {
    deflection.push_back(tipDeflection(BoxFamily::kFiveTet, 1, n).deflection);
    std::printf("[ table    ] %12d | %.6e | %+.2f%%\n", n, deflection.back(),
                100 * (deflection.back() - reference) / reference);
  }
  // The error falls with every refinement.
  for (size_t k = 1; k < deflection.size(); ++k)
    EXPECT_LT(std::abs(deflection[k] - reference), std::abs(deflection[k - 1] - reference));
  // Richardson extrapolation from three meshes with ratio 2: observed order p and limit.
  const double d1 = deflection[0], d2 = deflection[1], d3 = deflection[2];
  const double order = std::log((d2 - d1) / (d3 - d2)) / std::log(2.0);
  const double extrapolated = d3 + (d3 - d2) / (std::pow(2.0, order) - 1);
  std::printf("[ table    ] observed order %.3f, extrapolated %.6e (%+.2f%% vs Timoshenko)\n", order, extrapolated,
              100 * (extrapolated - reference) / reference);
  EXPECT_GT(order, 1.0);
  EXPECT_LT(std::abs(extrapolated - reference), 0.03 * reference);
}

}  // namespace
}  // namespace pbdlab
