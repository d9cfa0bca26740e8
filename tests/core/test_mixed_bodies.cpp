// Bodies of different element types in one problem (core/model/problem.hpp, "Element types"): one
// elastic term per element block, masses lumped per block, the yardstick and Newton over every
// term; every consumer either reads the element blocks or refuses the problem by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "core/fem/field_sampling.hpp"
#include "core/solver/solver.hpp"
#include "core/solver/yardstick.hpp"
#include "core/support/input_error.hpp"
#include "meshes/box_mesh.hpp"
#include "reference/newton.hpp"
#include "solvers/registry.hpp"
#include "tests/support/newton_solve.hpp"
#include "tests/support/temporary_mesh_cache.hpp"
#include "validation/scene.hpp"
#include "tests/support/rubber.hpp"

namespace pbdlab {
namespace {

using test::rubber;

Mesh box(BoxFamily family, const Vec3& origin, const Vec3& size, std::array<int, 3> cells) {
  BoxMeshRecipe recipe;
  recipe.family = family;
  recipe.origin = origin;
  recipe.size = size;
  recipe.cells = cells;
  return makeBoxMesh(recipe);
}

// Every step with Newton to `target`, each step's residual at most `target`.
Positions solveWithNewton(const Problem& problem, double target) {
  return test::solveWithNewton(problem, target, nullptr, true);
}

Vec3 displacementAt(const Problem& problem, const Positions& x, const Vec3& point) {
  return BlockFieldSampler(problem.elementBlocks()).sample(x - problem.mesh.restPositionsFlat(), point);
}

// A bar 2 x 1 x 1 m clamped at x = 0 and pulled along +x by its weight (g = 9.81 m/s^2 along
// x): as one block of 8x4x4 cells of `family`, and as a tet4 block (five-tet, 4x4x4 cells,
// x in [0, 1]) and a hex8 block (Q1, 4x4x4 cells, x in [1, 2]) bound face to face at x = 1 by
// weak constraints of stiffness k. The axial pull is what both element types represent well
// (no bending, whose locking differs between P1 tets and Q1 hexes), so the one-block
// solutions of the two types agree closely and the bound pair's limit is near both.
const Vec3 kGravity(9.81, 0.0, 0.0);

Problem oneBar(BoxFamily family) {
  Problem problem;
  problem.mesh = box(family, Vec3::Zero(), Vec3(2.0, 1.0, 1.0), {8, 4, 4});
  problem.material = rubber();
  problem.gravity = kGravity;
  problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
  problem.finalize("one bar");
  return problem;
}

Problem boundTetHex(double k) {
  Problem problem;
  problem.bodies.push_back({"tet", box(BoxFamily::kFiveTet, Vec3::Zero(), Vec3::Ones(), {4, 4, 4}), rubber(), {}, {}});
  problem.bodies.push_back({"hex", box(BoxFamily::kHex, Vec3(1.0, 0.0, 0.0), Vec3::Ones(), {4, 4, 4}), rubber(), {}, {}});
  problem.gravity = kGravity;
  problem.dirichlet.push_back({"tet/x-min", {true, true, true}, {}});
  problem.bindings.push_back({"hex/x-min", "tet", k, k, Vec3::UnitX()});
  problem.finalize("tet + hex");
  return problem;
}

TEST(MixedBodies, ProblemKeepsOneElementBlockPerTypeAndAnEmptyCombinedConnectivity) {
  const Problem pair = boundTetHex(1e6);
  ASSERT_TRUE(pair.hasMixedElementTypes());
  ASSERT_EQ(pair.elementBlocks().size(), 2u);
  EXPECT_EQ(pair.elementBlocks()[0]->element_type, ElementType::kTet4);
  EXPECT_EQ(pair.elementBlocks()[1]->element_type, ElementType::kHex8);
  EXPECT_EQ(pair.elementBlocks()[0]->numElements(), pair.bodies[0].mesh.numElements());
  EXPECT_EQ(pair.elementBlocks()[1]->numElements(), pair.bodies[1].mesh.numElements());
  EXPECT_EQ(pair.numElements(), 5 * 64 + 64);
  EXPECT_EQ(pair.elementTypesName(), "tet4+hex8");
  // Nodes and node sets are combined; elements are not (no reader can miss the hexes).
  EXPECT_EQ(pair.numNodes(), 125 + 125);
  EXPECT_EQ(pair.mesh.numElements(), 0);
  EXPECT_EQ(pair.mesh.node_sets.at("hex/x-max").size(), 25u);
  // The hex block's connectivity is in global node numbers (after the tet body's nodes).
  EXPECT_GE(pair.elementBlocks()[1]->elements.minCoeff(), pair.bodyFirstNode(1));
  // Two elastic terms and the binding, in that order.
  ASSERT_EQ(pair.terms().size(), 3u);
  ASSERT_EQ(pair.elasticTerms().size(), 2u);
  EXPECT_EQ(pair.terms()[0], pair.elasticTerms()[0]);
  EXPECT_EQ(pair.terms()[1], pair.elasticTerms()[1]);
  EXPECT_EQ(pair.elasticTerms()[1]->elementType(), ElementType::kHex8);
  EXPECT_THROW(pair.elasticEnergy(), std::logic_error);
  // A single-type problem is unchanged: one block, the combined mesh itself.
  const Problem single = oneBar(BoxFamily::kHex);
  EXPECT_FALSE(single.hasMixedElementTypes());
  ASSERT_EQ(single.elementBlocks().size(), 1u);
  EXPECT_EQ(single.elementBlocks()[0]->numElements(), single.mesh.numElements());
  EXPECT_EQ(&single.elasticEnergy(), single.elasticTerms()[0].get());
}

TEST(MixedBodies, BoundTetAndHexBlocksApproachOneBarAsTheStiffnessGrows) {
  const Vec3 tip(2.0, 0.5, 0.5);
  const Problem tet_bar = oneBar(BoxFamily::kFiveTet);
  const Problem hex_bar = oneBar(BoxFamily::kHex);
  const Vec3 u_tet = displacementAt(tet_bar, solveWithNewton(tet_bar, 1e-8), tip);
  const Vec3 u_hex = displacementAt(hex_bar, solveWithNewton(hex_bar, 1e-8), tip);
  ASSERT_GT(u_hex.x(), 1e-3);  // it stretches
  // The one bar of twice the length in each element type. Half of the bound pair is tet4, half
  // hex8: as the binding stiffens, its tip approaches the two bars' solutions (their mean),
  // within their own difference (measured: 4.0e-3 relative; P1 tets are the stiffer).
  const Vec3 u_one_bar = 0.5 * (u_tet + u_hex);
  const double types_apart = (u_tet - u_hex).norm() / u_one_bar.norm();
  std::printf("[ measured ] one bar: tip u_x tet4 %.6e, hex8 %.6e, relative difference %.3e\n", u_tet.x(), u_hex.x(),
              types_apart);
  ASSERT_GT(types_apart, 0.0);
  double previous = INFINITY;
  for (double k : {1e5, 1e7, 1e9}) {
    const Problem pair = boundTetHex(k);
    // The same total mass as the two bodies (rho V = 1000 kg each).
    EXPECT_NEAR(pair.nodeMasses().sum(), 2000.0, 1e-9);
    const Positions x = solveWithNewton(pair, 1e-8);
    const Vec3 u_pair = displacementAt(pair, x, tip);
    const double difference = (u_pair - u_one_bar).norm() / u_one_bar.norm();
    std::printf("[ measured ] k_c = %.0e: tip u_x %.6e, relative difference to the one bar %.3e\n", k, u_pair.x(),
                difference);
    // The binding's compliance adds O(1/k) (measured 2.3e-1, 2.4e-3, 4.7e-5).
    EXPECT_LT(difference, previous);
    previous = difference;
  }
  // The stiffest binding: between the tet4 bar and the hex8 bar.
  EXPECT_LT(previous, 0.5 * types_apart);
}

// A state away from rest: rest positions plus a random displacement of 5% of the size.
Positions randomState(const Problem& problem, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> u(-0.05, 0.05);
  Positions x = problem.mesh.restPositionsFlat();
  for (Eigen::Index i = 0; i < x.size(); ++i) x[i] += u(random);
  return x;
}

TEST(MixedBodies, EnergyGradientAndMassesAreTheSumOfTheBodies) {
  // Each body alone, and both in one problem (no binding: the two only share the problem).
  Problem tet, hex, both;
  tet.mesh = box(BoxFamily::kFiveTet, Vec3::Zero(), Vec3::Ones(), {3, 2, 2});
  tet.material = rubber(1e6, 1000.0);
  hex.mesh = box(BoxFamily::kHex, Vec3(1.2, 0.0, 0.0), Vec3(1.0, 0.5, 0.5), {3, 2, 2});
  hex.material = rubber(3e5, 700.0);
  hex.material.model = MaterialModel::kNeoHookean;
  both.bodies.push_back({"tet", tet.mesh, tet.material, {}, {}});
  both.bodies.push_back({"hex", hex.mesh, hex.material, {}, {}});
  for (Problem* p : {&tet, &hex, &both}) {
    p->gravity = Vec3(0.0, -9.81, 1.0);
    p->finalize("sum of bodies");
  }
  ASSERT_EQ(both.terms().size(), 2u);
  const int n_tet = tet.numNodes();
  ASSERT_EQ(both.numNodes(), n_tet + hex.numNodes());

  // Masses (and the lumped gravity): the two bodies' own, concatenated, bit for bit.
  for (int i = 0; i < both.numNodes(); ++i) {
    const double expected = i < n_tet ? tet.nodeMasses()[i] : hex.nodeMasses()[i - n_tet];
    ASSERT_EQ(both.nodeMasses()[i], expected) << "node " << i;
  }

  const Positions x = randomState(both, 7);
  const Positions x_tet = x.head(3 * n_tet), x_hex = x.tail(3 * hex.numNodes());
  for (Integrator integrator : {Integrator::kQuasistatic, Integrator::kBackwardEuler}) {
    for (Problem* p : {&tet, &hex, &both}) p->time = {integrator, 0.01, 1};
    auto objective = [](const Problem& p) {
      const Positions rest = p.mesh.restPositionsFlat();
      return StepObjective(p, rest, VecX::Zero(rest.size()), 0);
    };
    const StepObjective o_tet = objective(tet), o_hex = objective(hex), o_both = objective(both);
    const double e_sum = o_tet.energy(x_tet) + o_hex.energy(x_hex);
    const double e_both = o_both.energy(x);
    EXPECT_NEAR(e_both, e_sum, 1e-12 * std::abs(e_sum)) << integratorName(integrator);
    VecX g_tet, g_hex, g_both;
    o_tet.gradient(x_tet, g_tet);
    o_hex.gradient(x_hex, g_hex);
    o_both.gradient(x, g_both);
    VecX g_sum(g_both.size());
    g_sum << g_tet, g_hex;
    EXPECT_LE((g_both - g_sum).norm(), 1e-12 * g_sum.norm()) << integratorName(integrator);
  }
}

// Bodies of one type need not be neighbours: tet10, tet4, tet10 make two blocks, the first
// holding bodies 0 and 2 (body 2's nodes after body 1's). Energy, gradient and masses are
// still the three bodies' own.
TEST(MixedBodies, BodiesOfOneTypeShareABlockWhereverTheyAre) {
  std::vector<Problem> alone(3);
  Problem all;
  for (int b = 0; b < 3; ++b) {
    BoxMeshRecipe recipe;
    recipe.origin = Vec3(1.5 * b, 0.0, 0.0);
    recipe.cells = {2, 1, 1};
    recipe.order = b == 1 ? 1 : 2;
    alone[b].mesh = makeBoxMesh(recipe);
    alone[b].material = rubber(1e5 * (b + 1), 500.0 * (b + 1));
    all.bodies.push_back({"body" + std::to_string(b), alone[b].mesh, alone[b].material, {}, {}});
  }
  for (Problem& p : alone) p.finalize("alone");
  all.finalize("tet10 + tet4 + tet10");
  ASSERT_EQ(all.elementTypesName(), "tet10+tet4");
  ASSERT_EQ(all.elasticTerms().size(), 2u);
  const Mesh& tet10 = *all.elementBlocks()[0];
  ASSERT_EQ(tet10.numElements(), alone[0].mesh.numElements() + alone[2].mesh.numElements());
  const int second = alone[0].mesh.numElements();
  for (int e = 0; e < alone[2].mesh.numElements(); ++e)
    for (int k = 0; k < 10; ++k) ASSERT_EQ(tet10.elements(second + e, k), alone[2].mesh.elements(e, k) + all.bodyFirstNode(2));
  const Positions x = randomState(all, 11);
  double e_sum = 0.0;
  VecX g_sum(x.size());
  for (int b = 0; b < 3; ++b) {
    const int first = all.bodyFirstNode(b), n = alone[b].numNodes();
    const StepObjective o(alone[b], alone[b].mesh.restPositionsFlat(), VecX::Zero(3 * n), 0);
    e_sum += o.energy(x.segment(3 * first, 3 * n));
    VecX g;
    o.gradient(x.segment(3 * first, 3 * n), g);
    g_sum.segment(3 * first, 3 * n) = g;
    for (int i = 0; i < n; ++i) ASSERT_EQ(all.nodeMasses()[first + i], alone[b].nodeMasses()[i]) << "body " << b;
  }
  const StepObjective o_all(all, all.mesh.restPositionsFlat(), VecX::Zero(x.size()), 0);
  EXPECT_NEAR(o_all.energy(x), e_sum, 1e-12 * std::abs(e_sum));
  VecX g_all;
  o_all.gradient(x, g_all);
  EXPECT_LE((g_all - g_sum).norm(), 1e-12 * g_sum.norm());
}

TEST(MixedBodies, SolversThatCannotRunThemSayWhy) {
  Problem pair = boundTetHex(1e6);
  pair.time = {Integrator::kQuasistatic, 1.0, 1};
  pair.finalize("tet + hex");
  const std::string xpbd_qs = makeSolver("xpbd_qs", nlohmann::json::object(), "test", "/solver/options")->rejectionReason(pair);
  EXPECT_NE(xpbd_qs.find("different element types (tet4+hex8)"), std::string::npos) << xpbd_qs;
  // Setting it up anyway throws that reason, never runs on one of the two types.
  EXPECT_THROW(makeSolver("xpbd_qs", nlohmann::json::object(), "test", "/solver/options")->setup(pair), std::invalid_argument);
  // The references and PBNG iterate every term: they accept it.
  for (const char* name : {"newton", "pbng", "explicit_relaxation"})
    EXPECT_EQ(makeSolver(name, nlohmann::json::object(), "test", "/solver/options")->rejectionReason(pair), "") << name;
  Problem dynamic = boundTetHex(1e6);
  dynamic.time = {Integrator::kBackwardEuler, 0.01, 1};
  dynamic.finalize("tet + hex, backward Euler");
  for (const char* name : {"xpbd", "b_pxpbd", "fp_pxpbd"}) {
    const std::string reason = makeSolver(name, nlohmann::json::object(), "test", "/solver/options")->rejectionReason(dynamic);
    EXPECT_NE(reason.find("different element types"), std::string::npos) << name << ": " << reason;
  }
}

TEST(MixedBodies, BadBodiesAreRefusedNamingTheirField) {
  // A triangle body (cloth or plane strain) cannot share a problem with another type.
  {
    Problem problem;
    problem.bodies.push_back({"solid", box(BoxFamily::kFiveTet, Vec3::Zero(), Vec3::Ones(), {1, 1, 1}), rubber(), {}, {}});
    Mesh sheet;
    sheet.element_type = ElementType::kTri3;
    sheet.rest_positions.resize(3, 3);
    sheet.rest_positions << 0, 0, 2, 1, 0, 2, 0, 1, 2;
    sheet.elements.resize(1, 3);
    sheet.elements << 0, 1, 2;
    MaterialSpec cloth = rubber();
    cloth.model = MaterialModel::kFixedCorotated;
    problem.bodies.push_back({"sheet", sheet, cloth, {}, {}});
    try {
      problem.finalize("solid + sheet");
      FAIL() << "a tet4 body and a tri3 body were accepted";
    } catch (const InputError& error) {
      EXPECT_EQ(error.field(), "/bodies/1/mesh");
      EXPECT_NE(std::string(error.what()).find("must all be solids"), std::string::npos) << error.what();
    }
  }
  // A scene: the mixed bodies are accepted; a bad mesh of the second body names its field.
  {
    nlohmann::json scene = {
        {"name", "mixed"},
        {"bodies",
         {{{"name", "tet"},
           {"mesh", {{"type", "box"}, {"family", "five_tet"}, {"cells", {1, 1, 1}}}},
           {"material", {{"model", "stable_neo_hookean"}, {"youngs_modulus", 1e5}, {"poisson_ratio", 0.3},
                         {"density", 1000}}}},
          {{"name", "hex"},
           {"mesh", {{"type", "box"}, {"family", "hex"}, {"origin", {1, 0, 0}}, {"cells", {1, 1, 1}}}},
           {"material", {{"model", "stable_neo_hookean"}, {"youngs_modulus", 1e5}, {"poisson_ratio", 0.3},
                         {"density", 1000}}}}}},
        {"dirichlet", {{{"node_set", "tet/x-min"}}}},
        {"time", {{"integrator", "quasistatic"}, {"dt", 1}, {"steps", 1}}},
        {"solver", {{"name", "newton"}}}};
    const Scene good = parseScene(scene, "mixed.json");
    EXPECT_EQ(good.problem.elementTypesName(), "tet4+hex8");
    scene["bodies"][1]["mesh"]["cells"] = {0, 1, 1};
    try {
      parseScene(scene, "mixed.json");
      FAIL() << "a box of 0 cells was accepted";
    } catch (const InputError& error) {
      EXPECT_EQ(error.field().rfind("/bodies/1/mesh", 0), 0u) << error.field() << ": " << error.what();
    }
  }
  // An inverted element in the second body's mesh is named with that body's mesh.
  {
    Problem problem;
    problem.bodies.push_back({"tet", box(BoxFamily::kFiveTet, Vec3::Zero(), Vec3::Ones(), {1, 1, 1}), rubber(), {}, {}});
    Mesh hex = box(BoxFamily::kHex, Vec3(1.0, 0.0, 0.0), Vec3::Ones(), {2, 1, 1});
    hex.source = "the hex body's mesh";
    for (int k = 0; k < 4; ++k) std::swap(hex.elements(1, k), hex.elements(1, k + 4));  // turned inside out
    problem.bodies.push_back({"hex", hex, rubber(), {}, {}});
    try {
      problem.finalize("tet + inverted hex");
      FAIL() << "an inverted hex was accepted";
    } catch (const InputError& error) {
      EXPECT_EQ(error.field(), "element 1");
      EXPECT_NE(std::string(error.what()).find("the hex body's mesh"), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace pbdlab
