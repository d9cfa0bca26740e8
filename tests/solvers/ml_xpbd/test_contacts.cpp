// Multi-layer XPBD's contacts with kinematic colliders (solvers/ml_xpbd/contacts.hpp, eq. 28):
// detection at the step's start, the elastic vertex's projection (eq. 5) reaching
// C + alpha~ lambda = 0, a box resting on the ground against Newton's penalty solution of the
// same step (compliance 1 / stiffness: the same energy), and a rigid layer held by its contacts.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/solver/solver.hpp"
#include "core/terms/collider_shapes.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "reference/newton.hpp"
#include "solvers/ml_xpbd/contacts.hpp"
#include "solvers/ml_xpbd/ml_xpbd_solver.hpp"
#include "tests/support/step_run.hpp"

namespace pbdlab {
namespace {

constexpr double kGroundStiffness = 1e4;  // the paper's contact compliance 1e-4

// A free plane-strain StVK block 1 x 0.5 m on the ground y = 0 (its lowest nodes on the
// surface), under gravity.
Problem blockOnGround(double lift = 0.0) {
  RectangleRecipe rectangle;
  rectangle.origin = Vec3(0.0, lift, 0.0);
  rectangle.size = {1.0, 0.5};
  rectangle.cells = {4, 2};
  Problem problem;
  problem.mesh = makeRectangleMesh(rectangle);
  problem.material.model = MaterialModel::kStVenantKirchhoff;
  problem.material.youngs_modulus = 1e4;
  problem.material.poisson_ratio = 0.3;
  problem.material.density = 10.0;
  problem.gravity = Vec3(0.0, -9.8, 0.0);
  problem.colliders.push_back({"ground", makePlaneCollider(Vec3::Zero(), Vec3::UnitY()), kGroundStiffness, 1e-9});
  problem.time = {Integrator::kBackwardEuler, 0.01, 1, 1};
  problem.finalize("block on ground");
  return problem;
}

Budget upTo(int iterations) {
  Budget budget;
  budget.max_iterations = iterations;
  budget.target_relative_residual = 0.0;
  return budget;
}

double lowestY(const Problem& problem, const Positions& x) {
  double lowest = 1e300;
  for (int i = 0; i < problem.numNodes(); ++i) lowest = std::min(lowest, x[3 * i + 1]);
  return lowest;
}

// A node inside at the step's start or at its prediction is in contact, with the ground's
// closest point and normal; one above both is not.
TEST(MlXpbdContacts, DetectionAtTheStepsStart) {
  const Problem problem = blockOnGround(0.001);
  Positions start = problem.mesh.restPositionsFlat();
  Positions predicted = start;
  for (int i = 0; i < problem.numNodes(); ++i) predicted[3 * i + 1] -= 0.002;  // the bottom row dips below
  const std::vector<ml_xpbd::VertexContact> contacts = ml_xpbd::detectContacts(problem, start, predicted, true);
  int bottom = 0;
  for (int i = 0; i < problem.numNodes(); ++i) bottom += start[3 * i + 1] < 0.01;
  ASSERT_EQ(static_cast<int>(contacts.size()), bottom);
  for (const ml_xpbd::VertexContact& contact : contacts) {
    EXPECT_LT(start[3 * contact.node + 1], 0.01);
    EXPECT_EQ(contact.normal, Vec3::UnitY());
    EXPECT_NEAR(contact.point.y(), 0.0, 1e-15);
    EXPECT_NEAR(contact.point.x(), predicted[3 * contact.node], 1e-15);
    EXPECT_EQ(contact.compliance, 1.0 / kGroundStiffness);
    EXPECT_EQ(contact.lambda, 0.0);
  }
}

// Repeated projections of one vertex converge to C + alpha~ lambda = 0 with lambda >= 0, and
// give the force back when the vertex has left the surface.
TEST(MlXpbdContacts, VertexProjectionReachesItsSoftConstraint) {
  Positions x = Positions::Zero(3);
  x[1] = -0.05;
  ml_xpbd::VertexContact contact;
  contact.compliance = 1e-4;
  const double inv_h2 = 1e4, inverse_mass = 0.5;
  for (int k = 0; k < 3; ++k) ml_xpbd::projectVertexContact(contact, inverse_mass, inv_h2, x);
  const double c = std::min(x[1], 0.0);
  EXPECT_NEAR(c + contact.compliance * inv_h2 * contact.lambda, 0.0, 1e-15);
  EXPECT_GT(contact.lambda, 0.0);
  EXPECT_LT(x[1], 0.0);  // soft: not all the way out
  // Lifted away: the force is given back (projected Gauss-Seidel), the vertex moving back by at
  // most w lambda, never below the surface.
  const double held = contact.lambda;
  x[1] = 0.3;
  for (int k = 0; k < 60; ++k) ml_xpbd::projectVertexContact(contact, inverse_mass, inv_h2, x);
  EXPECT_LT(contact.lambda, 1e-12 * held);
  EXPECT_GE(contact.lambda, 0.0);
  EXPECT_NEAR(x[1], 0.3 - inverse_mass * (held - contact.lambda), 1e-12);
  EXPECT_GT(x[1], 0.0);
}

// The block resting on the ground, one step: ml_xpbd ([0], 300 sweeps) against Newton on the
// same energy (the collider's penalty k/2 min(0, phi)^2 and its 1/(2 alpha) C^2 are one
// function). Without the contacts the block falls through.
TEST(MlXpbdContacts, ABlockRestsOnTheGroundAsNewtonSays) {
  const Problem problem = blockOnGround();
  State state = initialState(problem);
  NewtonSolver newton;
  newton.setup(problem);
  MlXpbdSolver ml;
  ml.setup(problem);
  for (int step = 0; step < 3; ++step) {
    Budget tight = upTo(50);
    tight.target_relative_residual = 1e-12;
    const test::StepRun reference = test::runStep(newton, problem, state, tight);
    const test::StepRun run = test::runStep(ml, problem, state, upTo(300));
    const double moved = (reference.x - state.x).norm();
    const double distance = (run.x - reference.x).norm() / moved;
    std::printf("[ measured ] block on ground, step %d: |x - x_Newton| / |x_Newton - x^t| = %.3e, lowest y %.3e "
                "(Newton %.3e), relative true residual %.3e\n",
                step + 1, distance, lowestY(problem, run.x), lowestY(problem, reference.x), run.result.relative_residual);
    EXPECT_LT(distance, 1e-2);
    EXPECT_LT(std::abs(lowestY(problem, run.x) - lowestY(problem, reference.x)), 1e-2 * std::abs(lowestY(problem, reference.x)) + 1e-9);
    state.v = velocitiesAfterStep(StepObjective(problem, state.x, state.v, state.step), reference.x);
    state.x = reference.x;
    state.step += 1;
  }
}

// A fully rigid first layer on the ground: the body's contacts (its Jacobi pass) hold it up as
// the elastic vertices' do: after the rigid layer and after the step the lowest node is where
// plain XPBD's ends.
TEST(MlXpbdContacts, ARigidLayerIsHeldByItsContacts) {
  const Problem problem = blockOnGround();
  MlXpbdOptions options;
  options.layers = {100.0, 0.0};
  options.iterations_per_layer = {20, 280};
  MlXpbdSolver layered(options);
  layered.setup(problem);
  MlXpbdSolver plain;
  plain.setup(problem);
  const State start = initialState(problem);
  const test::StepRun rigid_only = test::runStep(layered, problem, start, upTo(20));
  const test::StepRun run = test::runStep(layered, problem, start, upTo(300));
  const test::StepRun reference = test::runStep(plain, problem, start, upTo(300));
  std::printf("[ measured ] block on ground, layers [100, 0] x [20, 280]: lowest y after the rigid layer %.3e, after "
              "the step %.3e; plain XPBD %.3e\n",
              lowestY(problem, rigid_only.x), lowestY(problem, run.x), lowestY(problem, reference.x));
  const double penetration = -lowestY(problem, reference.x);
  ASSERT_GT(penetration, 0.0);
  // The rigid layer alone already rests where plain XPBD does (measured: 6% of the penetration
  // apart); without its body contacts it falls by h^2 g (2.1 penetrations).
  EXPECT_LT(std::abs(lowestY(problem, rigid_only.x) - lowestY(problem, reference.x)), 0.25 * penetration);
  EXPECT_LT(std::abs(lowestY(problem, run.x) - lowestY(problem, reference.x)), 0.1 * penetration);
}

// Eq. 29 as intended: a block hitting the ground at 2 m/s leaves its contact nodes with
// -eps times their pre-solve normal velocity n.(v^t + h g); eps 0 stops them; at rest (|vn~| =
// h |g| <= 2 |g| h) nothing bounces; off, the velocity is the projection's.
TEST(MlXpbdContacts, RestitutionBouncesAtEpsTimesTheApproachSpeed) {
  Problem problem = blockOnGround(0.001);
  problem.initial_velocity = Vec3(0.0, -2.0, 0.0);
  problem.finalize("falling block");
  const State start = initialState(problem);
  const double approach = -2.0 - 0.01 * 9.8;  // n.(v^t + h g)
  for (double eps : {0.5, 0.0, -1.0}) {
    MlXpbdOptions options;
    options.restitution = eps;
    MlXpbdSolver ml(options);
    ml.setup(problem);
    State state = start;
    IterationLog log(ml.logColumns());
    advanceOneStep(ml, problem, state, upTo(100), log);
    int bottom = 0;
    double largest_gap = 0.0;
    for (int i = 0; i < problem.numNodes(); ++i) {
      if (start.x[3 * i + 1] > 0.01) continue;  // the bottom row
      ++bottom;
      largest_gap = std::max(largest_gap, std::abs(state.v[3 * i + 1] - (-eps * approach)));
    }
    std::printf("[ measured ] restitution %g: bottom row |v_y - (-eps vn~)| <= %.3e\n", eps, largest_gap);
    ASSERT_EQ(bottom, 5);
    if (eps >= 0.0)
      EXPECT_LT(largest_gap, 1e-12);
    else
      EXPECT_GT(largest_gap, 1e-3);  // off: the projection's velocity, not a set one
  }
  // A block at rest on the ground: below the threshold, no bounce.
  const Problem resting = blockOnGround();
  MlXpbdOptions bouncy;
  bouncy.restitution = 1.0;
  MlXpbdSolver ml(bouncy);
  ml.setup(resting);
  State state = initialState(resting);
  IterationLog log(ml.logColumns());
  advanceOneStep(ml, resting, state, upTo(100), log);
  for (int i = 0; i < resting.numNodes(); ++i) {
    if (state.x[3 * i + 1] < 0.01) {
      EXPECT_EQ(state.v[3 * i + 1], 0.0) << "node " << i;
    }
  }
  MlXpbdOptions too_bouncy;
  too_bouncy.restitution = 1.5;
  EXPECT_THROW(MlXpbdSolver{too_bouncy}, std::invalid_argument);
}

}  // namespace
}  // namespace pbdlab
