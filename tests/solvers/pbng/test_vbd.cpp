// VBD (solvers/pbng/vbd_solver.hpp): a node's update against its definition (the restricted
// Newton step with the projected exact node block, damping included), the adaptive initial
// guess, convergence to the Newton solution (quasistatic and backward Euler), the coloring and
// the options.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <cstdio>

#include "core/materials/tangent_projection.hpp"
#include "core/support/input_error.hpp"
#include "core/support/json_reader.hpp"
#include "core/topology/coloring.hpp"
#include "meshes/box_mesh.hpp"
#include "reference/newton.hpp"
#include "solvers/pbng/family.hpp"
#include "solvers/pbng/vbd_solver.hpp"
#include "tests/support/clamped_block.hpp"
#include "tests/support/step_run.hpp"
#include "tests/support/twisted_block.hpp"

namespace pbdlab {
namespace {

Problem vbdFallingBar(MaterialModel model) {
  BoxMeshRecipe box;
  box.size = Vec3(2.0, 0.5, 0.5);
  box.cells = {8, 2, 2};
  return test::clampedBlock(makeBoxMesh(box), model, Integrator::kBackwardEuler, 0.01, 4, "falling bar");
}

// The expected VBD step of node i from independent pieces: the yardstick's gradient row and
// each stencil's full exact Hessian (stencilTerms, not the per-node kernel), its node block
// projected per stencil (projected_terms) or once summed (projected_sum), damping k_d, inertia.
Vec3 expectedVbdStep(const StepObjective& objective, const Positions& x, int node, PbngOptions::NodeBlock kind,
                     double damping, int& indefinite) {
  const Problem& problem = objective.problem();
  VecX g;
  objective.gradient(x, g);
  Mat3 H = Mat3::Zero();
  for (const auto& term : objective.terms())
    for (int s = 0; s < term->numStencils(); ++s) {
      const int* nodes = term->stencilNodes(s);
      for (int a = 0; a < term->nodesPerStencil(); ++a) {
        if (nodes[a] != node) continue;
        Eigen::MatrixXd stencil;
        term->stencilTerms(s, x, objective.timeNext(), nullptr, nullptr, &stencil, HessianKind::kTrue);
        const Mat3 block = stencil.block<3, 3>(3 * a, 3 * a);
        if (Eigen::LLT<Mat3>(block).info() != Eigen::Success) ++indefinite;
        H += kind == PbngOptions::NodeBlock::kProjectedTerms ? projectToPositiveSemidefinite(block) : block;
      }
    }
  if (kind == PbngOptions::NodeBlock::kProjectedSum) H = projectToPositiveSemidefinite(H);
  Vec3 gi = g.segment<3>(3 * node);
  Mat3 A = H;
  if (objective.isDynamic()) {
    const double dt = objective.dt();
    gi += dt * damping * H * (x.segment<3>(3 * node) - objective.previousPositions().segment<3>(3 * node));
    A = problem.nodeMasses()[node] * Mat3::Identity() + dt * dt * (1.0 + damping / dt) * H;
  }
  return -A.llt().solve(gi);
}

// Every node but the one nearest the cube's centre prescribed (moved by the twist), one sweep.
// St. Venant-Kirchhoff: the model whose node blocks turn indefinite under compression.
void expectOneFreeNodeIsTheProjectedNewtonStep(Integrator integrator, PbngOptions::NodeBlock kind, double damping) {
  int free_node = -1;
  const Problem one = test::oneFreeNodeBlock(test::twistedBlock(MaterialModel::kStVenantKirchhoff, 120.0), integrator, free_node);

  State start = initialState(one);
  if (integrator == Integrator::kBackwardEuler) start.v.setConstant(0.3);
  // The free node pushed through its neighbours (cells are 0.25 wide): St. Venant-Kirchhoff's
  // compressed and inverted elements have indefinite exact node blocks (10 of the node's here;
  // Neo-Hookean's stayed definite), so the projection matters.
  start.x.segment<3>(3 * free_node) += Vec3(0.2, 0.15, 0.0);
  const StepObjective objective(one, start.x, start.v, 0);
  PbngOptions options = vbdDefaultOptions();
  options.node_block = kind;
  options.damping = damping;
  VbdSolver vbd(options);
  vbd.setup(one);
  Positions x0;
  vbd.beginStep(objective, x0);
  int indefinite = 0;
  const Vec3 expected = expectedVbdStep(objective, x0, free_node, kind, damping, indefinite);
  ASSERT_GT(expected.norm(), 1e-6);
  const test::StepRun run = test::runStep(vbd, one, start, test::iterationBudget(1));
  const Vec3 moved = run.x.segment<3>(3 * free_node) - x0.segment<3>(3 * free_node);
  std::printf("[ measured ] %s, %s, damping %g: %d indefinite element blocks of the node, |dx| = %.4e, "
              "|dx - expected| / |expected| = %.3e\n",
              integratorName(integrator).c_str(),
              kind == PbngOptions::NodeBlock::kProjectedTerms ? "projected_terms" : "projected_sum", damping,
              indefinite, expected.norm(), (moved - expected).norm() / expected.norm());
  EXPECT_LT((moved - expected).norm(), 1e-10 * expected.norm());
  EXPECT_GT(indefinite, 0);
}

TEST(VbdNodeStep, OneFreeNodeIsTheProjectedNewtonStepQuasistatic) {
  expectOneFreeNodeIsTheProjectedNewtonStep(Integrator::kQuasistatic, PbngOptions::NodeBlock::kProjectedTerms, 0.0);
  expectOneFreeNodeIsTheProjectedNewtonStep(Integrator::kQuasistatic, PbngOptions::NodeBlock::kProjectedSum, 0.0);
}

TEST(VbdNodeStep, OneFreeNodeIsTheProjectedNewtonStepBackwardEulerWithDamping) {
  expectOneFreeNodeIsTheProjectedNewtonStep(Integrator::kBackwardEuler, PbngOptions::NodeBlock::kProjectedTerms, 0.0);
  expectOneFreeNodeIsTheProjectedNewtonStep(Integrator::kBackwardEuler, PbngOptions::NodeBlock::kProjectedTerms, 0.05);
}

// VBD's adaptive initialization: x^n + dt v^n + dt^2 a~, a~ along the gravity, clamped to
// [0, |g|]; the gravity itself at the first step.
TEST(VbdInitialGuess, AdaptiveTakesTheLastAccelerationAlongTheGravity) {
  const Problem problem = vbdFallingBar(MaterialModel::kFixedCorotated);
  VbdSolver vbd;
  vbd.setup(problem);
  const double dt = problem.stepDt();
  const Vec3 g = problem.gravity;
  State state = initialState(problem);
  Positions x;
  const StepObjective first(problem, state.x, state.v, 0);
  vbd.beginStep(first, x);
  for (int i = 0; i < problem.numNodes(); ++i) {
    if (problem.isFixedDof(3 * i)) continue;
    EXPECT_LT((x.segment<3>(3 * i) - (first.inertialTarget().segment<3>(3 * i) + dt * dt * g)).norm(), 1e-15);
  }
  // The next step: node velocities grew by half the gravity's, and one node's by twice (clamped),
  // one's decreased (clamped at 0), and a sideways change (projected away).
  VecX v = state.v;
  for (int i = 0; i < problem.numNodes(); ++i) v.segment<3>(3 * i) += 0.5 * dt * g;
  const int fast = problem.numNodes() - 1, slow = problem.numNodes() - 2, sideways = problem.numNodes() - 3;
  v.segment<3>(3 * fast) = state.v.segment<3>(3 * fast) + 2.0 * dt * g;
  v.segment<3>(3 * slow) = state.v.segment<3>(3 * slow) - dt * g;
  v.segment<3>(3 * sideways) = state.v.segment<3>(3 * sideways) + Vec3(3.0, 0.0, 0.0);
  const StepObjective second(problem, state.x, v, 1);
  vbd.beginStep(second, x);
  auto expectAdded = [&](int i, double fraction) {
    EXPECT_LT((x.segment<3>(3 * i) - (second.inertialTarget().segment<3>(3 * i) + fraction * dt * dt * g)).norm(),
              1e-15)
        << "node " << i;
  };
  expectAdded(0 + problem.numNodes() / 2, 0.5);
  expectAdded(fast, 1.0);
  expectAdded(slow, 0.0);
  expectAdded(sideways, 0.0);
}

// Many sweeps land on Newton's solution (VBD is a block coordinate descent of the same
// incremental potential).
TEST(Vbd, ConvergesToNewtonOnTheFallingBarAndTheTwistedBlock) {
  const std::pair<const char*, Problem> problems[] = {
      {"falling bar, Neo-Hookean, backward Euler", vbdFallingBar(MaterialModel::kNeoHookean)},
      {"twisted block 60 degrees, fixed corotated, quasistatic", test::twistedBlock(MaterialModel::kFixedCorotated, 60.0)}};
  for (const auto& [name, problem] : problems) {
    const State start = initialState(problem);
    NewtonSolver newton;
    newton.setup(problem);
    Budget tight;
    tight.max_iterations = 50;
    tight.target_relative_residual = 1e-12;
    const test::StepRun reference = test::runStep(newton, problem, start, tight);
    VbdSolver vbd;
    vbd.setup(problem);
    Budget budget;
    budget.max_iterations = 3000;
    budget.target_relative_residual = 1e-9;
    const test::StepRun run = test::runStep(vbd, problem, start, budget);
    const double displacement = (reference.x - start.x).lpNorm<Eigen::Infinity>();
    const double distance = (run.x - reference.x).lpNorm<Eigen::Infinity>() / displacement;
    std::printf("[ measured ] %s: %d sweeps to relative residual %.2e (%s), distance to Newton / displacement %.2e\n",
                name, run.result.iterations, run.result.relative_residual, stopReasonName(run.result.reason).c_str(),
                distance);
    EXPECT_TRUE(run.result.reason == StopReason::kConverged || run.result.reason == StopReason::kRoundoff);
    EXPECT_LT(distance, 1e-6);
  }
}

TEST(Vbd, ColorsItsNodesValidlyAndReadsItsOptionsStrictly) {
  const Problem problem = test::twistedBlock(MaterialModel::kFixedCorotated, 60.0);
  VbdSolver vbd;
  vbd.setup(problem);
  EXPECT_TRUE(isValidNodeColoring(problem.numNodes(), vbd.stencilSets(), vbd.nodeColoring()));
  EXPECT_EQ(vbd.name(), "vbd");

  const JsonReader in("scene.json");
  const auto make = [&](const char* text) {
    return makePbngFamilySolver("vbd", nlohmann::json::parse(text), in, "/solver/options");
  };
  const auto solver = make(R"({"node_block": "projected_sum", "damping": 0.1, "chebyshev_rho": 0.9,
                               "initial_guess": "inertial"})");
  const auto& configured = dynamic_cast<const VbdSolver&>(*solver);
  EXPECT_EQ(configured.options().node_block, PbngOptions::NodeBlock::kProjectedSum);
  EXPECT_EQ(configured.options().damping, 0.1);
  EXPECT_EQ(configured.options().chebyshev_rho, 0.9);
  EXPECT_EQ(configured.options().chebyshev_gamma, 1.0);
  EXPECT_EQ(configured.options().initial_guess, PbngOptions::InitialGuess::kInertial);
  const auto defaults = make("{}");
  EXPECT_EQ(dynamic_cast<const VbdSolver&>(*defaults).options().node_block, PbngOptions::NodeBlock::kProjectedTerms);
  EXPECT_EQ(dynamic_cast<const VbdSolver&>(*defaults).options().initial_guess, PbngOptions::InitialGuess::kAdaptive);
  EXPECT_THROW(make(R"({"node_block": "exact"})"), InputError);
  EXPECT_THROW(make(R"({"damping": -1})"), InputError);
  EXPECT_THROW(make(R"({"chebyshev_rho": 1})"), InputError);
  EXPECT_THROW(make(R"({"omega": 1.5})"), InputError);
  EXPECT_THROW(make(R"({"tangent_parameters": "model"})"), InputError);
}

}  // namespace
}  // namespace pbdlab
