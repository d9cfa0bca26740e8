// The explicit (dynamic relaxation) reference and Newton agree at rest on a small cantilever
// under gravity: two independent solvers of the same quasistatic equations.
#include <gtest/gtest.h>

#include <limits>

#include "meshes/box_mesh.hpp"
#include "reference/explicit_relaxation.hpp"
#include "reference/newton.hpp"
#include "tests/support/deadline.hpp"

namespace pbdlab {
namespace {

Problem smallCantilever() {
  Problem problem;
  BoxMeshRecipe recipe;
  recipe.size = Vec3(1.0, 0.5, 0.5);
  recipe.cells = {4, 2, 2};
  problem.mesh = makeBoxMesh(recipe);
  problem.material = {MaterialModel::kStableNeoHookean, 1e6, 0.3, LameMapping::kMatchedToLinear, 1000.0};
  problem.gravity = Vec3(0, -9.81 * 20, 0);  // a large sag: the tip drops about 0.8 m
  problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
  problem.time = {Integrator::kQuasistatic, 1.0, 1};
  problem.finalize("small cantilever");
  return problem;
}

Positions solve(const Problem& problem, Solver& solver, const Budget& budget, StopReason* reason) {
  IterationLog log(solver.logColumns());
  State state = initialState(problem);
  solver.setup(problem);
  StepObjective objective(problem, state.x, state.v, 0);
  StepMonitor monitor(objective, budget, log);
  solver.advance(objective, state, monitor);
  *reason = monitor.stopReason();
  return state.x;
}

TEST(ExplicitRelaxation, AgreesWithNewtonAtRest) {
  const Problem problem = smallCantilever();
  NewtonSolver newton;
  StopReason newton_reason;
  const Positions x_newton = solve(problem, newton, Budget{}, &newton_reason);
  ASSERT_EQ(newton_reason, StopReason::kConverged);

  // The lowest bending mode of this beam is near 16 rad/s (Euler-Bernoulli: 3.516
  // sqrt(EI / (rho A L^4))); damping 30/s, about critical for it, brings it to rest within
  // a few seconds of pseudo-time (the budget allows 200 * 500 steps = 5.6 s).
  ExplicitRelaxationOptions options;
  options.damping = 30.0;
  options.substeps = 500;
  ExplicitRelaxationSolver relaxation(options);
  Budget budget;
  budget.max_iterations = 200;
  budget.target_relative_residual = 1e-7;
  StopReason relaxation_reason;
  const Positions x_relaxed = solve(problem, relaxation, budget, &relaxation_reason);
  EXPECT_EQ(relaxation_reason, StopReason::kConverged);

  const Positions rest = problem.mesh.restPositionsFlat();
  const double displacement = (x_newton - rest).lpNorm<Eigen::Infinity>();
  ASSERT_GT(displacement, 1e-2) << "the load must deform the beam";
  EXPECT_LT((x_relaxed - x_newton).lpNorm<Eigen::Infinity>(), 1e-5 * displacement);
}

TEST(ExplicitRelaxation, RejectsAnUnstableTimeStep) {
  const Problem problem = smallCantilever();
  ExplicitRelaxationOptions options;
  options.dt = 10.0 / ExplicitRelaxationSolver::maxFrequencyEstimate(problem);
  ExplicitRelaxationSolver relaxation(options);
  EXPECT_THROW(relaxation.setup(problem), std::invalid_argument);
}

// solver.max_seconds ends a step within about one substep, even inside a logged iteration of
// very many substeps (it used to be checked only after the iteration: with substeps
// 1000000000 a step never returned). The cut iteration's iterate is recorded and the step
// stops as time_budget; its pseudo_time counts the substeps done. The bound on the solver
// seconds is generous (a busy machine); the point is that the step returns at all.
TEST(ExplicitRelaxation, TimeBudgetEndsAnIterationOfManySubsteps) {
  const Problem problem = smallCantilever();
  ExplicitRelaxationOptions options;
  options.substeps = std::numeric_limits<int>::max();  // past the reader's bound
  ExplicitRelaxationSolver relaxation(options);
  relaxation.setup(problem);
  const test::StepRun run =
      test::stepWithinTimeBudget(relaxation, problem, 0.5, "an explicit_relaxation step with max_seconds 0.5");
  EXPECT_EQ(stopReasonName(run.result.reason), "time_budget");
  EXPECT_EQ(run.result.iterations, 1);  // the first logged iteration was cut
  EXPECT_GE(run.result.solver_seconds, 0.5);
  EXPECT_LT(run.result.solver_seconds, 20.0);
  ASSERT_EQ(run.log.rows().size(), 2u);  // iteration 0 and the cut iteration's iterate
  const double pseudo_time = run.log.value(run.log.rows().back(), "pseudo_time");
  EXPECT_GT(pseudo_time, 0.0);
  EXPECT_LT(pseudo_time, 1e-3 * options.substeps * options.dt) << "counts the substeps done, not the ones asked for";
  EXPECT_GT((run.x - problem.mesh.restPositionsFlat()).lpNorm<Eigen::Infinity>(), 1e-6) << "the substeps moved it";
}

}  // namespace
}  // namespace pbdlab
