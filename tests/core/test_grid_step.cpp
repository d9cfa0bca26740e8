// The grid-based scheme's step (core/model/grid_step_problem.hpp, core/solver/grid_stepper.hpp):
// the identity embedding against the mesh problem, free fall over several steps, Newton on a
// grid step, the cantilever's trend as the grid refines, two blocks on a floor, the refusals
// and what each solver does with the grid problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <tuple>

#include "core/model/grid_step_problem.hpp"
#include "core/solver/grid_stepper.hpp"
#include "core/solver/solver.hpp"
#include "core/solver/yardstick.hpp"
#include "meshes/box_mesh.hpp"
#include "reference/newton.hpp"
#include "solvers/registry.hpp"
#include "tests/support/newton_solve.hpp"
#include "tests/support/rubber.hpp"

namespace pbdlab {
namespace {

// A five-tet box [origin, origin + size] of `cells` under gravity -9.81 y, backward Euler.
Problem gridStepBox(const Vec3& origin, const Vec3& size, std::array<int, 3> cells, double youngs_modulus, double dt,
                    int steps) {
  BoxMeshRecipe recipe;
  recipe.origin = origin;
  recipe.size = size;
  recipe.cells = cells;
  Problem problem;
  problem.mesh = makeBoxMesh(recipe);
  problem.material = test::rubber(youngs_modulus);
  problem.gravity = Vec3(0.0, -9.81, 0.0);
  problem.time.integrator = Integrator::kBackwardEuler;
  problem.time.dt = dt;
  problem.time.num_steps = steps;
  return problem;
}

Budget gridStepNewtonBudget(double target) {
  Budget budget;
  budget.max_iterations = 60;
  budget.target_relative_residual = target;
  return budget;
}

bool gridStepConverged(StopReason reason) {
  return reason == StopReason::kConverged || reason == StopReason::kRoundoff;
}

double gridStepMaxAbs(const VecX& v) { return v.size() == 0 ? 0.0 : v.cwiseAbs().maxCoeff(); }

GridWalls gridStepStickyXMin() {
  GridWalls walls;
  walls["x-min"] = {GridWall::Kind::kSticky, 1};
  return walls;
}

// (a) The identity embedding: the mesh's vertices are the grid's nodes (spacing 0.25, origin
// at the box's corner, the box's lattice exactly: every coordinate a binary fraction), so the
// trilinear W is 0/1 (each vertex weights only the node it sits on), the grid masses are the
// vertex masses, the x-min wall holds exactly the mesh's x-min face, and one grid step with
// Newton is the mesh problem's step with that face clamped. The velocity field has a spin and
// C_p is random: the affine part enters P2G only through x_i - x_p, which is 0 on every node a
// vertex weights. One step only: afterwards the vertices are off the nodes (the grid restarts
// undeformed), W interpolates and the schemes differ
// (GridStep.CantileverApproachesTheMeshSolutionAsTheGridRefines).
TEST(GridStep, IdentityEmbeddingStepEqualsTheMeshStep) {
  Problem mesh_problem = gridStepBox(Vec3::Zero(), Vec3(1.0, 0.5, 0.5), {4, 2, 2}, 1e5, 0.01, 1);
  mesh_problem.initial_velocity = Vec3(0.3, -0.2, 0.1);
  mesh_problem.initial_angular_velocity = Vec3(0.5, 1.0, -0.7);
  mesh_problem.initial_spin_center = Vec3(0.5, 0.25, 0.25);
  Problem clamped = mesh_problem;
  clamped.dirichlet.push_back({"x-min", {true, true, true}, {}});
  mesh_problem.finalize();
  clamped.finalize();

  const BackgroundGrid grid(Vec3::Zero(), 0.25, Eigen::Vector3i(5, 3, 3));
  GridStepper stepper(mesh_problem, grid, GridKernel::kTrilinear, gridStepStickyXMin());
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<Mat3> affine(static_cast<size_t>(mesh_problem.numNodes()));
  for (Mat3& C : affine) C = Mat3::NullaryExpr([&] { return noise(rng); });
  const State start = initialState(mesh_problem);
  stepper.setState(start.x, start.v, affine);

  NewtonSolver newton;
  IterationLog grid_log(newton.logColumns());
  const GridStepRecord record = stepper.step(newton, 0, gridStepNewtonBudget(1e-12), grid_log);
  ASSERT_TRUE(gridStepConverged(record.reason)) << stopReasonName(record.reason);

  // The reasoning: each vertex has one node of weight 1 at its own position; P2G gives that
  // node the vertex's mass and velocity (the C_p offsets vanish), the other nodes nothing.
  const GridWeights& W = *stepper.lastWeights();
  const GridMomentum& P2G = stepper.lastMomentum();
  std::vector<int> node_of(static_cast<size_t>(mesh_problem.numNodes()), -1);
  double largest_offset = 0.0;
  for (int p = 0; p < W.numPoints(); ++p)
    for (int a = 0; a < W.nodes_per_point; ++a) {
      const size_t k = W.entry(p) + static_cast<size_t>(a);
      if (W.weight[k] == 0.0) continue;
      ASSERT_EQ(W.weight[k], 1.0) << "vertex " << p;
      node_of[static_cast<size_t>(p)] = W.node[k];
      largest_offset = std::max(largest_offset, (grid.nodePosition(W.node[k]) - W.point(p)).cwiseAbs().maxCoeff());
    }
  EXPECT_EQ(largest_offset, 0.0);  // x_i - x_p: what C_p multiplies
  for (int p = 0; p < mesh_problem.numNodes(); ++p) {
    const int i = node_of[static_cast<size_t>(p)];
    EXPECT_EQ(P2G.mass[i], mesh_problem.nodeMasses()[p]) << "vertex " << p;
    EXPECT_LE((P2G.velocity.segment<3>(3 * i) - start.v.segment<3>(3 * p)).norm(), 1e-15) << "vertex " << p;
  }
  EXPECT_EQ(record.active_nodes, mesh_problem.numNodes());
  EXPECT_EQ(record.free_dofs, static_cast<int>(clamped.freeDofs().size()));

  // The mesh problem's step with the x-min face clamped.
  NewtonSolver mesh_newton;
  mesh_newton.setup(clamped);
  IterationLog mesh_log(mesh_newton.logColumns());
  State mesh_state = initialState(clamped);
  const StepResult mesh_result =
      advanceOneStep(mesh_newton, clamped, mesh_state, gridStepNewtonBudget(1e-12), mesh_log);
  ASSERT_TRUE(gridStepConverged(mesh_result.reason));

  const double motion = gridStepMaxAbs(mesh_state.x - start.x);
  const double dx = gridStepMaxAbs(stepper.positions() - mesh_state.x) / motion;
  const double dv = gridStepMaxAbs(stepper.velocities() - mesh_state.v) / gridStepMaxAbs(mesh_state.v);
  // The mesh's yardstick at the grid's answer.
  const StepObjective mesh_objective(clamped, start.x, start.v, 0);
  const double mesh_residual = mesh_objective.relativeResidual(mesh_objective.residualNorm(stepper.positions()));
  std::printf("identity embedding, one step: |x_grid - x_mesh| / |x_mesh - x^0| = %.2e, velocities %.2e, the mesh "
              "yardstick at x_grid %.2e (grid %d Newton iterations, mesh %d)\n",
              dx, dv, mesh_residual, record.iterations, mesh_result.iterations);
  EXPECT_GT(motion, 1e-3);
  EXPECT_LE(dx, 1e-9);
  EXPECT_LE(dv, 1e-9);
  EXPECT_LE(mesh_residual, 1e-9);
  // G2P: each vertex takes its node's velocity.
  for (int p = 0; p < mesh_problem.numNodes(); ++p) {
    const int i = node_of[static_cast<size_t>(p)];
    const Vec3 v_grid = (stepper.lastGridPositions().segment<3>(3 * i) - grid.nodePosition(i)) / clamped.stepDt();
    EXPECT_LE((stepper.velocities().segment<3>(3 * p) - v_grid).norm(), 1e-12 * (1.0 + v_grid.norm()));
  }
}

// (a) Free fall with a uniform initial velocity, both kernels, the box inside cells: no vertex
// on a grid plane, where trilinear G2P's C_p reads a node of zero weight, which at a body's max
// face has no mass and no velocity (docs/grid.md, "Known issues"). Then the grid scheme
// reproduces a translation exactly (partition of unity, affine reproduction; the embedded
// energy is zero and Newton ends in one iteration), so five steps equal the mesh problem's five
// steps: gravity m_i g = W^T (m_p g), t and dt of each step, P2G and G2P of a uniform field
// (C_p = 0) and x_p = W q together.
TEST(GridStep, FreeFallEqualsTheMeshProblemOverSeveralSteps) {
  const int steps = 5;
  Problem mesh_problem = gridStepBox(Vec3(0.13, 0.41, 0.27), Vec3(0.5, 0.25, 0.25), {4, 2, 2}, 1e5, 0.01, steps);
  mesh_problem.initial_velocity = Vec3(0.2, 0.5, -0.1);
  mesh_problem.finalize();
  NewtonSolver mesh_newton;
  mesh_newton.setup(mesh_problem);
  IterationLog mesh_log(mesh_newton.logColumns());
  State mesh_state = initialState(mesh_problem);
  const Positions x0 = mesh_state.x;
  std::vector<Positions> mesh_x;
  for (int k = 0; k < steps; ++k) {
    ASSERT_TRUE(gridStepConverged(
        advanceOneStep(mesh_newton, mesh_problem, mesh_state, gridStepNewtonBudget(1e-12), mesh_log).reason));
    mesh_x.push_back(mesh_state.x);
  }
  for (GridKernel kernel : {GridKernel::kTrilinear, GridKernel::kQuadraticBSpline}) {
    SCOPED_TRACE(gridKernelName(kernel));
    const auto box = boundingBox(x0);
    GridStepper stepper(mesh_problem, BackgroundGrid::covering(box.first, box.second, 0.2, 2), kernel, GridWalls{});
    NewtonSolver newton;
    IterationLog log(newton.logColumns());
    double worst = 0.0, worst_affine = 0.0;
    for (int k = 0; k < steps; ++k) {
      const GridStepRecord record = stepper.step(newton, k, gridStepNewtonBudget(1e-12), log);
      ASSERT_TRUE(gridStepConverged(record.reason)) << "step " << k;
      worst = std::max(worst, gridStepMaxAbs(stepper.positions() - mesh_x[static_cast<size_t>(k)]) /
                                  gridStepMaxAbs(mesh_x[static_cast<size_t>(k)] - x0));
      for (const Mat3& C : stepper.affineVelocities()) worst_affine = std::max(worst_affine, C.cwiseAbs().maxCoeff());
    }
    std::printf("free fall, %s: %d steps, largest |x_grid - x_mesh| / |x_mesh - x^0| %.2e, largest |C_p| %.2e /s\n",
                gridKernelName(kernel).c_str(), steps, worst, worst_affine);
    EXPECT_LE(worst, 1e-12);
    EXPECT_LE(worst_affine, 1e-10);
  }
}

// (b) Newton on a grid step of a clamped beam embedded in a grid that does not fit its lattice
// (spacing 0.2 against the mesh's 0.125, planes off the vertices), both kernels: the yardstick
// in q reaches 1e-10 relative, and the free DOFs are exactly those of nodes with mass outside
// the wall.
TEST(GridStep, NewtonConvergesOnAGridStep) {
  Problem mesh_problem = gridStepBox(Vec3::Zero(), Vec3(1.0, 0.25, 0.25), {8, 2, 2}, 1e6, 0.02, 2);
  mesh_problem.finalize();
  const BackgroundGrid grid(Vec3(-0.1, -0.37, -0.33), 0.2, Eigen::Vector3i(8, 5, 5));
  GridWalls walls;
  walls["x-min"] = {GridWall::Kind::kSticky, 2};
  for (GridKernel kernel : {GridKernel::kTrilinear, GridKernel::kQuadraticBSpline}) {
    SCOPED_TRACE(gridKernelName(kernel));
    GridStepper stepper(mesh_problem, grid, kernel, walls);
    NewtonSolver newton;
    for (int k = 0; k < 2; ++k) {
      IterationLog log(newton.logColumns());
      const GridStepRecord record = stepper.step(newton, k, gridStepNewtonBudget(1e-10), log);
      std::printf("Newton, %s, step %d: %s after %d iterations, relative residual %.2e (|r(q_ref)| %.2e), %d of %d "
                  "nodes with mass, %d free DOFs, largest move %.3f cells\n",
                  gridKernelName(kernel).c_str(), k + 1, stopReasonName(record.reason).c_str(), record.iterations,
                  record.relative_residual, record.reference_residual, record.active_nodes, record.grid_nodes,
                  record.free_dofs, record.max_displacement_cells);
      EXPECT_EQ(record.reason, StopReason::kConverged);
      EXPECT_LE(record.relative_residual, 1e-10);
      EXPECT_GT(record.reference_residual, 0.0);

      const Problem& problem = *stepper.lastGridProblem();
      ASSERT_EQ(problem.numNodes(), grid.numNodes());
      int massless = 0, held_with_mass = 0;
      std::vector<int> expected_free;
      for (int i = 0; i < grid.numNodes(); ++i) {
        const bool has_mass = stepper.lastMomentum().mass[i] > 0.0;
        const bool in_wall = grid.nodeCoordinates(i)[0] < 2;
        massless += has_mass ? 0 : 1;
        held_with_mass += has_mass && in_wall ? 1 : 0;
        if (has_mass && !in_wall)
          for (int d = 0; d < 3; ++d) expected_free.push_back(3 * i + d);
      }
      EXPECT_GT(massless, 0);        // the grid's margin: excluded
      EXPECT_GT(held_with_mass, 0);  // the wall holds nodes the beam weights
      EXPECT_EQ(problem.freeDofs(), expected_free);
      EXPECT_EQ(record.free_dofs, static_cast<int>(expected_free.size()));
      // The beam moved, and the part in the wall's nodes' cells did not.
      EXPECT_GT(record.max_displacement_cells, 1e-3);
    }
  }
}

// The tip of the clamped beam of GridStep.NewtonConvergesOnAGridStep: the mean y of its x-max
// face.
double gridStepTipY(const Problem& problem, const Positions& x) {
  double sum = 0.0;
  const std::vector<int>& tip = problem.mesh.node_sets.at("x-max");
  for (int i : tip) sum += x[3 * i + 1];
  return sum / static_cast<double>(tip.size());
}

// The beam's tip sag on a grid of spacing H aligned with x = 0 (clamped by a one-layer sticky
// x-min wall): x from 0 to one cell past the tip, two cells below the beam, one above and one
// on either side in z. Adds the steps' iterations and seconds to `total`.
double gridStepBeamSag(const Problem& mesh_problem, const Problem& clamped, double H, int steps,
                       GridStepRecord& total) {
  const BackgroundGrid grid(Vec3(0.0, -2.0 * H, -H), H,
                            Eigen::Vector3i(static_cast<int>(std::lround(1.0 / H)) + 2,
                                            static_cast<int>(std::ceil(0.25 / H - 1e-9)) + 4,
                                            static_cast<int>(std::ceil(0.25 / H - 1e-9)) + 3));
  GridStepper stepper(mesh_problem, grid, GridKernel::kTrilinear, gridStepStickyXMin());
  NewtonSolver newton;
  IterationLog log(newton.logColumns());
  for (int k = 0; k < steps; ++k) {
    const GridStepRecord record = stepper.step(newton, k, gridStepNewtonBudget(1e-10), log);
    EXPECT_TRUE(gridStepConverged(record.reason)) << "spacing " << H << ", step " << k;
    total.iterations += record.iterations;
    total.weights_p2g_seconds += record.weights_p2g_seconds;
    total.problem_seconds += record.problem_seconds;
    total.setup_seconds += record.setup_seconds;
    total.solve_seconds += record.solve_seconds;
    total.g2p_seconds += record.g2p_seconds;
  }
  return gridStepTipY(clamped, stepper.positions()) - gridStepTipY(clamped, initialState(clamped).x);
}

// (c) The trend: a beam (1 x 0.25 x 0.25, 8 x 2 x 2 cells of h = 0.125, E = 1e7) clamped at
// x = 0 by the wall on grids of spacing 4h, 2h and h, under gravity, Newton to 1e-10: the tip's
// sag approaches the mesh problem's (x-min face clamped) as the grid refines. Coarse grids
// stiffen the beam (its displacement is the grid's trilinear field) and widen the clamp (every
// vertex of the first cell leans on the wall's nodes).
//  - One step of 0.1 s (omega dt ~ 2.5 for the first bending mode: the sag is ~85% of the
//    static one): every spacing, h being the identity embedding (to round-off).
//  - Four steps of 0.02 s on 4h and 2h. At h the second step is refused: the vertices have left
//    the nodes, and an element whose vertices moved apart across a grid plane (one by -1e-6 h,
//    its neighbour by +1e-6 h along x) touches 4 nodes on that axis, more than EmbeddedTerm's
//    3x3x3 block (printed, not asserted: that is the embedded term's limit, not the step's).
//    At 2h the beam's y-max and z-max faces lie on grid planes (the C_p issue of
//    GridStep.FreeFallEqualsTheMeshProblemOverSeveralSteps acts there from the second step).
TEST(GridStep, CantileverApproachesTheMeshSolutionAsTheGridRefines) {
  const double h = 0.125;
  for (const auto& [steps, dt] : {std::pair{1, 0.1}, std::pair{4, 0.02}}) {
    Problem mesh_problem = gridStepBox(Vec3::Zero(), Vec3(1.0, 0.25, 0.25), {8, 2, 2}, 1e7, dt, steps);
    Problem clamped = mesh_problem;
    clamped.dirichlet.push_back({"x-min", {true, true, true}, {}});
    mesh_problem.finalize();
    clamped.finalize();
    const double mesh_sag =
        gridStepTipY(clamped, test::solveWithNewton(clamped, 1e-10)) - gridStepTipY(clamped, initialState(clamped).x);
    std::printf("cantilever, %d step(s) of %.2f s: the mesh problem's tip sag %.6e\n", steps, dt, mesh_sag);
    std::printf("%8s %14s %12s %6s %10s %10s %10s %10s %10s\n", "spacing", "tip sag", "|sag - mesh|", "iters",
                "W+P2G s", "problem s", "setup s", "solve s", "G2P s");
    std::vector<double> distances;
    for (int factor : {4, 2, 1}) {
      GridStepRecord total;
      double sag = 0.0;
      try {
        sag = gridStepBeamSag(mesh_problem, clamped, factor * h, steps, total);
      } catch (const std::invalid_argument& error) {
        ASSERT_GT(steps, 1) << error.what();
        std::printf("%8.4f refused: %s\n", factor * h, error.what());
        continue;
      }
      distances.push_back(std::abs(sag - mesh_sag));
      std::printf("%8.4f %14.6e %12.3e %6d %10.2e %10.2e %10.2e %10.2e %10.2e\n", factor * h, sag, distances.back(),
                  total.iterations, total.weights_p2g_seconds, total.problem_seconds, total.setup_seconds,
                  total.solve_seconds, total.g2p_seconds);
    }
    EXPECT_LT(mesh_sag, -5e-3);
    ASSERT_GE(distances.size(), 2u);
    for (size_t k = 1; k < distances.size(); ++k) EXPECT_LT(distances[k], distances[k - 1]) << "grid " << k;
    if (steps == 1) {
      ASSERT_EQ(distances.size(), 3u);
      EXPECT_LE(distances[2], 1e-9 * std::abs(mesh_sag));  // the identity embedding
    }
  }
}

// (d) Two blocks (0.5 x 0.25 x 0.5, 4 x 2 x 4 cells, E = 1e5) one above the other, 0.6 apart,
// dropped onto a sticky floor (the two lowest node layers, y = 0 and 0.25; the lower block
// starts at y = 0.3, in the cell above), grid spacing 0.25, no vertex on a grid plane, 50 steps
// of 0.01 s with Newton. Bodies interact through the grid once their vertices weight a common
// node: at rest the nearest ones lie in the cells [0.5, 0.75] and [1, 1.25], so the upper block
// falls freely for 0.15 m, then lands on the lower one (at ~1.7 m/s; at most 0.09 cells a
// step). Where they share nodes they move with one velocity field, and x = W q maps each
// undeformed cell one-to-one while no cell inverts, so a vertex of the upper block cannot pass
// one of the lower block: each bottom vertex of the upper block stays above the top vertex of
// the lower block that starts below it (same x and z), and no vertex goes below the floor's
// nodes at y = 0.25, to 1e-9 (round-off of O(1) positions over 50 steps).
TEST(GridStep, BlocksDroppedOnEachOtherDoNotInterpenetrate) {
  Problem problem;
  for (const auto& [name, y] : {std::pair{"lower", 0.3}, std::pair{"upper", 1.15}}) {
    BoxMeshRecipe recipe;
    recipe.origin = Vec3(0.3, y, 0.3);
    recipe.size = Vec3(0.5, 0.25, 0.5);
    recipe.cells = {4, 2, 4};
    problem.bodies.push_back(Body{name, makeBoxMesh(recipe), test::rubber(1e5), {}, {}, 0.0});
  }
  problem.gravity = Vec3(0.0, -9.81, 0.0);
  problem.time.integrator = Integrator::kBackwardEuler;
  problem.time.dt = 0.01;
  problem.time.num_steps = 50;
  problem.finalize();
  const std::vector<int>& lower_top = problem.mesh.node_sets.at("lower/y-max");
  const std::vector<int>& upper_bottom = problem.mesh.node_sets.at("upper/y-min");
  // Pairs (upper bottom vertex, lower top vertex) with the same rest x and z.
  std::vector<std::pair<int, int>> pairs;
  for (int u : upper_bottom)
    for (int l : lower_top) {
      const Vec3 d = problem.mesh.restPosition(u) - problem.mesh.restPosition(l);
      if (std::abs(d.x()) < 1e-12 && std::abs(d.z()) < 1e-12) pairs.emplace_back(u, l);
    }
  ASSERT_EQ(pairs.size(), upper_bottom.size());

  GridWalls walls;
  walls["y-min"] = {GridWall::Kind::kSticky, 2};
  GridStepper stepper(problem, BackgroundGrid(Vec3::Zero(), 0.25, Eigen::Vector3i(6, 7, 6)), GridKernel::kTrilinear,
                      walls);
  NewtonSolver newton;
  IterationLog log(newton.logColumns());
  const int first_upper = problem.bodyFirstNode(1);
  double smallest_gap = 1e300, lowest = 1e300, largest_cfl = 0.0, upper_drop = 0.0;
  for (int k = 0; k < problem.time.num_steps; ++k) {
    const GridStepRecord record = stepper.step(newton, k, gridStepNewtonBudget(1e-10), log);
    ASSERT_TRUE(gridStepConverged(record.reason)) << "step " << k << ": " << record.relative_residual;
    largest_cfl = std::max(largest_cfl, record.max_displacement_cells);
    const Positions& x = stepper.positions();
    for (const auto& [u, l] : pairs) smallest_gap = std::min(smallest_gap, x[3 * u + 1] - x[3 * l + 1]);
    for (int i = 0; i < problem.numNodes(); ++i) lowest = std::min(lowest, x[3 * i + 1]);
    upper_drop = problem.mesh.restPosition(first_upper).y() - x[3 * first_upper + 1];
  }
  std::printf("two blocks, %d steps: smallest gap between the upper block's bottom and the lower block's top %.4f "
              "(0.6 at rest), lowest vertex y %.4f, the upper block dropped %.4f, largest move %.3f cells\n",
              problem.time.num_steps, smallest_gap, lowest, upper_drop, largest_cfl);
  EXPECT_GT(upper_drop, 0.15);  // it fell onto the lower block
  EXPECT_GE(smallest_gap, -1e-9);
  EXPECT_GE(lowest, 0.25 - 1e-9);
  EXPECT_LT(largest_cfl, 0.4);
}

// (e) Refusals, each with a message that says why.
TEST(GridStep, RefusesWhatItCannotTakeWithClearMessages) {
  const BackgroundGrid grid(Vec3(-0.25, -0.25, -0.25), 0.25, Eigen::Vector3i(7, 5, 5));
  auto refusal = [&](Problem problem) {
    problem.finalize();
    try {
      GridStepper stepper(problem, grid, GridKernel::kTrilinear, GridWalls{});
    } catch (const std::invalid_argument& error) {
      EXPECT_EQ(gridStepRejection(problem), error.what());
      return std::string(error.what());
    }
    ADD_FAILURE() << "accepted";
    return std::string();
  };
  const Problem base = gridStepBox(Vec3::Zero(), Vec3(1.0, 0.5, 0.5), {4, 2, 2}, 1e5, 0.01, 1);

  Problem dirichlet = base;
  dirichlet.dirichlet.push_back({"x-min", {true, true, true}, {}});
  const std::string no_dirichlet = refusal(dirichlet);
  EXPECT_NE(no_dirichlet.find("Dirichlet"), std::string::npos) << no_dirichlet;
  EXPECT_NE(no_dirichlet.find("constraint on the several grid nodes"), std::string::npos) << no_dirichlet;
  EXPECT_NE(no_dirichlet.find("grid wall"), std::string::npos) << no_dirichlet;

  Problem two;
  two.bodies.push_back(Body{"a", base.mesh, test::rubber(1e5), {}, {}, 0.0});
  two.bodies.push_back(Body{"b", base.mesh, test::rubber(1e5), {}, {}, 0.0});
  two.time = base.time;
  two.collisions.enabled = true;
  const std::string no_collisions = refusal(two);
  EXPECT_NE(no_collisions.find("collisions off"), std::string::npos) << no_collisions;

  Problem quasistatic = base;
  quasistatic.time.integrator = Integrator::kQuasistatic;
  const std::string no_quasistatic = refusal(quasistatic);
  EXPECT_NE(no_quasistatic.find("quasistatic"), std::string::npos) << no_quasistatic;

  // A particle outside the grid: named, with its step.
  Problem free = base;
  free.finalize();
  GridStepper stepper(free, grid, GridKernel::kTrilinear, GridWalls{});
  Positions x = stepper.positions();
  x[3 * 5 + 1] = 2.0;  // vertex 5 above the grid's top (y = 0.75)
  stepper.setState(x, stepper.velocities());
  NewtonSolver newton;
  IterationLog log(newton.logColumns());
  try {
    stepper.step(newton, 7, gridStepNewtonBudget(1e-10), log);
    ADD_FAILURE() << "a particle outside the grid was accepted";
  } catch (const std::invalid_argument& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("grid step 7"), std::string::npos) << what;
    EXPECT_NE(what.find("particle 5 "), std::string::npos) << what;
    EXPECT_NE(what.find("leaves the grid"), std::string::npos) << what;
  }
  // A wall thicker than the grid.
  GridWalls thick;
  thick["z-max"] = {GridWall::Kind::kSlip, 6};
  GridStepper thick_stepper(free, grid, GridKernel::kTrilinear, thick);
  try {
    thick_stepper.step(newton, 0, gridStepNewtonBudget(1e-10), log);
    ADD_FAILURE() << "a wall of 6 layers on 5 was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("grid wall z-max: thickness 6"), std::string::npos) << error.what();
  }
}

// What every registered solver does with a grid step's Problem (no bodies, no element blocks,
// EmbeddedTerms only): those that build constraints from a solid body's elements refuse it
// through rejectionReason, and their setup throws std::invalid_argument with that reason (not a
// std::logic_error); the others run. Newton, PBNG, VBD and the grid XPBD family take a step of
// the beam of GridStep.NewtonConvergesOnAGridStep (trilinear): Newton converges, the others
// reduce the residual in 100 iterations.
TEST(GridStep, EverySolverRunsOrRefusesTheGridProblem) {
  Problem mesh_problem = gridStepBox(Vec3::Zero(), Vec3(1.0, 0.25, 0.25), {8, 2, 2}, 1e6, 0.02, 1);
  mesh_problem.finalize();
  const BackgroundGrid grid(Vec3(-0.1, -0.37, -0.33), 0.2, Eigen::Vector3i(8, 5, 5));
  GridWalls walls;
  walls["x-min"] = {GridWall::Kind::kSticky, 2};
  const std::vector<std::string> runs = {"newton", "pbng", "vbd", "grid_xpbd", "grid_b_pxpbd"};
  for (const std::string& name : solverNames()) {
    SCOPED_TRACE(name);
    // B-PXPBD's zeta 0.5 diverges on this stiff beam (dt^2 E / (rho h^2) about 26), as on meshes;
    // 0.9 is the value the falling-block cases use.
    const nlohmann::json options =
        name == "grid_b_pxpbd" ? nlohmann::json{{"zeta", 0.9}} : nlohmann::json::object();
    std::unique_ptr<Solver> solver = makeSolver(name, options, "test", "/solver/options");
    GridStepper stepper(mesh_problem, grid, GridKernel::kTrilinear, walls);
    IterationLog log(solver->logColumns());
    Budget budget = gridStepNewtonBudget(1e-10);
    budget.max_iterations = name == "newton" ? 60 : 100;
    const bool expected_to_run = std::find(runs.begin(), runs.end(), name) != runs.end();
    try {
      const GridStepRecord record = stepper.step(*solver, 0, budget, log);
      std::printf("%-20s runs: %s after %d iterations, relative residual %.2e\n", name.c_str(),
                  stopReasonName(record.reason).c_str(), record.iterations, record.relative_residual);
      EXPECT_TRUE(expected_to_run);
      EXPECT_LT(record.relative_residual, name == "newton" ? 1e-10 : 0.5);
      EXPECT_EQ(solver->rejectionReason(*stepper.lastGridProblem()), "");
    } catch (const std::invalid_argument& error) {
      ASSERT_NE(stepper.lastGridProblem(), nullptr) << error.what();
      const std::string reason = solver->rejectionReason(*stepper.lastGridProblem());
      std::printf("%-20s refuses: %s\n", name.c_str(), reason.c_str());
      EXPECT_FALSE(expected_to_run) << error.what();
      EXPECT_FALSE(reason.empty()) << error.what();
      EXPECT_EQ(reason, error.what());
    }
  }
}


// A motion of two ramped stages: a turn about an off-origin axis, then a translation.
BoundaryMotion gridStepTwistAndShift() {
  MotionStage turn;
  turn.kind = MotionStage::Kind::kRotate;
  turn.t_start = 0.0;
  turn.t_end = 1.0;
  turn.axis_point = Vec3(0.3, -0.2, 0.5);
  turn.axis_direction = Vec3(1.0, 0.4, -0.2);
  turn.angle = 2.5;  // radians over the second
  MotionStage shift;
  shift.kind = MotionStage::Kind::kTranslate;
  shift.t_start = 0.25;
  shift.t_end = 0.75;
  shift.translation = Vec3(0.2, -0.1, 0.05);
  BoundaryMotion motion;
  motion.stages = {turn, shift};
  return motion;
}

// The increment over [t0, t1] carries motion(t0)'s image of every point to motion(t1)'s, and is
// the identity at t0; rigidMapAt is the motion's map.
TEST(GridStep, MovingWallIncrementComposesTheMotion) {
  const BoundaryMotion motion = gridStepTwistAndShift();
  std::mt19937 random(7);
  std::uniform_real_distribution<double> coordinate(-1.0, 1.0);
  for (const auto& [t0, t1] : {std::pair{0.0, 0.01}, std::pair{0.2, 0.3}, std::pair{0.5, 0.9}, std::pair{0.9, 1.2}}) {
    const BoundaryMotion increment = motionIncrement(motion, t0, t1);
    const RigidMap map0 = rigidMapAt(motion, t0);
    EXPECT_LT((map0.rotation.transpose() * map0.rotation - Mat3::Identity()).norm(), 1e-14);
    for (int k = 0; k < 10; ++k) {
      const Vec3 X(coordinate(random), coordinate(random), coordinate(random));
      EXPECT_LT((map0(X) - motion.positionAt(X, t0)).norm(), 1e-14);
      const Vec3 y = motion.positionAt(X, t0);
      EXPECT_LT((increment.positionAt(y, t1) - motion.positionAt(X, t1)).norm(), 1e-13) << t0 << " " << t1;
      EXPECT_LT((increment.positionAt(y, t0) - y).norm(), 1e-15);
    }
  }
}

// A block inside a moving wall that holds every node it weights moves rigidly with the wall:
// the grid's field is affine there (q_i = A X_i), which the weights reproduce exactly, so after
// each step every vertex is at motion(t) X to round-off; the nodes the wall holds are counted
// from the box moved by the motion (the block orbits the axis, and stays inside).
TEST(GridStep, BlockInsideAMovingWallFollowsItsMotion) {
  Problem mesh_problem = gridStepBox(Vec3(0.6, 0.6, 0.6), Vec3(0.5, 0.25, 0.25), {4, 2, 2}, 1e5, 0.01, 20);
  mesh_problem.gravity = Vec3(0.0, -9.81, 0.0);
  mesh_problem.finalize();
  const BackgroundGrid grid(Vec3(-0.5, -0.5, -0.5), 0.25, Eigen::Vector3i(14, 11, 11));
  GridWalls walls;
  GridMovingWall wall;
  wall.name = "carrier";
  // The block with a margin of 0.5 > sqrt(3) h: the nodes of its vertices' cells stay inside
  // however the motion turns the box against the grid's axes.
  wall.box_min = Vec3(0.1, 0.1, 0.1);
  wall.box_max = Vec3(1.6, 1.35, 1.35);
  MotionStage turn;
  turn.kind = MotionStage::Kind::kRotate;
  turn.t_end = 0.2;
  turn.axis_point = Vec3(0.5, 0.5, 0.4);
  turn.axis_direction = Vec3(0.2, 0.1, 1.0);
  turn.angle = 0.6;
  MotionStage shift;
  shift.kind = MotionStage::Kind::kTranslate;
  shift.t_end = 0.2;
  shift.translation = Vec3(0.6, 0.05, 0.0);  // further than the box's margin: the box must travel along
  wall.motion.stages = {turn, shift};
  walls.moving.push_back(wall);
  GridStepper stepper(mesh_problem, grid, GridKernel::kTrilinear, walls);
  NewtonSolver newton;
  IterationLog log(newton.logColumns());
  double largest = 0.0;
  for (int k = 0; k < mesh_problem.time.num_steps; ++k) {
    stepper.step(newton, k, gridStepNewtonBudget(1e-10), log);
    const double t = mesh_problem.timeAt(k + 1);
    const Problem& problem = *stepper.lastGridProblem();
    // The wall's nodes: those of the box moved to the step's start, held at the increment.
    const std::vector<int> held = movingWallNodes(grid, wall, mesh_problem.timeAt(k));
    EXPECT_EQ(problem.mesh.node_sets.at("moving/carrier"), held);
    for (int i = 0; i < grid.numNodes(); ++i)
      if (stepper.lastMomentum().mass[i] > 0.0)
        ASSERT_TRUE(std::binary_search(held.begin(), held.end(), i)) << "step " << k << ": node " << i;
    for (int p = 0; p < mesh_problem.numNodes(); ++p) {
      const Vec3 expected = wall.motion.positionAt(mesh_problem.mesh.restPosition(p), t);
      largest = std::max(largest, (stepper.positions().segment<3>(3 * p) - expected).norm());
    }
  }
  std::printf("a block carried by a moving wall, 20 steps: largest distance to the motion %.2e m\n", largest);
  EXPECT_LT(largest, 1e-12);
}

// Kinematic colliders as grid boundary conditions: the nodes strictly inside each shape are
// held (counted here from the lattice directly), every component, and the collider's penalty
// term is not embedded.
TEST(GridStep, ColliderHoldsTheGridNodesInsideIt) {
  const BackgroundGrid grid(Vec3(-0.5, -0.5, -0.5), 0.25, Eigen::Vector3i(8, 8, 8));
  const Vec3 centre(0.3, 0.1, 0.05);
  const std::vector<Collider> colliders = {
      Collider{"ball", SphereCollider{centre, 0.6}, 1e8, 1e-9},
      Collider{"tilted floor", makePlaneCollider(Vec3(0.0, -0.2, 0.0), Vec3(0.3, 1.0, 0.0)), 1e8, 1e-9},
      Collider{"box", BoxCollider{Vec3(1.0, 1.0, 1.0), Vec3(0.3, 0.2, 0.6)}, 1e8, 1e-9}};
  const std::vector<std::function<bool(const Vec3&)>> inside = {
      [&](const Vec3& X) { return (X - centre).norm() < 0.6; },
      [&](const Vec3& X) { return 0.3 * X.x() + (X.y() + 0.2) < 0.0; },
      [&](const Vec3& X) { return ((X - Vec3(1.0, 1.0, 1.0)).cwiseAbs() - Vec3(0.3, 0.2, 0.6)).maxCoeff() < 0.0; }};
  for (size_t c = 0; c < colliders.size(); ++c) {
    std::vector<int> expected;
    for (int k = 0; k < 8; ++k)  // 8 nodes an axis: -0.5 to 1.25
      for (int j = 0; j < 8; ++j)
        for (int i = 0; i < 8; ++i)
          if (inside[c](Vec3(-0.5, -0.5, -0.5) + 0.25 * Vec3(i, j, k))) expected.push_back(i + 8 * (j + 8 * k));
    std::sort(expected.begin(), expected.end());
    ASSERT_FALSE(expected.empty()) << colliders[c].name;
    EXPECT_EQ(colliderGridNodes(grid, colliders[c]), expected) << colliders[c].name;
  }

  // In a grid step: the sets, fixed DOFs, no penalty term among the grid problem's terms.
  Problem mesh_problem = gridStepBox(Vec3(0.6, 0.75, 0.6), Vec3(0.5, 0.25, 0.25), {4, 2, 2}, 1e5, 0.01, 1);
  mesh_problem.colliders = colliders;
  mesh_problem.finalize();
  ASSERT_EQ(mesh_problem.colliderTerms().size(), 3u);
  ASSERT_EQ(gridStepRejection(mesh_problem), "");
  GridStepper stepper(mesh_problem, grid, GridKernel::kTrilinear, GridWalls{});
  NewtonSolver newton;
  IterationLog log(newton.logColumns());
  stepper.step(newton, 0, gridStepNewtonBudget(1e-10), log);
  const Problem& problem = *stepper.lastGridProblem();
  EXPECT_EQ(problem.terms().size(), mesh_problem.terms().size() - 3);
  EXPECT_TRUE(problem.colliderTerms().empty());
  for (size_t c = 0; c < colliders.size(); ++c) {
    const std::vector<int>& held = problem.mesh.node_sets.at("collider/" + std::to_string(c));
    EXPECT_EQ(held, colliderGridNodes(grid, colliders[c]));
    for (int node : held)
      for (int d = 0; d < 3; ++d) EXPECT_TRUE(problem.isFixedDof(3 * node + d)) << c << " node " << node;
  }
}

// A block dropped onto a sphere collider (no floor under it but the grid's, far below) lands
// on the nodes the sphere holds and stays on the sphere: its vertices go at most one cell
// diagonal sqrt(3) h into it (a vertex whose cell's eight nodes are all inside cannot move),
// its centre never drops below the sphere's top, and it rebounds (an elastic block) slower than
// it landed (the held nodes keep their share of the momentum).
TEST(GridStep, BlockDroppedOnASphereColliderStaysOnIt) {
  const double h = 0.15, radius = 0.4;
  const Vec3 centre(0.8, 0.6, 0.8);
  Problem mesh_problem = gridStepBox(Vec3(0.6, 1.1, 0.6), Vec3(0.4, 0.2, 0.4), {4, 2, 4}, 2e4, 0.01, 40);
  mesh_problem.colliders.push_back(Collider{"ball", SphereCollider{centre, radius}, 1e8, 1e-9});
  mesh_problem.finalize();
  GridWalls walls;
  walls["y-min"] = {GridWall::Kind::kSticky, 2};
  GridStepper stepper(mesh_problem, BackgroundGrid(Vec3(0.03, 0.03, 0.03), h, Eigen::Vector3i(11, 11, 11)),
                      GridKernel::kTrilinear, walls);
  NewtonSolver newton;
  IterationLog log(newton.logColumns());
  const int n = mesh_problem.numNodes();
  double deepest = 0.0, lowest_centre = 1e300, fastest_fall = 0.0, fastest_rise = 0.0;
  for (int k = 0; k < mesh_problem.time.num_steps; ++k) {
    const GridStepRecord record = stepper.step(newton, k, gridStepNewtonBudget(1e-8), log);
    ASSERT_TRUE(gridStepConverged(record.reason)) << "step " << k << ": " << record.relative_residual;
    const Positions& x = stepper.positions();
    double centre_y = 0.0, velocity_y = 0.0;
    for (int p = 0; p < n; ++p) {
      deepest = std::max(deepest, radius - (x.segment<3>(3 * p) - centre).norm());
      centre_y += x[3 * p + 1] / n;
      velocity_y += stepper.velocities()[3 * p + 1] / n;
    }
    lowest_centre = std::min(lowest_centre, centre_y);
    fastest_fall = std::max(fastest_fall, -velocity_y);
    fastest_rise = std::max(fastest_rise, velocity_y);
  }
  std::printf("a block dropped on a sphere collider (r %.2f, top at y %.2f, h %.2f), %d steps: deepest vertex %.4f m "
              "inside, lowest mean y %.4f (1.2 at the start), fastest mean fall %.3f m/s, rise %.3f m/s\n",
              radius, centre.y() + radius, h, mesh_problem.time.num_steps, deepest, lowest_centre, fastest_fall,
              fastest_rise);
  EXPECT_LT(deepest, std::sqrt(3.0) * h);
  EXPECT_GT(lowest_centre, centre.y() + radius);  // on the sphere: the floor is at 0.18
  EXPECT_GT(fastest_fall, 1.0);                   // it fell (free fall to the first held nodes: ~1.2 m/s)
  EXPECT_GT(fastest_rise, 0.0);
  EXPECT_LT(fastest_rise, 0.6 * fastest_fall);
}

// A bar whose two ends sit in moving walls that turn in opposite directions about its axis
// twists: Newton converges every step, the ends follow their walls (the end vertices' cells
// are held whole: trilinear weights of held nodes only), the middle lags, no element inverts.
TEST(GridStep, BarTwistedByTwoMovingWalls) {
  Problem mesh_problem = gridStepBox(Vec3(0.0, -0.125, -0.125), Vec3(1.5, 0.25, 0.25), {12, 2, 2}, 1e5, 0.01, 25);
  mesh_problem.gravity = Vec3::Zero();
  mesh_problem.finalize();
  const BackgroundGrid grid(Vec3(-0.5, -0.5, -0.5), 0.25, Eigen::Vector3i(11, 5, 5));  // twice the mesh's spacing
  GridWalls walls;
  for (const auto& [name, lo, hi, sign] : {std::tuple{"left", -0.6, 0.26, -1.0}, std::tuple{"right", 1.24, 2.1, 1.0}}) {
    GridMovingWall wall;
    wall.name = name;
    wall.box_min = Vec3(lo, -0.6, -0.6);
    wall.box_max = Vec3(hi, 0.6, 0.6);
    MotionStage turn;
    turn.kind = MotionStage::Kind::kRotate;
    turn.t_end = 0.25;
    turn.axis_point = Vec3::Zero();
    turn.axis_direction = Vec3::UnitX();
    turn.angle = sign * std::atan(1.0);  // 45 degrees each way: a quarter turn between the ends
    wall.motion.stages = {turn};
    walls.moving.push_back(wall);
  }
  GridStepper stepper(mesh_problem, grid, GridKernel::kTrilinear, walls);
  NewtonSolver newton;
  IterationLog log(newton.logColumns());
  for (int k = 0; k < mesh_problem.time.num_steps; ++k) {
    const GridStepRecord record = stepper.step(newton, k, gridStepNewtonBudget(1e-10), log);
    ASSERT_TRUE(gridStepConverged(record.reason)) << "step " << k << ": " << record.relative_residual;
  }
  const Positions& x = stepper.positions();
  const double t = mesh_problem.timeAt(mesh_problem.time.num_steps);
  double end_error = 0.0, quarter_turn = 0.0, middle_turn = 0.0, three_quarter_turn = 0.0;
  int inverted = 0;
  for (int p = 0; p < mesh_problem.numNodes(); ++p) {
    const Vec3 X = mesh_problem.mesh.restPosition(p);
    const Vec3 xp = x.segment<3>(3 * p);
    if (X.x() < 0.25 + 1e-12) end_error = std::max(end_error, (xp - walls.moving[0].motion.positionAt(X, t)).norm());
    if (X.x() > 1.25 - 1e-12) end_error = std::max(end_error, (xp - walls.moving[1].motion.positionAt(X, t)).norm());
    const double turn = std::atan2(xp.z(), xp.y()) - std::atan2(X.z(), X.y());
    if (X.y() > 0.1 && X.z() > 0.1) {  // a corner of the sections at x = 0.5, 0.75, 1
      if (std::abs(X.x() - 0.5) < 1e-12) quarter_turn = turn;
      if (std::abs(X.x() - 0.75) < 1e-12) middle_turn = turn;
      if (std::abs(X.x() - 1.0) < 1e-12) three_quarter_turn = turn;
    }
  }
  for (int e = 0; e < mesh_problem.mesh.numElements(); ++e) {
    Mat3 D;
    const auto nodes = mesh_problem.mesh.elements.row(e);
    for (int c = 0; c < 3; ++c) D.col(c) = x.segment<3>(3 * nodes[c + 1]) - x.segment<3>(3 * nodes[0]);
    inverted += D.determinant() <= 0.0 ? 1 : 0;
  }
  std::printf("bar twisted by two moving walls (-45 and +45 degrees): the ends' largest distance to their walls' "
              "motion %.2e m; corners of the sections at x = 0.5, 0.75, 1 turned %.3f, %.3f, %.3f rad; %d inverted "
              "elements\n", end_error, quarter_turn, middle_turn, three_quarter_turn, inverted);
  EXPECT_LT(end_error, 1e-10);
  // Twisted between the ends (-0.785 and +0.785 rad): turned each its end's way, less than it,
  // the middle not at all (the symmetry).
  EXPECT_LT(quarter_turn, -0.1);
  EXPECT_GT(quarter_turn, -0.785);
  EXPECT_GT(three_quarter_turn, 0.1);
  EXPECT_LT(three_quarter_turn, 0.785);
  EXPECT_NEAR(quarter_turn, -three_quarter_turn, 1e-6);
  EXPECT_LT(std::abs(middle_turn), 1e-6);
  EXPECT_EQ(inverted, 0);
}

}  // namespace
}  // namespace pbdlab
