#include "reference/explicit_relaxation.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace pbdlab {

double ExplicitRelaxationSolver::maxFrequencyEstimate(const Problem& problem) {
  // Gershgorin: every eigenvalue of M^-1 K is below max_i sum_j |K_ij| / m_i. K is summed
  // over every term's stencils with absolute values, which bounds the row sums from above.
  const Positions x = problem.mesh.restPositionsFlat();
  VecX row_sums = VecX::Zero(problem.numDofs());
  Eigen::MatrixXd H;
  for (const auto& term : problem.terms())
    for (int s = 0; s < term->numStencils(); ++s) {
      term->stencilTerms(s, x, 0.0, nullptr, nullptr, &H, HessianKind::kTrue);
      const int* nodes = term->stencilNodes(s);
      for (int p = 0; p < H.rows(); ++p) row_sums[3 * nodes[p / 3] + p % 3] += H.row(p).cwiseAbs().sum();
    }
  double max_ratio = 0.0;
  for (int dof = 0; dof < problem.numDofs(); ++dof)
    max_ratio = std::max(max_ratio, row_sums[dof] / problem.dofMasses()[dof]);
  return std::sqrt(max_ratio);
}

std::string ExplicitRelaxationSolver::rejectionReason(const Problem& problem) const {
  if (problem.time.integrator != Integrator::kQuasistatic)
    return "solver explicit_relaxation relaxes to quasistatic equilibrium; the scene's integrator is backward_euler";
  if (!problem.colliderTerms().empty())
    return "solver explicit_relaxation has no collider projection; the scene has kinematic colliders";
  if (problem.collisionDetector())
    return "solver explicit_relaxation's step is bounded by the elastic stiffness only; the scene's collision "
           "contacts (k_n up to 1e8) would make it unstable";
  const double omega_max = maxFrequencyEstimate(problem);
  if (options_.dt * omega_max > 2.0)
    return "explicit_relaxation: dt = " + std::to_string(options_.dt) + " s is above the stability limit " +
           "2 / omega_max = " + std::to_string(2.0 / omega_max) + " s of this mesh and material";
  return "";
}

void ExplicitRelaxationSolver::setup(const Problem& problem) {
  if (const std::string reason = rejectionReason(problem); !reason.empty()) throw std::invalid_argument(reason);
}

void ExplicitRelaxationSolver::advance(const StepObjective& objective, State& state, StepMonitor& monitor) {
  const Problem& problem = objective.problem();
  const std::vector<int>& free = problem.freeDofs();
  const VecX& mass = problem.dofMasses();
  const double dt = options_.dt;
  const double decay = std::exp(-options_.damping * dt);

  Positions x = objective.previousPositions();
  objective.applyBoundary(x);
  VecX v = VecX::Zero(x.size());  // quasistatic: every step starts at rest
  VecX g;
  double pseudo_time = 0.0;
  auto kinetic = [&]() { return 0.5 * v.dot(mass.cwiseProduct(v)); };
  bool stop = monitor.record(0, x, {{"pseudo_time", 0.0}, {"kinetic_energy", 0.0}});
  for (int iteration = 1; !stop; ++iteration) {
    // Many substeps per logged iteration may outlast max_seconds: the budget is checked after
    // each substep, and the iterate of a cut iteration is recorded (stop reason time_budget).
    int done = 0;
    while (done < options_.substeps) {
      objective.gradient(x, g);  // grad PE - f_ext
      for (int dof : free) {
        v[dof] = decay * (v[dof] - dt * g[dof] / mass[dof]);
        x[dof] += dt * v[dof];
      }
      ++done;
      if (monitor.timeSpent()) break;
    }
    pseudo_time += done * dt;
    stop = monitor.record(iteration, x, {{"pseudo_time", pseudo_time}, {"kinetic_energy", kinetic()}});
  }
  state.x = x;
}

}  // namespace pbdlab
