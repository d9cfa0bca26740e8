// A slender cantilever (length/height = 10) under its own weight, a small load, solved by
// Newton on three refinements of a five-tet mesh. Gated: the tip-deflection error falls with
// refinement, and the Richardson-extrapolated deflection is within 3% of the Timoshenko beam
// value. P1 tets lock in bending, so the coarse meshes are far off; the trend and the
// extrapolation are what is gated, not a coarse value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "meshes/box_mesh.hpp"
#include "reference/newton.hpp"

namespace pbdlab {
namespace {

constexpr double kLength = 10.0, kHeight = 1.0;  // square 1 x 1 section
constexpr double kYoung = 1e7, kPoisson = 0.3, kDensity = 1.0, kGravity = 1.0;

// Timoshenko tip deflection of a cantilever under a uniform load q per length:
// q L^4 / (8 E I) + q L^2 / (2 kappa G A), with Cowper's kappa = 10 (1 + nu) / (12 + 11 nu)
// for a rectangular section.
double timoshenkoTipDeflection() {
  const double area = kHeight * kHeight, inertia = std::pow(kHeight, 4) / 12.0;
  const double q = kDensity * kGravity * area;
  const double shear_modulus = kYoung / (2 * (1 + kPoisson));
  const double kappa = 10 * (1 + kPoisson) / (12 + 11 * kPoisson);
  return q * std::pow(kLength, 4) / (8 * kYoung * inertia) + q * kLength * kLength / (2 * kappa * shear_modulus * area);
}

// Downward deflection of the tip centre (x = L, y = z = h/2) for a mesh with n cells across.
double tipDeflection(int n) {
  Problem problem;
  BoxMeshRecipe recipe;
  recipe.size = Vec3(kLength, kHeight, kHeight);
  recipe.cells = {10 * n, n, n};
  problem.mesh = makeBoxMesh(recipe);
  problem.material = {MaterialModel::kStableNeoHookean, kYoung, kPoisson, LameMapping::kMatchedToLinear, kDensity};
  problem.gravity = Vec3(0, -kGravity, 0);
  problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
  problem.time = {Integrator::kQuasistatic, 1.0, 1};
  problem.finalize("cantilever");

  NewtonSolver newton;
  IterationLog log(newton.logColumns());
  Budget budget;
  budget.target_relative_residual = 1e-8;
  State state = initialState(problem);
  newton.setup(problem);
  StepObjective objective(problem, state.x, state.v, 0);
  StepMonitor monitor(objective, budget, log);
  newton.advance(objective, state, monitor);
  // E = 1e7 under a load of 1: the residual's round-off floor is near 1e-7 relative here, so
  // Newton may stop there (kRoundoff) before 1e-8; both leave the deflection exact to ~1e-7.
  EXPECT_TRUE(monitor.stopReason() == StopReason::kConverged || monitor.stopReason() == StopReason::kRoundoff)
      << stopReasonName(monitor.stopReason());
  EXPECT_LT(monitor.lastRelativeResidual(), 1e-5);

  int tip = -1;
  for (int i = 0; i < problem.numNodes(); ++i)
    if ((problem.mesh.restPosition(i) - Vec3(kLength, kHeight / 2, kHeight / 2)).norm() < 1e-9) tip = i;
  EXPECT_GE(tip, 0) << "no node at the tip centre";
  return problem.mesh.restPosition(tip)[1] - state.x[3 * tip + 1];
}

TEST(Cantilever, TipDeflectionConvergesToTimoshenko) {
  const double reference = timoshenkoTipDeflection();
  const std::vector<int> refinements = {2, 4, 8};
  std::vector<double> deflection;
  std::printf("[ table    ] cells across | tip deflection | error vs Timoshenko (%.6e)\n", reference);
  for (int n : refinements) {
    deflection.push_back(tipDeflection(n));
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
