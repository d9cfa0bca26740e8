// The Newton/CHOLMOD reference: quadratic convergence on a twisted beam, exact free fall,
// budgets and the no-line-search mode.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "meshes/box_mesh.hpp"
#include "reference/newton.hpp"

namespace pbdlab {
namespace {

// A 2 x 0.5 x 0.5 beam, x-min clamped, x-max turned 90 degrees about the beam axis over
// `steps` quasistatic steps.
Problem twistedBeam(int steps, MaterialModel model = MaterialModel::kStableNeoHookean) {
  Problem problem;
  BoxMeshRecipe recipe;
  recipe.size = Vec3(2.0, 0.5, 0.5);
  recipe.cells = {8, 2, 2};
  problem.mesh = makeBoxMesh(recipe);
  problem.material.model = model;
  problem.material.youngs_modulus = 1e5;
  problem.material.poisson_ratio = 0.3;
  MotionStage twist;
  twist.kind = MotionStage::Kind::kRotate;
  twist.axis_point = Vec3(2.0, 0.25, 0.25);
  twist.axis_direction = Vec3::UnitX();
  twist.angle = M_PI / 2;
  twist.t_start = 0.0;
  twist.t_end = 1.0;
  problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
  problem.dirichlet.push_back({"x-max", {true, true, true}, {{twist}}});
  problem.time = {Integrator::kQuasistatic, 1.0 / steps, steps};
  problem.finalize("twisted beam");
  return problem;
}

struct StepRun {
  std::vector<IterationRow> rows;
  StopReason reason;
};

std::vector<StepRun> runAll(const Problem& problem, Solver& solver, const Budget& budget, IterationLog& log) {
  State state = initialState(problem);
  solver.setup(problem);
  std::vector<StepRun> runs;
  for (int step = 0; step < problem.time.num_steps; ++step) {
    StepObjective objective(problem, state.x, state.v, step);
    StepMonitor monitor(objective, budget, log);
    solver.advance(objective, state, monitor);
    runs.push_back({log.rowsOfStep(step + 1), monitor.stopReason()});
  }
  return runs;
}

TEST(Newton, TwistedBeamConvergesQuadratically) {
  for (MaterialModel model : {MaterialModel::kStableNeoHookean, MaterialModel::kFixedCorotated}) {
    SCOPED_TRACE(materialModelName(model));
    const Problem problem = twistedBeam(2, model);
    NewtonSolver newton;
    IterationLog log(newton.logColumns());
    Budget budget;
    budget.max_iterations = 60;
    budget.target_relative_residual = 1e-12;  // deep enough to see the asymptotic rate
    const auto runs = runAll(problem, newton, budget, log);
    for (size_t s = 0; s < runs.size(); ++s) {
      SCOPED_TRACE("step " + std::to_string(s + 1));
      const auto& rows = runs[s].rows;
      ASSERT_EQ(runs[s].reason, StopReason::kConverged);
      std::string history;
      for (const auto& row : rows) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, " %.3e", row.relative_residual);
        history += buffer;
      }
      std::cout << "[ history  ] " << materialModelName(model) << " step " << s + 1 << ":" << history << "\n";
      // Ratio test on the last iterations: the order p in r_{k+1} ~ C r_k^p, estimated as
      // log(r_{k+1} / r_k) / log(r_k / r_{k-1}), must be close to 2. The last triple whose
      // newest residual is above the round-off floor (1e-12 relative; it lands near 1e-15)
      // and whose middle one is inside the asymptotic region (< 1e-2) is used.
      const int n = static_cast<int>(rows.size());
      int last = n - 1;
      while (last >= 2 && rows[last].relative_residual < 1e-12) --last;
      ASSERT_GE(last, 2);
      const double r_before = rows[last - 2].relative_residual, r_prev = rows[last - 1].relative_residual;
      const double r_last = rows[last].relative_residual;
      ASSERT_LT(r_prev, 1e-2);
      const double order = std::log(r_last / r_prev) / std::log(r_prev / r_before);
      std::printf("[ order    ] %.3f from %.3e %.3e %.3e\n", order, r_before, r_prev, r_last);
      EXPECT_GT(order, 1.8);
      // The true Hessian (column "hessian" == 0) is what converges quadratically.
      EXPECT_EQ(rows[n - 1].extra[2], 0.0);
    }
  }
}

TEST(Newton, BackwardEulerFreeFallIsExactInOneIteration) {
  Problem problem;
  BoxMeshRecipe recipe;
  recipe.cells = {2, 2, 2};
  problem.mesh = makeBoxMesh(recipe);
  problem.gravity = Vec3(0, 0, -9.81);
  problem.time = {Integrator::kBackwardEuler, 0.01, 3};
  problem.finalize("free fall");
  NewtonSolver newton;
  IterationLog log(newton.logColumns());
  Budget budget;
  budget.target_relative_residual = 1e-10;
  State state = initialState(problem);
  newton.setup(problem);
  for (int step = 0; step < 3; ++step) {
    StepObjective objective(problem, state.x, state.v, step);
    StepMonitor monitor(objective, budget, log);
    newton.advance(objective, state, monitor);
    EXPECT_EQ(monitor.stopReason(), StopReason::kConverged);
    EXPECT_LE(monitor.iterations(), 1);
  }
  // Backward Euler free fall: v_n = n dt g, z_n = z_0 + dt^2 g n (n + 1) / 2.
  const double dt = 0.01;
  for (int i = 0; i < problem.numNodes(); ++i) {
    EXPECT_NEAR(state.v[3 * i + 2], 3 * dt * -9.81, 1e-10);
    EXPECT_NEAR(state.x[3 * i + 2], problem.mesh.restPosition(i)[2] + dt * dt * -9.81 * 6, 1e-10);
  }
}

TEST(Newton, HonoursAnIterationBudgetWithoutLineSearch) {
  const Problem problem = twistedBeam(1);
  NewtonOptions options;
  options.line_search = false;
  NewtonSolver newton(options);
  IterationLog log(newton.logColumns());
  Budget budget;
  budget.max_iterations = 2;
  const auto runs = runAll(problem, newton, budget, log);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].reason, StopReason::kIterationBudget);
  EXPECT_EQ(runs[0].rows.size(), 3u);  // the initial guess and two iterations
  for (size_t k = 1; k < runs[0].rows.size(); ++k) {
    EXPECT_EQ(runs[0].rows[k].extra[0], 0.0);  // no line-search steps
    EXPECT_EQ(runs[0].rows[k].extra[1], 1.0);  // full steps
  }
}

TEST(Newton, LogsSolverTimeAndFactorTime) {
  const Problem problem = twistedBeam(1);
  NewtonSolver newton;
  IterationLog log(newton.logColumns());
  const auto runs = runAll(problem, newton, Budget{}, log);
  ASSERT_EQ(runs[0].reason, StopReason::kConverged);
  const auto& rows = runs[0].rows;
  for (size_t k = 1; k < rows.size(); ++k) {
    EXPECT_GE(rows[k].solver_seconds, rows[k - 1].solver_seconds);
    EXPECT_GT(rows[k].extra[5], 0.0);  // factor seconds
  }
}

}  // namespace
}  // namespace pbdlab
