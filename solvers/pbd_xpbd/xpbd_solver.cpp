#include "solvers/pbd_xpbd/xpbd_solver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>

#include "core/materials/polar_svd.hpp"
#include "core/support/thread_settings.hpp"
#include "solvers/pbd_xpbd/xpbd_update.hpp"

namespace pbdlab {

std::string xpbdVariantName(XpbdVariant variant) {
  switch (variant) {
    case XpbdVariant::kXpbd: return "xpbd";
    case XpbdVariant::kPbd: return "pbd";
    case XpbdVariant::kXpbdQuasistatic: return "xpbd_qs";
    case XpbdVariant::kBlendedPrimal: return "b_pxpbd";
  }
  return "?";
}

std::vector<std::string> XpbdSolver::logColumns() const {
  std::vector<std::string> columns = {"primal_residual", "secondary_residual", "colors"};
  if (options_.variant == XpbdVariant::kXpbdQuasistatic) columns.push_back("pseudo_time");
  return columns;
}

std::string XpbdSolver::rejectionReason(const Problem& problem) const {
  const std::string me = "solver " + name();
  const bool dynamic = problem.time.integrator == Integrator::kBackwardEuler;
  if ((options_.variant == XpbdVariant::kXpbd || options_.variant == XpbdVariant::kBlendedPrimal) && !dynamic)
    return me + " integrates backward Euler (PXPBD eq. 9-17); the scene is quasistatic (use xpbd_qs, "
                "which runs XPBD to steady state in pseudo-time)";
  if (options_.variant == XpbdVariant::kXpbdQuasistatic && dynamic)
    return me + " relaxes quasistatic scenes in pseudo-time (PBNG §6.1); the scene is backward_euler (use xpbd)";
  if (!problem.hasElasticEnergy())
    return me + " builds its constraints from a solid body's material split; the scene has no solid body";
  if (!problem.colliderTerms().empty()) return me + " has no collider projection; the scene has kinematic colliders";
  // Its constraints, colorings and sweeps are built over one elastic term of one element type.
  if (problem.hasMixedElementTypes())
    return me + " builds its constraints over one element type; the scene's bodies have different element types (" +
           problem.elementTypesName() + ")";
  return splitRejection(me, problem.elasticEnergy(), options_.split);
}

Solver::OptionConflict XpbdSolver::materialConflict(const Material& material) const {
  if (options_.split.empty()) return {};  // the material's default split
  try {
    constraintSplit(material, options_.split);
  } catch (const std::invalid_argument& error) {
    return {"split", "solver " + name() + ": " + error.what()};
  }
  return {};
}

double XpbdSolver::complianceScale(double inv_dt2) const {
  return options_.variant == XpbdVariant::kPbd ? 0.0 : inv_dt2;
}

void XpbdSolver::setup(const Problem& problem) {
  if (const std::string reason = rejectionReason(problem); !reason.empty()) throw std::invalid_argument(reason);
  problem_ = &problem;
  energy_ = &problem.elasticEnergy();
  plane_strain_ = energy_->isPlaneStrain();
  const int N = nodes_per_element_ = energy_->nodesPerElement();
  const int Q = points_per_element_ = energy_->quadraturePointsPerElement();

  // One split per distinct material.
  splits_.clear();
  split_material_.clear();
  std::map<const Material*, int> split_index;
  auto splitOf = [&](int e) {
    const Material* material = &energy_->material(e);
    auto found = split_index.find(material);
    if (found != split_index.end()) return found->second;
    splits_.push_back(constraintSplit(*material, options_.split));
    split_material_.push_back(material);
    return split_index[material] = static_cast<int>(splits_.size()) - 1;
  };

  // Elements in color order with their quadrature data copied next to each other.
  const Coloring& coloring = energy_->elementColoring();
  const int num_elements = energy_->numElements();
  color_start_.assign(1, 0);
  element_of_slot_.clear();
  element_of_slot_.reserve(num_elements);
  for (const auto& group : coloring.groups) {
    element_of_slot_.insert(element_of_slot_.end(), group.begin(), group.end());
    color_start_.push_back(static_cast<int>(element_of_slot_.size()));
  }
  slot_nodes_.resize(static_cast<size_t>(num_elements) * N);
  slot_shape_gradients_.resize(static_cast<size_t>(num_elements) * Q * N * 3);
  slot_point_volumes_.resize(static_cast<size_t>(num_elements) * Q);
  slot_volume_.resize(num_elements);
  split_of_slot_.resize(num_elements);
  first_constraint_.assign(1, 0);
  compliance_.clear();
  total_offset_.assign(1, 0);
  for (int s = 0; s < num_elements; ++s) {
    const int e = element_of_slot_[s];
    for (int a = 0; a < N; ++a) slot_nodes_[static_cast<size_t>(s) * N + a] = energy_->elementNodes(e)[a];
    withNodeCount(energy_->elementType(), [&](auto n) {
      constexpr int M = decltype(n)::value;
      for (int q = 0; q < Q; ++q)
        Eigen::Map<NodeColumns<M>>(slot_shape_gradients_.data() + (static_cast<size_t>(s) * Q + q) * M * 3) =
            energy_->shapeGradients<M>(e, q);
    });
    for (int q = 0; q < Q; ++q) slot_point_volumes_[static_cast<size_t>(s) * Q + q] = energy_->quadratureVolume(e, q);
    slot_volume_[s] = energy_->restVolume(e);
    split_of_slot_[s] = splitOf(e);
    for (const MaterialTerm& term : splits_[split_of_slot_[s]].terms) {
      const bool projection = options_.variant == XpbdVariant::kPbd;
      // A term of zero stiffness has infinite compliance: no constraint (skipped in sweeps).
      compliance_.push_back(term.stiffness > 0.0 ? (projection ? 0.0 : 1.0 / term.stiffness)
                                                 : std::numeric_limits<double>::infinity());
      total_offset_.push_back(total_offset_.back() + 3 * N);
    }
    first_constraint_.push_back(static_cast<int>(compliance_.size()));
  }

  // Every other term of the potential (weak constraints): C = sqrt(2 E_s), compliance 1.
  other_terms_.clear();
  for (const auto& term : problem.terms()) {
    if (term.get() == static_cast<const EnergyTerm*>(energy_)) continue;
    OtherTerm other{term.get(), {}, static_cast<int>(compliance_.size())};
    for (const auto& group : term->stencilColoring().groups)
      other.stencils.insert(other.stencils.end(), group.begin(), group.end());
    for (size_t i = 0; i < other.stencils.size(); ++i) {
      compliance_.push_back(options_.variant == XpbdVariant::kPbd ? 0.0 : 1.0);
      total_offset_.push_back(total_offset_.back() + 3 * term->nodesPerStencil());
    }
    other_terms_.push_back(std::move(other));
  }

  inverse_mass_.resize(problem.numDofs());
  for (int dof = 0; dof < problem.numDofs(); ++dof)
    inverse_mass_[dof] = problem.isFixedDof(dof) ? 0.0 : 1.0 / problem.dofMasses()[dof];
  slot_inverse_mass_.resize(static_cast<size_t>(num_elements) * 3 * N);
  for (size_t i = 0; i < slot_nodes_.size(); ++i)
    for (int k = 0; k < 3; ++k) slot_inverse_mass_[3 * i + k] = inverse_mass_[3 * slot_nodes_[i] + k];
  // The lane kernel: P1 records in slot order, when every split's terms have closed forms of
  // the same kinds in the same order (then a slot's constraints are K s .. K s + K - 1).
  use_p1_lanes_ = options_.p1_lanes && hasP1Records(*energy_);
  for (const MaterialSplit& split : splits_) {
    use_p1_lanes_ = use_p1_lanes_ && xpbdP1LanesServe(split);
    for (int k = 0; use_p1_lanes_ && k < split.numTerms(); ++k)
      use_p1_lanes_ = split.numTerms() == splits_.front().numTerms() &&
                      split.terms[k].kind == splits_.front().terms[k].kind &&
                      !split.terms[k].signed_root == !splits_.front().terms[k].signed_root;
  }
  records_.clear();
  p1_split_ = {};
  rotations_ready_ = false;
  if (use_p1_lanes_) {
    for (const MaterialTerm& term : splits_.front().terms) {
      p1_split_.kinds.push_back(term.kind);
      p1_split_.signed_root.push_back(term.signed_root ? 1 : 0);
    }
    const int K = splits_.front().numTerms();
    p1_split_.compliance.assign(splits_.size(), {});
    p1_split_.shift.assign(splits_.size(), {});
    for (size_t i = 0; i < splits_.size(); ++i)
      for (int k = 0; k < K; ++k) p1_split_.shift[i][k] = splits_[i].terms[k].shift;
    records_.resize(num_elements);
    for (int s = 0; s < num_elements; ++s) {
      for (int k = 0; k < K; ++k) p1_split_.compliance[split_of_slot_[s]][k] = compliance_[first_constraint_[s] + k];
      fillP1ElementRecord(*energy_, element_of_slot_[s], records_[s]);
      records_[s].material = split_of_slot_[s];
      records_[s].rotation.setIdentity();
    }
  }

  lambda_.assign(compliance_.size(), 0.0);
  displacement_total_.assign(options_.variant == XpbdVariant::kBlendedPrimal ? total_offset_.back() : 0, 0.0);
  secondary_squared_.assign(compliance_.size(), 0.0);
}

std::string XpbdSolver::description() const {
  char text[256];
  const int per_element = splits_.empty() ? 0 : splits_.front().numTerms();
  std::snprintf(text, sizeof text, "%s: split '%s', eps %g, %d constraints per element, %d element colors%s",
                name().c_str(), splits_.empty() ? options_.split.c_str() : splits_.front().name.c_str(),
                options_.eps, per_element, numElementColors(),
                !use_p1_lanes_ ? ""
                : options_.rotation == XpbdOptions::Rotation::kWarmStart ? ", P1 lanes (warm-started rotations)"
                                                                         : ", P1 lanes (SVD rotations)");
  return text;
}

void XpbdSolver::resetMultipliers() {
  std::fill(lambda_.begin(), lambda_.end(), 0.0);
  std::fill(displacement_total_.begin(), displacement_total_.end(), 0.0);
}

template <int N>
void XpbdSolver::updateConstraint(int constraint, const double* inverse_mass, double C,
                                  const Eigen::Matrix<double, 3, N>& gradient, double alpha_tilde,
                                  Eigen::Matrix<double, 3, N>& xe) {
  // M^-1 grad C^T (0 in prescribed components)
  const Eigen::Matrix<double, 3, N> weighted =
      Eigen::Map<const Eigen::Matrix<double, 3, N>>(inverse_mass, 3, gradient.cols()).cwiseProduct(gradient);
  double& lambda = lambda_[constraint];
  double delta_lambda = 0.0;  // README's eq. 16 (xpbd_update.hpp)
  // No update where the denominator vanishes: PBD at a point where grad C = 0.
  if (!xpbdMultiplierStep(C, lambda, weighted.cwiseProduct(gradient).sum(), alpha_tilde, delta_lambda)) return;
  if (options_.variant == XpbdVariant::kBlendedPrimal) {
    Eigen::Map<Eigen::Matrix<double, 3, N>> total(displacement_total_.data() + total_offset_[constraint], 3,
                                                  gradient.cols());
    xe += blendedPrimalDisplacement(options_.zeta, lambda, delta_lambda, weighted, total);  // eq. 19-22
  } else {
    xe += delta_lambda * weighted;  // eq. 15, 17
  }
  lambda += delta_lambda;
}

template <int N, class Visit, class Finish>
void XpbdSolver::forEachElementConstraint(const Positions& x, double t, Visit&& visit, Finish&& finish) const {
  using Nodes3 = Eigen::Matrix<double, 3, N>;
  const int Q = points_per_element_;
  const bool skip_near_zero = options_.near_zero == XpbdOptions::NearZero::kSkip;
  // One parallel region for all colors, a barrier between them (the end of each work-shared
  // loop): a region per color would wake the sleeping team once per color (passive waiting).
#pragma omp parallel if (worthThreads(color_start_.back()))
  for (int c = 0; c + 1 < static_cast<int>(color_start_.size()); ++c) {
#pragma omp for schedule(static)
    for (int s = color_start_[c]; s < color_start_[c + 1]; ++s) {
      const int* nodes = slot_nodes_.data() + static_cast<size_t>(s) * N;
      Nodes3 xe;
      for (int a = 0; a < N; ++a) xe.col(a) = x.template segment<3>(3 * nodes[a]);
      const ElementQuadrature element{slot_shape_gradients_.data() + static_cast<size_t>(s) * Q * N * 3,
                                      slot_point_volumes_.data() + static_cast<size_t>(s) * Q, Q, slot_volume_[s]};
      const MaterialSplit& split = splits_[split_of_slot_[s]];
      const MaterialPointData data = energy_->pointData(element_of_slot_[s], t);
      const int first = first_constraint_[s];
      for (int k = 0; k < split.numTerms(); ++k) {
        if (!std::isfinite(compliance_[first + k])) continue;
        Nodes3 gradient;
        double weighted_psi = 0.0;
        const double C = elementConstraint<N>(element, xe, split.terms[k], data, options_.eps, plane_strain_, gradient,
                                              &weighted_psi);
        if (skip_near_zero && std::abs(weighted_psi) <= XpbdOptions::kSkipBelow * element.volume) continue;
        visit(s, nodes, first + k, C, gradient, xe);
      }
      finish(nodes, xe);
    }
  }
}

template <int N>
void XpbdSolver::sweepElements(Positions& x, double inv_dt2, double t) {
  using Nodes3 = Eigen::Matrix<double, 3, N>;
  const double scale = complianceScale(inv_dt2);
  forEachElementConstraint<N>(
      x, t,
      [&](int s, const int*, int constraint, double C, const Nodes3& gradient, Nodes3& xe) {
        const double* inverse_mass = slot_inverse_mass_.data() + static_cast<size_t>(s) * 3 * N;
        updateConstraint<N>(constraint, inverse_mass, C, gradient, compliance_[constraint] * scale, xe);
      },
      [&](const int* nodes, const Nodes3& xe) {
        for (int a = 0; a < N; ++a) x.segment<3>(3 * nodes[a]) = xe.col(a);
      });
}

double XpbdSolver::stencilConstraint(const EnergyTerm& term, int s, const Positions& x, double t, VecX& gradient) {
  double value = 0.0;
  term.stencilTerms(s, x, t, &value, &gradient, nullptr, HessianKind::kTrue);
  const double C = std::sqrt(2.0 * std::abs(value));
  if (C > 0.0)
    gradient /= C;
  else
    gradient.setZero();
  return C;
}

void XpbdSolver::sweepOtherTerms(Positions& x, double inv_dt2, double t) {
  // Serial: these terms are few (weak constraints) and their generic kernel allocates.
  const double scale = complianceScale(inv_dt2);
  VecX gradient;
  for (const OtherTerm& other : other_terms_) {
    const int n = other.term->nodesPerStencil();
    for (size_t i = 0; i < other.stencils.size(); ++i) {
      const int* nodes = other.term->stencilNodes(other.stencils[i]);
      const double C = stencilConstraint(*other.term, other.stencils[i], x, t, gradient);
      Eigen::Matrix<double, 3, Eigen::Dynamic> xe(3, n), inverse_mass(3, n);
      for (int a = 0; a < n; ++a) {
        xe.col(a) = x.segment<3>(3 * nodes[a]);
        inverse_mass.col(a) = inverse_mass_.segment<3>(3 * nodes[a]);
      }
      const Eigen::Map<const Eigen::Matrix<double, 3, Eigen::Dynamic>> g(gradient.data(), 3, n);
      const int constraint = other.first_constraint + static_cast<int>(i);
      updateConstraint<Eigen::Dynamic>(constraint, inverse_mass.data(), C, g, compliance_[constraint] * scale, xe);
      for (int a = 0; a < n; ++a) x.segment<3>(3 * nodes[a]) = xe.col(a);
    }
  }
}

void XpbdSolver::startRotations(const Positions& x) {
  const int count = static_cast<int>(records_.size());
#pragma omp parallel for schedule(static) if (worthThreads(count))
  for (int s = 0; s < count; ++s) records_[s].rotation = polarRotation(energy_->deformationGradient(element_of_slot_[s], 0, x));
  rotations_ready_ = true;
}

void XpbdSolver::sweepP1Lanes(Positions& x, double inv_dt2) {
  XpbdP1Update update;
  update.eps = options_.eps;
  update.skip_near_zero = options_.near_zero == XpbdOptions::NearZero::kSkip;
  update.warm_rotations = options_.rotation == XpbdOptions::Rotation::kWarmStart;
  update.blended = options_.variant == XpbdVariant::kBlendedPrimal;
  update.zeta = options_.zeta;
  update.compliance_scale = complianceScale(inv_dt2);
  if (update.warm_rotations && !rotations_ready_) startRotations(x);
  double* totals = update.blended ? displacement_total_.data() : nullptr;
  int fallbacks = 0;
  const int colors = numElementColors();
  // One parallel region, a barrier between colors (see forEachElementConstraint).
#pragma omp parallel reduction(+ : fallbacks) if (worthThreads(color_start_.back()))
  for (int c = 0; c < colors; ++c) {
    const int begin = color_start_[c], end = color_start_[c + 1];
    const int batches = (end - begin + kXpbdP1Lanes - 1) / kXpbdP1Lanes;
#pragma omp for schedule(static)
    for (int b = 0; b < batches; ++b) {
      const int first = begin + b * kXpbdP1Lanes;
      sweepXpbdP1Records(p1_split_, update, first, std::min(first + kXpbdP1Lanes, end), records_.data(),
                         inverse_mass_.data(), x.data(), lambda_.data(), totals, fallbacks);
    }
  }
  rotation_fallbacks_ += fallbacks;
}

void XpbdSolver::sweep(Positions& x, double inv_dt2, double t) {
  auto elements = [&] {
    if (use_p1_lanes_)
      sweepP1Lanes(x, inv_dt2);
    else
      withNodeCount(energy_->elementType(), [&](auto n) { sweepElements<decltype(n)::value>(x, inv_dt2, t); });
  };
  if (options_.flipped) {
    sweepOtherTerms(x, inv_dt2, t);
    elements();
  } else {
    elements();
    sweepOtherTerms(x, inv_dt2, t);
  }
}

template <int N>
void XpbdSolver::elementResiduals(const Positions& x, double inv_dt2, double t, VecX& force) {
  using Nodes3 = Eigen::Matrix<double, 3, N>;
  const double scale = complianceScale(inv_dt2);
  forEachElementConstraint<N>(
      x, t,
      [&](int, const int* nodes, int constraint, double C, const Nodes3& gradient, Nodes3&) {
        const double lambda = lambda_[constraint];
        const double h = C + compliance_[constraint] * scale * lambda;  // eq. 12
        secondary_squared_[constraint] = h * h;
        for (int a = 0; a < N; ++a) force.segment<3>(3 * nodes[a]) += lambda * gradient.col(a);
      },
      [](const int*, const Nodes3&) {});
}

void XpbdSolver::otherTermResiduals(const Positions& x, double inv_dt2, double t, VecX& force) {
  const double scale = complianceScale(inv_dt2);
  VecX gradient;
  for (const OtherTerm& other : other_terms_)
    for (size_t i = 0; i < other.stencils.size(); ++i) {
      const int* nodes = other.term->stencilNodes(other.stencils[i]);
      const double C = stencilConstraint(*other.term, other.stencils[i], x, t, gradient);
      const int constraint = other.first_constraint + static_cast<int>(i);
      const double h = C + compliance_[constraint] * scale * lambda_[constraint];
      secondary_squared_[constraint] = h * h;
      for (int a = 0; a < other.term->nodesPerStencil(); ++a)
        force.segment<3>(3 * nodes[a]) += lambda_[constraint] * gradient.segment<3>(3 * a);
    }
}

void XpbdSolver::residuals(const Positions& x, const Positions& x_pred, double inv_dt2, double t, double& primal,
                          double& secondary, VecX& force) {
  force.setZero(x.size());
  std::fill(secondary_squared_.begin(), secondary_squared_.end(), 0.0);
  withNodeCount(energy_->elementType(),
                [&](auto n) { elementResiduals<decltype(n)::value>(x, inv_dt2, t, force); });
  otherTermResiduals(x, inv_dt2, t, force);
  // g = M (x - x_pred) - sum_c lambda_c grad C_c over the free DOFs (eq. 11).
  xpbdResidualNorms(*problem_, x, x_pred, force, secondary_squared_, primal, secondary);
}

void XpbdSolver::advance(const StepObjective& objective, State& state, StepMonitor& monitor) {
  const Budget& budget = monitor.budget();
  const double t = objective.timeNext();
  const bool pseudo_time = options_.variant == XpbdVariant::kXpbdQuasistatic;
  const double dt = pseudo_time ? options_.pseudo_dt : objective.dt();
  const double inv_dt2 = 1.0 / (dt * dt);
  const double colors = numElementColors();
  auto recorded = [&](int iteration) {
    return iteration % budget.record_every == 0 || iteration >= budget.max_iterations;
  };

  // x_pred: PXPBD's x~ with the external force folded in (eq. 11); XPBD's initial guess.
  Positions x_start = objective.previousPositions();
  objective.applyBoundary(x_start);
  Positions x_pred = pseudo_time ? x_start : objective.inertialTarget();
  addExternalPrediction(objective, dt, x_pred);
  Positions x = x_pred;
  resetMultipliers();
  VecX force, pseudo_velocity = VecX::Zero(x.size());
  Positions x_begin(x.size());
  double primal = 0.0, secondary = 0.0, pseudo_seconds = 0.0;
  bool stop = false;
  if (pseudo_time) {
    x = x_start;  // a quasistatic step starts at rest at the previous solution (no g, h yet)
    stop = monitor.record(0, x, {{"colors", colors}, {"pseudo_time", 0.0}});
  } else if (options_.log_residuals) {
    {
      const StepMonitor::ClockPause diagnostics(monitor);  // g and h are for the log only
      residuals(x, x_pred, inv_dt2, t, primal, secondary, force);
    }
    stop = monitor.record(0, x, {{"primal_residual", primal}, {"secondary_residual", secondary}, {"colors", colors}});
  } else {
    stop = monitor.record(0, x, {{"colors", colors}});
  }
  Positions x_last_finite = x;
  for (int iteration = 1; !stop; ++iteration) {
    if (pseudo_time) {
      // One backward Euler pseudo-step of length dt from (x, v) (PBNG §6.1).
      // x_begin and x_pred are reused (no allocation per pseudo-step).
      x_begin = x;
      x_pred = x + dt * pseudo_velocity;
      addExternalPrediction(objective, dt, x_pred);
      x = x_pred;
      resetMultipliers();
      // Many sweeps per pseudo-step may outlast max_seconds: the budget is checked after each
      // sweep, and the iterate of a cut pseudo-step is recorded below (stop reason time_budget).
      for (int s = 0; s < options_.iterations_per_pseudo_step; ++s) {
        sweep(x, inv_dt2, t);
        if (monitor.timeSpent()) break;
      }
      pseudo_velocity = ((1.0 - options_.velocity_damping) / dt) * (x - x_begin);
      pseudo_seconds += dt;
    } else {
      if (options_.primal_residual_in_update && iteration > 1) {
        // Eq. 13's position row with g kept: x <- x - M^-1 g = x_pred + M^-1 sum lambda grad C.
        residuals(x, x_pred, inv_dt2, t, primal, secondary, force);
        for (int dof : problem_->freeDofs()) x[dof] = x_pred[dof] + inverse_mass_[dof] * force[dof];
      }
      sweep(x, inv_dt2, t);
    }
    if (!x.allFinite()) {
      // Report the divergence and keep the last finite positions (never a silent NaN).
      monitor.stopFor(StopReason::kDiverged, "the positions became NaN or infinite in iteration " +
                                                 std::to_string(iteration) + " (the last finite iterate is kept)");
      monitor.record(iteration, x_last_finite, {});
      x = x_last_finite;
      break;
    }
    x_last_finite = x;
    if (recorded(iteration) && options_.log_residuals) {
      {
        const StepMonitor::ClockPause diagnostics(monitor);
        residuals(x, x_pred, inv_dt2, t, primal, secondary, force);
      }
      if (pseudo_time)
        stop = monitor.record(iteration, x,
                              {{"primal_residual", primal}, {"secondary_residual", secondary},
                               {"pseudo_time", pseudo_seconds}});
      else
        stop = monitor.record(iteration, x, {{"primal_residual", primal}, {"secondary_residual", secondary}});
    } else if (pseudo_time) {
      stop = monitor.record(iteration, x, {{"pseudo_time", pseudo_seconds}});
    } else {
      stop = monitor.record(iteration, x);
    }
  }
  state.x = x;
}

}  // namespace pbdlab
