// Multi-layer XPBD's step, Algorithm 2 (solvers/ml_xpbd/layered_step.cpp): layers [0] is
// plain XPBD bit for bit; a rigid first layer moves a spinning free box rigidly; a multilayer
// cantilever against plain XPBD; Dirichlet elements never rigid; linear momentum of a free body.
// Numbers are printed as "[ measured ]" lines.
#include <gtest/gtest.h>

#include <cmath>

#include "core/solver/solver.hpp"
#include "core/solver/yardstick.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "solvers/ml_xpbd/ml_xpbd_solver.hpp"
#include "tests/support/clamped_block.hpp"
#include "tests/support/step_run.hpp"

namespace pbdlab {
namespace {

constexpr double kDt = 0.01;

Problem cantilever2d(std::array<int, 2> cells = {8, 2}) {
  RectangleRecipe rectangle;
  rectangle.size = {4.0, 1.0};
  rectangle.cells = cells;
  return test::clampedBlock(makeRectangleMesh(rectangle), MaterialModel::kStVenantKirchhoff,
                            Integrator::kBackwardEuler, kDt, 1, "plane-strain cantilever");
}

// The paper's cantilever (§4): StVK E 1e6, nu 0.37, rho 1, g -9.8, h 0.01, x-min clamped.
Problem stiffCantilever2d() {
  RectangleRecipe rectangle;
  rectangle.size = {4.0, 1.0};
  rectangle.cells = {16, 4};
  Problem problem;
  problem.mesh = makeRectangleMesh(rectangle);
  problem.material.model = MaterialModel::kStVenantKirchhoff;
  problem.material.youngs_modulus = 1e6;
  problem.material.poisson_ratio = 0.37;
  problem.material.density = 1.0;
  problem.gravity = Vec3(0.0, -9.8, 0.0);
  problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
  problem.time = {Integrator::kBackwardEuler, kDt, 1, 1};
  problem.finalize("stiff cantilever");
  return problem;
}

// A free StVK box (no gravity, no Dirichlet), spinning about y through its centre (Fig. 9a).
Problem spinningBox(Vec3 angular_velocity = Vec3(0.0, 2.0 * M_PI, 0.0), Vec3 velocity = Vec3::Zero(),
                    double youngs_modulus = 1e6) {
  BoxMeshRecipe box;
  box.origin = Vec3(-0.5, -0.5, -0.5);
  box.size = Vec3(1.0, 1.0, 1.0);
  box.cells = {3, 3, 3};
  Problem problem;
  problem.mesh = makeBoxMesh(box);
  problem.material.model = MaterialModel::kStVenantKirchhoff;
  problem.material.youngs_modulus = youngs_modulus;
  problem.material.poisson_ratio = 0.3;
  problem.material.density = 1000.0;
  problem.initial_angular_velocity = angular_velocity;
  problem.initial_velocity = velocity;
  problem.time = {Integrator::kBackwardEuler, kDt, 1, 1};
  problem.finalize("spinning box");
  return problem;
}

// Layers [0] is plain XPBD: x~, lambda = 0, sweeps, the same floating-point operations as the
// elastic-only solver before Algorithm 2 was built. Compared step for step, bit for bit.
TEST(MlXpbdLayeredStep, OneElasticLayerIsPlainXpbdBitForBit) {
  const Problem problems[] = {cantilever2d(), spinningBox()};
  for (int which = 0; which < 2; ++which) {
    const Problem& problem = problems[which];
    MlXpbdSolver ml;
    ml.setup(problem);
    MlXpbdSolver plain;
    plain.setup(problem);
    State state = initialState(problem);
    State reference = state;
    for (int step = 0; step < 4; ++step) {
      IterationLog log(ml.logColumns());
      advanceOneStep(ml, problem, state, test::iterationBudget(12), log);
      // The plain sweep loop.
      const StepObjective objective(problem, reference.x, reference.v, reference.step);
      const double h = objective.dt();
      Positions x = objective.inertialTarget();
      for (int dof : problem.freeDofs())
        x[dof] += h * h * objective.externalForce()[dof] / problem.dofMasses()[dof];
      objective.applyBoundary(x);
      plain.resetMultipliers();
      for (int k = 0; k < 12; ++k) plain.sweep(x, 1.0 / (h * h));
      reference.v = velocitiesAfterStep(objective, x);
      reference.x = x;
      reference.step += 1;
      ASSERT_EQ((state.x - reference.x).lpNorm<Eigen::Infinity>(), 0.0) << "problem " << which << " step " << step;
      ASSERT_EQ((state.v - reference.v).lpNorm<Eigen::Infinity>(), 0.0) << "problem " << which << " step " << step;
    }
  }
}

double largestDistanceChange(const Problem& problem, const Positions& a, const Positions& b) {
  double largest = 0.0;
  for (int i = 0; i < problem.numNodes(); ++i)
    for (int j = i + 1; j < problem.numNodes(); ++j) {
      const double before = (a.segment<3>(3 * i) - a.segment<3>(3 * j)).norm();
      const double after = (b.segment<3>(3 * i) - b.segment<3>(3 * j)).norm();
      largest = std::max(largest, std::abs(after - before));
    }
  return largest;
}

// A free spinning box, layers [100, 0]: the first layer is one rigid body, stepped by its
// angular velocity; after it every distance is kept (a rigid motion of x^t) and, x^t being the
// rest shape, the secondary residual is 0 (Fig. 9a). The true residual is not: a rigid rotation
// is not the backward-Euler step (the step stretches the box centripetally).
TEST(MlXpbdLayeredStep, ARigidFirstLayerRotatesASpinningBoxRigidly) {
  const Problem problem = spinningBox();
  MlXpbdOptions options;
  options.layers = {100.0, 0.0};
  options.iterations_per_layer = {1, 10};
  options.keep_layer_end_positions = true;
  MlXpbdSolver ml(options);
  ml.setup(problem);
  const State start = initialState(problem);
  const test::StepRun run = test::runStep(ml, problem, start, test::iterationBudget(100));
  ASSERT_EQ(ml.layerEndPositions().size(), 2u);
  const auto& rows = run.log.rows();
  ASSERT_EQ(rows.size(), 12u);
  const double distance_change = largestDistanceChange(problem, start.x, ml.layerEndPositions()[0]);
  const double moved = (ml.layerEndPositions()[0] - start.x).lpNorm<Eigen::Infinity>();
  const double secondary = run.log.value(rows[1], "secondary_residual");
  const double secondary_reference = run.log.value(rows[2], "secondary_residual");
  std::printf("[ measured ] spinning box, layers [100, 0] x [1, 10]: after the rigid layer max |d_ij change| = %.3e "
              "(largest move %.3e), secondary residual %.3e, relative true residual %.3e; after the first elastic "
              "iteration secondary %.3e, true %.3e; after the step true %.3e\n",
              distance_change, moved, secondary, rows[1].relative_residual, secondary_reference,
              rows[2].relative_residual, run.result.relative_residual);
  EXPECT_EQ(run.log.value(rows[1], "layer"), 1.0);
  EXPECT_EQ(run.log.value(rows[1], "rigid_bodies"), 1.0);
  EXPECT_EQ(run.log.value(rows[2], "layer"), 2.0);
  EXPECT_EQ(run.log.value(rows[2], "rigid_bodies"), 0.0);
  EXPECT_GT(moved, 1e-3);                    // it did turn: 2 pi rad/s for 0.01 s
  EXPECT_LT(distance_change, 1e-12);         // rigid to round-off
  EXPECT_LT(secondary, 1e-12);               // strains of the rest shape
  EXPECT_GT(rows[1].relative_residual, 1e-6);  // not the backward-Euler step
}

// The paper's cantilever: layers [60, 40, 20, 0] x [3, 3, 4, 10] against plain XPBD with the
// same 20 iterations, several steps from rest (replayed: both from the same state each step).
TEST(MlXpbdLayeredStep, MultilayerCantileverAgainstPlainXpbd) {
  const Problem problem = stiffCantilever2d();
  MlXpbdOptions layered_options;
  layered_options.layers = {60.0, 40.0, 20.0, 0.0};
  layered_options.iterations_per_layer = {3, 3, 4, 10};
  MlXpbdSolver layered(layered_options);
  layered.setup(problem);
  MlXpbdOptions plain_options;
  plain_options.iterations_per_layer = {20};
  MlXpbdSolver plain(plain_options);
  plain.setup(problem);
  State state = initialState(problem);
  for (int step = 0; step < 6; ++step) {
    const test::StepRun ml_run = test::runStep(layered, problem, state, test::iterationBudget(1000));
    const test::StepRun xpbd_run = test::runStep(plain, problem, state, test::iterationBudget(1000));
    EXPECT_EQ(ml_run.result.iterations, 20);
    EXPECT_EQ(xpbd_run.result.iterations, 20);
    const auto& rows = ml_run.log.rows();
    std::printf("[ measured ] stiff cantilever step %d: relative true residual after 20 iterations: multilayer "
                "%.3e (bodies in layers 1-3: %g %g %g), plain XPBD %.3e\n",
                step + 1, ml_run.result.relative_residual, ml_run.log.value(rows[1], "rigid_bodies"),
                ml_run.log.value(rows[4], "rigid_bodies"), ml_run.log.value(rows[7], "rigid_bodies"),
                xpbd_run.result.relative_residual);
    ASSERT_TRUE(std::isfinite(ml_run.result.relative_residual));
    ASSERT_TRUE(std::isfinite(xpbd_run.result.relative_residual));
    EXPECT_TRUE(ml_run.x.allFinite());
    EXPECT_LT(ml_run.result.relative_residual, 10.0 * xpbd_run.result.relative_residual);
    // Advance with plain XPBD's result so that both start each step from the same state.
    const StepObjective objective(problem, state.x, state.v, state.step);
    state.v = velocitiesAfterStep(objective, xpbd_run.x);
    state.x = xpbd_run.x;
    state.step += 1;
  }
}

// Elements touching a Dirichlet node are never rigid: with layers [100, 0] the clamped
// cantilever's x-min column stays elastic in the rigid layer, and the prescribed DOFs keep
// their values.
TEST(MlXpbdLayeredStep, DirichletElementsAreNeverRigid) {
  const Problem problem = cantilever2d();
  MlXpbdOptions options;
  options.layers = {100.0, 0.0};
  options.iterations_per_layer = {2, 3};
  MlXpbdSolver ml(options);
  ml.setup(problem);
  const State start = initialState(problem);
  const test::StepRun run = test::runStep(ml, problem, start, test::iterationBudget(100));
  for (int dof : problem.fixedDofs()) EXPECT_EQ(run.x[dof], start.x[dof]) << "prescribed DOF " << dof;
  std::vector<char> clamped(problem.numNodes(), 0);
  for (int dof : problem.fixedDofs())
    if (dof % 3 < 2) clamped[dof / 3] = 1;
  const ml_xpbd::LayerHierarchy hierarchy = ml_xpbd::buildLayerHierarchy(
      problem.mesh.elements, problem.numNodes(), ml_xpbd::orderByStrainRate(std::vector<double>(
                                                     problem.mesh.elements.rows(), 0.0)),
      {100.0, 0.0}, ml_xpbd::elementsTouchingNodes(problem.mesh.elements, problem.numNodes(), [&] {
        std::vector<int> nodes;
        for (int n = 0; n < problem.numNodes(); ++n)
          if (clamped[n]) nodes.push_back(n);
        return nodes;
      }()));
  int touching = 0;
  for (int e = 0; e < problem.mesh.elements.rows(); ++e) {
    bool touches = false;
    for (int a = 0; a < problem.mesh.elements.cols(); ++a) touches |= clamped[problem.mesh.elements(e, a)] != 0;
    if (!touches) continue;
    ++touching;
    EXPECT_EQ(hierarchy.layers[0].element_body[e], -1) << "element " << e;
  }
  EXPECT_GT(touching, 0);
  EXPECT_GT(hierarchy.layers[0].rigid_elements, 0);
  EXPECT_EQ(run.log.value(run.log.rows()[1], "rigid_bodies"), 1.0);
  EXPECT_TRUE(run.x.allFinite());
}

// Every vertex's inertial displacement is applied once: rigidly in the first layer, the rest at
// its release (eq. 27 then Alg. 2 line 7). A free box spinning about y and translating, so soft
// (E 1e-6) that the elastic sweep barely moves it, layers [100, 0] x [1, 1]: each vertex ends
// at x^t + h R_step v_i, R_step = exp(h [w]x) (the residual velocities are rotated, eq. 27).
TEST(MlXpbdLayeredStep, EveryVertexTakesItsInertialDisplacementOnce) {
  const Vec3 spin(0.0, 2.0 * M_PI, 0.0);
  const Problem problem = spinningBox(spin, Vec3(0.2, -0.1, 0.4), 1e-6);
  MlXpbdOptions options;
  options.layers = {100.0, 0.0};
  options.iterations_per_layer = {1, 1};
  MlXpbdSolver ml(options);
  ml.setup(problem);
  const State start = initialState(problem);
  const test::StepRun run = test::runStep(ml, problem, start, test::iterationBudget(100));
  const Mat3 step_rotation = ml_xpbd::rotationFromVector(kDt * spin);
  double worst = 0.0, displacement = 0.0;
  for (int n = 0; n < problem.numNodes(); ++n) {
    const Vec3 expected = start.x.segment<3>(3 * n) + kDt * step_rotation * start.v.segment<3>(3 * n);
    worst = std::max(worst, (run.x.segment<3>(3 * n) - expected).norm());
    displacement = std::max(displacement, kDt * start.v.segment<3>(3 * n).norm());
  }
  std::printf("[ measured ] soft free box [100, 0] x [1, 1]: max |x - (x^t + h R_step v)| = %.3e (largest h |v| %.3e)\n",
              worst, displacement);
  EXPECT_LT(worst, 1e-9 * displacement);
}

// §3.6's layer stop ends a rigid layer once the secondary residual stalls (never the last).
TEST(MlXpbdLayeredStep, TheLayerStopEndsARigidLayerEarly) {
  const Problem problem = cantilever2d({16, 4});
  auto layerRows = [&](bool layer_stop, int& total) {
    MlXpbdOptions options;
    options.layers = {50.0, 0.0};
    options.iterations_per_layer = {200, 5};
    options.layer_stop = layer_stop;
    MlXpbdSolver ml(options);
    ml.setup(problem);
    const test::StepRun run = test::runStep(ml, problem, initialState(problem), test::iterationBudget(1000));
    int first_layer = 0;
    for (size_t r = 1; r < run.log.rows().size(); ++r) first_layer += run.log.value(run.log.rows()[r], "layer") == 1.0;
    total = run.result.iterations;
    return first_layer;
  };
  int total_without = 0, total_with = 0;
  const int without = layerRows(false, total_without);
  const int with = layerRows(true, total_with);
  std::printf("[ measured ] cantilever 16x4, layers [50, 0] x [200, 5]: layer 1 ran %d iterations without the layer "
              "stop, %d with it\n", without, with);
  EXPECT_EQ(without, 200);
  EXPECT_LT(with, 200);
  EXPECT_EQ(total_with, with + 5);  // the last layer runs its full count
}

// Every ordering and both mass splittings run a few steps of the cantilever, finite, with
// rigid bodies in the first layer; a random order repeats with its seed.
TEST(MlXpbdLayeredStep, EveryOrderingRuns) {
  const Problem problem = cantilever2d({16, 4});
  auto run = [&](MlXpbdOrdering ordering, ml_xpbd::MassSplitting splitting, std::uint32_t seed) {
    MlXpbdOptions options;
    options.layers = {50.0, 25.0, 0.0};
    options.iterations_per_layer = {3, 3, 6};
    options.ordering = ordering;
    options.mass_splitting = splitting;
    options.seed = seed;
    MlXpbdSolver ml(options);
    ml.setup(problem);
    State state = initialState(problem);
    double bodies = 0.0;
    for (int step = 0; step < 3; ++step) {
      IterationLog log(ml.logColumns());
      advanceOneStep(ml, problem, state, test::iterationBudget(100), log);
      bodies += log.value(log.rows()[1], "rigid_bodies");
    }
    EXPECT_TRUE(state.x.allFinite());
    EXPECT_GT(bodies, 0.0);
    return state.x;
  };
  for (MlXpbdOrdering ordering : {MlXpbdOrdering::kStrainRate, MlXpbdOrdering::kRandom,
                                  MlXpbdOrdering::kVerticalStripes, MlXpbdOrdering::kHorizontalStripes,
                                  MlXpbdOrdering::kStretch})
    for (ml_xpbd::MassSplitting splitting : {ml_xpbd::MassSplitting::kTonge, ml_xpbd::MassSplitting::kPaper})
      run(ordering, splitting, 3);
  const Positions a = run(MlXpbdOrdering::kRandom, ml_xpbd::MassSplitting::kTonge, 11);
  const Positions b = run(MlXpbdOrdering::kRandom, ml_xpbd::MassSplitting::kTonge, 11);
  const Positions c = run(MlXpbdOrdering::kRandom, ml_xpbd::MassSplitting::kTonge, 12);
  EXPECT_EQ((a - b).lpNorm<Eigen::Infinity>(), 0.0);
  EXPECT_GT((a - c).lpNorm<Eigen::Infinity>(), 0.0);
}

// Linear momentum after `steps` steps of a free box with layers [100, 0] x [1, 1], relative to
// the start's: the largest change of sum m xdot, and the largest change of |sum m xdot|.
struct MomentumChange {
  double vector = 0.0, magnitude = 0.0;
};
MomentumChange momentumChange(Vec3 angular_velocity, Vec3 velocity, int steps) {
  const Problem problem = spinningBox(angular_velocity, velocity);
  MlXpbdOptions options;
  options.layers = {100.0, 0.0};
  options.iterations_per_layer = {1, 1};
  MlXpbdSolver ml(options);
  ml.setup(problem);
  State state = initialState(problem);
  auto momentumOf = [&](const VecX& v) {
    Vec3 p = Vec3::Zero();
    for (int n = 0; n < problem.numNodes(); ++n) p += problem.nodeMasses()[n] * v.segment<3>(3 * n);
    return p;
  };
  const Vec3 start = momentumOf(state.v);
  const double scale = problem.nodeMasses().sum() * (velocity.norm() + angular_velocity.norm());
  MomentumChange change;
  for (int step = 0; step < steps; ++step) {
    IterationLog log(ml.logColumns());
    advanceOneStep(ml, problem, state, test::iterationBudget(100), log);
    const Vec3 p = momentumOf(state.v);
    change.vector = std::max(change.vector, (p - start).norm() / scale);
    change.magnitude = std::max(change.magnitude, std::abs(p.norm() - start.norm()) / scale);
  }
  return change;
}

// A free body, layers [100, 0] x [1, 1] (g = 0): the rigid step, the release of the residual
// velocities and one elastic sweep keep sum m (x^{t+1} - x^t) / h = sum m xdot^t, for a
// translating body and for one spinning about its centre. Translating AND spinning, eq. 27 as
// printed rotates the whole residual velocity, the centre's part included: each vertex ends
// displaced by h R_step v_i (rigid part + release), so the momentum turns with the body
// (|P| is kept, its direction is not). Measured and printed, not gated.
TEST(MlXpbdLayeredStep, AFreeBodyKeepsItsLinearMomentum) {
  const MomentumChange translating = momentumChange(Vec3::Zero(), Vec3(0.2, -0.1, 0.4), 3);
  const MomentumChange spinning = momentumChange(Vec3(0.3, 2.0 * M_PI, -0.5), Vec3::Zero(), 3);
  const MomentumChange both = momentumChange(Vec3(0.3, 2.0 * M_PI, -0.5), Vec3(0.2, -0.1, 0.4), 3);
  std::printf("[ measured ] free box [100, 0] x [1, 1], 3 steps, |P - P0| / (M (|v| + |w|)): translating %.3e, "
              "spinning about its centre %.3e, translating and spinning %.3e (| |P| - |P0| | %.3e)\n",
              translating.vector, spinning.vector, both.vector, both.magnitude);
  EXPECT_LT(translating.vector, 1e-13);
  EXPECT_LT(spinning.vector, 1e-13);
  EXPECT_LT(both.magnitude, 1e-13);
}

}  // namespace
}  // namespace pbdlab
