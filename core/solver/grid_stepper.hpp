#pragma once
// The grid-based scheme's step (PXPBD §5.5, after Jiang et al. 2015, "The Affine
// Particle-In-Cell Method"; docs/grid.md): the mesh vertices are APIC's particles, and each
// step solves backward Euler on the nodes of a background grid that starts the step
// undeformed:
//   1. W = the grid weights at the particles' positions x_p (core/grid/grid_weights.hpp);
//   2. P2G: grid masses m_i and velocities v_i from m_p, v_p and the affine C_p
//      (core/grid/apic_transfer.hpp);
//   3. the grid Problem (core/model/grid_step_problem.hpp): unknowns q, mesh terms through W;
//   4. q^n = the grid's node positions; StepObjective(grid problem, q^n, v_i, step): the
//      yardstick is the backward-Euler residual in q; the solver is set up for this step's
//      problem (W changed) and advances q;
//   5. v_grid = (q - q^n) / dt; G2P: v_p and C_p; x_p = W q.
// Any Solver runs it unchanged; those that need a solid body's elements refuse the grid
// problem at setup (their rejectionReason). Each step returns its stop reason, residual,
// iterations and the seconds of each part (the paper reports ~1 s of preprocessing a step at
// 800K vertices: weights + P2G + problem + setup here).
#include <memory>
#include <vector>

#include "core/grid/apic_transfer.hpp"
#include "core/model/grid_step_problem.hpp"
#include "core/solver/solver.hpp"

namespace pbdlab {

struct GridStepRecord {
  int step = 0;  // the (sub)step index the step started at (its StepObjective's)
  StopReason reason = StopReason::kNone;
  std::string divergence;
  int iterations = 0;
  double reference_residual = 0.0;  // |r(q_ref)|, q_ref = q^n
  double residual = 0.0;            // |r(q)| of the last record, over the free grid DOFs
  double relative_residual = 0.0;
  int grid_nodes = 0;
  int active_nodes = 0;  // nodes with mass
  int free_dofs = 0;
  // The largest vertex displacement of the step in grid cells (the CFL number the paper keeps
  // at 0.4: beyond ~1 the weights of the next step see a different neighbourhood).
  double max_displacement_cells = 0.0;
  // Wall-clock seconds of each part.
  double weights_p2g_seconds = 0.0;
  double problem_seconds = 0.0;
  double setup_seconds = 0.0;
  double solve_seconds = 0.0;   // Solver::advance, yardstick records included
  double solver_seconds = 0.0;  // the monitor's: advance without the yardstick
  double g2p_seconds = 0.0;
  double preprocessingSeconds() const { return weights_p2g_seconds + problem_seconds + setup_seconds; }
};

class GridStepper {
 public:
  // `mesh_problem` (finalized, kept by reference: it must outlive the stepper) is refused as
  // gridStepRejection says (std::invalid_argument). The particles start at initialState(
  // mesh_problem) (its initial map and velocity field) with C_p = 0, their masses the mesh
  // problem's node masses.
  GridStepper(const Problem& mesh_problem, BackgroundGrid grid, GridKernel kernel, GridWalls walls);

  // One step from (sub)step index `step` (t^n = mesh_problem.timeAt(step)) with `solver`,
  // appending its rows to `log` (IterationLog(solver.logColumns())). Throws
  // std::invalid_argument naming the step and the particle when a particle's stencil leaves
  // the grid, and what makeGridStepProblem or the solver's setup throw (a refused problem).
  GridStepRecord step(Solver& solver, int step, const Budget& budget, IterationLog& log);

  // The particles: x_p, v_p (3 per vertex), C_p, m_p.
  const Positions& positions() const { return x_; }
  const VecX& velocities() const { return v_; }
  const std::vector<Mat3>& affineVelocities() const { return affine_; }
  const VecX& masses() const { return mesh_problem_->nodeMasses(); }
  // Replaces the particles' state (sizes as the mesh's; `affine` empty: C_p = 0).
  void setState(const Positions& x, const VecX& v, std::vector<Mat3> affine = {});

  const Problem& meshProblem() const { return *mesh_problem_; }
  const BackgroundGrid& grid() const { return grid_; }
  GridKernel kernel() const { return kernel_; }
  const GridWalls& walls() const { return walls_; }
  // The last step's pieces (null / empty before the first step): tests and diagnostics.
  const Problem* lastGridProblem() const { return grid_problem_.get(); }
  const std::shared_ptr<const GridWeights>& lastWeights() const { return weights_; }
  const GridMomentum& lastMomentum() const { return momentum_; }
  const Positions& lastGridPositions() const { return q_; }  // q at the step's end

 private:
  const Problem* mesh_problem_;
  BackgroundGrid grid_;
  GridKernel kernel_;
  GridWalls walls_;
  Positions grid_rest_;  // q^n of every step
  Positions x_;
  VecX v_;
  std::vector<Mat3> affine_;
  std::shared_ptr<const GridWeights> weights_;
  GridMomentum momentum_;
  std::unique_ptr<Problem> grid_problem_;
  Positions q_;
};

}  // namespace pbdlab
