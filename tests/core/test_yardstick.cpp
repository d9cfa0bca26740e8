// The yardstick: one residual and energy for every solver (DESIGN.md).
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "core/solver.hpp"
#include "core/yardstick.hpp"
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
  for (int dof : problem.freeDofs()) expected += std::pow(problem.externalForce()[dof], 2);
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

}  // namespace
}  // namespace pbdlab
