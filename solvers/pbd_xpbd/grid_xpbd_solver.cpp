#include "solvers/pbd_xpbd/grid_xpbd_solver.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>

#include "core/grid/grid_coloring.hpp"
#include "core/support/thread_settings.hpp"
#include "solvers/pbd_xpbd/element_constraint.hpp"
#include "solvers/pbd_xpbd/xpbd_update.hpp"

namespace pbdlab {

namespace {

// The touched nodes of one element: at most the embedded term's block (4x4x4 for the quadratic
// B-spline), so per-visit matrices live on the stack.
constexpr int kGridMaxTouched = 64;
using GridTouched3 = Eigen::Matrix<double, 3, Eigen::Dynamic, Eigen::ColMajor, 3, kGridMaxTouched>;
using GridNodes3 = Eigen::Matrix<double, 3, 4>;

}  // namespace

std::string gridColoringNodesName(GridColoringNodes nodes) {
  return nodes == GridColoringNodes::kKernel ? "kernel" : "touched";
}

std::vector<std::string> GridXpbdSolver::logColumns() const {
  return {"primal_residual", "secondary_residual", "colors", "coloring_seconds", "recolored"};
}

std::string GridXpbdSolver::rejectionReason(const Problem& problem) const {
  const std::string me = "solver " + name();
  const std::string mesh_reason = me + " runs on the grid-based scheme's problems (a scene with a \"grid\"): use " +
                                  (options_.blended ? "b_pxpbd" : "xpbd") + " for a mesh";
  if (problem.hasElasticEnergy()) return mesh_reason;
  const EmbeddedTerm* embedded = nullptr;
  for (const auto& term : problem.terms()) {
    const auto* candidate = dynamic_cast<const EmbeddedTerm*>(term.get());
    if (!candidate) return mesh_reason + " (term '" + term->name() + "' is not embedded in a grid)";
    const auto* inner = dynamic_cast<const ElasticEnergy*>(&candidate->inner());
    if (!inner)
      return me + " builds its constraints from embedded elastic terms only; the grid problem's term '" +
             candidate->name() + "' is not one (weak constraints and cloth are not XPBD constraints on the grid yet)";
    if (inner->elementType() != ElementType::kTet4 || inner->isPlaneStrain())
      return me + " builds its constraints over P1 tetrahedra (tet4); the embedded mesh has " +
             elementTypeName(inner->elementType()) + " elements" + (inner->isPlaneStrain() ? " in plane strain" : "");
    if (embedded)
      return me + " builds its constraints over one embedded elastic term; the grid problem has several";
    embedded = candidate;
  }
  if (!embedded) return me + " builds its constraints from an embedded elastic term; the problem has none";
  if (problem.time.integrator != Integrator::kBackwardEuler)
    return me + " integrates backward Euler (PXPBD eq. 9-17, §5.5); the problem is quasistatic";
  if (!problem.colliderTerms().empty()) return me + " has no collider projection; the problem has kinematic colliders";
  return splitRejection(me, static_cast<const ElasticEnergy&>(embedded->inner()), options_.split);
}

Solver::OptionConflict GridXpbdSolver::materialConflict(const Material& material) const {
  if (options_.split.empty()) return {};
  try {
    constraintSplit(material, options_.split);
  } catch (const std::invalid_argument& error) {
    return {"split", "solver " + name() + ": " + error.what()};
  }
  return {};
}

void GridXpbdSolver::colorElements(const EmbeddedTerm& term, const ElasticEnergy& energy) {
  const auto start = std::chrono::steady_clock::now();
  const Connectivity& elements = energy.mesh().elements;
  const int count = energy.numElements();
  int previous = 0;
  for (const auto& group : coloring_.groups) previous += static_cast<int>(group.size());
  warm_started_ = count > 0 && previous == count && coloring_nodes_used_ == options_.coloring_nodes;
  if (!warm_started_) coloring_ = {};
  if (options_.coloring_nodes == GridColoringNodes::kKernel) {
    if (warm_started_) {
      recolored_ = recolorElementsOnGrid(coloring_, elements, term.weights());
    } else {
      coloring_ = colorElementsOnGrid(elements, term.weights());
      recolored_ = count;
    }
  } else {
    // Each vertex's nodes of nonzero weight, its zero-weight kernel nodes replaced by a repeat
    // of its first touched one (the topology functions accept repeats within a stencil).
    const GridWeights& W = term.weights();
    const int per_vertex = W.nodes_per_point;
    const int per_element = static_cast<int>(elements.cols()) * per_vertex;
    std::vector<int> nodes(static_cast<size_t>(count) * static_cast<size_t>(per_element));
    size_t slot = 0;
    for (int e = 0; e < count; ++e)
      for (int a = 0; a < elements.cols(); ++a) {
        const size_t first = W.entry(elements(e, a));
        int touched = -1;
        for (int k = 0; k < per_vertex && touched < 0; ++k)
          if (W.weight[first + k] != 0.0) touched = W.node[first + k];
        for (int k = 0; k < per_vertex; ++k) nodes[slot++] = W.weight[first + k] != 0.0 ? W.node[first + k] : touched;
      }
    const int* data = nodes.data();
    const StencilSet stencils{count, per_element,
                              [data, per_element](int e) { return data + static_cast<size_t>(e) * per_element; }};
    recolored_ = recolorStencils(coloring_, stencils);
  }
  coloring_nodes_used_ = options_.coloring_nodes;
  coloring_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void GridXpbdSolver::setup(const Problem& problem) {
  if (const std::string reason = rejectionReason(problem); !reason.empty()) throw std::invalid_argument(reason);
  problem_ = &problem;
  const auto& term = static_cast<const EmbeddedTerm&>(*problem.terms().front());
  energy_ = &static_cast<const ElasticEnergy&>(term.inner());
  const int Q = points_per_element_ = energy_->quadraturePointsPerElement();
  colorElements(term, *energy_);

  splits_.clear();
  std::map<const Material*, int> split_index;
  auto splitOf = [&](int e) {
    const Material* material = &energy_->material(e);
    auto found = split_index.find(material);
    if (found != split_index.end()) return found->second;
    splits_.push_back(constraintSplit(*material, options_.split));
    return split_index[material] = static_cast<int>(splits_.size()) - 1;
  };

  const int num_elements = energy_->numElements();
  color_start_.assign(1, 0);
  element_of_slot_.clear();
  element_of_slot_.reserve(num_elements);
  for (const auto& group : coloring_.groups) {
    element_of_slot_.insert(element_of_slot_.end(), group.begin(), group.end());
    color_start_.push_back(static_cast<int>(element_of_slot_.size()));
  }
  touched_start_.assign(1, 0);
  touched_node_.clear();
  touched_inverse_mass_.clear();
  entry_start_.assign(1, 0);
  entries_.clear();
  slot_shape_gradients_.resize(static_cast<size_t>(num_elements) * Q * 4 * 3);
  slot_point_volumes_.resize(static_cast<size_t>(num_elements) * Q);
  slot_volume_.resize(num_elements);
  split_of_slot_.resize(num_elements);
  first_constraint_.assign(1, 0);
  compliance_.clear();
  total_offset_.assign(1, 0);
  const VecX& masses = problem.dofMasses();
  int local_to_touched[kGridMaxTouched];
  for (int s = 0; s < num_elements; ++s) {
    const int e = element_of_slot_[s];
    // B's nonzeros, the block's nodes renumbered by first appearance (vertex-major).
    const std::vector<EmbeddedTerm::Entry> entries = term.weightEntries(e);
    const int* block = term.stencilNodes(e);
    std::fill(local_to_touched, local_to_touched + kGridMaxTouched, -1);
    int touched = 0;
    for (const EmbeddedTerm::Entry& entry : entries) {
      int& index = local_to_touched[entry.local];
      if (index < 0) {
        index = touched++;
        const int node = block[entry.local];
        touched_node_.push_back(node);
        for (int k = 0; k < 3; ++k) {
          const int dof = 3 * node + k;
          touched_inverse_mass_.push_back(problem.isFixedDof(dof) ? 0.0 : 1.0 / masses[dof]);
        }
      }
      entries_.push_back({entry.vertex, index, entry.weight});
    }
    touched_start_.push_back(static_cast<int>(touched_node_.size()));
    entry_start_.push_back(static_cast<int>(entries_.size()));
    for (int q = 0; q < Q; ++q) {
      Eigen::Map<NodeColumns<4>>(slot_shape_gradients_.data() + (static_cast<size_t>(s) * Q + q) * 4 * 3) =
          energy_->shapeGradients<4>(e, q);
      slot_point_volumes_[static_cast<size_t>(s) * Q + q] = energy_->quadratureVolume(e, q);
    }
    slot_volume_[s] = energy_->restVolume(e);
    split_of_slot_[s] = splitOf(e);
    for (const MaterialTerm& split_term : splits_[split_of_slot_[s]].terms) {
      compliance_.push_back(split_term.stiffness > 0.0 ? 1.0 / split_term.stiffness
                                                       : std::numeric_limits<double>::infinity());
      total_offset_.push_back(total_offset_.back() + 3 * static_cast<size_t>(touched));
    }
    first_constraint_.push_back(static_cast<int>(compliance_.size()));
  }
  lambda_.assign(compliance_.size(), 0.0);
  displacement_total_.assign(options_.blended ? total_offset_.back() : 0, 0.0);
  secondary_squared_.assign(compliance_.size(), 0.0);
}

std::string GridXpbdSolver::description() const {
  char text[320];
  const int per_element = splits_.empty() ? 0 : splits_.front().numTerms();
  char zeta[32] = "";
  if (options_.blended) std::snprintf(zeta, sizeof zeta, ", zeta %g", options_.zeta);
  std::snprintf(text, sizeof text,
                "%s: split '%s', eps %g%s, %d constraints per element, %d elements in %d colors (%s nodes, %s: %d "
                "recolored in %.2g ms)",
                name().c_str(), splits_.empty() ? options_.split.c_str() : splits_.front().name.c_str(), options_.eps,
                zeta, per_element, static_cast<int>(element_of_slot_.size()), numColors(),
                gridColoringNodesName(options_.coloring_nodes).c_str(), warm_started_ ? "warm-started" : "cold start",
                recolored_, 1e3 * coloring_seconds_);
  return text;
}

void GridXpbdSolver::resetMultipliers() {
  std::fill(lambda_.begin(), lambda_.end(), 0.0);
  std::fill(displacement_total_.begin(), displacement_total_.end(), 0.0);
}

template <class Visit>
void GridXpbdSolver::forEachConstraint(const Positions& q, double t, Positions* moved, Visit&& visit) const {
  const int Q = points_per_element_;
  const bool skip_near_zero = options_.near_zero == XpbdOptions::NearZero::kSkip;
  // One parallel region for all colours, a barrier between them (as XpbdSolver's sweeps), when
  // the mean colour is large enough to share: a mesh finer than the grid has many small colours
  // (grid spacing twice the mesh's: 320 tets in 222 colours, 17,280 in 667), where a barrier per
  // colour costs more than its work (two blocks, 200 sweeps: 0.40 s threaded, 0.04 s not).
  const int colors = static_cast<int>(color_start_.size()) - 1;
  const bool threads = colors > 0 && worthThreads(color_start_.back() / colors);
#pragma omp parallel if (threads)
  for (int c = 0; c + 1 < static_cast<int>(color_start_.size()); ++c) {
#pragma omp for schedule(static)
    for (int s = color_start_[c]; s < color_start_[c + 1]; ++s) {
      const int* nodes = touched_node_.data() + touched_start_[s];
      const int T = touched_start_[s + 1] - touched_start_[s];
      const WeightEntry* begin = entries_.data() + entry_start_[s];
      const WeightEntry* end = entries_.data() + entry_start_[s + 1];
      GridTouched3 qe(3, T);
      for (int j = 0; j < T; ++j) qe.col(j) = q.segment<3>(3 * static_cast<Eigen::Index>(nodes[j]));
      GridNodes3 xe;
      auto embedVertices = [&] {  // x_a = sum_i w_ai q_i
        xe.setZero();
        for (const WeightEntry* w = begin; w != end; ++w) xe.col(w->vertex) += w->weight * qe.col(w->touched);
      };
      embedVertices();
      const ElementQuadrature element{slot_shape_gradients_.data() + static_cast<size_t>(s) * Q * 4 * 3,
                                      slot_point_volumes_.data() + static_cast<size_t>(s) * Q, Q, slot_volume_[s]};
      const MaterialSplit& split = splits_[split_of_slot_[s]];
      const MaterialPointData data = energy_->pointData(element_of_slot_[s], t);
      const int first = first_constraint_[s];
      for (int k = 0; k < split.numTerms(); ++k) {
        if (!std::isfinite(compliance_[first + k])) continue;
        GridNodes3 gradient;
        double weighted_psi = 0.0;
        const double C =
            elementConstraint<4>(element, xe, split.terms[k], data, options_.eps, false, gradient, &weighted_psi);
        if (skip_near_zero && std::abs(weighted_psi) <= XpbdOptions::kSkipBelow * element.volume) continue;
        GridTouched3 gradient_q = GridTouched3::Zero(3, T);  // B^T grad_x C
        for (const WeightEntry* w = begin; w != end; ++w)
          gradient_q.col(w->touched) += w->weight * gradient.col(w->vertex);
        if (visit(s, first + k, C, gradient_q, qe)) embedVertices();
      }
      if (moved)
        for (int j = 0; j < T; ++j) moved->segment<3>(3 * static_cast<Eigen::Index>(nodes[j])) = qe.col(j);
    }
  }
}

void GridXpbdSolver::sweep(Positions& q, double inv_dt2, double t) {
  const bool blended = options_.blended;
  const double zeta = options_.zeta;
  forEachConstraint(q, t, &q, [&](int s, int constraint, double C, const GridTouched3& gradient, GridTouched3& qe) {
    const int T = static_cast<int>(gradient.cols());
    const Eigen::Map<const Eigen::Matrix<double, 3, Eigen::Dynamic>> inverse_mass(
        touched_inverse_mass_.data() + 3 * static_cast<size_t>(touched_start_[s]), 3, T);
    const GridTouched3 weighted = inverse_mass.cwiseProduct(gradient);  // M^-1 grad_q C^T
    double& lambda = lambda_[constraint];
    double delta_lambda = 0.0;
    if (!xpbdMultiplierStep(C, lambda, weighted.cwiseProduct(gradient).sum(), compliance_[constraint] * inv_dt2,
                            delta_lambda))
      return false;
    if (blended) {
      Eigen::Map<Eigen::Matrix<double, 3, Eigen::Dynamic>> total(
          displacement_total_.data() + total_offset_[constraint], 3, T);
      qe += blendedPrimalDisplacement(zeta, lambda, delta_lambda, weighted, total);  // eq. 19-22
    } else {
      qe += delta_lambda * weighted;  // eq. 15, 17
    }
    lambda += delta_lambda;
    return true;
  });
}

void GridXpbdSolver::residuals(const Positions& q, const Positions& q_pred, double inv_dt2, double t, double& primal,
                               double& secondary, VecX& force) {
  force.setZero(q.size());
  std::fill(secondary_squared_.begin(), secondary_squared_.end(), 0.0);
  forEachConstraint(q, t, nullptr, [&](int s, int constraint, double C, const GridTouched3& gradient, GridTouched3&) {
    const double lambda = lambda_[constraint];
    const double h = C + compliance_[constraint] * inv_dt2 * lambda;  // eq. 12
    secondary_squared_[constraint] = h * h;
    const int* nodes = touched_node_.data() + touched_start_[s];
    for (int j = 0; j < static_cast<int>(gradient.cols()); ++j)
      force.segment<3>(3 * static_cast<Eigen::Index>(nodes[j])) += lambda * gradient.col(j);
    return false;
  });
  // g = M (q - q_pred) - sum_c lambda_c grad_q C_c over the free DOFs (eq. 11).
  xpbdResidualNorms(*problem_, q, q_pred, force, secondary_squared_, primal, secondary);
}

void GridXpbdSolver::advance(const StepObjective& objective, State& state, StepMonitor& monitor) {
  const Budget& budget = monitor.budget();
  const double t = objective.timeNext();
  const double dt = objective.dt();
  const double inv_dt2 = 1.0 / (dt * dt);
  auto recorded = [&](int iteration) {
    return iteration % budget.record_every == 0 || iteration >= budget.max_iterations;
  };
  // PXPBD's x~ in q with the external force folded in: the initial guess and g's reference.
  const Positions q_pred = xpbdPrediction(objective);
  Positions q = q_pred;
  resetMultipliers();
  VecX force;
  double primal = 0.0, secondary = 0.0;
  const double colors = numColors();
  bool stop = false;
  if (options_.log_residuals) {
    {
      const StepMonitor::ClockPause diagnostics(monitor);  // g and h are for the log only
      residuals(q, q_pred, inv_dt2, t, primal, secondary, force);
    }
    stop = monitor.record(0, q,
                          {{"primal_residual", primal},
                           {"secondary_residual", secondary},
                           {"colors", colors},
                           {"coloring_seconds", coloring_seconds_},
                           {"recolored", static_cast<double>(recolored_)}});
  } else {
    stop = monitor.record(0, q,
                          {{"colors", colors},
                           {"coloring_seconds", coloring_seconds_},
                           {"recolored", static_cast<double>(recolored_)}});
  }
  Positions q_last_finite = q;
  for (int iteration = 1; !stop; ++iteration) {
    sweep(q, inv_dt2, t);
    if (monitor.stopIfNotFinite(iteration, q, q_last_finite)) break;
    if (recorded(iteration) && options_.log_residuals) {
      {
        const StepMonitor::ClockPause diagnostics(monitor);
        residuals(q, q_pred, inv_dt2, t, primal, secondary, force);
      }
      stop = monitor.record(iteration, q, {{"primal_residual", primal}, {"secondary_residual", secondary}});
    } else {
      stop = monitor.record(iteration, q);
    }
  }
  state.x = q;
}

}  // namespace pbdlab
