// Multi-layer XPBD's frame stop (Figs. 9-10, Table 1; spec §7; MlXpbdOptions::frame_stop_reduction):
// a step ends once the secondary residual is at most (1 - P) r_1^XPBD, plain XPBD's after its
// first sweep from the same state, in the last layer (which then runs past its count) or once
// the pending residual velocities are below h^2; the Budget is the hang stop.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "core/solver/solver.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "solvers/ml_xpbd/ml_xpbd_solver.hpp"
#include "tests/support/step_run.hpp"

namespace pbdlab {
namespace {

// Table 1's scene, small: a free plane-strain StVK box 3 x 1 stretched 10% in x, no gravity.
Problem stretchedBox2d() {
  RectangleRecipe rectangle;
  rectangle.size = {3.0, 1.0};
  rectangle.cells = {12, 4};
  Problem problem;
  problem.mesh = makeRectangleMesh(rectangle);
  problem.material.model = MaterialModel::kStVenantKirchhoff;
  problem.material.youngs_modulus = 1e4;
  problem.material.poisson_ratio = 0.3;
  problem.material.density = 1.0;
  problem.gravity = Vec3::Zero();
  problem.initial_map = Vec3(1.1, 1.0, 1.0).asDiagonal();
  problem.initial_map_fixed_point = Vec3(1.5, 0.5, 0.0);
  problem.time = {Integrator::kBackwardEuler, 0.005, 1, 1};
  problem.finalize("stretched box");
  return problem;
}

Budget atMost(int count) {
  Budget budget;
  budget.max_iterations = count;
  budget.target_relative_residual = 0.0;
  return budget;
}

// The next step's start: x_next with the runner's backward-Euler velocity.
void moveOn(const Problem& problem, const Positions& x_next, State& state) {
  state.v = velocitiesAfterStep(StepObjective(problem, state.x, state.v, state.step), x_next);
  state.x = x_next;
  state.step += 1;
}

MlXpbdOptions plainWithFrameStop(double reduction) {
  MlXpbdOptions options;
  options.frame_stop_reduction = reduction;
  return options;
}

// With layers [0] the frame stop ends the step at the first iteration whose secondary residual
// is at most (1 - P) times the first iteration's: the same state as plain XPBD stopped there by
// its budget, bit for bit (r_1^XPBD is computed on the side and leaves the multipliers alone).
TEST(MlXpbdFrameStop, PlainXpbdStopsAtItsFirstIterationBelowTheTarget) {
  const Problem problem = stretchedBox2d();
  MlXpbdSolver stopped(plainWithFrameStop(0.9));
  stopped.setup(problem);
  MlXpbdSolver fixed;
  fixed.setup(problem);
  State state = initialState(problem);
  for (int step = 0; step < 3; ++step) {
    const test::StepRun long_run = test::runStep(fixed, problem, state, atMost(400));
    const auto& rows = long_run.log.rows();
    const double target = 0.1 * long_run.log.value(rows[1], "secondary_residual");
    int first_below = -1;
    for (const IterationRow& row : rows)
      if (row.iteration >= 1 && long_run.log.value(row, "secondary_residual") <= target) {
        first_below = row.iteration;
        break;
      }
    ASSERT_GT(first_below, 1) << "step " << step;
    const test::StepRun run = test::runStep(stopped, problem, state, atMost(400));
    const test::StepRun same_budget = test::runStep(fixed, problem, state, atMost(first_below));
    std::printf("[ measured ] stretched box step %d: secondary residual 90%% below the first iteration's after %d "
                "iterations (relative true residual %.3e)\n",
                step + 1, first_below, run.result.relative_residual);
    EXPECT_EQ(run.result.reason, StopReason::kSolverTarget);
    EXPECT_EQ(run.result.iterations, first_below);
    ASSERT_EQ((run.x - same_budget.x).lpNorm<Eigen::Infinity>(), 0.0) << "step " << step;
    moveOn(problem, run.x, state);
  }
}

// With rigid layers the target is plain XPBD's (not the layered solver's own first iteration),
// and the last layer runs past its count until it gets there.
TEST(MlXpbdFrameStop, TheLastLayerRunsPastItsCountToPlainXpbdsTarget) {
  const Problem problem = stretchedBox2d();
  MlXpbdOptions options = plainWithFrameStop(0.9);
  options.layers = {50.0, 0.0};
  options.iterations_per_layer = {2, 3};
  MlXpbdSolver layered(options);
  layered.setup(problem);
  MlXpbdSolver plain;
  plain.setup(problem);
  State state = initialState(problem);
  for (int step = 0; step < 3; ++step) {
    const test::StepRun first_sweep = test::runStep(plain, problem, state, atMost(1));
    const double target = 0.1 * first_sweep.log.value(first_sweep.log.rows()[1], "secondary_residual");
    const test::StepRun run = test::runStep(layered, problem, state, atMost(1000));
    const auto& rows = run.log.rows();
    const double reached = run.log.value(rows.back(), "secondary_residual");
    std::printf("[ measured ] stretched box, layers [50, 0] x [2, 3], step %d: %d iterations to %.3e <= %.3e "
                "(relative true residual %.3e)\n",
                step + 1, run.result.iterations, reached, target, run.result.relative_residual);
    EXPECT_EQ(run.result.reason, StopReason::kSolverTarget);
    EXPECT_GT(run.result.iterations, 5);  // past the schedule's 2 + 3
    EXPECT_LE(reached, target);
    EXPECT_GT(run.log.value(rows[rows.size() - 2], "secondary_residual"), target);  // not earlier
    EXPECT_EQ(run.log.value(rows.back(), "layer"), 2.0);
    moveOn(problem, run.x, state);
  }
}

// The Budget ends a step that does not get there (the authors' hang stop).
TEST(MlXpbdFrameStop, TheBudgetIsTheHangStop) {
  const Problem problem = stretchedBox2d();
  MlXpbdOptions options = plainWithFrameStop(0.999999);
  options.layers = {50.0, 0.0};
  options.iterations_per_layer = {2, 3};
  MlXpbdSolver layered(options);
  layered.setup(problem);
  const test::StepRun run = test::runStep(layered, problem, initialState(problem), atMost(7));
  EXPECT_EQ(run.result.reason, StopReason::kIterationBudget);
  EXPECT_EQ(run.result.iterations, 7);
}

TEST(MlXpbdFrameStop, TheReductionIsAFractionBelowOne) {
  EXPECT_THROW(MlXpbdSolver(plainWithFrameStop(1.0)), std::invalid_argument);
  EXPECT_THROW(MlXpbdSolver(plainWithFrameStop(-0.1)), std::invalid_argument);
  EXPECT_THROW(MlXpbdSolver(plainWithFrameStop(std::nan(""))), std::invalid_argument);
  EXPECT_NO_THROW(MlXpbdSolver(plainWithFrameStop(0.0)));  // off
}

}  // namespace
}  // namespace pbdlab
