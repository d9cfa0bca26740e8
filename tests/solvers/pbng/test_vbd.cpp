// VBD (solvers/pbng/vbd_solver.hpp): a node's update against its definition (the restricted
// Newton step with the projected exact node block, damping included), the adaptive initial
// guess, convergence to the Newton solution (quasistatic and backward Euler), the coloring and
// the options; the exact node block in closed form on the P1 lane kernel (p1_visit.hpp) against
// addNodeBlock's (every node, the kink's neighbourhood, warm rotations, whole sweeps) and against
// finite differences.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/materials/polar_svd.hpp"
#include "core/materials/tangent_projection.hpp"
#include "core/support/input_error.hpp"
#include "core/support/json_reader.hpp"
#include "core/topology/coloring.hpp"
#include "meshes/box_mesh.hpp"
#include "reference/newton.hpp"
#include "solvers/pbng/family.hpp"
#include "solvers/pbng/vbd_solver.hpp"
#include "tests/support/clamped_block.hpp"
#include "tests/support/finite_difference.hpp"
#include "tests/support/mixed_bars.hpp"
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
  // The lanes' switches, shared with PBNG.
  const auto generic = make(R"({"p1_lanes": false, "rotation": "svd"})");
  EXPECT_FALSE(dynamic_cast<const VbdSolver&>(*generic).options().p1_lanes);
  EXPECT_EQ(dynamic_cast<const VbdSolver&>(*generic).options().rotation, PbngOptions::Rotation::kSvd);
  EXPECT_TRUE(dynamic_cast<const VbdSolver&>(*defaults).options().p1_lanes);
  EXPECT_THROW(make(R"({"p1_lanes": 1})"), InputError);
}

// --- VBD's exact node block on the P1 lane kernel (solvers/pbng/p1_visit.hpp) -----------------
// H_i / V = a |g|^2 I + (2 a0 snh / (Ic + 1)^2) f f^T + bJ k k^T + c (|g|^2 I + R [g]x K^-1 [g]x R^T)
// against addNodeBlock with the exact tangent (PbngOptions::p1_lanes false).

// The set where the corotated node block does not exist: sigma_2 + sigma_3 = 0 for the
// rotation-variant singular values (polar_svd.hpp), where K = tr(S) I - S is singular and dR/dF
// unbounded. F's distance to it: sigma_2 + sigma_3 (>= 0).
double distanceToCorotatedKink(const Mat3& F) {
  const Vec3 sigma = rotationVariantSingularValues(F);
  return sigma[1] + sigma[2];
}

struct ElementShapes {
  int elements = 0;
  int inverted = 0;     // det F < 0
  int flat = 0;         // |det F| < 0.1
  double kink = 1e300;  // the smallest distanceToCorotatedKink
};

ElementShapes elementShapes(const Problem& problem, const Positions& x) {
  ElementShapes shapes;
  for (const auto& elastic : problem.elasticTerms())
    for (int e = 0; e < elastic->numElements(); ++e) {
      const Mat3 F = elastic->deformationGradient(e, 0, x);
      ++shapes.elements;
      shapes.inverted += F.determinant() < 0.0;
      shapes.flat += std::abs(F.determinant()) < 0.1;
      shapes.kink = std::min(shapes.kink, distanceToCorotatedKink(F));
    }
  return shapes;
}

// Two bars side by side (tests/support/mixed_bars.hpp), fixed corotated and stable
// Neo-Hookean: one elastic term of two materials, the lanes' mixed form (a, c and snh per lane).
Problem mixedPair(Integrator integrator) {
  return test::mixedBars(MaterialModel::kStableNeoHookean, integrator, 0.01);
}

// The scrambled states' problems of the lane tests: the twisted block of each closed-form model
// and the mixed pair.
std::vector<std::pair<const char*, Problem>> laneTestProblems() {
  std::vector<std::pair<const char*, Problem>> problems;
  problems.emplace_back("twisted block, fixed corotated", test::twistedBlock(MaterialModel::kFixedCorotated, 60.0));
  problems.emplace_back("twisted block, Neo-Hookean", test::twistedBlock(MaterialModel::kNeoHookean, 60.0));
  problems.emplace_back("twisted block, stable Neo-Hookean", test::twistedBlock(MaterialModel::kStableNeoHookean, 60.0));
  problems.emplace_back("mixed pair (corotated | stable Neo-Hookean)", mixedPair(Integrator::kQuasistatic));
  return problems;
}

// A step's start (the twisted block: x-max turned by 60 degrees and pulled, the rest at rest)
// with every free DOF moved by up to `amplitude` (seeded): inverted and nearly flat elements.
Positions scrambled(const Problem& problem, const Positions& x0, double amplitude, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-amplitude, amplitude);
  Positions x = x0;
  for (int k = 0; k < x.size(); ++k)
    if (!problem.isFixedDof(k)) x[k] += u(rng);
  return x;
}

// How many element node blocks (addNodeBlock, exact tangent) are not positive definite at x.
int indefiniteElementBlocks(const Problem& problem, const Positions& x) {
  int indefinite = 0;
  for (const auto& elastic : problem.elasticTerms())
    for (int e = 0; e < elastic->numElements(); ++e)
      for (int a = 0; a < 4; ++a) {
        Vec3 g = Vec3::Zero();
        Mat3 H = Mat3::Zero();
        elastic->addNodeBlock(e, a, x, 0.0, HessianKind::kTrue, g, H);
        indefinite += Eigen::LLT<Mat3>(H).info() != Eigen::Success;
      }
  return indefinite;
}

struct NodeSystemDifference {
  double gradient = 0.0;  // max over nodes of |g_lanes - g| / max(|g|, 1e-6 max_nodes |g|)
  double block = 0.0;     // max over nodes of |A_lanes - A|_F / |A|_F
  int nodes = 0;
};

// Every node's gradient row and block at x from the lanes and from addNodeBlock (both solvers
// after beginStep; nodeSystem takes the SVD's rotations).
NodeSystemDifference nodeSystemDifference(const PbngSolver& lanes, const PbngSolver& generic, const Positions& x) {
  const int n = static_cast<int>(x.size() / 3);
  std::vector<Vec3> g_lanes(n), g_generic(n);
  NodeSystemDifference d;
  double largest = 0.0;
  for (int i = 0; i < n; ++i) {
    Mat3 A_lanes, A_generic;
    lanes.nodeSystem(i, x, g_lanes[i], A_lanes);
    generic.nodeSystem(i, x, g_generic[i], A_generic);
    largest = std::max(largest, g_generic[i].norm());
    if (A_generic.norm() > 0.0) d.block = std::max(d.block, (A_lanes - A_generic).norm() / A_generic.norm());
    ++d.nodes;
  }
  for (int i = 0; i < n; ++i)
    d.gradient =
        std::max(d.gradient, (g_lanes[i] - g_generic[i]).norm() / std::max(g_generic[i].norm(), 1e-6 * largest));
  return d;
}

// The lanes' VBD and the generic VBD (p1_lanes false), set up and at the start of `objective`'s
// step.
struct SolverPair {
  VbdSolver lanes, generic;
  SolverPair(PbngOptions options, const StepObjective& objective, Positions& x0)
      : lanes(options), generic([&] { options.p1_lanes = false; return options; }()) {
    lanes.setup(objective.problem());
    generic.setup(objective.problem());
    Positions unused;
    lanes.beginStep(objective, x0);
    generic.beginStep(objective, unused);
  }
};

// (a) Every node of the twisted block (three models) and of the mixed pair, at a scrambled state
// with inverted and nearly flat elements, away from the kink (its neighbourhood: the next test).
TEST(VbdLanes, NodeGradientAndBlockAreAddNodeBlocksWithSvdRotations) {
  const auto problems = laneTestProblems();
  for (const auto& [name, problem] : problems) {
    const State start = initialState(problem);
    const StepObjective objective(problem, start.x, start.v, 0);
    for (auto kind : {PbngOptions::NodeBlock::kProjectedTerms, PbngOptions::NodeBlock::kProjectedSum}) {
      PbngOptions options = vbdDefaultOptions();
      options.node_block = kind;
      options.rotation = PbngOptions::Rotation::kSvd;
      Positions x0;
      SolverPair pair(options, objective, x0);
      ASSERT_EQ(pair.lanes.numLaneElements(), problem.mesh.numElements());
      ASSERT_EQ(pair.generic.numLaneElements(), 0);
      const Positions x = scrambled(problem, x0, 0.15, 1);
      const ElementShapes shapes = elementShapes(problem, x);
      const int indefinite = indefiniteElementBlocks(problem, x);
      const NodeSystemDifference d = nodeSystemDifference(pair.lanes, pair.generic, x);
      std::printf("[ measured ] %s, %s: %d of %d elements inverted, %d nearly flat, closest to the kink %.3f, %d "
                  "indefinite element blocks; %d nodes: gradient %.2e, block %.2e (relative)\n",
                  name, kind == PbngOptions::NodeBlock::kProjectedTerms ? "projected_terms" : "projected_sum",
                  shapes.inverted, shapes.elements, shapes.flat, shapes.kink, indefinite, d.nodes, d.gradient, d.block);
      EXPECT_GT(shapes.inverted, 0);
      EXPECT_GT(shapes.flat, 0);
      EXPECT_GT(shapes.kink, 0.1);  // away from the kink (its neighbourhood: the next test)
      EXPECT_LT(d.gradient, 1e-10);
      EXPECT_LT(d.block, 1e-10);
      if (std::string(name).find("corotated") != std::string::npos) {
        EXPECT_GT(indefinite, 0);  // the projection acts
      }
    }
  }
}

// The lane kernel's inputs for an elastic term of P1 tetrahedra as PbngSolver builds them: one
// record per element (rotation I), the distinct materials' closed forms.
struct LaneTerm {
  const ElasticEnergy* elastic = nullptr;
  std::vector<P1ElementRecord> records;
  std::vector<PbngP1Material> materials;
};

LaneTerm laneTerm(const ElasticEnergy& elastic) {
  LaneTerm term;
  term.elastic = &elastic;
  term.records.resize(elastic.numElements());
  std::vector<const Material*> distinct;
  for (int e = 0; e < elastic.numElements(); ++e) {
    const Material& m = elastic.material(e);
    const auto found = std::find(distinct.begin(), distinct.end(), &m);
    if (found == distinct.end()) {
      distinct.push_back(&m);
      term.materials.push_back(pbngP1Material(m, m.modelParameters()));
    }
    term.records[e].material = static_cast<int>(std::find(distinct.begin(), distinct.end(), &m) - distinct.begin());
    fillP1ElementRecord(elastic, e, term.records[e]);
    term.records[e].rotation.setIdentity();
  }
  return term;
}

// Element e's visit of its node `local` through the lanes: V P g and the block `kind`. warm:
// records whose rotations start the warm step (and receive its result); null: the SVD.
void laneVisit(const LaneTerm& term, int e, int local, const Positions& x, PbngP1Block kind, Vec3& g, Mat3& H,
               P1ElementRecord* warm = nullptr) {
  const int visit = 4 * e + local;
  g.setZero();
  H.setZero();
  int fallbacks = 0;
  addPbngP1Visits(&visit, 1, warm ? warm : term.records.data(), warm, term.materials, x, *term.elastic, 0.0, g, H,
                  fallbacks, kind);
}

// (a) The kink's neighbourhood: every element of the twisted block at one inverted F with
// sigma_2 + sigma_3 = delta, F = U diag(1.3, 0.6, delta - 0.6) V^T. The exact block's rotation
// term grows like 1/delta (K's smallest eigenvalue is delta) and so does the conditioning of R
// and of the block: the lanes follow the definition to about 1e-15 / delta relative. On the set
// (delta = 0; F = diag(1.5, 0.5, -0.5), exact in binary so that both paths see the same F: R
// jumps across the set) the lanes hand the term to the SVD, polarRotationDerivative's floor
// (finite, not a derivative), as the definition does.
TEST(VbdLanes, NearTheCorotatedKinkTheBlockFollowsTheDefinition) {
  const Problem problem = test::twistedBlock(MaterialModel::kFixedCorotated, 60.0);
  const ElasticEnergy& elastic = problem.elasticEnergy();
  const LaneTerm term = laneTerm(elastic);
  const Mat3 U = Eigen::AngleAxisd(0.7, Vec3(1.0, 2.0, 3.0).normalized()).toRotationMatrix();
  const Mat3 V = Eigen::AngleAxisd(-1.1, Vec3(-2.0, 1.0, 0.5).normalized()).toRotationMatrix();
  for (double delta : {0.3, 1e-2, 1e-4, 1e-6, 0.0}) {
    const Mat3 F = delta > 0.0 ? Mat3(U * Vec3(1.3, 0.6, delta - 0.6).asDiagonal() * V.transpose())
                               : Mat3(Vec3(1.5, 0.5, -0.5).asDiagonal());
    Positions x(3 * problem.numNodes());
    for (int i = 0; i < problem.numNodes(); ++i) x.segment<3>(3 * i) = F * problem.mesh.restPosition(i);
    double raw = 0.0, projected = 0.0, gradient = 0.0, largest = 0.0;
    int indefinite = 0;
    for (int e = 0; e < elastic.numElements(); ++e)
      for (int a = 0; a < 4; ++a) {
        Vec3 g_def = Vec3::Zero(), g_lane, g_projected;
        Mat3 H_def = Mat3::Zero(), H_lane, H_projected;
        elastic.addNodeBlock(e, a, x, 0.0, HessianKind::kTrue, g_def, H_def);
        laneVisit(term, e, a, x, PbngP1Block::kExact, g_lane, H_lane);
        laneVisit(term, e, a, x, PbngP1Block::kExactProjected, g_projected, H_projected);
        const Mat3 P_def = projectToPositiveSemidefinite(H_def);
        indefinite += Eigen::LLT<Mat3>(H_def).info() != Eigen::Success;
        gradient = std::max(gradient, (g_lane - g_def).norm() / g_def.norm());
        raw = std::max(raw, (H_lane - H_def).norm() / H_def.norm());
        projected = std::max(projected, (H_projected - P_def).norm() / H_def.norm());
        largest = std::max(largest, H_def.norm());
      }
    std::printf("[ measured ] sigma_2 + sigma_3 = %.0e: largest element block %.3e, %d of %d indefinite; lanes - "
                "definition: gradient %.2e, raw block %.2e, projected block %.2e (relative to the element's raw "
                "block)\n",
                delta, largest, indefinite, 4 * elastic.numElements(), gradient, raw, projected);
    EXPECT_GT(indefinite, 0);
    const double bound = delta > 0.0 ? 1e-14 / delta : 1e-12;
    EXPECT_LT(gradient, bound);
    EXPECT_LT(raw, bound);
    EXPECT_LT(projected, bound);
  }
}

// (b) The closed-form block is the derivative of the lanes' element gradient V P g in x_i
// (central differences, tests/support/finite_difference.hpp; the gradient against the element
// energy V Psi), for every visit of the scrambled twisted block (three models) and mixed pair.
TEST(VbdLanes, ExactBlockIsTheFiniteDifferenceOfTheElementGradient) {
  const auto problems = laneTestProblems();
  for (const auto& [name, problem] : problems) {
    const State start = initialState(problem);
    const StepObjective objective(problem, start.x, start.v, 0);
    VbdSolver vbd;
    vbd.setup(problem);
    Positions x0;
    vbd.beginStep(objective, x0);
    const Positions x = scrambled(problem, x0, 0.15, 1);
    const ElasticEnergy& elastic = problem.elasticEnergy();
    const LaneTerm term = laneTerm(elastic);
    test::FiniteDifferenceOptions fd;
    fd.step = 1e-6;
    fd.tolerance = 1e-7;
    double worst_gradient = 0.0, worst_block = 0.0;
    int checked = 0;
    for (int e = 0; e < elastic.numElements(); ++e) {
      const double V = elastic.quadratureVolume(e, 0);
      for (int a = 0; a < 4; ++a) {
        const int node = elastic.elementNodes(e)[a];
        const test::EnergyFunction f = [&](const Eigen::VectorXd& y, double* value, Eigen::VectorXd* gradient,
                                           Eigen::MatrixXd* hessian) {
          Positions xy = x;
          xy.segment<3>(3 * node) = y;
          if (value) {
            double psi = 0.0;
            elastic.material(e).evaluate(elastic.deformationGradient(e, 0, xy), elastic.pointData(e, 0.0), &psi,
                                         nullptr, nullptr);
            *value = V * psi;
          }
          Vec3 g;
          Mat3 H;
          laneVisit(term, e, a, xy, PbngP1Block::kExact, g, H);
          if (gradient) *gradient = g;
          if (hessian) *hessian = H;
        };
        test::FiniteDifferenceErrors errors;
        EXPECT_TRUE(test::derivativesMatchFiniteDifferences(f, Eigen::VectorXd(x.segment<3>(3 * node)), fd, &errors))
            << name << ", element " << e << ", node " << a;
        worst_gradient = std::max(worst_gradient, errors.gradient);
        worst_block = std::max(worst_block, errors.hessian);
        ++checked;
      }
    }
    std::printf("[ measured ] %s: %d visits, worst relative error against central differences: gradient %.2e, "
                "block %.2e\n",
                name, checked, worst_gradient, worst_block);
  }
}

// (a) With warm-started rotations (one Newton step from the previous visit's rotation) the block
// differs from the SVD's by the step's error (cubic in the seed's: warmStartedPolarStep): here
// the records hold the polar rotations of a state up to 0.003 away, as a previous visit's.
TEST(VbdLanes, WarmStartedRotationsGiveTheBlockToTheRotationsAccuracy) {
  const Problem problem = test::twistedBlock(MaterialModel::kFixedCorotated, 60.0);
  const State start = initialState(problem);
  const StepObjective objective(problem, start.x, start.v, 0);
  VbdSolver vbd;
  vbd.setup(problem);
  Positions x0;
  vbd.beginStep(objective, x0);
  const Positions x = scrambled(problem, x0, 0.15, 1);
  const Positions previous = scrambled(problem, x, 0.003, 4);
  const ElasticEnergy& elastic = problem.elasticEnergy();
  LaneTerm term = laneTerm(elastic);
  for (int e = 0; e < elastic.numElements(); ++e)
    term.records[e].rotation = polarRotation(elastic.deformationGradient(e, 0, previous));
  double block = 0.0, gradient = 0.0, seed = 0.0, stepped = 0.0;
  for (int e = 0; e < elastic.numElements(); ++e) {
    const Mat3 R = polarRotation(elastic.deformationGradient(e, 0, x));
    for (int a = 0; a < 4; ++a) {
      std::vector<P1ElementRecord> warm = term.records;
      Vec3 g_svd, g_warm;
      Mat3 H_svd, H_warm;
      laneVisit(term, e, a, x, PbngP1Block::kExact, g_svd, H_svd);
      laneVisit(term, e, a, x, PbngP1Block::kExact, g_warm, H_warm, warm.data());
      block = std::max(block, (H_warm - H_svd).norm() / H_svd.norm());
      gradient = std::max(gradient, (g_warm - g_svd).norm() / g_svd.norm());
      seed = std::max(seed, (term.records[e].rotation - R).norm());
      stepped = std::max(stepped, (warm[e].rotation - R).norm());
    }
  }
  std::printf("[ measured ] warm rotations: |R0 - R| <= %.2e, after the step %.2e; lanes (warm) - lanes (SVD): "
              "gradient %.2e, block %.2e (relative)\n",
              seed, stepped, gradient, block);
  EXPECT_GT(seed, 1e-2);  // the seeds are not the answer
  EXPECT_LT(stepped, 1e-3);
  // Of the order of the rotation's error (measured 1.3x).
  EXPECT_LT(block, 10.0 * stepped);
  EXPECT_LT(gradient, 10.0 * stepped);
}

// A bar's start twisted about its own axis by 0.5 rad a metre (1 rad at the free end), at rest
// (vbdFallingBar, and mixedPair's second bar at z = 1): elements rotated by up to a radian.
State twistedBarStart(const Problem& problem) {
  State state = initialState(problem);
  for (int i = 0; i < problem.numNodes(); ++i) {
    const Vec3 X = problem.mesh.restPosition(i);
    const double axis_z = X.z() < 0.75 ? 0.25 : 1.25;
    const double angle = 0.5 * X.x(), y = X.y() - 0.25, z = X.z() - axis_z;
    state.x.segment<3>(3 * i) = Vec3(X.x(), 0.25 + std::cos(angle) * y - std::sin(angle) * z,
                                     axis_z + std::sin(angle) * y + std::cos(angle) * z);
  }
  return state;
}

// (c) Whole sweeps: VBD on the lanes against VBD through addNodeBlock (p1_lanes false) from the
// same start, the SVD's rotations: the same iterates to round-off (quasistatic twist; backward
// Euler from a twisted bar, with damping; the mixed pair with the summed projection). With warm rotations (the
// default) another iterate, close. St. Venant-Kirchhoff stays on addNodeBlock.
TEST(VbdLanes, SweepsOnTheLanesAreTheGenericSweeps) {
  struct Case {
    const char* name;
    Problem problem;
    PbngOptions::NodeBlock kind;
    double damping;
  };
  const Case cases[] = {
      {"twisted block 60 degrees, fixed corotated, quasistatic",
       test::twistedBlock(MaterialModel::kFixedCorotated, 60.0), PbngOptions::NodeBlock::kProjectedTerms, 0.0},
      {"falling bar, Neo-Hookean, backward Euler, damping 0.05", vbdFallingBar(MaterialModel::kNeoHookean),
       PbngOptions::NodeBlock::kProjectedTerms, 0.05},
      {"falling bar, fixed corotated, backward Euler, damping 0.05", vbdFallingBar(MaterialModel::kFixedCorotated),
       PbngOptions::NodeBlock::kProjectedTerms, 0.05},
      {"mixed pair, backward Euler, projected_sum", mixedPair(Integrator::kBackwardEuler),
       PbngOptions::NodeBlock::kProjectedSum, 0.0}};
  constexpr int kSweeps = 20;
  for (const Case& c : cases) {
    const State start = c.problem.time.integrator == Integrator::kBackwardEuler ? twistedBarStart(c.problem)
                                                                                 : initialState(c.problem);
    for (auto rotation : {PbngOptions::Rotation::kSvd, PbngOptions::Rotation::kWarmStart}) {
      PbngOptions options = vbdDefaultOptions();
      options.node_block = c.kind;
      options.damping = c.damping;
      options.rotation = rotation;
      VbdSolver lanes(options);
      options.p1_lanes = false;
      VbdSolver generic(options);
      generic.setup(c.problem);
      lanes.setup(c.problem);
      EXPECT_EQ(lanes.numLaneElements(), c.problem.mesh.numElements());
      EXPECT_EQ(generic.numLaneElements(), 0);
      const Positions expected = test::runStep(generic, c.problem, start, test::iterationBudget(kSweeps)).x;
      const Positions x = test::runStep(lanes, c.problem, start, test::iterationBudget(kSweeps)).x;
      const double displacement = (expected - start.x).lpNorm<Eigen::Infinity>();
      const double difference = (x - expected).lpNorm<Eigen::Infinity>() / displacement;
      const bool svd = rotation == PbngOptions::Rotation::kSvd;
      std::printf("[ measured ] %s, %s rotations, %d sweeps: largest displacement %.3e, |lanes - generic| / "
                  "displacement %.2e\n",
                  c.name, svd ? "SVD" : "warm", kSweeps, displacement, difference);
      EXPECT_GT(displacement, 1e-3);
      EXPECT_LT(difference, svd ? 1e-10 : 1e-4);
    }
  }
  VbdSolver stvk;
  stvk.setup(vbdFallingBar(MaterialModel::kStVenantKirchhoff));
  EXPECT_EQ(stvk.numLaneElements(), 0);  // no closed-form exact tangent here
}

}  // namespace
}  // namespace pbdlab
