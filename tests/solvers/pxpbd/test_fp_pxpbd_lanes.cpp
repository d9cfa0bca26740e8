// FP-PXPBD's lane kernel (solvers/pxpbd/fp_pxpbd_lanes.hpp) against the generic element solve
// (FpPxpbdSolver::solveElement): with the SVD's rotations the same iterates up to round-off,
// with warm rotations the same converged step.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <utility>

#include "meshes/box_mesh.hpp"
#include "solvers/pxpbd/fp_pxpbd.hpp"
#include "tests/support/clamped_block.hpp"
#include "tests/support/mixed_bars.hpp"
#include "tests/support/step_run.hpp"

namespace pbdlab {
namespace {

// The falling cantilever of test_fp_pxpbd.cpp (8x2x2 cells, 160 tets, x-min clamped), one
// step of dt. Its clamped elements go through the generic solve, the others through the lanes.
// dt = 1/30 s (one frame) for the corotated model; Neo-Hookean's eq. 52 diverges there with
// one local iteration (test_fp_pxpbd.cpp), so its cases take dt = 0.01.
Problem laneBar(MaterialModel model, double dt) {
  BoxMeshRecipe box;
  box.size = Vec3(2.0, 0.5, 0.5);
  box.cells = {8, 2, 2};
  return test::clampedBlock(makeBoxMesh(box), model, Integrator::kBackwardEuler, dt, 1, "lane bar");
}

// Two such bars side by side, one fixed corotated and one Neo-Hookean: the lanes' mixed form.
Problem mixedBars(double dt) {
  return test::mixedBars(MaterialModel::kNeoHookean, Integrator::kBackwardEuler, dt);
}

// A start twisted about the bar's axis, 0.5 rad a metre (1 rad at the free end), at rest: the
// elements are rotated by up to a radian, so the rotations matter.
State twistedStart(const Problem& problem) {
  State state = initialState(problem);
  for (int i = 0; i < problem.numNodes(); ++i) {
    const Vec3 X = problem.mesh.restPosition(i);
    const double axis_z = X.z() < 0.75 ? 0.25 : 1.25;  // each bar about its own axis (mixedBars)
    const double angle = 0.5 * X.x(), y = X.y() - 0.25, z = X.z() - axis_z;
    state.x.segment<3>(3 * i) = Vec3(X.x(), 0.25 + std::cos(angle) * y - std::sin(angle) * z,
                                     axis_z + std::sin(angle) * y + std::cos(angle) * z);
  }
  return state;
}

// The first step from the twisted start after `sweeps` sweeps, and the solver that made it.
struct SweptStep {
  std::unique_ptr<FpPxpbdSolver> solver;
  Positions x;
};

SweptStep sweptStep(const Problem& problem, FpPxpbdOptions options, int sweeps) {
  options.log_secondary_residual = false;
  SweptStep run{std::make_unique<FpPxpbdSolver>(options), {}};
  run.solver->setup(problem);
  run.x = test::runStep(*run.solver, problem, twistedStart(problem), test::iterationBudget(sweeps)).x;
  return run;
}

double largestDisplacement(const Problem& problem, const Positions& x) {
  return (x - twistedStart(problem).x).lpNorm<Eigen::Infinity>();
}

TEST(FpPxpbdLanes, WithSvdRotationsTheyAreTheGenericSolve) {
  const std::pair<const char*, Problem> problems[] = {{"corotated bar", laneBar(MaterialModel::kFixedCorotated, 1.0 / 30.0)},
                                                      {"Neo-Hookean bar", laneBar(MaterialModel::kNeoHookean, 0.01)},
                                                      {"mixed bars", mixedBars(0.01)}};
  for (const auto& [name, problem] : problems)
    for (int newton_iterations : {1, 3}) {
      FpPxpbdOptions generic, lanes;
      generic.p1_lanes = false;
      generic.newton_iterations = lanes.newton_iterations = newton_iterations;
      lanes.rotation = FpPxpbdOptions::Rotation::kSvd;
      const Positions expected = sweptStep(problem, generic, 20).x;
      const SweptStep run = sweptStep(problem, lanes, 20);
      const FpPxpbdSolver* solver = run.solver.get();
      const Positions& x = run.x;
      const int served = solver->numLaneElements();
      const double difference = (x - expected).lpNorm<Eigen::Infinity>();
      std::printf("[ measured ] %s, %d Newton iteration(s): %d of %d elements on the lanes, 20 sweeps: largest "
                  "displacement %.3e m, lanes - generic %.3e m\n",
                  name, newton_iterations, served, solver->numElements(),
                  largestDisplacement(problem, expected), difference);
      EXPECT_GT(served, solver->numElements() / 2);
      EXPECT_LT(served, solver->numElements());  // the clamped ones stay generic
      EXPECT_GT(largestDisplacement(problem, expected), 1e-3);
      EXPECT_LT(difference, 1e-12);
      EXPECT_EQ(solver->rotationFallbacks(), 0);  // the SVD is the definition here, not a fallback
    }
}

// The warm rotation is another iterate, not another method: the converged step (the backward
// Euler solution, unique here) is the same.
TEST(FpPxpbdLanes, WarmRotationsConvergeToTheGenericSolvesStep) {
  const std::pair<const char*, Problem> problems[] = {{"corotated bar", laneBar(MaterialModel::kFixedCorotated, 1.0 / 30.0)},
                                                      {"mixed bars", mixedBars(0.01)}};
  for (const auto& [name, problem] : problems) {
    FpPxpbdOptions generic, warm;
    generic.p1_lanes = false;
    const Positions expected = sweptStep(problem, generic, 300).x;
    const SweptStep run = sweptStep(problem, warm, 300);
    const FpPxpbdSolver* solver = run.solver.get();
    const Positions& x = run.x;
    const Positions early_generic = sweptStep(problem, generic, 5).x;
    const Positions early_warm = sweptStep(problem, warm, 5).x;
    const double difference = (x - expected).lpNorm<Eigen::Infinity>();
    const double early = (early_warm - early_generic).lpNorm<Eigen::Infinity>();
    std::printf("[ measured ] %s: after 5 sweeps warm - generic %.3e m (different iterates), after 300 %.3e m; "
                "largest displacement %.3e m; %lld fallbacks\n",
                name, early, difference, largestDisplacement(problem, expected),
                solver->rotationFallbacks());
    EXPECT_GT(early, 1e3 * difference);  // they are different iterates...
    EXPECT_LT(difference, 1e-10);        // ...of one fixed point
  }
}

}  // namespace
}  // namespace pbdlab
