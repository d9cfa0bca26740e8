// Newton's Hessian pattern on the grid-based scheme's problems (reference/hessian_assembly.hpp,
// EnergyTerm::usedNodes; docs/grid.md "Known issues" 3): each element of an EmbeddedTerm is a
// stencil of a fixed 3x3x3 (4x4x4) block of grid nodes, most of which no vertex touches. The
// pattern holds exactly the pairs of touched nodes (counted here from the weights, not from the
// term), the matrix it assembles is the whole-stencil pattern's entry for entry, and Newton's
// grid steps with it equal those with the whole-stencil pattern to round-off.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "core/model/grid_step_problem.hpp"
#include "core/solver/grid_stepper.hpp"
#include "core/solver/yardstick.hpp"
#include "meshes/box_mesh.hpp"
#include "reference/hessian_assembly.hpp"
#include "reference/newton.hpp"
#include "tests/support/rubber.hpp"

namespace pbdlab {
namespace {

const GridKernel kPatternTestKernels[] = {GridKernel::kTrilinear, GridKernel::kQuadraticBSpline};

// The beam of GridStep.NewtonConvergesOnAGridStep: 1 x 0.25 x 0.25, 8 x 2 x 2 five-tet cells
// (160 tets, edges 0.125), E = 1e6, backward Euler dt 0.02 under gravity, in a grid of spacing
// 0.2 whose planes are off the mesh's lattice, held by a two-layer sticky x-min wall.
Problem patternTestBeam(int steps) {
  BoxMeshRecipe recipe;
  recipe.size = Vec3(1.0, 0.25, 0.25);
  recipe.cells = {8, 2, 2};
  Problem problem;
  problem.mesh = makeBoxMesh(recipe);
  problem.material = test::rubber(1e6);
  problem.gravity = Vec3(0.0, -9.81, 0.0);
  problem.time.integrator = Integrator::kBackwardEuler;
  problem.time.dt = 0.02;
  problem.time.num_steps = steps;
  problem.finalize("hessian pattern test");
  return problem;
}

BackgroundGrid patternTestGrid() { return BackgroundGrid(Vec3(-0.1, -0.37, -0.33), 0.2, Eigen::Vector3i(8, 5, 5)); }

GridWalls patternTestWalls() {
  GridWalls walls;
  walls["x-min"] = {GridWall::Kind::kSticky, 2};
  return walls;
}

Budget patternTestBudget() {
  Budget budget;
  budget.max_iterations = 60;
  budget.target_relative_residual = 1e-10;
  return budget;
}

// The beam after `steps` Newton grid steps; the stepper keeps the last step's grid Problem,
// weights and momentum.
struct PatternTestStep {
  Problem mesh_problem;
  std::unique_ptr<GridStepper> stepper;
};

std::unique_ptr<PatternTestStep> patternTestStep(GridKernel kernel, int steps) {
  auto out = std::make_unique<PatternTestStep>();
  out->mesh_problem = patternTestBeam(steps);
  out->stepper = std::make_unique<GridStepper>(out->mesh_problem, patternTestGrid(), kernel, patternTestWalls());
  NewtonSolver newton;
  for (int k = 0; k < steps; ++k) {
    IterationLog log(newton.logColumns());
    out->stepper->step(newton, k, patternTestBudget(), log);
  }
  return out;
}

using LowerEntry = std::pair<int, int>;  // (row, col), row >= col, free indices

std::set<LowerEntry> patternEntries(const SparseMatrix& pattern) {
  std::set<LowerEntry> entries;
  for (int c = 0; c < pattern.outerSize(); ++c)
    for (SparseMatrix::InnerIterator it(pattern, c); it; ++it) entries.insert({static_cast<int>(it.row()), c});
  return entries;
}

// The grid nodes an element's vertices touch (nonzero weight), read off the weights.
std::vector<int> touchedNodes(const Mesh& mesh, const GridWeights& weights, int e) {
  std::vector<int> nodes;
  for (Eigen::Index a = 0; a < mesh.elements.cols(); ++a) {
    const int v = mesh.elements(e, a);
    for (int k = 0; k < weights.nodes_per_point; ++k)
      if (weights.weight[weights.entry(v) + k] != 0.0) nodes.push_back(weights.node[weights.entry(v) + k]);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

// The pattern over the free grid DOFs of the last grid step of the beam is the diagonal plus,
// for every element, every lower pair of free DOFs of the grid nodes its vertices touch: the
// set of entries is counted here from the weights and the free DOFs alone. The slots keep, per
// element, the lower triangle over the DOFs of its touched nodes with a free DOF. Measured (the
// beam's elements, 0.125, span cells of 0.2): trilinear 12 to 23 touched nodes of 27 an
// element, the pattern 10,179 entries against the whole stencils' 10,863 (these 180 free DOFs
// are nearly all coupled either way), the slots 157,374 against 531,360; quadratic 27 to 60 of
// 64, 26,328 against 26,616, slots 849,951 against 2,964,480.
TEST(HessianPattern, EmbeddedPatternHoldsExactlyTheTouchedPairs) {
  for (GridKernel kernel : kPatternTestKernels) {
    SCOPED_TRACE(gridKernelName(kernel));
    const auto step = patternTestStep(kernel, 1);
    const Problem& problem = *step->stepper->lastGridProblem();
    const GridWeights& weights = *step->stepper->lastWeights();
    const Mesh& mesh = step->mesh_problem.mesh;
    const StepObjective objective(problem, problem.mesh.restPositionsFlat(), step->stepper->lastMomentum().velocity, 0);
    ASSERT_EQ(objective.terms().size(), 1u);
    const FreeDofHessian used(objective);
    const FreeDofHessian whole(objective, HessianPattern::kWholeStencils);

    std::set<LowerEntry> expected;
    size_t expected_slots = 0;
    int fewest = 1 << 30, most = 0;
    for (int i = 0; i < used.numFree(); ++i) expected.insert({i, i});
    for (int e = 0; e < mesh.numElements(); ++e) {
      const std::vector<int> nodes = touchedNodes(mesh, weights, e);
      fewest = std::min(fewest, static_cast<int>(nodes.size()));
      most = std::max(most, static_cast<int>(nodes.size()));
      int with_free = 0;
      for (int a : nodes) {
        bool any_free = false;
        for (int d = 0; d < 3; ++d) any_free = any_free || used.freeIndex(3 * a + d) >= 0;
        with_free += any_free ? 1 : 0;
        for (int b : nodes)
          for (int d = 0; d < 3; ++d)
            for (int f = 0; f < 3; ++f) {
              const int p = used.freeIndex(3 * a + d), q = used.freeIndex(3 * b + f);
              if (p >= 0 && q >= 0) expected.insert({std::max(p, q), std::min(p, q)});
            }
      }
      expected_slots += static_cast<size_t>(3 * with_free) * static_cast<size_t>(3 * with_free + 1) / 2;
    }
    const std::set<LowerEntry> entries = patternEntries(used.pattern());
    EXPECT_EQ(used.pattern().nonZeros(), static_cast<Eigen::Index>(expected.size()));
    EXPECT_TRUE(entries == expected);
    const std::set<LowerEntry> whole_entries = patternEntries(whole.pattern());
    EXPECT_TRUE(std::includes(whole_entries.begin(), whole_entries.end(), entries.begin(), entries.end()));

    const HessianSlots& slots = used.slots(0);
    ASSERT_TRUE(slots.usesNodeLists());
    EXPECT_EQ(slots.slot.size(), expected_slots);
    const int block_dofs = 3 * objective.terms()[0]->nodesPerStencil();
    EXPECT_EQ(whole.slots(0).slot.size(), static_cast<size_t>(mesh.numElements()) * block_dofs * (block_dofs + 1) / 2);
    std::printf("%s: %d free DOFs, pattern %zu entries (whole stencils %zu), slots %zu (whole %zu), %d to %d touched "
                "nodes of %d an element\n",
                gridKernelName(kernel).c_str(), used.numFree(), entries.size(), whole_entries.size(),
                slots.slot.size(), whole.slots(0).slot.size(), fewest, most,
                objective.terms()[0]->nodesPerStencil());
    EXPECT_LT(entries.size(), whole_entries.size());
  }
}

// Assembled at the beam's deformed grid positions (the last step's q, plus noise so that no
// state is special), the used-node pattern's matrix is the whole-stencil pattern's entry for
// entry, bit for bit (each slot sums the same contributions in the same order), and every
// entry the whole-stencil pattern holds beyond it is exactly 0: true and projected kinds.
TEST(HessianPattern, UsedNodePatternAssemblesTheWholeStencilMatrix) {
  for (GridKernel kernel : kPatternTestKernels) {
    const auto step = patternTestStep(kernel, 1);
    const Problem& problem = *step->stepper->lastGridProblem();
    const StepObjective objective(problem, problem.mesh.restPositionsFlat(), step->stepper->lastMomentum().velocity, 0);
    std::mt19937 rng(5);
    std::normal_distribution<double> noise(0.0, 0.01);
    Positions q = step->stepper->lastGridPositions();
    for (Eigen::Index i = 0; i < q.size(); ++i) q[i] += noise(rng);
    FreeDofHessian used(objective);
    FreeDofHessian whole(objective, HessianPattern::kWholeStencils);
    for (HessianKind kind : {HessianKind::kTrue, HessianKind::kProjected}) {
      SCOPED_TRACE(gridKernelName(kernel) + ", " + hessianKindName(kind));
      const Eigen::MatrixXd a = Eigen::MatrixXd(used.assemble(objective, q, kind));
      const Eigen::MatrixXd b = Eigen::MatrixXd(whole.assemble(objective, q, kind));
      ASSERT_GT(b.norm(), 0.0);
      EXPECT_EQ((a - b).cwiseAbs().maxCoeff(), 0.0);
      // The entries stored only by the whole-stencil pattern are its structural zeros.
      int structural_zeros = 0;
      const std::set<LowerEntry> kept = patternEntries(used.pattern());
      for (int c = 0; c < whole.matrix().outerSize(); ++c)
        for (SparseMatrix::InnerIterator it(whole.matrix(), c); it; ++it)
          if (!kept.count({static_cast<int>(it.row()), c})) {
            ++structural_zeros;
            EXPECT_EQ(it.value(), 0.0);
          }
      EXPECT_GT(structural_zeros, 0);
    }
  }
}

// Newton over three grid steps of the beam with either pattern: the same iterations, and
// positions, velocities and residuals equal to round-off (CHOLMOD orders and factors two
// different patterns). Measured: see the printed line.
TEST(HessianPattern, NewtonGridStepsEqualTheWholeStencilPatterns) {
  for (GridKernel kernel : kPatternTestKernels) {
    SCOPED_TRACE(gridKernelName(kernel));
    const Problem mesh_problem = patternTestBeam(3);
    NewtonOptions whole_options;
    whole_options.pattern = HessianPattern::kWholeStencils;
    NewtonSolver used_newton, whole_newton(whole_options);
    GridStepper used_stepper(mesh_problem, patternTestGrid(), kernel, patternTestWalls());
    GridStepper whole_stepper(mesh_problem, patternTestGrid(), kernel, patternTestWalls());
    const Positions start = used_stepper.positions();
    double worst_x = 0.0, worst_v = 0.0, worst_r = 0.0;
    for (int k = 0; k < 3; ++k) {
      IterationLog used_log(used_newton.logColumns()), whole_log(whole_newton.logColumns());
      const GridStepRecord a = used_stepper.step(used_newton, k, patternTestBudget(), used_log);
      const GridStepRecord b = whole_stepper.step(whole_newton, k, patternTestBudget(), whole_log);
      EXPECT_EQ(a.reason, StopReason::kConverged);
      EXPECT_EQ(a.iterations, b.iterations) << "step " << k;
      const double motion = (whole_stepper.positions() - start).norm();
      ASSERT_GT(motion, 0.0);
      worst_x = std::max(worst_x, (used_stepper.positions() - whole_stepper.positions()).norm() / motion);
      worst_v = std::max(worst_v, (used_stepper.velocities() - whole_stepper.velocities()).norm() /
                                      whole_stepper.velocities().norm());
      ASSERT_EQ(used_log.rows().size(), whole_log.rows().size());
      for (size_t r = 0; r < used_log.rows().size(); ++r)
        worst_r = std::max(worst_r,
                           std::abs(used_log.rows()[r].relative_residual - whole_log.rows()[r].relative_residual));
    }
    std::printf("%s: positions within %.1e of the motion, velocities %.1e, log rows' relative residuals within %.1e\n",
                gridKernelName(kernel).c_str(), worst_x, worst_v, worst_r);
    EXPECT_LE(worst_x, 1e-12);
    EXPECT_LE(worst_v, 1e-12);
    EXPECT_LE(worst_r, 1e-10);
  }
}

}  // namespace
}  // namespace pbdlab
