#include "core/solver/grid_stepper.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace pbdlab {

namespace {

using GridClock = std::chrono::steady_clock;
double gridStepSeconds(GridClock::time_point start) {
  return std::chrono::duration<double>(GridClock::now() - start).count();
}

// The first particle whose stencil leaves the grid, with gridStencil's reason (the error
// path only: it re-reads every particle).
std::string particleLeavingGrid(const BackgroundGrid& grid, GridKernel kernel, const Positions& x, int step,
                                double t) {
  for (int p = 0; p < static_cast<int>(x.size() / 3); ++p) {
    try {
      gridStencil(grid, kernel, x.segment<3>(3 * static_cast<Eigen::Index>(p)));
    } catch (const std::invalid_argument& error) {
      std::ostringstream out;
      out << "grid step " << step << " (t = " << t << "): particle " << p << " (mesh vertex " << p << ") at ("
          << x[3 * p] << ", " << x[3 * p + 1] << ", " << x[3 * p + 2] << ") leaves the grid: " << error.what()
          << " (enlarge the grid, or hold the body with walls)";
      return out.str();
    }
  }
  return "";
}

}  // namespace

GridStepper::GridStepper(const Problem& mesh_problem, BackgroundGrid grid, GridKernel kernel, GridWalls walls)
    : mesh_problem_(&mesh_problem), grid_(std::move(grid)), kernel_(kernel), walls_(walls) {
  if (const std::string why = gridStepRejection(mesh_problem); !why.empty()) throw std::invalid_argument(why);
  grid_rest_ = grid_.nodePositions();
  const State start = initialState(mesh_problem);
  setState(start.x, start.v);
}

void GridStepper::setState(const Positions& x, const VecX& v, std::vector<Mat3> affine) {
  const Eigen::Index dofs = mesh_problem_->numDofs();
  const bool affine_fits = affine.empty() || static_cast<int>(affine.size()) == mesh_problem_->numNodes();
  if (x.size() != dofs || v.size() != dofs || !affine_fits)
    throw std::invalid_argument("GridStepper::setState: sizes do not match the mesh's " +
                                std::to_string(mesh_problem_->numNodes()) + " vertices");
  x_ = x;
  v_ = v;
  affine_ = affine.empty() ? std::vector<Mat3>(static_cast<size_t>(mesh_problem_->numNodes()), Mat3::Zero())
                           : std::move(affine);
}

GridStepRecord GridStepper::step(Solver& solver, int step, const Budget& budget, IterationLog& log) {
  GridStepRecord record;
  record.step = step;
  const Problem& mesh = *mesh_problem_;

  // 1-2. Weights at x_p, then P2G.
  GridClock::time_point start = GridClock::now();
  try {
    weights_ = std::make_shared<const GridWeights>(computeGridWeights(grid_, kernel_, x_));
  } catch (const std::invalid_argument& error) {
    const std::string which = particleLeavingGrid(grid_, kernel_, x_, step, mesh.timeAt(step));
    throw std::invalid_argument(which.empty() ? "grid step " + std::to_string(step) + ": " + error.what() : which);
  }
  momentum_ = particlesToGrid(*weights_, mesh.nodeMasses(), v_, affine_);
  record.weights_p2g_seconds = gridStepSeconds(start);

  // 3. The grid Problem of this step.
  start = GridClock::now();
  try {
    grid_problem_ = std::make_unique<Problem>(makeGridStepProblem(mesh, weights_, momentum_.mass, walls_, step));
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument("grid step " + std::to_string(step) + ": " + error.what());
  }
  const Problem& problem = *grid_problem_;
  record.problem_seconds = gridStepSeconds(start);
  record.grid_nodes = grid_.numNodes();
  record.free_dofs = static_cast<int>(problem.freeDofs().size());
  for (int i = 0; i < grid_.numNodes(); ++i) record.active_nodes += problem.nodeMasses()[i] > 0.0 ? 1 : 0;

  // 4. Backward Euler in q from the undeformed grid.
  start = GridClock::now();
  solver.setup(problem);
  record.setup_seconds = gridStepSeconds(start);
  const StepObjective objective(problem, grid_rest_, momentum_.velocity, step);
  StepMonitor monitor(objective, budget, log);
  State state{grid_rest_, momentum_.velocity, step, mesh.timeAt(step)};
  start = GridClock::now();
  solver.advance(objective, state, monitor);
  record.solve_seconds = gridStepSeconds(start);
  q_ = state.x;
  record.reason = monitor.stopReason();
  record.divergence = monitor.divergence();
  record.iterations = monitor.iterations();
  record.reference_residual = objective.referenceResidualNorm();
  record.residual = monitor.lastResidual();
  record.relative_residual = monitor.lastRelativeResidual();
  record.solver_seconds = monitor.solverSeconds();

  // 5. Grid velocities back to the particles; the mesh follows the grid.
  start = GridClock::now();
  VecX grid_velocity = velocitiesAfterStep(objective, q_);
  solver.finishVelocities(objective, grid_velocity);
  // The problem's masses: those under the massless floor are 0 there (held, no motion to read).
  ParticleVelocities particles = gridToParticles(*weights_, grid_velocity, problem.nodeMasses());
  const Positions x_next = embed(*weights_, q_);
  double largest = 0.0;
  for (int p = 0; p < mesh.numNodes(); ++p)
    largest = std::max(largest, (x_next.segment<3>(3 * p) - x_.segment<3>(3 * p)).norm());
  record.max_displacement_cells = largest / grid_.spacing();
  x_ = x_next;
  v_ = std::move(particles.velocity);
  affine_ = std::move(particles.affine);
  record.g2p_seconds = gridStepSeconds(start);
  return record;
}

}  // namespace pbdlab
