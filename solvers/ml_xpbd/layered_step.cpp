// Multi-layer XPBD's step, Algorithm 2 (Mercier-Aubin & Kry 2024; spec §5, §7), for
// MlXpbdSolver (ml_xpbd_solver.hpp): the layer loop joining the elastic sweeps, the layers
// (layers.hpp) and the rigid bodies with their coupling (rigid_body.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/support/thread_settings.hpp"
#include "solvers/ml_xpbd/ml_xpbd_solver.hpp"

namespace pbdlab {

ml_xpbd::LayerHierarchy MlXpbdSolver::buildStepLayers(const StepObjective& objective, double& seconds) {
  const auto start = std::chrono::steady_clock::now();
  const Problem& problem = objective.problem();
  ml_xpbd::LayerRequest request;
  request.rigid_percentages = options_.layers;
  request.forced_elastic = forced_elastic_;
  switch (options_.ordering) {
    case MlXpbdOrdering::kStrainRate: {
      request.ordering = ml_xpbd::ElementOrdering::kStrainRate;
      // Eq. 20 between x^{t-1} and x^t; without x^{t-1} (first step, or a step not following
      // the last one) every rate is 0 and the order is the element order.
      const bool follows = objective.step() == previous_step_ + 1;
      if (follows && strains_step_ == previous_step_)
        std::swap(strains_previous_, strains_now_);  // x^{t-1}'s strains: the last step's x^t's
      else if (follows)
        greenStrains(x_previous_step_, strains_previous_);
      greenStrains(objective.previousPositions(), strains_now_);
      strains_step_ = objective.step();
      if (follows)
        request.strain_rates = ml_xpbd::strainRatesFromGreenStrains(strains_now_, strains_previous_, objective.dt());
      else
        request.strain_rates.assign(strains_now_.size(), 0.0);
      break;
    }
    case MlXpbdOrdering::kRandom:
      request.ordering = ml_xpbd::ElementOrdering::kRandom;
      request.seed = options_.seed + static_cast<std::uint32_t>(objective.step());  // a new order every step
      break;
    case MlXpbdOrdering::kVerticalStripes:
    case MlXpbdOrdering::kHorizontalStripes:
      request.ordering = ml_xpbd::ElementOrdering::kStripes;
      request.centroids = rest_centroids_;  // material stripes: the same elements every step
      request.stripes = options_.ordering == MlXpbdOrdering::kVerticalStripes
                            ? ml_xpbd::verticalStripesOfTheCantilever()
                            : ml_xpbd::horizontalStripesOfTheCantilever();
      break;
    case MlXpbdOrdering::kStretch:
      // Ours (ml_xpbd::elementStretchEigenvalue): per element at x^t, the largest eigenvalue of
      // M_e^-1/2 K_e M_e^-1/2, stiffest first; an element-by-element eigenproblem, not the
      // authors' global one (§4.1 keeps it for comparison only: it is the costly ordering).
      request.ordering = ml_xpbd::ElementOrdering::kStretch;
      request.stretch_eigenvalues = ml_xpbd::elementStretchEigenvalues(
          problem.elasticEnergy(), objective.previousPositions(), problem.nodeMasses());
      break;
  }
  ml_xpbd::LayerHierarchy hierarchy = ml_xpbd::buildLayers(problem.mesh.elements, problem.numNodes(), request);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return hierarchy;
}

void MlXpbdSolver::releaseVertices(const StepObjective& objective, Positions& x, bool everyone) {
  const double h = objective.dt();
  const int num_nodes = static_cast<int>(pending_.size());
  for (int node = 0; node < num_nodes; ++node) {
    if (!pending_[node] || (!everyone && node_body_[node] >= 0)) continue;
    if (never_rigid_[node]) {
      // Its residual velocity is still xdot^t + h M^-1 f_ext: x~ as plain XPBD computes it
      // (the same floating-point operations, so layers [0] is bit for bit plain XPBD).
      x.segment<3>(3 * node) = x_tilde_.segment<3>(3 * node);
    } else {
      x.segment<3>(3 * node) += h * residual_velocity_.segment<3>(3 * node);
    }
    residual_velocity_.segment<3>(3 * node).setZero();
    pending_[node] = 0;
  }
  objective.applyBoundary(x);
}

double MlXpbdSolver::firstPlainXpbdResidual(const StepObjective& objective, double inv_h2) {
  Positions x = x_tilde_;  // plain XPBD's initial guess, as releaseVertices places a never-rigid vertex
  objective.applyBoundary(x);
  resetMultipliers();
  const std::vector<ml_xpbd::VertexContact> step_contacts = contacts_;  // multipliers 0
  sweep(x, inv_h2);
  for (ml_xpbd::VertexContact& contact : contacts_)
    ml_xpbd::projectVertexContact(contact, contact_inverse_mass_[contact.node], inv_h2, x);
  double paper = 0.0, matlab = 0.0;
  secondaryResiduals(x, inv_h2, paper, matlab);
  resetMultipliers();
  contacts_ = step_contacts;
  return paper;
}

void MlXpbdSolver::projectElasticContacts(Positions& x, double inv_h2) {
  for (ml_xpbd::VertexContact& contact : contacts_)
    if (node_body_[contact.node] < 0)
      ml_xpbd::projectVertexContact(contact, contact_inverse_mass_[contact.node], inv_h2, x);
}

void MlXpbdSolver::gatherBodyContacts(double inv_h2) {
  body_contacts_.assign(bodies_.size(), {});
  body_contact_index_.assign(bodies_.size(), {});
  for (size_t c = 0; c < contacts_.size(); ++c) {
    const ml_xpbd::VertexContact& contact = contacts_[c];
    const int b = node_body_[contact.node];
    if (b < 0) continue;
    const std::vector<int>& vertices = bodies_[b].vertices;  // ascending
    const int local = static_cast<int>(std::lower_bound(vertices.begin(), vertices.end(), contact.node) - vertices.begin());
    body_contacts_[b].push_back({local, contact.point, contact.normal, contact.lambda, contact.compliance * inv_h2});
    body_contact_index_[b].push_back(static_cast<int>(c));
  }
}

void MlXpbdSolver::returnBodyContacts() {
  for (size_t b = 0; b < body_contacts_.size(); ++b)
    for (size_t k = 0; k < body_contacts_[b].size(); ++k)
      contacts_[body_contact_index_[b][k]].lambda = body_contacts_[b][k].lambda;
  body_contacts_.clear();
  body_contact_index_.clear();
}

double MlXpbdSolver::pendingVelocityNorm() const {
  double squared = 0.0;
  for (size_t node = 0; node < pending_.size(); ++node)
    if (pending_[node]) squared += residual_velocity_.segment<3>(3 * node).squaredNorm();
  return std::sqrt(squared);
}

void MlXpbdSolver::advance(const StepObjective& objective, State& state, StepMonitor& monitor) {
  const double h = objective.dt();
  const double inv_h2 = 1.0 / (h * h);
  const Problem& problem = objective.problem();
  const VecX& f_ext = objective.externalForce();
  const VecX& node_masses = problem.nodeMasses();
  const int num_layers = static_cast<int>(options_.layers.size());
  const ml_xpbd::BodyDimension body_dimension =
      dimension_ == 2 ? ml_xpbd::BodyDimension::k2d : ml_xpbd::BodyDimension::k3d;

  // x~ = x^n + h v^n + h^2 M^-1 f_ext (eq. 3-4, the XPBD family's prediction): where a vertex
  // never rigid in the step lands at its release. Residual velocities (Alg. 2 line 2):
  // v = xdot^t + h M^-1 f_ext on free DOFs, 0 on prescribed ones.
  x_tilde_ = objective.inertialTarget();
  for (int dof : problem.freeDofs()) x_tilde_[dof] += h * h * f_ext[dof] / problem.dofMasses()[dof];
  residual_velocity_.setZero();
  for (int dof : problem.freeDofs())
    residual_velocity_[dof] = objective.previousVelocities()[dof] + h * f_ext[dof] / problem.dofMasses()[dof];
  std::fill(pending_.begin(), pending_.end(), 1);
  std::fill(never_rigid_.begin(), never_rigid_.end(), 1);
  // The step's contacts (eq. 28), from x^t and the prediction x~; multipliers 0.
  contacts_ = ml_xpbd::detectContacts(problem, objective.previousPositions(), x_tilde_, dimension_ == 2);
  Positions x = objective.previousPositions();  // Alg. 2 line 1: x^{t+1} := x^t
  objective.applyBoundary(x);
  resetMultipliers();
  layer_end_positions_.clear();

  // The layers (Alg. 1) only when some layer has rigid elements: [0] needs no order.
  double layer_build_seconds = 0.0;
  ml_xpbd::LayerHierarchy hierarchy;
  const bool has_rigid_layers = num_layers > 1;
  if (has_rigid_layers) hierarchy = buildStepLayers(objective, layer_build_seconds);
  x_previous_step_ = objective.previousPositions();
  previous_step_ = objective.step();

  // The frame stop's target (1 - P) r_1^XPBD, off the solver's clock (spec §7).
  const bool frame_stop = options_.frame_stop_reduction > 0.0;
  double frame_target = 0.0;
  if (frame_stop) {
    const StepMonitor::ClockPause handed_over(monitor);
    frame_target = (1.0 - options_.frame_stop_reduction) * firstPlainXpbdResidual(objective, inv_h2);
  }

  int layer = 0;
  // The secondary residuals (eq. 30, MATLAB's) at x, when the log or a stop rule needs them:
  // on the solver's clock when a stop rule reads them (they are part of the method then), off
  // it when only the log does; NaN when neither does.
  auto secondaryResidualsFor = [&](bool stop_rule_reads_it, double& secondary, double& matlab) {
    secondary = matlab = std::numeric_limits<double>::quiet_NaN();
    if (stop_rule_reads_it) {
      secondaryResiduals(x, inv_h2, secondary, matlab);
    } else if (options_.log_residuals) {
      const StepMonitor::ClockPause diagnostics(monitor);  // for the log only
      secondaryResiduals(x, inv_h2, secondary, matlab);
    }
  };
  // The frame stop, after an iteration (or the first layer's rigid step, iteration 0).
  auto frameStopReached = [&](bool last_layer, double secondary) {
    return frame_stop && secondary <= frame_target && (last_layer || pendingVelocityNorm() < h * h);
  };
  auto recordIteration = [&](int iteration, double secondary, double matlab) {
    const double layer_column = layer + 1;
    const double rigid_bodies = static_cast<double>(bodies_.size());
    if (!options_.log_residuals) {
      if (iteration == 0)
        return monitor.record(iteration, x, {{"layer", layer_column}, {"rigid_bodies", rigid_bodies},
                                             {"colors", double(numElementColors())},
                                             {"layer_build_seconds", layer_build_seconds}});
      return monitor.record(iteration, x, {{"layer", layer_column}, {"rigid_bodies", rigid_bodies}});
    }
    if (iteration == 0)
      return monitor.record(iteration, x,
                            {{"secondary_residual", secondary}, {"secondary_residual_matlab", matlab},
                             {"layer", layer_column}, {"rigid_bodies", rigid_bodies},
                             {"colors", double(numElementColors())}, {"layer_build_seconds", layer_build_seconds}});
    return monitor.record(iteration, x,
                          {{"secondary_residual", secondary}, {"secondary_residual_matlab", matlab},
                           {"layer", layer_column}, {"rigid_bodies", rigid_bodies}});
  };

  bool stop = false;
  int iteration = 0;
  Positions x_last_finite = x;
  const std::vector<ml_xpbd::RigidGroup>* groups = nullptr;
  for (layer = 0; layer < num_layers && !stop; ++layer) {
    const bool last_layer = layer + 1 == num_layers;
    // This layer's rigid elements and bodies (none in a fully elastic layer).
    std::fill(node_body_.begin(), node_body_.end(), -1);
    std::fill(rigid_slot_.begin(), rigid_slot_.end(), 0);
    groups = has_rigid_layers ? &hierarchy.layers[layer].bodies : nullptr;
    const int num_bodies = groups ? static_cast<int>(groups->size()) : 0;
    if (groups) {
      for (int b = 0; b < num_bodies; ++b)
        for (int node : (*groups)[b].vertices) node_body_[node] = b;
      const std::vector<int>& element_body = hierarchy.layers[layer].element_body;
      for (size_t e = 0; e < element_body.size(); ++e)
        if (element_body[e] >= 0) rigid_slot_[slot_of_element_[e]] = 1;
    }

    // (a) Alg. 2 lines 5-8: vertices elastic in this layer take their residual velocity.
    releaseVertices(objective, x, false);

    // (b, c) lines 9-16: bodies from the current x and v (eq. 21-26), stepped (eq. 4, 10-12),
    // their vertices placed and their residual velocities reduced (eq. 27).
    bodies_.clear();
    x_before_rigid_step_ = x;
    for (int b = 0; b < num_bodies; ++b) {
      bodies_.push_back(
          ml_xpbd::makeRigidBody(body_dimension, (*groups)[b].vertices, node_masses, x, residual_velocity_));
      ml_xpbd::RigidBody& body = bodies_.back();
      ml_xpbd::stepRigidBody(body, h);
      ml_xpbd::placeBodyVertices(body, x);
      ml_xpbd::updateResidualVelocities(body, x_before_rigid_step_, x, h, residual_velocity_);
      for (int node : body.vertices) never_rigid_[node] = 0;
    }
    gatherBodyContacts(inv_h2);

    double secondary = 0.0, matlab = 0.0;
    if (iteration == 0) {
      secondaryResidualsFor(frame_stop, secondary, matlab);
      if (frameStopReached(last_layer, secondary)) monitor.stopFor(StopReason::kSolverTarget);
      stop = recordIteration(0, secondary, matlab);
      x_last_finite = x;
    }

    // (d) lines 17-19: the layer's iterations.
    const int scheduled = options_.iterations_per_layer.empty() ? 0 : options_.iterations_per_layer[layer];
    const bool layer_stop = options_.layer_stop && !last_layer;
    double first_residual = 0.0, previous_residual = 0.0;
    bool armed = false;
    const char* rigid_slot = num_bodies > 0 ? rigid_slot_.data() : nullptr;
    for (int k = 1; !stop; ++k) {
      ++iteration;
      sweepElastic(x, inv_h2, rigid_slot);
      projectElasticContacts(x, inv_h2);  // eq. 28 for the vertices in no body
      // Coupling and the body's contacts, one Jacobi pass per body (bodies share no vertex:
      // independent), then every body vertex back on its body (eq. 12), and the boundary values.
#pragma omp parallel for schedule(dynamic) if (worthThreads(num_bodies))
      for (int b = 0; b < num_bodies; ++b) {
        ml_xpbd::projectBodyConstraints(bodies_[b], (*groups)[b].boundary_vertices, node_masses, body_contacts_[b],
                                        options_.mass_splitting, x);
        ml_xpbd::placeBodyVertices(bodies_[b], x);
      }
      if (num_bodies > 0) objective.applyBoundary(x);
      if (monitor.stopIfNotFinite(iteration, x, x_last_finite)) {
        stop = true;
        break;
      }
      // With the frame stop the last layer runs on until its target (or the Budget): its count
      // in iterations_per_layer is not a cap (spec §7; the Budget is the hang stop).
      bool layer_done = scheduled > 0 && k >= scheduled && !(frame_stop && last_layer);
      // The schedule of the last layer spent before the Budget: this iteration's row is the last.
      secondaryResidualsFor(layer_stop || frame_stop, secondary, matlab);
      if (frameStopReached(last_layer, secondary))
        monitor.stopFor(StopReason::kSolverTarget);
      else if (last_layer && layer_done)
        monitor.stopFor(StopReason::kIterationBudget);
      stop = recordIteration(iteration, secondary, matlab);
      if (layer_stop) {  // §3.6, armed after the first decrease
        if (k == 1) {
          first_residual = secondary;
        } else {
          if (armed && secondary - previous_residual > -kLayerStopTolerance * first_residual) layer_done = true;
          if (secondary < previous_residual) armed = true;
        }
        previous_residual = secondary;
      }
      if (layer_done) break;
    }

    returnBodyContacts();
    // (e) line 21: rotate the rigid residual velocities by what the constraint solves turned,
    // R_final R_step^T (R was the identity at the layer's start).
    for (const ml_xpbd::RigidBody& body : bodies_)
      ml_xpbd::rotateResidualVelocities(body, body.rotation * body.step_rotation.transpose(), residual_velocity_);
    if (options_.keep_layer_end_positions) layer_end_positions_.push_back(x);
  }
  // The Budget ended the step before the last layer: the residual velocities not yet applied
  // are applied now (every vertex's h v exactly once), without further iterations.
  releaseVertices(objective, x, true);
  bodies_.clear();
  state.x = x;
}

}  // namespace pbdlab
