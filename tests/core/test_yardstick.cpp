// The yardstick: one residual and energy for every solver (DESIGN.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>
#include <thread>

#include "core/solver/solver.hpp"
#include "core/solver/yardstick.hpp"
#include "meshes/box_mesh.hpp"

namespace pbdlab {
namespace {

Problem smallProblem(Integrator integrator, bool clamp) {
  Problem problem;
  BoxMeshRecipe recipe;
  recipe.size = Vec3(2, 1, 1);
  recipe.cells = {4, 2, 2};
  problem.mesh = makeBoxMesh(recipe);
  problem.material.model = MaterialModel::kStableNeoHookean;
  problem.material.youngs_modulus = 1e4;
  problem.material.poisson_ratio = 0.3;
  problem.material.density = 10.0;
  problem.gravity = Vec3(0, -9.8, 0);
  if (clamp) problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
  problem.time = {integrator, 0.01, 1};
  problem.finalize("test");
  return problem;
}

TEST(Yardstick, BackwardEulerFreeFallIsExactAtRestShape) {
  // No clamp: the rest shape translated by dt v + dt^2 g has zero elastic force, so
  // M (x - x~) - dt^2 f_ext = 0 there.
  const Problem problem = smallProblem(Integrator::kBackwardEuler, false);
  const Positions x0 = problem.mesh.restPositionsFlat();
  VecX v0 = VecX::Zero(x0.size());
  for (int i = 0; i < problem.numNodes(); ++i) v0.segment<3>(3 * i) = Vec3(0.5, 1.0, 0.0);
  const StepObjective objective(problem, x0, v0, 0);
  Positions x = x0;
  for (int i = 0; i < problem.numNodes(); ++i)
    x.segment<3>(3 * i) += 0.01 * Vec3(0.5, 1.0, 0.0) + 0.01 * 0.01 * problem.gravity;
  EXPECT_GT(objective.referenceResidualNorm(), 0.0);
  EXPECT_LT(objective.residualNorm(x), 1e-12 * objective.referenceResidualNorm());
}

TEST(Yardstick, QuasistaticResidualAtRestIsTheFreeExternalForce) {
  const Problem problem = smallProblem(Integrator::kQuasistatic, true);
  const Positions x0 = problem.mesh.restPositionsFlat();
  const StepObjective objective(problem, x0, VecX::Zero(x0.size()), 0);
  double expected = 0.0;
  for (int dof : problem.freeDofs()) expected += std::pow(objective.externalForce()[dof], 2);
  EXPECT_NEAR(objective.residualNorm(x0), std::sqrt(expected), 1e-12 * std::sqrt(expected));
  EXPECT_DOUBLE_EQ(objective.relativeResidual(objective.residualNorm(x0)), 1.0);
  // The free DOFs are those not on x-min.
  EXPECT_EQ(problem.freeDofs().size() + problem.fixedDofs().size(), size_t(problem.numDofs()));
  EXPECT_EQ(problem.fixedDofs().size(), 3 * problem.mesh.node_sets.at("x-min").size());
}

TEST(Yardstick, GradientIsTheDerivativeOfTheEnergy) {
  for (Integrator integrator : {Integrator::kQuasistatic, Integrator::kBackwardEuler}) {
    SCOPED_TRACE(integratorName(integrator));
    const Problem problem = smallProblem(integrator, true);
    const Positions x0 = problem.mesh.restPositionsFlat();
    const StepObjective objective(problem, x0, VecX::Constant(x0.size(), 0.3), 0);
    std::mt19937 rng(5);
    std::normal_distribution<double> normal(0.0, 0.03);
    Positions x = x0;
    for (int k = 0; k < x.size(); ++k) x[k] += normal(rng);
    VecX g;
    objective.gradient(x, g);
    ASSERT_GT(g.norm(), 0.0);
    const double h = 1e-6;
    double max_error = 0.0;
    for (int k = 0; k < x.size(); k += 7) {
      Positions xp = x, xm = x;
      xp[k] += h;
      xm[k] -= h;
      max_error = std::max(max_error, std::abs((objective.energy(xp) - objective.energy(xm)) / (2 * h) - g[k]));
    }
    EXPECT_LT(max_error, 1e-6 * g.cwiseAbs().maxCoeff());
  }
}

TEST(StepMonitor, AClockPauseKeepsASolversDiagnosticsOffItsClock) {
  // 300 ms of "diagnostics" under a pause must not count; without the pause they would
  // (checked by removing it). The margin is the scheduler's, not a speed requirement.
  const Problem problem = smallProblem(Integrator::kBackwardEuler, true);
  const State state = initialState(problem);
  const StepObjective objective(problem, state.x, state.v, 0);
  IterationLog log;
  StepMonitor monitor(objective, Budget{}, log);
  {
    const StepMonitor::ClockPause diagnostics(monitor);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  EXPECT_LT(monitor.solverSeconds(), 0.15);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_GE(monitor.solverSeconds(), 0.3);  // the clock runs again
}

// Blow-up detection: a residual above divergence_factor times the step's scale (the larger of
// |r(x_ref)| and |r| at the first record) stops the step as diverged and says where; just
// below it does not; NaN positions are caught whatever the factor.
TEST(StepMonitor, StopsAStepWhoseResidualGrowsBeyondTheDivergenceFactor) {
  const Problem problem = smallProblem(Integrator::kBackwardEuler, true);
  const State state = initialState(problem);
  const StepObjective objective(problem, state.x, state.v, 0);
  const double scale = std::max(objective.referenceResidualNorm(), objective.residualNorm(state.x));
  ASSERT_GT(scale, 0.0);
  // Moving one free node along a line makes |r| grow with the distance: find a distance that
  // takes |r| to 50x the scale, then use factors just above and below that growth.
  const int node_dof = problem.freeDofs().back();
  auto moved = [&](double distance) {
    Positions x = state.x;
    x[node_dof] += distance;
    return x;
  };
  double distance = 1e-3;
  while (objective.residualNorm(moved(distance)) < 50.0 * scale) distance *= 2.0;
  const double growth = objective.residualNorm(moved(distance)) / scale;

  for (const double factor : {1.01 * growth, 0.99 * growth}) {
    Budget budget;
    budget.divergence_factor = factor;
    IterationLog log;
    StepMonitor monitor(objective, budget, log);
    EXPECT_FALSE(monitor.record(0, state.x));
    const bool stopped = monitor.record(1, moved(distance));
    if (factor > growth) {
      EXPECT_FALSE(stopped);
      EXPECT_EQ(monitor.divergence(), "");
    } else {
      EXPECT_TRUE(stopped);
      EXPECT_EQ(monitor.stopReason(), StopReason::kDiverged);
      EXPECT_NE(monitor.divergence().find("the residual grew to"), std::string::npos) << monitor.divergence();
      EXPECT_NE(monitor.divergence().find("at iteration 1"), std::string::npos) << monitor.divergence();
    }
  }

  Budget unchecked;
  unchecked.divergence_factor = std::numeric_limits<double>::infinity();
  IterationLog log;
  StepMonitor monitor(objective, unchecked, log);
  Positions last_finite = state.x;
  Positions x = state.x;
  x[node_dof] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(monitor.stopIfNotFinite(3, x, last_finite));
  EXPECT_TRUE(x.allFinite());  // handed back the last finite iterate
  EXPECT_EQ(monitor.stopReason(), StopReason::kDiverged);
  EXPECT_NE(monitor.divergence().find("iteration 3"), std::string::npos) << monitor.divergence();
}

}  // namespace
}  // namespace pbdlab
