#include "solvers/ml_xpbd/ml_xpbd_solver.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

#include "core/support/thread_settings.hpp"

namespace pbdlab {

MlXpbdSolver::MlXpbdSolver(MlXpbdOptions options) : options_(std::move(options)) {
  if (options_.layers != std::vector<double>{0.0})
    throw std::invalid_argument("solver ml_xpbd: only layers [0] (one fully elastic layer) is built; the rigid "
                                "layers are not built yet");
  if (!options_.iterations_per_layer.empty()) {
    if (options_.iterations_per_layer.size() != options_.layers.size())
      throw std::invalid_argument("solver ml_xpbd: iterations_per_layer needs one count per layer");
    for (int n : options_.iterations_per_layer)
      if (n < 1) throw std::invalid_argument("solver ml_xpbd: iterations_per_layer counts must be >= 1");
  }
}

std::vector<std::string> MlXpbdSolver::logColumns() const {
  return {"secondary_residual", "secondary_residual_matlab", "layer", "rigid_bodies", "colors"};
}

std::string MlXpbdSolver::rejectionReason(const Problem& problem) const {
  const std::string me = "solver " + name();
  if (problem.time.integrator != Integrator::kBackwardEuler)
    return me + " integrates backward Euler (paper eq. 1-6, Alg. 2); the scene is quasistatic";
  if (!problem.hasElasticEnergy())
    return me + " builds its constraints from a solid or plane-strain body's elements; the scene has none";
  if (problem.hasMixedElementTypes())
    return me + " builds its constraints over one element type; the scene's bodies have " +
           problem.elementTypesName();
  if (!problem.colliderTerms().empty())
    return me + " has no contact constraints yet (paper eq. 28-29 are not built); the scene has kinematic colliders";
  if (problem.collisionDetector())
    return me + " has no contact constraints yet; the scene enables collisions between bodies";
  const ElasticEnergy& energy = problem.elasticEnergy();
  const ElementType type = energy.elementType();
  const bool tri3_plane_strain = type == ElementType::kTri3 && energy.isPlaneStrain();
  if (!tri3_plane_strain && type != ElementType::kTet4)
    return me + " builds Voigt StVK constraints on linear elements only (tri3 in plane strain, tet4; constant "
                "dN/dX, paper §3); the scene's elements are " + elementTypeName(type);
  // Every other term (weak constraints, bindings) would need its own constraint: refused
  // rather than dropped, so that the solver and the yardstick minimize the same potential.
  for (const auto& term : problem.terms())
    if (term.get() != static_cast<const EnergyTerm*>(&energy))
      return me + " treats the elastic term only; the scene also has the energy term '" + term->name() +
             "' (weak constraints or bindings are not built)";
  const int dimension = tri3_plane_strain ? 2 : 3;
  std::map<const Material*, bool> checked;
  for (int e = 0; e < energy.numElements(); ++e) {
    const Material* material = &energy.material(e);
    if (checked.count(material)) continue;
    checked[material] = true;
    if (const std::string why = voigtMaterialProblem(*material, dimension); !why.empty()) return me + ": " + why;
  }
  return "";
}

template <int D>
void MlXpbdSolver::buildSlots(const ElasticEnergy& energy, const std::vector<int>& element_of_slot,
                              const VecX& inverse_mass, Slots<D>& slots) {
  constexpr int N = VoigtDims<D>::kNodes;
  slots.resize(element_of_slot.size());
  for (size_t s = 0; s < element_of_slot.size(); ++s) {
    const int e = element_of_slot[s];
    Slot<D>& slot = slots[s];
    for (int a = 0; a < N; ++a) {
      slot.nodes[a] = energy.elementNodes(e)[a];
      for (int k = 0; k < 3; ++k) slot.inverse_mass[3 * a + k] = inverse_mass[3 * slot.nodes[a] + k];
    }
    slot.shape_gradients = voigtShapeGradients<D>(energy, e);
    const LameParameters lame = energy.material(e).modelParameters();
    slot.compliance = voigtCompliance<D>(lame.mu, lame.lambda, energy.restVolume(e));
  }
}

void MlXpbdSolver::setup(const Problem& problem) {
  if (const std::string reason = rejectionReason(problem); !reason.empty()) throw std::invalid_argument(reason);
  problem_ = &problem;
  const ElasticEnergy& energy = problem.elasticEnergy();
  dimension_ = energy.elementType() == ElementType::kTet4 ? 3 : 2;

  // The elastic term's greedy element coloring (§3.1), slots in color order.
  std::vector<int> element_of_slot;
  color_start_.assign(1, 0);
  for (const auto& group : energy.elementColoring().groups) {
    element_of_slot.insert(element_of_slot.end(), group.begin(), group.end());
    color_start_.push_back(static_cast<int>(element_of_slot.size()));
  }
  VecX inverse_mass(problem.numDofs());
  for (int dof = 0; dof < problem.numDofs(); ++dof)
    inverse_mass[dof] = problem.isFixedDof(dof) ? 0.0 : 1.0 / problem.dofMasses()[dof];
  slots2_.clear();
  slots3_.clear();
  if (dimension_ == 2)
    buildSlots<2>(energy, element_of_slot, inverse_mass, slots2_);
  else
    buildSlots<3>(energy, element_of_slot, inverse_mass, slots3_);
  const int per_element = dimension_ == 2 ? VoigtDims<2>::kConstraints : VoigtDims<3>::kConstraints;
  lambda_.assign(element_of_slot.size() * per_element, 0.0);
  paper_squared_.assign(element_of_slot.size(), 0.0);
  matlab_squared_.assign(element_of_slot.size(), 0.0);
}

std::vector<int> MlXpbdSolver::colorSizes() const {
  std::vector<int> sizes;
  for (size_t c = 0; c + 1 < color_start_.size(); ++c) sizes.push_back(color_start_[c + 1] - color_start_[c]);
  return sizes;
}

template <int D>
void MlXpbdSolver::sweepSlots(const Slots<D>& slots, Positions& x, double inv_h2) {
  constexpr int N = VoigtDims<D>::kNodes;
  constexpr int V = VoigtDims<D>::kConstraints;
  for (int c = 0; c + 1 < static_cast<int>(color_start_.size()); ++c) {
    // Elements of one color share no node: their updates commute, whatever the thread count.
#pragma omp parallel for schedule(static) if (worthThreads(color_start_[c + 1] - color_start_[c]))
    for (int s = color_start_[c]; s < color_start_[c + 1]; ++s) {
      const Slot<D>& slot = slots[s];
      VoigtNodes<D> xe;
      for (int a = 0; a < N; ++a) xe.col(a) = x.segment<3>(3 * slot.nodes[a]);
      voigtElementUpdate<D>(slot.shape_gradients, slot.compliance, inv_h2, slot.inverse_mass, xe,
                            lambda_.data() + static_cast<size_t>(s) * V);
      for (int a = 0; a < N; ++a) x.segment<3>(3 * slot.nodes[a]) = xe.col(a);
    }
  }
}

void MlXpbdSolver::sweep(Positions& x, double inv_h2) {
  if (dimension_ == 2)
    sweepSlots<2>(slots2_, x, inv_h2);
  else
    sweepSlots<3>(slots3_, x, inv_h2);
}

template <int D>
void MlXpbdSolver::residualsOfSlots(const Slots<D>& slots, const Positions& x, double inv_h2) {
  constexpr int N = VoigtDims<D>::kNodes;
  constexpr int V = VoigtDims<D>::kConstraints;
  const int count = static_cast<int>(slots.size());
#pragma omp parallel for schedule(static) if (worthThreads(count))
  for (int s = 0; s < count; ++s) {
    const Slot<D>& slot = slots[s];
    VoigtNodes<D> xe;
    for (int a = 0; a < N; ++a) xe.col(a) = x.segment<3>(3 * slot.nodes[a]);
    voigtSecondaryResiduals<D>(slot.shape_gradients, slot.compliance, inv_h2, xe,
                               lambda_.data() + static_cast<size_t>(s) * V, paper_squared_[s], matlab_squared_[s]);
  }
}

void MlXpbdSolver::secondaryResiduals(const Positions& x, double inv_h2, double& paper, double& matlab) {
  if (dimension_ == 2)
    residualsOfSlots<2>(slots2_, x, inv_h2);
  else
    residualsOfSlots<3>(slots3_, x, inv_h2);
  double paper_sum = 0.0, matlab_sum = 0.0;
  for (size_t s = 0; s < paper_squared_.size(); ++s) {  // in slot order: the same sum for any thread count
    paper_sum += paper_squared_[s];
    matlab_sum += matlab_squared_[s];
  }
  paper = std::sqrt(paper_sum);
  matlab = std::sqrt(matlab_sum);
}

void MlXpbdSolver::advance(const StepObjective& objective, State& state, StepMonitor& monitor) {
  const double h = objective.dt();
  const double inv_h2 = 1.0 / (h * h);
  const Problem& problem = objective.problem();

  // x~ = x^n + h v^n + h^2 M^-1 f_ext (eq. 3-4 with the XPBD family's prediction), the step's
  // boundary values on the prescribed DOFs; lambda = 0 at the start of the step.
  Positions x = objective.inertialTarget();
  const VecX& f_ext = objective.externalForce();
  for (int dof : problem.freeDofs()) x[dof] += h * h * f_ext[dof] / problem.dofMasses()[dof];
  objective.applyBoundary(x);
  resetMultipliers();

  const double layer = 1.0;         // the one elastic layer (layers [0])
  const double rigid_bodies = 0.0;  // no rigid layer is built yet
  const int scheduled = options_.iterations_per_layer.empty() ? 0 : options_.iterations_per_layer.back();
  auto recordIteration = [&](int iteration) {
    const bool first = iteration == 0;
    if (!options_.log_residuals) {
      if (first) return monitor.record(iteration, x, {{"layer", layer}, {"rigid_bodies", rigid_bodies},
                                                      {"colors", double(numElementColors())}});
      return monitor.record(iteration, x, {{"layer", layer}, {"rigid_bodies", rigid_bodies}});
    }
    double paper = 0.0, matlab = 0.0;
    {
      const StepMonitor::ClockPause diagnostics(monitor);  // for the log only
      secondaryResiduals(x, inv_h2, paper, matlab);
    }
    if (first)
      return monitor.record(iteration, x,
                            {{"secondary_residual", paper}, {"secondary_residual_matlab", matlab}, {"layer", layer},
                             {"rigid_bodies", rigid_bodies}, {"colors", double(numElementColors())}});
    return monitor.record(iteration, x,
                          {{"secondary_residual", paper}, {"secondary_residual_matlab", matlab}, {"layer", layer},
                           {"rigid_bodies", rigid_bodies}});
  };

  bool stop = recordIteration(0);
  Positions x_last_finite = x;
  for (int iteration = 1; !stop; ++iteration) {
    sweep(x, inv_h2);
    if (monitor.stopIfNotFinite(iteration, x, x_last_finite)) break;
    // The layer schedule (Alg. 2's n_l) spent before the Budget: this iteration's row is the last.
    if (scheduled > 0 && iteration >= scheduled) monitor.stopFor(StopReason::kIterationBudget);
    stop = recordIteration(iteration);
  }
  state.x = x;
}

}  // namespace pbdlab
