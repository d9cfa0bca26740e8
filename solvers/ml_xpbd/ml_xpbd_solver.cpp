#include "solvers/ml_xpbd/ml_xpbd_solver.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

#include "core/support/thread_settings.hpp"

namespace pbdlab {

namespace ml_xpbd {

double elementStretchEigenvalue(const ElasticEnergy& energy, int e, const Positions& x, const VecX& node_masses) {
  const int* nodes = energy.elementNodes(e);
  if (energy.elementType() == ElementType::kTri3 && energy.isPlaneStrain()) {
    ElementMatrix<3> hessian;
    energy.elementTerms<3>(e, x, nullptr, nullptr, &hessian, HessianKind::kTrue);
    // The in-plane DOFs (x, y of each node): z is pinned in plane strain.
    Eigen::Matrix<double, 6, 6> stiffness;
    Eigen::Matrix<double, 6, 1> masses;
    for (int i = 0; i < 6; ++i) {
      masses[i] = node_masses[nodes[i / 2]];
      for (int j = 0; j < 6; ++j) stiffness(i, j) = hessian(3 * (i / 2) + i % 2, 3 * (j / 2) + j % 2);
    }
    return largestMassNormalizedEigenvalue(stiffness, masses);
  }
  if (energy.elementType() == ElementType::kTet4) {
    ElementMatrix<4> hessian;
    energy.elementTerms<4>(e, x, nullptr, nullptr, &hessian, HessianKind::kTrue);
    Vec12 masses;
    for (int i = 0; i < 12; ++i) masses[i] = node_masses[nodes[i / 3]];
    return largestMassNormalizedEigenvalue(hessian, masses);
  }
  throw std::invalid_argument("stretch eigenvalue: tri3 in plane strain or tet4 only, not " +
                              elementTypeName(energy.elementType()));
}

std::vector<double> elementStretchEigenvalues(const ElasticEnergy& energy, const Positions& x,
                                              const VecX& node_masses) {
  const int count = energy.numElements();
  std::vector<double> eigenvalues(count, 0.0);
#pragma omp parallel for schedule(static) if (worthThreads(count))
  for (int e = 0; e < count; ++e) eigenvalues[e] = elementStretchEigenvalue(energy, e, x, node_masses);
  return eigenvalues;
}

}  // namespace ml_xpbd

MlXpbdSolver::MlXpbdSolver(MlXpbdOptions options) : options_(std::move(options)) {
  const std::vector<double>& layers = options_.layers;
  if (layers.empty()) throw std::invalid_argument("solver ml_xpbd: layers needs at least one layer ([0])");
  for (size_t l = 0; l < layers.size(); ++l) {
    if (!(layers[l] >= 0.0 && layers[l] <= 100.0))
      throw std::invalid_argument("solver ml_xpbd: a rigid percentage must be in [0, 100]");
    if (l > 0 && !(layers[l] < layers[l - 1]))
      throw std::invalid_argument("solver ml_xpbd: layers go coarse to fine (strictly decreasing percentages)");
  }
  if (layers.back() != 0.0) throw std::invalid_argument("solver ml_xpbd: the last layer must be fully elastic (0)");
  if (options_.iterations_per_layer.empty() && layers.size() > 1)
    throw std::invalid_argument("solver ml_xpbd: several layers need iterations_per_layer");
  if (!(options_.frame_stop_reduction >= 0.0 && options_.frame_stop_reduction < 1.0))
    throw std::invalid_argument("solver ml_xpbd: frame_stop_reduction must be in [0, 1) (0: off)");
  if (options_.restitution > 1.0 || std::isnan(options_.restitution))
    throw std::invalid_argument("solver ml_xpbd: restitution must be in [0, 1] (negative: off)");
  if (!options_.iterations_per_layer.empty()) {
    if (options_.iterations_per_layer.size() != options_.layers.size())
      throw std::invalid_argument("solver ml_xpbd: iterations_per_layer needs one count per layer");
    for (int n : options_.iterations_per_layer)
      if (n < 1) throw std::invalid_argument("solver ml_xpbd: iterations_per_layer counts must be >= 1");
  }
}

std::vector<std::string> MlXpbdSolver::logColumns() const {
  return {"secondary_residual", "secondary_residual_matlab", "layer", "rigid_bodies", "colors", "layer_build_seconds"};
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
  if (problem.collisionDetector())
    return me + " has no collisions between bodies (kinematic colliders are its only contacts); the scene enables them";
  const ElasticEnergy& energy = problem.elasticEnergy();
  const ElementType type = energy.elementType();
  const bool tri3_plane_strain = type == ElementType::kTri3 && energy.isPlaneStrain();
  if (!tri3_plane_strain && type != ElementType::kTet4)
    return me + " builds Voigt StVK constraints on linear elements only (tri3 in plane strain, tet4; constant "
                "dN/dX, paper §3); the scene's elements are " + elementTypeName(type);
  // Every other term (weak constraints, bindings) would need its own constraint: refused
  // rather than dropped, so that the solver and the yardstick minimize the same potential.
  const auto is_collider = [&](const EnergyTerm* term) {
    for (const auto& collider : problem.colliderTerms())
      if (static_cast<const EnergyTerm*>(collider.get()) == term) return true;
    return false;
  };
  for (const auto& term : problem.terms())
    if (term.get() != static_cast<const EnergyTerm*>(&energy) && !is_collider(term.get()))
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
  std::vector<int>& element_of_slot = element_of_slot_;
  element_of_slot.clear();
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

  // Layers: slot <-> element, the elements never rigid (a Dirichlet node: x and y in 2D, where
  // every z is pinned), rest centroids for the stripes, per-step buffers.
  const int num_elements = static_cast<int>(element_of_slot.size());
  slot_of_element_.assign(num_elements, -1);
  for (int s = 0; s < num_elements; ++s) slot_of_element_[element_of_slot[s]] = s;
  std::vector<int> dirichlet_nodes;
  for (int node = 0; node < problem.numNodes(); ++node)
    for (int k = 0; k < dimension_; ++k)
      if (problem.isFixedDof(3 * node + k)) {
        dirichlet_nodes.push_back(node);
        break;
      }
  forced_elastic_ = ml_xpbd::elementsTouchingNodes(problem.mesh.elements, problem.numNodes(), dirichlet_nodes);
  // A contact moves its node along n: only a node free in every direction it moves in (x, y in
  // plane strain) is projected; a node with a Dirichlet DOF keeps its prescribed value.
  contact_inverse_mass_ = VecX::Zero(problem.numNodes());
  for (int node = 0; node < problem.numNodes(); ++node) {
    bool free = true;
    for (int k = 0; k < dimension_; ++k) free = free && !problem.isFixedDof(3 * node + k);
    if (free) contact_inverse_mass_[node] = 1.0 / problem.nodeMasses()[node];
  }
  contacts_.clear();
  Positions rest(problem.numDofs());
  for (int node = 0; node < problem.numNodes(); ++node) rest.segment<3>(3 * node) = problem.mesh.restPosition(node);
  rest_centroids_ = ml_xpbd::elementCentroids(problem.mesh.elements, rest);
  x_tilde_.resize(problem.numDofs());
  residual_velocity_.resize(problem.numDofs());
  x_before_rigid_step_.resize(problem.numDofs());
  pending_.assign(problem.numNodes(), 0);
  never_rigid_.assign(problem.numNodes(), 0);
  node_body_.assign(problem.numNodes(), -1);
  rigid_slot_.assign(num_elements, 0);
  strains_now_.assign(num_elements, Mat3::Zero());
  strains_previous_.assign(num_elements, Mat3::Zero());
  previous_step_ = -2;
}

std::vector<int> MlXpbdSolver::colorSizes() const {
  std::vector<int> sizes;
  for (size_t c = 0; c + 1 < color_start_.size(); ++c) sizes.push_back(color_start_[c + 1] - color_start_[c]);
  return sizes;
}

template <int D>
void MlXpbdSolver::sweepSlots(const Slots<D>& slots, Positions& x, double inv_h2, const char* rigid_slot) {
  constexpr int N = VoigtDims<D>::kNodes;
  constexpr int V = VoigtDims<D>::kConstraints;
  for (int c = 0; c + 1 < static_cast<int>(color_start_.size()); ++c) {
    // Elements of one color share no node: their updates commute, whatever the thread count.
#pragma omp parallel for schedule(static) if (worthThreads(color_start_[c + 1] - color_start_[c]))
    for (int s = color_start_[c]; s < color_start_[c + 1]; ++s) {
      if (rigid_slot && rigid_slot[s]) continue;  // rigid in this layer: its lambda is kept
      const Slot<D>& slot = slots[s];
      VoigtNodes<D> xe;
      for (int a = 0; a < N; ++a) xe.col(a) = x.segment<3>(3 * slot.nodes[a]);
      voigtElementUpdate<D>(slot.shape_gradients, slot.compliance, inv_h2, slot.inverse_mass, xe,
                            lambda_.data() + static_cast<size_t>(s) * V);
      for (int a = 0; a < N; ++a) x.segment<3>(3 * slot.nodes[a]) = xe.col(a);
    }
  }
}

void MlXpbdSolver::sweepElastic(Positions& x, double inv_h2, const char* rigid_slot) {
  if (dimension_ == 2)
    sweepSlots<2>(slots2_, x, inv_h2, rigid_slot);
  else
    sweepSlots<3>(slots3_, x, inv_h2, rigid_slot);
}

template <int D>
void MlXpbdSolver::greenStrainsOfSlots(const Slots<D>& slots, const Positions& x, std::vector<Mat3>& strains) const {
  constexpr int N = VoigtDims<D>::kNodes;
  for (size_t s = 0; s < slots.size(); ++s) {
    VoigtNodes<D> xe;
    for (int a = 0; a < N; ++a) xe.col(a) = x.segment<3>(3 * slots[s].nodes[a]);
    // Plane strain: F = [F_2d e_z] (every z pinned).
    Mat3 F = Mat3::Identity();
    F.leftCols<D>() = xe * slots[s].shape_gradients;
    strains[element_of_slot_[s]] = ml_xpbd::greenStrain(F);
  }
}

void MlXpbdSolver::greenStrains(const Positions& x, std::vector<Mat3>& strains) const {
  if (dimension_ == 2)
    greenStrainsOfSlots<2>(slots2_, x, strains);
  else
    greenStrainsOfSlots<3>(slots3_, x, strains);
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
  // Eq. 30 over the contacts too: C + alpha~ lambda, C = min(n.(x - p), 0).
  for (const ml_xpbd::VertexContact& contact : contacts_) {
    const double c = std::min(contact.normal.dot(x.segment<3>(3 * contact.node) - contact.point), 0.0);
    const double force = contact.compliance * inv_h2 * contact.lambda;
    paper_sum += (c + force) * (c + force);
    const double m = std::abs(c) - std::min(std::abs(c), std::abs(force));
    matlab_sum += m * m;
  }
  paper = std::sqrt(paper_sum);
  matlab = std::sqrt(matlab_sum);
}

void MlXpbdSolver::finishVelocities(const StepObjective& objective, VecX& v) {
  if (options_.restitution < 0.0) return;
  ml_xpbd::applyRestitution(contacts_, options_.restitution, objective.problem().gravity.norm(), objective.dt(),
                            contact_inverse_mass_, v);
}

}  // namespace pbdlab
