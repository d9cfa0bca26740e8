// MPBNG (solvers/pbng/mpbng_solver.hpp, mpbng_levels.hpp): the level hierarchy (vertex counts,
// every vertex bound at its rest point inside its coarse triangle), equal division (level 0 at
// kappa = 0 is the original divided by L), the scaling hooks against a rebuilt problem, the
// kappa schedule, one level equal to PBNG step for step, convergence to Newton, the coloring
// across levels, rejections and options.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <cstdio>

#include "core/support/input_error.hpp"
#include "core/support/json_reader.hpp"
#include "core/topology/coloring.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "reference/newton.hpp"
#include "solvers/pbng/family.hpp"
#include "solvers/pbng/mpbng_solver.hpp"
#include "tests/support/clamped_block.hpp"
#include "tests/support/step_run.hpp"

namespace pbdlab {
namespace {

// A 1 x 1 m cloth of cells x cells (tri3 in the xz plane), held at (0, 0, 1) and (1, 0, 1),
// falling under gravity: Fig. 19's cloth (E 1000 N/m, nu 0.3, rho 10 kg/m^2), small.
Problem hangingCloth(int cells, int steps = 3, bool point_load = false) {
  RectangleRecipe recipe;
  recipe.embedding = RectangleRecipe::Embedding::k3dSurface;
  recipe.plane = "xz";
  recipe.cells = {cells, cells};
  Problem problem;
  problem.mesh = makeRectangleMesh(recipe);
  for (int i = 0; i < problem.mesh.numNodes(); ++i) {
    const Vec3 X = problem.mesh.restPosition(i);
    if (std::abs(X.z() - 1.0) < 1e-9 && std::abs(X.x()) < 1e-9) problem.mesh.node_sets["left"].push_back(i);
    if (std::abs(X.z() - 1.0) < 1e-9 && std::abs(X.x() - 1.0) < 1e-9) problem.mesh.node_sets["right"].push_back(i);
  }
  problem.material.model = MaterialModel::kFixedCorotated;
  problem.material.youngs_modulus = 1000.0;
  problem.material.poisson_ratio = 0.3;
  problem.material.density = 10.0;
  problem.discretization.triangles = TriangleModel::kMembrane;
  problem.gravity = Vec3(0.0, -9.8, 0.0);
  problem.dirichlet.push_back({"left", {true, true, true}, {}});
  problem.dirichlet.push_back({"right", {true, true, true}, {}});
  problem.time = {Integrator::kBackwardEuler, 0.005, steps, 1};
  if (point_load) {
    Load load;
    load.kind = Load::Kind::kPoint;
    load.node_set = "left";
    load.value = Vec3(0.0, -1.0, 0.0);
    problem.loads.push_back(load);
  }
  problem.finalize("hanging cloth");
  return problem;
}

// Advances `state` one step with `solver` (set up by the caller) within `budget`.
StepResult stepOnce(Solver& solver, const Problem& problem, State& state, const Budget& budget) {
  IterationLog log(solver.logColumns());
  return advanceOneStep(solver, problem, state, budget, log);
}

// --- the hierarchy ----------------------------------------------------------------------------

TEST(MpbngLevels, StructuredGridCoarsensByEveryOtherLatticeLine) {
  const Problem cloth = hangingCloth(8);
  std::vector<Mesh> coarse;
  ASSERT_EQ(coarsenStructuredGrid(cloth.mesh, 3, coarse), "");
  ASSERT_EQ(coarse.size(), 2u);
  EXPECT_EQ(cloth.numNodes(), 81);
  EXPECT_EQ(coarse[0].numNodes(), 25);
  EXPECT_EQ(coarse[0].numElements(), 32);
  EXPECT_EQ(coarse[1].numNodes(), 9);
  EXPECT_EQ(coarse[1].numElements(), 8);
  // Nested: every coarse vertex is a vertex of the fine grid; triangles on the fine mesh's side.
  for (const Mesh& mesh : coarse) {
    for (int i = 0; i < mesh.numNodes(); ++i) {
      double nearest = 1e300;
      for (int f = 0; f < cloth.numNodes(); ++f) nearest = std::min(nearest, (mesh.restPosition(i) - cloth.mesh.restPosition(f)).norm());
      EXPECT_LT(nearest, 1e-12);
    }
    const auto normal = [](const Mesh& m, int e) {
      return Vec3((m.restPosition(m.elements(e, 1)) - m.restPosition(m.elements(e, 0)))
                      .cross(m.restPosition(m.elements(e, 2)) - m.restPosition(m.elements(e, 0))));
    };
    for (int e = 0; e < mesh.numElements(); ++e) EXPECT_GT(normal(mesh, e).dot(normal(cloth.mesh, 0)), 0.0);
  }
  // What it refuses, with the reason.
  EXPECT_NE(coarsenStructuredGrid(hangingCloth(6).mesh, 3, coarse).find("divisible by 4"), std::string::npos);
  RectangleRecipe unstructured;
  unstructured.embedding = RectangleRecipe::Embedding::k3dSurface;
  unstructured.plane = "xz";
  unstructured.target_size = 0.2;
  EXPECT_NE(coarsenStructuredGrid(makeRectangleMesh(unstructured), 2, coarse).find("lattice"), std::string::npos);
  BoxMeshRecipe box;
  EXPECT_NE(coarsenStructuredGrid(makeBoxMesh(box), 2, coarse).find("not tri3"), std::string::npos);
}

TEST(MpbngLevels, EveryVertexIsBoundAtItsRestPointInsideItsCoarseTriangle) {
  const Problem cloth = hangingCloth(8);
  std::vector<Mesh> coarse;
  ASSERT_EQ(coarsenStructuredGrid(cloth.mesh, 3, coarse), "");
  const MpbngLevels levels = buildMpbngLevels(cloth, coarse, {});
  ASSERT_EQ(levels.numLevels(), 3);
  EXPECT_EQ(levels.first_node, (std::vector<int>{0, 81, 106, 115}));
  ASSERT_GE(levels.binding_term, 0);
  const auto& bindings = dynamic_cast<const WeakConstraintTerm&>(*levels.problem.terms()[levels.binding_term]);
  ASSERT_EQ(bindings.numStencils(), 81 + 25);
  const Positions rest = levels.problem.mesh.restPositionsFlat();
  for (int s = 0; s < bindings.numStencils(); ++s) {
    // Stencil: the fine vertex (coefficient 1), then the coarse triangle's three (-w_b).
    const int* nodes = bindings.stencilNodes(s);
    const int level = nodes[0] < 81 ? 0 : 1;
    EXPECT_DOUBLE_EQ(bindings.coefficient(s, 0), 1.0);
    double sum = 0.0;
    for (int k = 1; k < 4; ++k) {
      const double w = -bindings.coefficient(s, k);
      EXPECT_GE(w, -1e-12) << "stencil " << s;
      EXPECT_LE(w, 1.0 + 1e-12) << "stencil " << s;
      EXPECT_GE(nodes[k], levels.first_node[level + 1]);
      EXPECT_LT(nodes[k], levels.first_node[level + 2]);
      sum += w;
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
    EXPECT_LT(bindings.constraint(s, rest).norm(), 1e-12) << "bound at its rest point";
    EXPECT_DOUBLE_EQ(bindings.stiffness(s)(0, 0), levels.binding_stiffness);
  }
  // Equal division: every level carries a third of the mass; the held corners are held on each.
  const VecX& m = levels.problem.nodeMasses();
  for (int level = 0; level < 3; ++level)
    EXPECT_NEAR(m.segment(levels.first_node[level], levels.first_node[level + 1] - levels.first_node[level]).sum(),
                cloth.nodeMasses().sum() / 3.0, 1e-12);
  EXPECT_EQ(levels.problem.fixedDofs().size(), 3u * cloth.fixedDofs().size());
  // Each coarse vertex interpolates level 0 at its rest point.
  VecX field = rest;
  field.tail(field.size() - 3 * 81).setZero();
  levels.restrictToCoarse(field);
  EXPECT_LT((field - rest).lpNorm<Eigen::Infinity>(), 1e-12);
}

// At kappa = 0 (coarse masses and bindings off) every row of level 0 is the original's divided
// by L: the levels' level 0 alone has the original's solution ("equally divide", §8.2).
TEST(MpbngLevels, LevelZeroAloneIsTheOriginalDividedByTheLevelCount) {
  const Problem cloth = hangingCloth(8);
  MpbngOptions options;
  options.levels = 3;
  MpbngSolver mpbng(options);
  mpbng.setup(cloth);
  State state = initialState(cloth);
  state.x += 0.01 * VecX::Random(state.x.size());  // somewhere off the rest shape
  cloth.applyDirichlet(state.x, 0.0);
  const StepObjective original(cloth, state.x, state.v, 0);
  PbngSolver plain;
  plain.setup(cloth);
  Positions start;
  plain.beginStep(original, start);

  const MpbngLevels& levels = mpbng.levels();
  Positions x_levels(levels.problem.numDofs());
  VecX v_levels = VecX::Zero(levels.problem.numDofs());
  x_levels.head(state.x.size()) = state.x;
  levels.restrictToCoarse(x_levels);
  const StepObjective divided(levels.problem, x_levels, v_levels, 0);
  PbngSolver sweeper;
  sweeper.setup(levels.problem);
  Positions unused;
  sweeper.beginStep(divided, unused);
  PbngSolver::Scaling off;
  off.node.assign(levels.problem.numNodes(), 0.0);
  for (int i = 0; i < levels.numFineNodes(); ++i) off.node[i] = 1.0;
  off.term.assign(levels.problem.terms().size(), 1.0);
  off.term[levels.binding_term] = 0.0;
  sweeper.setScaling(off);
  const Positions x = start;  // the original's initial guess (x~ with boundary values)
  Positions xl = x_levels;
  xl.head(x.size()) = x;
  double worst = 0.0;
  for (int i = 0; i < cloth.numNodes(); ++i) {
    Vec3 g, gl;
    Mat3 A, Al;
    plain.nodeSystem(i, x, g, A);
    sweeper.nodeSystem(i, xl, gl, Al);
    worst = std::max({worst, (3.0 * gl - g).norm() / std::max(g.norm(), 1e-300), (3.0 * Al - A).norm() / A.norm()});
  }
  EXPECT_LT(worst, 1e-12);
}

// The sweeper's scaling (kappa on coarse masses, weights and bindings) equals a problem rebuilt
// with those masses and stiffnesses.
TEST(MpbngLevels, ScalingEqualsARebuiltProblem) {
  const Problem cloth = hangingCloth(8);
  std::vector<Mesh> coarse;
  ASSERT_EQ(coarsenStructuredGrid(cloth.mesh, 2, coarse), "");
  const double kappa = 0.3;
  MpbngLevels levels = buildMpbngLevels(cloth, coarse, {});
  MpbngLevelOptions scaled_options;
  scaled_options.binding_factor = kappa;
  MpbngLevels rebuilt = buildMpbngLevels(cloth, coarse, scaled_options);
  // The rebuilt coarse level is kappa times as dense (its mass and its weight).
  Problem rebuilt_problem;
  {
    Problem& p = rebuilt.problem;
    rebuilt_problem.bodies = p.bodies;
    rebuilt_problem.bodies[1].material.density *= kappa;
    for (auto& body : rebuilt_problem.bodies) {
      std::map<std::string, std::vector<int>> own;
      for (auto& [name, set] : body.mesh.node_sets) own[name] = set;
      body.mesh.node_sets = own;
    }
    rebuilt_problem.weak_constraints = p.weak_constraints;
    rebuilt_problem.dirichlet = p.dirichlet;
    rebuilt_problem.gravity = p.gravity;
    rebuilt_problem.time = p.time;
    rebuilt_problem.discretization = p.discretization;
    rebuilt_problem.finalize("rebuilt levels");
  }
  Positions x = levels.problem.mesh.restPositionsFlat() + 0.02 * VecX::Random(levels.problem.numDofs());
  const VecX v = 0.1 * VecX::Random(levels.problem.numDofs());
  const StepObjective scaled_objective(levels.problem, x, v, 0), rebuilt_objective(rebuilt_problem, x, v, 0);
  PbngSolver scaled, plain;
  scaled.setup(levels.problem);
  plain.setup(rebuilt_problem);
  Positions unused;
  scaled.beginStep(scaled_objective, unused);
  plain.beginStep(rebuilt_objective, unused);
  PbngSolver::Scaling scaling;
  scaling.node.assign(levels.problem.numNodes(), 1.0);
  for (int i = levels.numFineNodes(); i < levels.problem.numNodes(); ++i) scaling.node[i] = kappa;
  scaling.term.assign(levels.problem.terms().size(), 1.0);
  scaling.term[levels.binding_term] = kappa;
  scaled.setScaling(scaling);
  double worst = 0.0;
  for (int i = 0; i < levels.problem.numNodes(); ++i) {
    Vec3 g, gr;
    Mat3 A, Ar;
    scaled.nodeSystem(i, x, g, A);
    plain.nodeSystem(i, x, gr, Ar);
    worst = std::max({worst, (g - gr).norm() / std::max(gr.norm(), 1e-300), (A - Ar).norm() / Ar.norm()});
  }
  std::printf("[ measured ] scaled rows against the rebuilt problem's: largest relative gap %.2e\n", worst);
  EXPECT_LT(worst, 1e-12);
  // A wrong size is refused.
  PbngSolver::Scaling short_scaling;
  short_scaling.node.assign(3, 1.0);
  EXPECT_THROW(scaled.setScaling(short_scaling), std::invalid_argument);
}

// A load on level 0 is shared: 1/L on level 0, and each coarse level gets the previous level's
// share along the bindings' weights: the same total force and moment about the origin at rest.
TEST(MpbngLevels, LoadsAreSharedWithTheirForceAndMoment) {
  const Problem cloth = hangingCloth(8, 1);
  std::vector<Mesh> coarse;
  ASSERT_EQ(coarsenStructuredGrid(cloth.mesh, 3, coarse), "");
  const MpbngLevels levels = buildMpbngLevels(cloth, coarse, {});
  const VecX force = VecX::Random(cloth.numDofs());
  const VecX shares = levels.distributeForce(force);
  const auto totals = [&](int level, Vec3& sum, Vec3& moment) {
    sum.setZero();
    moment.setZero();
    for (int i = levels.first_node[level]; i < levels.first_node[level + 1]; ++i) {
      sum += shares.segment<3>(3 * i);
      moment += levels.problem.mesh.restPosition(i).cross(Vec3(shares.segment<3>(3 * i)));
    }
  };
  Vec3 sum0, moment0;
  totals(0, sum0, moment0);
  EXPECT_LT((3.0 * shares.head(force.size()) - force).norm(), 1e-14);
  for (int level = 1; level < 3; ++level) {
    Vec3 sum, moment;
    totals(level, sum, moment);
    EXPECT_LT((sum - sum0).norm(), 1e-12) << "level " << level;
    EXPECT_LT((moment - moment0).norm(), 1e-12) << "level " << level;
  }
}

// An unstructured cloth (Gmsh's mesher on the rectangle) takes its coarse level as a recipe: a
// coarser Gmsh mesh of the same surface (§8.2); every vertex is bound inside it, and a step
// moves the cloth under gravity with the original yardstick falling.
TEST(MpbngLevels, AnUnstructuredClothTakesACoarserGmshMeshAsItsLevel) {
  RectangleRecipe fine, coarse;
  fine.embedding = coarse.embedding = RectangleRecipe::Embedding::k3dSurface;
  fine.plane = coarse.plane = "xz";
  fine.target_size = 0.1;
  coarse.target_size = 0.2;
  Problem cloth;
  cloth.mesh = makeRectangleMesh(fine);
  cloth.material.model = MaterialModel::kFixedCorotated;
  cloth.material.youngs_modulus = 1000.0;
  cloth.material.density = 10.0;
  cloth.discretization.triangles = TriangleModel::kMembrane;
  cloth.gravity = Vec3(0.0, -9.8, 0.0);
  cloth.dirichlet.push_back({"z-max", {true, true, true}, {}});
  cloth.time = {Integrator::kBackwardEuler, 0.005, 1, 1};
  cloth.finalize("unstructured cloth");
  std::vector<Mesh> unused;
  EXPECT_NE(coarsenStructuredGrid(cloth.mesh, 2, unused), "");
  MpbngOptions options;
  options.coarse_meshes = {makeRectangleMesh(coarse)};
  MpbngSolver mpbng(options);
  ASSERT_EQ(mpbng.rejectionReason(cloth), "");
  mpbng.setup(cloth);
  const MpbngLevels& levels = mpbng.levels();
  ASSERT_EQ(levels.numLevels(), 2);
  EXPECT_LT(levels.first_node[2] - levels.first_node[1], cloth.numNodes() / 2);
  const auto& bindings = dynamic_cast<const WeakConstraintTerm&>(*levels.problem.terms()[levels.binding_term]);
  EXPECT_EQ(bindings.numStencils(), cloth.numNodes());
  const Positions rest = levels.problem.mesh.restPositionsFlat();
  for (int s = 0; s < bindings.numStencils(); ++s) EXPECT_LT(bindings.constraint(s, rest).norm(), 1e-9);
  const test::StepRun run = test::runStep(mpbng, cloth, initialState(cloth), test::iterationBudget(10));
  EXPECT_LT(run.log.rows().back().relative_residual, run.log.rows().front().relative_residual);
  double lowest = 0.0;
  for (int i = 0; i < cloth.numNodes(); ++i) lowest = std::min(lowest, run.x[3 * i + 1]);
  EXPECT_LT(lowest, -1e-5);  // the free edge falls
}

TEST(MpbngLevels, ColoringIsValidAcrossLevelsAndBindings) {
  const Problem cloth = hangingCloth(16);
  MpbngSolver mpbng;
  mpbng.setup(cloth);
  const PbngSolver& sweeper = mpbng.sweeper();
  EXPECT_EQ(static_cast<int>(sweeper.stencilSets().size()), 4);  // three membranes and the bindings
  EXPECT_TRUE(isValidNodeColoring(mpbng.levels().problem.numNodes(), sweeper.stencilSets(), sweeper.nodeColoring()));
  std::printf("[ measured ] 16 x 16 cloth, 3 levels (%d nodes): %d node colors\n", mpbng.levels().problem.numNodes(),
              sweeper.numColors());
}

// --- the schedule and the step ------------------------------------------------------------------

TEST(Mpbng, KappaFollowsTheRadiusOfDescent) {
  EXPECT_DOUBLE_EQ(MpbngSolver::kappa(0, 13, 0.05), 1.0);
  EXPECT_NEAR(MpbngSolver::kappa(13, 13, 0.05), std::sqrt(1.0 - 169.0 / (13.05 * 13.05)), 1e-15);
  EXPECT_NEAR(MpbngSolver::kappa(13, 13, 0.05), 0.0875, 1e-4);  // the spec's "about 0.088"
  EXPECT_NEAR(MpbngSolver::kappa(5, 10, 2.0), std::sqrt(1.0 - 25.0 / 144.0), 1e-15);
  for (int l = 1; l <= 13; ++l) EXPECT_LT(MpbngSolver::kappa(l, 13, 0.05), MpbngSolver::kappa(l - 1, 13, 0.05));
  EXPECT_EQ(MpbngSolver::kappa(14, 13, 0.05), 0.0);  // past r_des
  // The log's kappa column is the schedule (absolute) and its running product.
  const Problem cloth = hangingCloth(8, 1);
  for (const auto kind : {MpbngOptions::Kappa::kAbsolute, MpbngOptions::Kappa::kProduct}) {
    MpbngOptions options;
    options.kappa = kind;
    MpbngSolver mpbng(options);
    mpbng.setup(cloth);
    const test::StepRun run = test::runStep(mpbng, cloth, initialState(cloth), test::iterationBudget(6));
    double product = 1.0;
    ASSERT_EQ(run.log.rows().size(), 7u);
    const size_t column = 1;  // colors, kappa, fine_sweeps
    for (int l = 1; l <= 6; ++l) {
      product *= MpbngSolver::kappa(l, 6, 0.05);
      const double expected = kind == MpbngOptions::Kappa::kAbsolute ? MpbngSolver::kappa(l, 6, 0.05) : product;
      EXPECT_NEAR(run.log.rows()[l].extra[column], expected, 1e-15) << "iteration " << l;
    }
  }
}

// One level, no coarsest or final pass: MPBNG is PBNG, bit for bit, over several steps (cloth
// and a P1 solid on PBNG's fast path).
TEST(Mpbng, OneLevelIsPbngStepForStep) {
  BoxMeshRecipe box;
  box.size = Vec3(2.0, 0.5, 0.5);
  box.cells = {8, 2, 2};
  const Problem bar = test::clampedBlock(makeBoxMesh(box), MaterialModel::kFixedCorotated, Integrator::kBackwardEuler,
                                         0.01, 3, "falling bar");
  const Problem cloth = hangingCloth(8, 3);
  for (const Problem* problem : {&bar, &cloth}) {
    MpbngOptions options;
    options.levels = 1;
    options.coarsest_sweeps = 0;
    options.final_sweeps = 0;
    MpbngSolver mpbng(options);
    PbngSolver pbng;
    mpbng.setup(*problem);
    pbng.setup(*problem);
    State a = initialState(*problem), b = a;
    for (int step = 0; step < problem->time.numSubsteps(); ++step) {
      stepOnce(mpbng, *problem, a, test::iterationBudget(7));
      stepOnce(pbng, *problem, b, test::iterationBudget(7));
      EXPECT_EQ((a.x - b.x).lpNorm<Eigen::Infinity>(), 0.0) << problem->mesh.source << ", step " << step + 1;
    }
  }
}

// Two levels with the bindings off in the final pass: the converged result is the single-level
// cloth's Newton solution; the multi-level iterations move toward it from x~ already.
TEST(Mpbng, TwoLevelsConvergeToTheOriginalNewtonSolution) {
  const Problem cloth = hangingCloth(8, 2);
  State state = initialState(cloth);
  for (int step = 0; step < 2; ++step) {
    NewtonSolver newton;
    newton.setup(cloth);
    Budget tight;
    tight.max_iterations = 50;
    tight.target_relative_residual = 1e-12;
    const test::StepRun reference = test::runStep(newton, cloth, state, tight);
    MpbngOptions options;
    options.levels = 2;
    options.final_sweeps = 4000;
    MpbngSolver mpbng(options);
    mpbng.setup(cloth);
    const test::StepRun ours = test::runStep(mpbng, cloth, state, test::iterationBudget(10));
    const double displacement = (reference.x - state.x).lpNorm<Eigen::Infinity>();
    const double distance = (ours.x - reference.x).lpNorm<Eigen::Infinity>() / displacement;
    std::printf("[ measured ] 8 x 8 cloth, 2 levels, step %d: relative residual %.2e, distance to Newton / step "
                "%.2e\n",
                step + 1, ours.result.relative_residual, distance);
    EXPECT_LT(ours.result.relative_residual, 1e-8);
    EXPECT_LT(distance, 1e-6);
    state.v = (reference.x - state.x) / cloth.stepDt();
    state.x = reference.x;
    state.step += 1;
    state.t += cloth.stepDt();
  }
}

// Levels are the solver's own: the log's residual is the original problem's (its yardstick at
// level 0's positions), identical to evaluating the original StepObjective there.
TEST(Mpbng, TheLogIsTheOriginalProblemsYardstick) {
  const Problem cloth = hangingCloth(8, 1);
  MpbngSolver mpbng;
  mpbng.setup(cloth);
  const State start = initialState(cloth);
  const test::StepRun run = test::runStep(mpbng, cloth, start, test::iterationBudget(5));
  const StepObjective objective(cloth, start.x, start.v, 0);
  EXPECT_EQ(run.x.size(), start.x.size());
  EXPECT_DOUBLE_EQ(run.log.rows().back().residual, objective.residualNorm(run.x));
  EXPECT_GT(run.log.rows().back().extra[2], 5.0);  // fine sweeps: more than the 5 multi-level sweeps
}

TEST(Mpbng, RefusesWhatItCannotLevel) {
  BoxMeshRecipe box;
  const Problem block = test::clampedBlock(makeBoxMesh(box), MaterialModel::kFixedCorotated, Integrator::kBackwardEuler,
                                           0.01, 1, "block");
  MpbngSolver automatic;  // 3 levels coarsened from a grid: a box is not one
  EXPECT_NE(automatic.rejectionReason(block).find("mesh recipes"), std::string::npos);
  EXPECT_THROW(automatic.setup(block), std::invalid_argument);
  MpbngOptions one;
  one.levels = 1;
  EXPECT_EQ(MpbngSolver(one).rejectionReason(block), "");
  // The default level count: 3 where the grid halves twice, 2 where it halves once; an explicit
  // count the grid cannot give is refused.
  MpbngSolver by_default;
  by_default.setup(hangingCloth(8, 1));
  EXPECT_EQ(by_default.levels().numLevels(), 3);
  by_default.setup(hangingCloth(6, 1));
  EXPECT_EQ(by_default.levels().numLevels(), 2);
  MpbngOptions three;
  three.levels = 3;
  EXPECT_NE(MpbngSolver(three).rejectionReason(hangingCloth(6, 1)).find("divisible by 4"), std::string::npos);
  EXPECT_EQ(mpbngProblemRejection(hangingCloth(4, 1)), "");
  EXPECT_EQ(mpbngProblemRejection(hangingCloth(4, 1, true)), "");  // loads are shared among the levels
}

TEST(Mpbng, RegistryReadsItsOptionsStrictly) {
  const JsonReader in("scene.json");
  const auto make = [&](const char* text) {
    return makePbngFamilySolver("mpbng", nlohmann::json::parse(text), in, "/solver/options");
  };
  const auto made = make(R"({"levels": 4, "r_pad": 2, "coarsest_sweeps": 4, "final_sweeps": 8, "binding_stiffness": 10,
                             "coarsest_pass": "once", "multi_level": "all", "kappa": "product", "final_bindings": true,
                             "scale_gravity": false, "coarse_state": "own", "clamp_coarse": false, "rotation": "svd"})");
  const MpbngOptions& o = dynamic_cast<const MpbngSolver&>(*made).options();
  EXPECT_EQ(o.levels, 4);
  EXPECT_EQ(o.r_pad, 2.0);
  EXPECT_EQ(o.coarsest_sweeps, 4);
  EXPECT_EQ(o.final_sweeps, 8);
  EXPECT_EQ(o.level_options.binding_factor, 10.0);
  EXPECT_FALSE(o.level_options.clamp_coarse);
  EXPECT_EQ(o.coarsest_pass, MpbngOptions::CoarsestPass::kOnce);
  EXPECT_EQ(o.multi_level, MpbngOptions::MultiLevel::kAll);
  EXPECT_EQ(o.kappa, MpbngOptions::Kappa::kProduct);
  EXPECT_TRUE(o.final_bindings);
  EXPECT_FALSE(o.scale_gravity);
  EXPECT_EQ(o.coarse_state, MpbngOptions::CoarseState::kOwn);
  EXPECT_EQ(o.pbng.rotation, PbngOptions::Rotation::kSvd);
  const auto recipes = make(R"({"levels": [{"type": "box", "cells": [2, 2, 2]}]})");
  EXPECT_EQ(dynamic_cast<const MpbngSolver&>(*recipes).options().levels, 2);
  EXPECT_EQ(dynamic_cast<const MpbngSolver&>(*recipes).options().coarse_meshes.at(0).numNodes(), 27);
  EXPECT_THROW(make(R"({"levles": 3})"), InputError);
  EXPECT_THROW(make(R"({"levels": 0})"), InputError);
  EXPECT_THROW(make(R"({"levels": []})"), InputError);
  EXPECT_THROW(make(R"({"levels": [{"type": "cube"}]})"), InputError);
  EXPECT_THROW(make(R"({"r_pad": 0})"), InputError);
  EXPECT_THROW(make(R"({"coarsest_sweeps": -1})"), InputError);
  EXPECT_THROW(make(R"({"kappa": "relative"})"), InputError);
  EXPECT_THROW(make(R"({"omega": 1.7})"), InputError);  // no SOR inside MPBNG
}

}  // namespace
}  // namespace pbdlab
