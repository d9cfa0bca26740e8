// What the shared model can now say, each shown by the Newton reference on a problem whose
// answer is known: two bodies bound by weak constraints behave as one body as the binding
// stiffness grows; plane strain passes the patch test and matches a 3D extrusion with the
// out-of-plane displacement fixed; n substeps of dt/n are n steps of dt/n bit for bit.
#include <gtest/gtest.h>

#include <cmath>

#include "core/fem/field_sampling.hpp"
#include "core/solver/solver.hpp"
#include "core/solver/yardstick.hpp"
#include "core/support/input_error.hpp"
#include "core/terms/weak_constraint_term.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "reference/newton.hpp"
#include "tests/support/newton_solve.hpp"
#include "tests/support/rubber.hpp"

namespace pbdlab {
namespace {

using test::rubber;

using test::solveWithNewton;

Vec3 displacementAt(const Problem& problem, const Positions& x, const Vec3& point) {
  return FieldSampler(problem.mesh).sample(x - problem.mesh.restPositionsFlat(), point);
}

// A cantilever 2 x 1 x 1 m clamped at x = 0, sagging under gravity: as one block of 8x4x4
// cells, and as two blocks of 4x4x4 cells bound face to face at x = 1 by weak constraints
// (E = 1e6 Pa, k_c from 1e5 to 1e9 N/m: the binding goes from soft to much stiffer than the
// elements, whose nodal stiffness is about E h = 2.5e5 N/m).
Problem oneBlock() {
  Problem problem;
  BoxMeshRecipe box;
  box.size = Vec3(2.0, 1.0, 1.0);
  box.cells = {8, 4, 4};
  problem.mesh = makeBoxMesh(box);
  problem.material = rubber(1e6);
  problem.gravity = Vec3(0.0, -9.81, 0.0);
  problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
  problem.finalize("one block");
  return problem;
}

// `gap`: the right block starts that far to the right, bound across the gap by the binding's
// offset (its springs start stretched).
Problem twoBoundBlocks(double k, double gap = 0.0) {
  Problem problem;
  BoxMeshRecipe box;
  box.size = Vec3(1.0, 1.0, 1.0);
  box.cells = {4, 4, 4};
  problem.bodies.push_back({"left", makeBoxMesh(box), rubber(1e6), {}, {}});
  box.origin = Vec3(1.0 + gap, 0.0, 0.0);
  problem.bodies.push_back({"right", makeBoxMesh(box), rubber(1e6), {}, {}});
  problem.gravity = Vec3(0.0, -9.81, 0.0);
  problem.dirichlet.push_back({"left/x-min", {true, true, true}, {}});
  NodeSetBinding binding{"right/x-min", "left", k, k, Vec3::UnitX()};
  binding.offset = Vec3(-gap, 0.0, 0.0);
  problem.bindings.push_back(binding);
  problem.finalize("two bound blocks");
  return problem;
}

// A binding across a gap (offset) pulls the right block back: the equilibrium is the one of the
// blocks bound where they touch (the energy does not see a translation along x), reached from
// springs that start stretched by the gap.
TEST(WeakConstraints, ABindingAcrossAGapReachesTheEquilibriumOfTouchingBlocks) {
  const Problem touching = twoBoundBlocks(1e7);
  const Problem apart = twoBoundBlocks(1e7, 0.3);
  const Positions x_touching = solveWithNewton(touching);
  const Positions x_apart = solveWithNewton(apart);
  ASSERT_EQ(x_touching.size(), x_apart.size());
  const double scale = (x_touching - touching.mesh.restPositionsFlat()).lpNorm<Eigen::Infinity>();
  EXPECT_LT((x_apart - x_touching).lpNorm<Eigen::Infinity>(), 1e-6 * scale + 1e-9);
  // The springs start stretched: the first binding's C at rest is the gap.
  const WeakConstraint& c = apart.weak_constraints.front();
  Vec3 a = Vec3::Zero(), b = Vec3::Zero();
  for (size_t j = 0; j < c.nodes_a.size(); ++j) a += c.weights_a[j] * apart.mesh.restPosition(c.nodes_a[j]);
  for (size_t j = 0; j < c.nodes_b.size(); ++j) b += c.weights_b[j] * apart.mesh.restPosition(c.nodes_b[j]);
  EXPECT_NEAR((a - b).norm(), 0.3, 1e-12);
  // An offset that does not land inside the body is refused, naming the binding.
  Problem outside;
  BoxMeshRecipe box;
  box.cells = {2, 2, 2};
  outside.bodies.push_back({"left", makeBoxMesh(box), rubber(1e6), {}, {}});
  box.origin = Vec3(1.5, 0.0, 0.0);
  outside.bodies.push_back({"right", makeBoxMesh(box), rubber(1e6), {}, {}});
  NodeSetBinding binding{"right/x-min", "left", 1e5, 1e5, Vec3::UnitX()};
  binding.offset = Vec3(-0.2, 0.0, 0.0);  // lands at x = 1.3, outside the left block
  outside.bindings.push_back(binding);
  try {
    outside.finalize("gap");
    FAIL() << "an offset outside the body was accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.field(), "/bindings/0");
    EXPECT_NE(std::string(error.what()).find("moved by the offset"), std::string::npos) << error.what();
  }
}

TEST(WeakConstraints, TwoBoundBlocksApproachOneBlockAsTheStiffnessGrows) {
  const Problem single = oneBlock();
  const Vec3 tip(2.0, 0.5, 0.5);
  const Vec3 u_single = displacementAt(single, solveWithNewton(single), tip);
  ASSERT_LT(u_single.y(), -1e-4);  // it sags
  double previous = INFINITY;
  for (double k : {1e5, 1e7, 1e9}) {
    const Problem pair = twoBoundBlocks(k);
    ASSERT_EQ(pair.terms().size(), 2u);
    EXPECT_EQ(pair.terms()[1]->numStencils(), 25);  // one per node of the 5x5 face
    const Vec3 u_pair = displacementAt(pair, solveWithNewton(pair), tip);
    const double difference = (u_pair - u_single).norm() / u_single.norm();
    std::printf("[ measured ] k_c = %.0e: tip u_y %.6e (one block %.6e), relative difference %.3e\n", k, u_pair.y(),
                u_single.y(), difference);
    // The binding's compliance adds O(1/k): 100x stiffer must be at least 10x closer.
    EXPECT_LT(difference, previous / 10.0);
    previous = difference;
  }
  EXPECT_LT(previous, 1e-4);
}

// --- plane strain -----------------------------------------------------------------------

Mesh rectangle(double length, double height, int nx, int ny, double target_size = 0.0) {
  RectangleRecipe recipe;
  recipe.size = {length, height};
  recipe.cells = {nx, ny};
  recipe.target_size = target_size;
  return makeRectangleMesh(recipe);
}

// Patch test: under an affine deformation (with F_33 = 1) the internal forces of every
// interior node of an unstructured triangle mesh cancel, for every material.
TEST(PlaneStrain, PatchTestOnAnUnstructuredMesh) {
  const Mesh mesh = rectangle(1.0, 0.6, 0, 0, 0.15);
  for (MaterialModel model : {MaterialModel::kFixedCorotated, MaterialModel::kNeoHookean,
                              MaterialModel::kStableNeoHookean, MaterialModel::kStVenantKirchhoff}) {
    Problem problem;
    problem.mesh = mesh;
    problem.material = rubber(1e5);
    problem.material.model = model;
    problem.finalize("patch");
    ASSERT_TRUE(problem.isPlaneStrain());
    Eigen::Matrix2d A;
    A << 1.2, 0.3, -0.1, 0.85;
    Positions x = problem.mesh.restPositionsFlat();
    for (int i = 0; i < problem.numNodes(); ++i) x.segment<2>(3 * i) = A * x.segment<2>(3 * i);
    VecX g = VecX::Zero(x.size());
    problem.elasticEnergy().addGradient(x, g);
    std::vector<char> boundary(problem.numNodes(), 0);
    for (const char* set : {"x-min", "x-max", "y-min", "y-max"})
      for (int i : problem.mesh.node_sets.at(set)) boundary[i] = 1;
    double interior = 0.0, scale = 0.0;
    int interior_nodes = 0;
    for (int i = 0; i < problem.numNodes(); ++i) {
      scale = std::max(scale, g.segment<3>(3 * i).norm());
      if (!boundary[i]) interior = std::max(interior, g.segment<3>(3 * i).norm()), ++interior_nodes;
    }
    ASSERT_GT(interior_nodes, 5);
    ASSERT_GT(scale, 0.0);
    EXPECT_LT(interior, 1e-10 * scale) << materialModelName(model);
  }
}

// The 2D mesh extruded by hand to one layer of prisms (thickness 1): with z fixed on every
// node the 3D problem is the plane strain one, node for node.
Mesh extrude(const Mesh& flat) {
  Mesh mesh;
  const int n = flat.numNodes();
  mesh.element_type = ElementType::kPrism6;
  mesh.rest_positions.resize(2 * n, 3);
  mesh.rest_positions.topRows(n) = flat.rest_positions;
  mesh.rest_positions.bottomRows(n) = flat.rest_positions;
  mesh.rest_positions.bottomRows(n).col(2).setConstant(1.0);
  mesh.elements.resize(flat.numElements(), 6);
  for (int e = 0; e < flat.numElements(); ++e)
    for (int a = 0; a < 3; ++a) mesh.elements(e, a) = flat.elements(e, a), mesh.elements(e, 3 + a) = flat.elements(e, a) + n;
  for (const auto& [name, nodes] : flat.node_sets) {
    std::vector<int>& both = mesh.node_sets[name];
    both = nodes;
    for (int i : nodes) both.push_back(i + n);
  }
  mesh.node_sets["all"].clear();
  for (int i = 0; i < 2 * n; ++i) mesh.node_sets["all"].push_back(i);
  mesh.source = "extruded " + flat.source;
  return mesh;
}

TEST(PlaneStrain, CantileverMatchesA3dExtrusionWithTheOutOfPlaneDisplacementFixed) {
  const Mesh flat = rectangle(4.0, 1.0, 16, 4);
  auto cantilever = [](const Mesh& mesh, bool pin_z) {
    Problem problem;
    problem.mesh = mesh;
    problem.material = rubber(1e7, 1000.0);
    problem.gravity = Vec3(0.0, -9.81, 0.0);
    problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
    if (pin_z) problem.dirichlet.push_back({"all", {false, false, true}, {}});
    problem.finalize("cantilever");
    return problem;
  };
  const Problem two_d = cantilever(flat, false);
  const Problem three_d = cantilever(extrude(flat), true);
  ASSERT_TRUE(two_d.isPlaneStrain());
  EXPECT_NEAR(two_d.nodeMasses().sum(), three_d.nodeMasses().sum(), 1e-9 * two_d.nodeMasses().sum());
  const Positions x2 = solveWithNewton(two_d, 1e-12);
  const Positions x3 = solveWithNewton(three_d, 1e-12);
  const int n = flat.numNodes();
  double largest = 0.0, difference = 0.0;
  for (int i = 0; i < n; ++i) {
    const Vec3 u2 = x2.segment<3>(3 * i) - flat.restPosition(i);
    largest = std::max(largest, u2.norm());
    for (int layer : {0, 1}) {
      const Vec3 u3 = x3.segment<3>(3 * (i + layer * n)) - three_d.mesh.restPosition(i + layer * n);
      difference = std::max(difference, (u3 - u2).norm());
    }
  }
  std::printf("[ measured ] 2D vs extruded 3D: largest displacement %.6e m, largest difference %.3e m\n", largest,
              difference);
  EXPECT_GT(largest, 1e-3);
  EXPECT_LT(difference, 1e-9 * largest);
}

// --- colliders ---------------------------------------------------------------------------

// A 1 x 0.5 x 1 block resting on the plane y = 0 under gravity, held in x and z on its x-min
// face only (so the plane carries all the weight): Newton with the collider's penalty
// converges in the yardstick's projected residual, the collider's reaction equals the weight,
// and the penetration is the penalty's force / stiffness.
TEST(Colliders, BlockRestingOnAPlaneCarriesItsWeight) {
  Problem problem;
  BoxMeshRecipe box;
  box.size = Vec3(1.0, 0.5, 1.0);
  box.cells = {4, 2, 4};
  problem.mesh = makeBoxMesh(box);
  problem.material = rubber(1e5, 1000.0);
  problem.gravity = Vec3(0.0, -9.81, 0.0);
  problem.dirichlet.push_back({"x-min", {true, false, true}, {}});
  problem.colliders.push_back({"ground", makePlaneCollider(Vec3::Zero(), Vec3::UnitY()), 1e8, 1e-9});
  problem.finalize("block on a plane");
  ASSERT_EQ(problem.colliderTerms().size(), 1u);

  IterationLog log;
  const Positions x = solveWithNewton(problem, 1e-10, &log);
  const StepObjective objective(problem, x, VecX::Zero(x.size()), 0);
  // The reaction from the gradient of everything but the collider.
  VecX g = -objective.externalForce();
  problem.elasticEnergy().addGradient(x, g);
  const Vec3 reaction = problem.colliderTerms()[0]->reaction(x, g);
  const double weight = problem.nodeMasses().sum() * 9.81;
  const double penetration = objective.maxPenetration(x);
  std::printf("[ measured ] block on a plane: reaction %.6f N (weight %.6f N), penetration %.3e m, %zu Newton iterations, "
              "final relative residual %.2e\n",
              reaction.y(), weight, penetration, log.rows().size() - 1, log.rows().back().relative_residual);
  EXPECT_NEAR(reaction.y(), weight, 1e-8 * weight);
  EXPECT_LT(std::abs(reaction.x()) + std::abs(reaction.z()), 1e-9 * weight);
  // Penalty k = 1e8 N/m on 25 bottom nodes carrying 4905 N: measured 4.5e-6 m (the interior
  // nodes carry more than the edges); no deeper than 1e-5.
  EXPECT_GT(penetration, 0.0);
  EXPECT_LT(penetration, 1e-5);
  // Without the projection the residual would be the reaction itself: the yardstick must
  // not call a block pressed on the ground converged only because the penalty balances it.
  VecX r;
  objective.gradient(x, r);
  EXPECT_LT(objective.residualNorm(x), 1e-8 * weight);
}

// The projection itself, at the rest state (bottom nodes exactly on the plane, no penalty
// force): only the downward (collider-balanced) part of the bottom nodes' residual goes; a
// residual pulling them away from the plane stays.
TEST(Colliders, TheYardstickRemovesOnlyWhatTheColliderCanBalance) {
  for (double g_y : {-9.81, 9.81}) {
    Problem problem;
    BoxMeshRecipe box;
    box.size = Vec3(1.0, 0.5, 1.0);
    box.cells = {2, 1, 2};
    problem.mesh = makeBoxMesh(box);
    problem.material = rubber(1e5, 1000.0);
    problem.gravity = Vec3(0.0, g_y, 0.0);
    problem.colliders.push_back({"ground", makePlaneCollider(Vec3::Zero(), Vec3::UnitY()), 1e8, 1e-9});
    problem.finalize("block at rest on a plane");
    const Positions x = problem.mesh.restPositionsFlat();
    const StepObjective objective(problem, x, VecX::Zero(x.size()), 0);
    VecX g;
    objective.gradient(x, g);  // elastic 0 at rest, penalty 0 at phi = 0: g = -f_ext
    double full = g.squaredNorm(), bottom = 0.0;
    for (int i : problem.mesh.node_sets.at("y-min")) bottom += g[3 * i + 1] * g[3 * i + 1];
    const double expected = g_y < 0 ? std::sqrt(full - bottom) : std::sqrt(full);
    EXPECT_NEAR(objective.residualNorm(x), expected, 1e-12 * expected) << "gravity " << g_y;
    EXPECT_GT(bottom, 0.0);
  }
}

// --- cloth ---------------------------------------------------------------------------------

// A square cloth (1 x 1 m, 8x8 cells, in the vertical yz plane: a tri3 mesh in the plane z = 0
// would be a 2D plane strain mesh) pinned at its two top corners
// hangs under gravity: corotated membrane (PBNG eq. 36, E 1000 Pa m, nu 0.3, rho 10 kg/m^2 as
// in PBNG Fig. 19) plus dihedral bending k_b (eq. 35), solved by Newton.
Problem hangingCloth(double bending_stiffness) {
  RectangleRecipe recipe;
  recipe.embedding = RectangleRecipe::Embedding::k3dSurface;
  recipe.plane = "yz";
  recipe.cells = {8, 8};
  Body body;
  body.mesh = makeRectangleMesh(recipe);
  body.mesh.node_sets["pins"] = {};
  for (int i = 0; i < body.mesh.numNodes(); ++i)
    if (body.mesh.restPosition(i).y() == 1.0 && (body.mesh.restPosition(i).z() == 0.0 || body.mesh.restPosition(i).z() == 1.0))
      body.mesh.node_sets["pins"].push_back(i);
  body.material.model = MaterialModel::kFixedCorotated;
  body.material.youngs_modulus = 1000.0;
  body.material.poisson_ratio = 0.3;
  body.material.density = 10.0;
  body.bending_stiffness = bending_stiffness;
  Problem problem;
  problem.bodies.push_back(body);
  problem.gravity = Vec3(0.0, -9.8, 0.0);
  problem.dirichlet.push_back({"pins", {true, true, true}, {}});
  problem.finalize("hanging cloth");
  return problem;
}

TEST(Cloth, SquarePinnedAtTwoCornersHangsAndConverges) {
  const Problem problem = hangingCloth(1e-3);
  ASSERT_FALSE(problem.hasElasticEnergy());
  ASSERT_EQ(problem.terms().size(), 2u);  // membrane and bending
  EXPECT_EQ(problem.terms()[0]->name(), "membrane");
  EXPECT_EQ(problem.terms()[1]->name(), "bending");
  ASSERT_EQ(problem.mesh.node_sets.at("pins").size(), 2u);
  EXPECT_NEAR(problem.nodeMasses().sum(), 10.0, 1e-12);  // rho A
  // Flat at rest: no bending energy; a folded state has some.
  const Positions rest = problem.mesh.restPositionsFlat();
  EXPECT_EQ(problem.terms()[1]->energy(rest, 0.0), 0.0);
  Positions folded = rest;
  for (int i = 0; i < problem.numNodes(); ++i) folded[3 * i] = 0.3 * std::pow(rest[3 * i + 2] - 0.5, 2);
  EXPECT_GT(problem.terms()[1]->energy(folded, 0.0), 0.0);

  IterationLog log;
  const Positions x = solveWithNewton(problem, 1e-8, &log);
  int bottom = -1;  // the node at (0, 0, 0.5)
  for (int i = 0; i < problem.numNodes(); ++i)
    if ((problem.mesh.restPosition(i) - Vec3(0.0, 0.0, 0.5)).norm() < 1e-12) bottom = i;
  ASSERT_GE(bottom, 0);
  const Vec3 bottom_middle = x.segment<3>(3 * bottom) - problem.mesh.restPosition(bottom);
  std::printf("[ measured ] hanging cloth: %zu Newton iterations, bottom middle moves %.4f m down\n", log.rows().size() - 1,
              -bottom_middle.y());
  EXPECT_LT(bottom_middle.y(), -0.01);  // it sags
  EXPECT_LE(log.rows().back().relative_residual, 1e-8);
}

// --- substeps -----------------------------------------------------------------------------

// A triangle mesh in the plane z = 0 is 2D plane strain unless the scene says it is a cloth
// (discretization.triangles = membrane): a flat cloth there, pinned at two corners, then sags
// along z under gravity along z.
TEST(Cloth, AFlatClothInThePlaneZ0IsAMembraneWhenTheSceneSaysSo) {
  RectangleRecipe recipe;
  recipe.cells = {6, 6};
  const Mesh flat = makeRectangleMesh(recipe);  // in the xy plane, z = 0
  auto make = [&](TriangleModel model, Vec3 gravity) {
    Problem problem;
    problem.mesh = flat;
    problem.mesh.node_sets["pins"] = {};
    for (int i = 0; i < flat.numNodes(); ++i)
      if (flat.restPosition(i).y() == 1.0 && (flat.restPosition(i).x() == 0.0 || flat.restPosition(i).x() == 1.0))
        problem.mesh.node_sets["pins"].push_back(i);
    problem.material.model = MaterialModel::kFixedCorotated;
    problem.material.youngs_modulus = 1000.0;
    problem.material.density = 10.0;
    problem.gravity = gravity;
    problem.discretization.triangles = model;
    problem.dirichlet.push_back({"pins", {true, true, true}, {}});
    problem.finalize("flat cloth");
    return problem;
  };
  const Problem plane_strain = make(TriangleModel::kAuto, Vec3(0.0, -9.8, 0.0));
  EXPECT_TRUE(plane_strain.isPlaneStrain());
  EXPECT_THROW(make(TriangleModel::kAuto, Vec3(0.0, 0.0, -9.8)), InputError) << "plane strain pins z";
  const Problem cloth = make(TriangleModel::kMembrane, Vec3(0.0, 0.0, -9.8));
  EXPECT_FALSE(cloth.isPlaneStrain());
  ASSERT_EQ(cloth.terms().size(), 1u);
  EXPECT_EQ(cloth.terms()[0]->name(), "membrane");
  // Quasistatic, one load step from the flat state (measured: converged in 19 iterations, the
  // free corners 1.13 m down: no bending term, a soft membrane).
  NewtonSolver newton;
  newton.setup(cloth);
  IterationLog log(newton.logColumns());
  Budget budget;
  budget.max_iterations = 100;
  budget.target_relative_residual = 1e-8;
  State state = initialState(cloth);
  const StepResult r = advanceOneStep(newton, cloth, state, budget, log);
  std::printf("[ measured ] flat cloth: %s after %d iterations, relative residual %.2e, lowest z %.4f\n",
              stopReasonName(r.reason).c_str(), r.iterations, r.relative_residual,
              state.x(Eigen::seq(2, Eigen::last, 3)).minCoeff());
  EXPECT_LT(state.x(Eigen::seq(2, Eigen::last, 3)).minCoeff(), -0.05) << "it sags along z";
  // Plane strain on a mesh that is not flat in z = 0 is refused.
  RectangleRecipe tilted;
  tilted.embedding = RectangleRecipe::Embedding::k3dSurface;
  tilted.plane = "yz";
  tilted.cells = {2, 2};
  Problem wrong;
  wrong.mesh = makeRectangleMesh(tilted);
  wrong.material.model = MaterialModel::kFixedCorotated;
  wrong.discretization.triangles = TriangleModel::kPlaneStrain;
  EXPECT_THROW(wrong.finalize("tilted"), InputError);
}

TEST(Substeps, NSubstepsOfDtOverNAreNStepsOfDtOverNBitForBit) {
  auto falling = [](double dt, int steps, int substeps) {
    Problem problem;
    BoxMeshRecipe box;
    box.size = Vec3(2.0, 0.5, 0.5);
    box.cells = {4, 1, 1};
    problem.mesh = makeBoxMesh(box);
    problem.material = rubber(1e4, 100.0);
    problem.gravity = Vec3(0.0, -9.81, 0.0);
    problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
    problem.time = {Integrator::kBackwardEuler, dt, steps, substeps};
    problem.finalize("falling bar");
    return problem;
  };
  const Problem frames = falling(0.125, 2, 4);  // 2 frames of 4 substeps
  const Problem steps = falling(0.03125, 8, 1);  // 8 steps of the substep's dt
  IterationLog log_frames, log_steps;
  const Positions x_frames = solveWithNewton(frames, 1e-10, &log_frames);
  const Positions x_steps = solveWithNewton(steps, 1e-10, &log_steps);
  EXPECT_GT((x_frames - frames.mesh.restPositionsFlat()).norm(), 1e-3);
  EXPECT_TRUE(x_frames == x_steps) << "largest difference " << (x_frames - x_steps).lpNorm<Eigen::Infinity>();
  // The log says which frame and substep each row belongs to.
  ASSERT_EQ(log_frames.rows().size(), log_steps.rows().size());
  EXPECT_EQ(log_frames.rows().back().step, 2);
  EXPECT_EQ(log_frames.rows().back().substep, 4);
  EXPECT_EQ(log_steps.rows().back().step, 8);
  EXPECT_EQ(log_steps.rows().back().substep, 1);
}

// A record stride of k logs iteration 0, every k-th and the last one, and still stops at
// the target (checked at logged iterations only).
// A per-frame budget: the frame's substeps share max_iterations, each keeping one for every
// later substep; a per-substep budget gives each its own.
TEST(Substeps, AFrameBudgetIsSharedByItsSubsteps) {
  Budget frame;
  frame.max_iterations = 10;
  frame.max_seconds = 2.0;
  frame.scope = Budget::Scope::kFrame;
  // Four substeps; the first used 0 so far: 10 - 3 kept for the later ones.
  EXPECT_EQ(substepBudget(frame, 4, 0, 0, 0.0).max_iterations, 7);
  EXPECT_EQ(substepBudget(frame, 4, 1, 6, 0.5).max_iterations, 2);  // 10 - 6 - 2
  EXPECT_DOUBLE_EQ(substepBudget(frame, 4, 1, 6, 0.5).max_seconds, 1.5);
  EXPECT_EQ(substepBudget(frame, 4, 3, 9, 2.5).max_iterations, 1);
  EXPECT_EQ(substepBudget(frame, 4, 3, 9, 2.5).max_seconds, 0.0);
  Budget each = frame;
  each.scope = Budget::Scope::kSubstep;
  EXPECT_EQ(substepBudget(each, 4, 3, 9, 2.5).max_iterations, 10);
}

TEST(RecordStride, LogsEveryKthIterationAndTheLast) {
  const Problem problem = oneBlock();
  NewtonSolver newton;
  newton.setup(problem);
  IterationLog log(newton.logColumns());
  Budget budget;
  budget.max_iterations = 3;
  budget.target_relative_residual = 1e-30;  // unreachable: the budget ends the step
  budget.record_every = 2;
  State state = initialState(problem);
  const StepResult r = advanceOneStep(newton, problem, state, budget, log);
  EXPECT_EQ(r.reason, StopReason::kIterationBudget);
  std::vector<int> logged;
  for (const IterationRow& row : log.rows()) logged.push_back(row.iteration);
  EXPECT_EQ(logged, (std::vector<int>{0, 2, 3}));
}


// --- vertex-triangle collisions between bodies ------------------------------------------

// Two unit cubes of 2x2x2 cells side by side along x, the right one shifted by -overlap into
// the left one (rest state, no solve).
Problem overlappingCubes(double overlap, bool collisions = true) {
  Problem problem;
  BoxMeshRecipe box;
  box.cells = {2, 2, 2};
  problem.bodies.push_back({"left", makeBoxMesh(box), rubber(1e5), {}, {}});
  box.origin = Vec3(1.0 - overlap, 0.1, 0.1);  // offset in y and z: vertices land inside faces
  problem.bodies.push_back({"right", makeBoxMesh(box), rubber(1e5), {}, {}});
  problem.collisions.enabled = collisions;
  problem.finalize("overlapping cubes");
  return problem;
}

TEST(Collisions, VerticesInsideAnotherBodyAreTiedToItsClosestSurfacePoint) {
  const double overlap = 0.1;
  const Problem problem = overlappingCubes(overlap);
  const Positions x = problem.mesh.restPositionsFlat();
  const StepObjective objective(problem, x, VecX::Zero(x.size()), 0);
  // The right cube's x-min face vertices with y, z in (0, 1) lie 0.1 inside the left cube
  // (4 of its 3x3 face nodes: y, z in {0.1, 0.6}), and the left cube's x-max vertices with
  // y, z in (0.1, 1.1) lie 0.1 inside the right one (y, z in {0.5, 1}: 4 nodes, of which
  // those at y or z = 1 are on its surface... all 4 are surface vertices of the left cube).
  ASSERT_EQ(objective.numContacts(), 8);
  ASSERT_EQ(objective.terms().size(), problem.terms().size() + 1);
  const auto& contacts = *objective.terms().back();
  EXPECT_EQ(contacts.name(), "collisions");
  for (int c = 0; c < contacts.numStencils(); ++c) {
    const int* nodes = contacts.stencilNodes(c);
    const Vec3 p = x.segment<3>(3 * nodes[0]);
    const bool in_left_body = nodes[0] < problem.bodyFirstNode(1);
    // Each vertex is pulled along x onto the face it crossed, 0.1 away: energy k_n 0.1^2 / 2.
    double value = 0.0;
    VecX gradient;
    contacts.stencilTerms(c, x, 0.0, &value, &gradient, nullptr, HessianKind::kTrue);
    EXPECT_NEAR(value, 0.5 * problem.collisions.k_n * overlap * overlap, 1e-6 * value) << "vertex " << p.transpose();
    EXPECT_NEAR(std::abs(gradient[0]), problem.collisions.k_n * overlap, 1e-6 * problem.collisions.k_n * overlap);
    EXPECT_NEAR(gradient.segment<2>(1).norm(), 0.0, 1e-6) << "a pure normal push (k_t = 0)";
    // The left body's vertex is pushed back to -x, the right body's to +x.
    EXPECT_EQ(gradient[0] > 0.0, in_left_body);
    for (int j = 1; j < 4; ++j)
      EXPECT_NE(nodes[j] < problem.bodyFirstNode(1), in_left_body) << "the triangle belongs to the other body";
  }
  // Apart, nothing; without the setting, nothing.
  const Problem apart = overlappingCubes(-0.01);
  const Positions xa = apart.mesh.restPositionsFlat();
  EXPECT_EQ(StepObjective(apart, xa, VecX::Zero(xa.size()), 0).numContacts(), 0);
  const Problem off = overlappingCubes(overlap, false);
  EXPECT_EQ(StepObjective(off, x, VecX::Zero(x.size()), 0).numContacts(), 0);
  EXPECT_EQ(off.collisionDetector(), nullptr);
}

// A block dropped onto a block clamped at its base, backward Euler: without collisions it
// falls through; with them (contacts created each step at the step's start, PBNG §11.2) it
// comes to rest on top, and Newton rebuilds its Hessian pattern only at steps whose contacts
// changed.
struct DropResult {
  double penetration = 0.0;        // deepest vertex inside the other body over the run
  double final_penetration = 0.0;  // at the end
  double final_drop = 0.0;         // how far the upper block's lowest node fell
  int steps = 0;
  int contact_changes = 0;  // steps whose contact stencils differ from the step before
  int symbolic_analyses = 0;
};

// The contacts of a step at x and the deepest penetration among them: |n . C| of each
// vertex-triangle weak constraint (its distance to the surface point it is tied to).
double deepestContact(const StepObjective& objective, const Positions& x, std::vector<int>* stencils = nullptr) {
  if (objective.numContacts() == 0) return 0.0;
  const auto* contacts = dynamic_cast<const WeakConstraintTerm*>(objective.terms().back().get());
  EXPECT_NE(contacts, nullptr);
  double deepest = 0.0;
  for (int c = 0; c < contacts->numStencils(); ++c) {
    deepest = std::max(deepest, contacts->constraint(c, x).norm());
    if (stencils)
      stencils->insert(stencils->end(), contacts->stencilNodes(c), contacts->stencilNodes(c) + contacts->nodesPerStencil());
  }
  return deepest;
}

DropResult dropBlockOnBlock(bool collisions) {
  Problem problem;
  BoxMeshRecipe box;
  box.size = Vec3(1.0, 0.5, 1.0);
  box.cells = {3, 2, 3};
  problem.bodies.push_back({"base", makeBoxMesh(box), rubber(1e5, 1000.0), {}, {}});
  box.origin = Vec3(0.2, 0.52, 0.2);  // 2 cm above, offset so corners land on faces
  box.size = Vec3(0.6, 0.3, 0.6);
  box.cells = {2, 1, 2};
  problem.bodies.push_back({"top", makeBoxMesh(box), rubber(1e5, 1000.0), {}, {}});
  problem.gravity = Vec3(0.0, -9.81, 0.0);
  problem.dirichlet.push_back({"base/y-min", {true, true, true}, {}});
  problem.collisions.enabled = true;  // detection always on, to measure; contacts only if asked
  problem.time.integrator = Integrator::kBackwardEuler;
  problem.time.dt = 0.01;
  problem.time.num_steps = 40;  // 0.4 s: free fall of 2 cm takes 0.064 s
  problem.finalize("block dropped on a block");
  Problem solved = problem;  // what the solver sees
  if (!collisions) {
    solved.collisions.enabled = false;
    solved.finalize("block dropped on a block, no collisions");
  }

  NewtonSolver newton;
  newton.setup(solved);
  IterationLog log(newton.logColumns());
  Budget budget;
  budget.max_iterations = 60;
  budget.target_relative_residual = 1e-9;
  State state = initialState(solved);
  DropResult result;
  std::vector<int> previous_contacts;
  for (int k = 0; k < problem.time.numSubsteps(); ++k) {
    std::vector<int> contacts;
    deepestContact(StepObjective(problem, state.x, state.v, state.step), state.x, &contacts);
    if (contacts != previous_contacts) ++result.contact_changes;
    previous_contacts = contacts;
    const StepResult r = advanceOneStep(newton, solved, state, budget, log);
    EXPECT_TRUE(r.reason == StopReason::kConverged || r.reason == StopReason::kRoundoff)
        << "step " << k + 1 << ": " << stopReasonName(r.reason) << ", relative residual " << r.relative_residual;
    // Penetration at the end of the step, measured by the detector of the next step.
    result.final_penetration = deepestContact(StepObjective(problem, state.x, state.v, state.step), state.x);
    result.penetration = std::max(result.penetration, result.final_penetration);
  }
  double lowest = INFINITY;
  for (int i = problem.bodyFirstNode(1); i < problem.numNodes(); ++i) lowest = std::min(lowest, state.x[3 * i + 1]);
  result.final_drop = 0.52 - lowest;
  result.steps = problem.time.numSubsteps();
  result.symbolic_analyses = newton.symbolicAnalyses();
  return result;
}

TEST(Collisions, ADroppedBlockRestsOnTheOtherInsteadOfFallingThrough) {
  const DropResult without = dropBlockOnBlock(false);
  const DropResult with = dropBlockOnBlock(true);
  std::printf("[ measured ] without contacts: deepest %.4f m, drop %.4f m; with: deepest %.2e m, final %.2e m, drop "
              "%.4f m, %d contact changes in %d steps, %d symbolic analyses\n",
              without.penetration, without.final_drop, with.penetration, with.final_penetration, with.final_drop,
              with.contact_changes, with.steps, with.symbolic_analyses);
  EXPECT_GT(without.penetration, 0.05) << "without contacts the block falls into the base";
  // With them a vertex can sink for one step before the next step's detection catches it
  // (about v dt), then it is held at k_n's compliance: weight / k_n ~ 1e-5 m.
  EXPECT_LT(with.penetration, 1e-2);
  EXPECT_LT(with.final_penetration, 1e-3);
  EXPECT_LT(with.final_drop, 0.1) << "it rests on the base (which it compresses), not inside it";
  // The pattern (and CHOLMOD's symbolic analysis) is redone exactly when the contacts change;
  // the initial pattern is built at step 1 in any case.
  EXPECT_GT(with.contact_changes, 1);
  EXPECT_LT(with.contact_changes, with.steps) << "contacts persist over several steps";
  EXPECT_EQ(with.symbolic_analyses, with.contact_changes + 1);
  EXPECT_EQ(without.symbolic_analyses, 1);
}

}  // namespace
}  // namespace pbdlab
