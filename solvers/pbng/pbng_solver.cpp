#include "solvers/pbng/pbng_solver.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/materials/fixed_corotated.hpp"
#include "core/materials/polar_svd.hpp"
#include "core/materials/tangent_projection.hpp"
#include "core/support/thread_settings.hpp"
#include "core/terms/collider_term.hpp"
#include "core/terms/elastic_energy.hpp"

namespace pbdlab {

namespace {

// How many nodes ahead of the one it updates a sweep prefetches the fast path's records.
constexpr int kPrefetchDistance = 2;

// Materials whose approximateTangent() is the default, eq. 32 with modelParameters() (the
// muscle adds its fibre term and takes the generic path).
bool usesDefaultApproximateTangent(const Material& material) {
  const std::string name = material.name();
  return name == "fixed_corotated" || name == "neo_hookean" || name == "stable_neo_hookean" || name == "stvk";
}

}  // namespace

std::string PbngSolver::rejectionReason(const Problem& problem) const {
  (void)problem;
  return "";
}

std::vector<std::shared_ptr<const EnergyTerm>> PbngSolver::visitedTerms(
    const std::vector<std::shared_ptr<const EnergyTerm>>& terms) {
  std::vector<std::shared_ptr<const EnergyTerm>> visited;
  for (const auto& term : terms)
    if (!dynamic_cast<const ColliderTerm*>(term.get())) visited.push_back(term);
  return visited;
}

void PbngSolver::setup(const Problem& problem) {
  rotation_fallbacks_ = 0;
  scaling_ = {};
  last_velocities_.resize(0);
  last_step_ = -2;
  buildTable(problem, visitedTerms(problem.terms()), false);
}

std::vector<StencilSet> PbngSolver::stencilSets() const {
  std::vector<StencilSet> sets;
  for (const auto& term : terms_) {
    const EnergyTerm* t = term.get();
    sets.push_back({t->numStencils(), t->nodesPerStencil(), [t](int s) { return t->stencilNodes(s); }});
  }
  return sets;
}

bool PbngSolver::sameStencils(const std::vector<std::shared_ptr<const EnergyTerm>>& terms) const {
  if (terms.size() != terms_.size()) return false;
  const size_t own = terms_.size() - stencil_copies_.size();  // the Problem's terms: same objects
  for (size_t k = 0; k < own; ++k)
    if (terms[k].get() != terms_[k].get()) return false;
  for (size_t k = own; k < terms.size(); ++k) {
    const EnergyTerm& t = *terms[k];
    const std::vector<int>& copy = stencil_copies_[k - own];
    const size_t n = static_cast<size_t>(t.numStencils()) * t.nodesPerStencil();
    if (n != copy.size() || (n > 0 && !std::equal(copy.begin(), copy.end(), t.stencilNodes(0)))) return false;
  }
  return true;
}

void PbngSolver::buildTable(const Problem& problem, const std::vector<std::shared_ptr<const EnergyTerm>>& terms,
                            bool incremental) {
  const bool same_problem = problem_ == &problem;
  problem_ = &problem;
  terms_ = terms;
  ++table_builds_;
  const int num_nodes = problem.numNodes();
  // Copies of the stencils of the step's own terms (contacts), to see when they change.
  const size_t own = visitedTerms(problem.terms()).size();
  stencil_copies_.clear();
  for (size_t k = own; k < terms_.size(); ++k) {
    const EnergyTerm& t = *terms_[k];
    const size_t n = static_cast<size_t>(t.numStencils()) * t.nodesPerStencil();
    stencil_copies_.emplace_back(n > 0 ? t.stencilNodes(0) : nullptr, n > 0 ? t.stencilNodes(0) + n : nullptr);
  }

  // The fast path of the elastic term: P1 tetrahedra (one point), 3D. PBNG's block: materials
  // with the default eq. 32 tangent, V (2 mu |g|^2 I + lambda c c^T), c = cof(F) g, g = dN_i/dX.
  // VBD's exact blocks: materials with a closed-form stress (fixed corotated, the two
  // Neo-Hookeans), V g^T (dP/dF) g in closed form; St. Venant-Kirchhoff's and the muscle's exact
  // tangents are not, and keep the term on addNodeBlock. Both without the 9x9 tangent
  // (p1_visit.hpp); otherwise addNodeBlock (same values, the generic kernel).
  const ElasticEnergy* previous_fast = fast_elastic_;
  fast_elastic_ = nullptr;
  fast_term_ = -1;
  const bool exact = options_.node_block != PbngOptions::NodeBlock::kApproximate;
  for (size_t k = 0; k < terms_.size() && options_.p1_lanes; ++k) {
    const auto* elastic = dynamic_cast<const ElasticEnergy*>(terms_[k].get());
    if (!elastic || !hasP1Records(*elastic)) continue;
    bool eligible = true;
    for (int e = 0; e < elastic->numElements() && eligible; ++e) {
      const Material& m = elastic->material(e);
      eligible = exact ? closedFormStressOf(m).kind != ClosedFormStressKind::kNone : usesDefaultApproximateTangent(m);
    }
    if (!eligible) break;
    // Kept when the same elastic term is rebuilt for new contacts (its rotations carry over).
    const bool keep = incremental && same_problem && elastic == previous_fast &&
                      fast_elements_.size() == static_cast<size_t>(elastic->numElements());
    if (!keep) fast_elements_.assign(elastic->numElements(), {});
    fast_materials_.clear();
    std::vector<const Material*> distinct;
    for (int e = 0; e < elastic->numElements(); ++e) {
      const Material& m = elastic->material(e);
      const auto found = std::find(distinct.begin(), distinct.end(), &m);
      int index = static_cast<int>(found - distinct.begin());
      if (found == distinct.end()) {
        distinct.push_back(&m);
        // Eq. 32's (mu, lambda): the Lamé parameters of (E, nu) or the model's own
        // (tangent_parameters), clamped at 0 as pbngApproximateTangent does.
        fast_materials_.push_back(pbngP1Material(m, m.tangentParameters(options_.tangent_parameters)));
      }
      P1ElementRecord& fast = fast_elements_[e];
      fast.material = index;
      fillP1ElementRecord(*elastic, e, fast);
      if (!keep) fast.rotation.setIdentity();
    }
    fast_elastic_ = elastic;
    fast_term_ = static_cast<int>(k);
    break;
  }

  // node -> (term, stencil, local), CSR, terms in order (the sum order of a node's row is fixed),
  // over each stencil's used nodes only (EnergyTerm::usedNodes): an embedded term's block node
  // that no vertex touches would add a zero gradient and block for the price of the element's
  // whole Hessian. The colouring below stays over every stencil node (the same sweeps).
  const std::vector<StencilSet> sets = stencilSets();
  std::vector<NodeAdjacency> adjacency;
  for (const auto& term : terms_) adjacency.push_back(usedNodeAdjacency(num_nodes, *term));
  // The fast path's visits go to their own list (fast_visits_, CSR by node here, reordered
  // below), the other terms' to entries_.
  entry_start_.assign(num_nodes + 1, 0);
  std::vector<int> fast_visit_start(num_nodes + 1, 0);  // by-node CSR until the reordering below
  for (int i = 0; i < num_nodes; ++i) {
    int count = 0, fast = 0;
    for (size_t k = 0; k < adjacency.size(); ++k)
      (static_cast<int>(k) == fast_term_ ? fast : count) += adjacency[k].start[i + 1] - adjacency[k].start[i];
    entry_start_[i + 1] = entry_start_[i] + count;
    fast_visit_start[i + 1] = fast_visit_start[i] + fast;
  }
  entries_.resize(entry_start_[num_nodes]);
  fast_visits_.resize(fast_visit_start[num_nodes]);
  for (int i = 0; i < num_nodes; ++i) {
    int p = entry_start_[i], f = fast_visit_start[i];
    for (size_t k = 0; k < adjacency.size(); ++k)
      for (int q = adjacency[k].start[i]; q < adjacency[k].start[i + 1]; ++q) {
        if (static_cast<int>(k) == fast_term_)
          fast_visits_[f++] = 4 * adjacency[k].stencil[q] + adjacency[k].local[q];
        else
          entries_[p++] = {static_cast<int>(k), adjacency[k].stencil[q], adjacency[k].local[q]};
      }
  }


  // §10: node coloring over every visited stencil; §10.1: after new contacts only the nodes of
  // the contact stencils may change color.
  if (incremental && same_problem && coloring_.numColors() > 0) {
    std::vector<int> touched;
    for (const std::vector<int>& copy : stencil_copies_) touched.insert(touched.end(), copy.begin(), copy.end());
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    recolorNodes(coloring_, sets, touched);
  } else {
    coloring_ = colorNodes(num_nodes, sets);
  }

  fixed_mask_.assign(num_nodes, 0);
  for (int i = 0; i < num_nodes; ++i)
    for (int d = 0; d < 3; ++d)
      if (problem.isFixedDof(3 * i + d)) fixed_mask_[i] |= static_cast<unsigned char>(1u << d);
  sweep_groups_.clear();
  for (const std::vector<int>& group : coloring_.groups) {
    std::vector<int> movable;
    for (int i : group)
      if (fixed_mask_[i] != 7) movable.push_back(i);
    if (!movable.empty()) sweep_groups_.push_back(std::move(movable));
  }
  // The fast path's visits laid out in sweep order (then the nodes no sweep moves), so that a
  // sweep reads them front to back.
  std::vector<int> in_sweep_order;
  in_sweep_order.reserve(fast_visits_.size());
  fast_visit_begin_.assign(num_nodes, 0);
  fast_visit_count_.assign(num_nodes, 0);
  std::vector<char> placed(num_nodes, 0);
  auto place = [&](int i) {
    fast_visit_begin_[i] = static_cast<int>(in_sweep_order.size());
    fast_visit_count_[i] = fast_visit_start[i + 1] - fast_visit_start[i];
    in_sweep_order.insert(in_sweep_order.end(), fast_visits_.begin() + fast_visit_start[i],
                          fast_visits_.begin() + fast_visit_start[i + 1]);
    placed[i] = 1;
  };
  for (const std::vector<int>& group : sweep_groups_)
    for (int i : group) place(i);
  for (int i = 0; i < num_nodes; ++i)
    if (!placed[i]) place(i);
  fast_visits_ = std::move(in_sweep_order);

  // The per-element rotations survive a rebuild for new contacts (same problem, same term).
  const bool warm = fast_elastic_ && options_.rotation == PbngOptions::Rotation::kWarmStart &&
                    std::any_of(fast_materials_.begin(), fast_materials_.end(),
                                [](const PbngP1Material& material) { return material.corotated(); });
  const bool kept = incremental && same_problem && fast_elastic_ == previous_fast && warm_rotations_;
  warm_rotations_ = warm;
  if (!warm || !kept) rotations_ready_ = false;
}

std::vector<Mat3> PbngSolver::elementRotations() const {
  std::vector<Mat3> rotations;
  if (!warm_rotations_) return rotations;
  for (const P1ElementRecord& fast : fast_elements_) rotations.push_back(fast.rotation);
  return rotations;
}

void PbngSolver::startRotations(const Positions& x) {
  const ElasticEnergy& elastic = *fast_elastic_;
  const int count = elastic.numElements();
#pragma omp parallel for schedule(static) if (worthThreads(count))
  for (int e = 0; e < count; ++e) {
    if (fast_materials_[fast_elements_[e].material].corotated()) fast_elements_[e].rotation = polarRotation(elastic.deformationGradient(e, 0, x));
  }
  rotations_ready_ = true;
}

void PbngSolver::beginStep(const StepObjective& objective, Positions& x) {
  const Problem& problem = objective.problem();
  const std::vector<std::shared_ptr<const EnergyTerm>> terms = visitedTerms(objective.terms());
  if (problem_ != &problem || !sameStencils(terms))
    buildTable(problem, terms, problem_ == &problem);
  else
    terms_ = terms;  // the same stencils; the step's own term objects
  dynamic_ = objective.isDynamic();
  dt_ = dynamic_ ? objective.dt() : 1.0;
  dt2_ = dt_ * dt_;
  time_ = objective.timeNext();
  x_tilde_ = &objective.inertialTarget();
  x_previous_ = &objective.previousPositions();
  f_ext_ = &objective.externalForce();
  x = options_.initial_guess == PbngOptions::InitialGuess::kPrevious ? objective.previousPositions()
                                                                      : objective.inertialTarget();
  if (options_.initial_guess == PbngOptions::InitialGuess::kPbdPrediction && dynamic_) {
    const VecX& m = problem.nodeMasses();
    for (int i = 0; i < problem.numNodes(); ++i)
      if (m[i] > 0.0) x.segment<3>(3 * i) += (dt2_ / m[i]) * f_ext_->segment<3>(3 * i);
  }
  if (options_.initial_guess == PbngOptions::InitialGuess::kAdaptive && dynamic_) addAdaptiveAcceleration(objective, x);
  objective.applyBoundary(x);
  projectAllOntoColliders(x);  // §7.2: penetrating vertices onto the surface before the step
  if (warm_rotations_ && !rotations_ready_) startRotations(x);
}

void PbngSolver::addAdaptiveAcceleration(const StepObjective& objective, Positions& x) {
  // VBD's adaptive initialization: x = x^n + dt v^n + dt^2 a~, a~ = g^ clamp(a_last . g^, 0, |g|)
  // per node, a_last = (v^n - v^{n-1}) / dt. x holds x~ = x^n + dt v^n here.
  const Vec3 gravity = objective.problem().gravity;
  const double g_norm = gravity.norm();
  const VecX& v = objective.previousVelocities();
  const bool has_last = last_velocities_.size() == v.size() && last_step_ + 1 == objective.step();
  if (g_norm > 0.0) {
    const Vec3 direction = gravity / g_norm;
    for (int i = 0; i < objective.problem().numNodes(); ++i) {
      double along = g_norm;  // the first step: the gravity itself
      if (has_last)
        along = std::clamp(((v.segment<3>(3 * i) - last_velocities_.segment<3>(3 * i)) / dt_).dot(direction), 0.0, g_norm);
      x.segment<3>(3 * i) += dt2_ * along * direction;
    }
  }
  last_velocities_ = v;
  last_step_ = objective.step();
}

void PbngSolver::nodeSystem(int node, const Positions& x, Vec3& gradient, Mat3& block) const {
  int fallbacks = 0;
  nodeSystem(node, x, gradient, block, nullptr, fallbacks);
}

void PbngSolver::nodeSystem(int node, const Positions& x, Vec3& gradient, Mat3& block, P1ElementRecord* warm,
                            int& fallbacks) const {
  gradient.setZero();
  block.setZero();
  // The P1 elements of the fast path (p1_visit.hpp: eq. 32-33, or VBD's exact blocks, projected
  // per element for "projected_terms"), then every other term.
  if (fast_visit_count_[node] > 0) {
    using NodeBlock = PbngOptions::NodeBlock;
    const PbngP1Block lane_block = options_.node_block == NodeBlock::kApproximate      ? PbngP1Block::kApproximate
                                   : options_.node_block == NodeBlock::kProjectedTerms ? PbngP1Block::kExactProjected
                                                                                       : PbngP1Block::kExact;
    addPbngP1Visits(fast_visits_.data() + fast_visit_begin_[node], fast_visit_count_[node], fast_elements_.data(),
                    warm, fast_materials_, x, *fast_elastic_, time_, gradient, block, fallbacks, lane_block);
  }
  const HessianKind kind = options_.node_block == PbngOptions::NodeBlock::kApproximate
                               ? ElasticEnergy::approximateHessianKind(options_.tangent_parameters)
                               : HessianKind::kTrue;
  const bool project_terms = options_.node_block == PbngOptions::NodeBlock::kProjectedTerms;
  for (int p = entry_start_[node]; p < entry_start_[node + 1]; ++p) {
    const Entry& entry = entries_[p];
    const double scale = scaling_.term.empty() ? 1.0 : scaling_.term[entry.term];
    if (scale == 1.0 && !project_terms) {
      terms_[entry.term]->addNodeBlock(entry.stencil, entry.local, x, time_, kind, gradient, block);
    } else {
      Vec3 term_gradient = Vec3::Zero();
      Mat3 term_block = Mat3::Zero();
      terms_[entry.term]->addNodeBlock(entry.stencil, entry.local, x, time_, kind, term_gradient, term_block);
      if (project_terms) term_block = projectToPositiveSemidefinite(term_block);
      gradient += scale * term_gradient;
      block += scale * term_block;
    }
  }
  if (options_.node_block == PbngOptions::NodeBlock::kProjectedSum) block = projectToPositiveSemidefinite(block);
  // The yardstick's row: - f_ext, and for backward Euler the incremental potential's scaling
  // and inertia (core/solver/yardstick.cpp: M (x - x~) + dt^2 (grad PE - f_ext)).
  const double node_scale = scaling_.node.empty() ? 1.0 : scaling_.node[node];
  gradient -= (scaling_.force ? node_scale : 1.0) * f_ext_->segment<3>(3 * node);
  if (scaling_.added_force.size() > 0) gradient -= scaling_.added_force.segment<3>(3 * node);
  if (dynamic_) {
    const double m = node_scale * problem_->nodeMasses()[node];
    if (options_.damping > 0.0) {
      // VBD's damping (PbngOptions::damping): with dt^2 as the row's scale, (k_d / dt) H becomes dt k_d H.
      const Mat3 damping_block = (options_.damping / dt_) * block;
      gradient += damping_block * (x.segment<3>(3 * node) - x_previous_->segment<3>(3 * node));
      block += damping_block;
    }
    gradient = m * (x.segment<3>(3 * node) - x_tilde_->segment<3>(3 * node)) + dt2_ * gradient;
    block *= dt2_;
    block.diagonal().array() += m;
  }
}

Vec3 PbngSolver::nodeStep(int node, const Positions& x) const {
  int fallbacks = 0;
  return nodeStep(node, x, nullptr, fallbacks);
}

Vec3 PbngSolver::nodeStep(int node, const Positions& x, P1ElementRecord* warm, int& fallbacks) const {
  Vec3 g;
  Mat3 A;
  nodeSystem(node, x, g, A, warm, fallbacks);
  const unsigned char mask = fixed_mask_[node];
  if (mask) {
    // Only the free components move: the prescribed rows and columns become the identity.
    for (int d = 0; d < 3; ++d)
      if (mask & (1u << d)) {
        A.row(d).setZero();
        A.col(d).setZero();
        A(d, d) = 1.0;
        g[d] = 0.0;
      }
  }
  const Eigen::LLT<Mat3> llt(A);
  if (llt.info() != Eigen::Success) return Vec3::Zero();
  Vec3 dx = -llt.solve(g);  // eq. 30
  // §7.2: a node in contact whose step points into a collider (dx . n < 0) moves in the
  // tangent plane only.
  for (const auto& collider : problem_->colliderTerms()) {
    Vec3 n;
    const double phi = signedDistance(collider->collider().shape, x.segment<3>(3 * node), &n);
    if (phi > collider->collider().contact_tolerance || !(dx.dot(n) < 0.0)) continue;
    if (options_.contact_step == PbngOptions::ContactStep::kPaper) {
      dx -= dx.dot(n) * n;  // the paper's (I - n n^T) dx
    } else {
      // The Newton step of the same quadratic model restricted to the tangent plane:
      // dx = -(P A P + n n^T)^-1 P g, P = I - n n^T (its fixed point is P g = 0, the yardstick's
      // projected residual; the paper's projected step stops where P A^-1 g = 0 instead).
      const Mat3 P = Mat3::Identity() - n * n.transpose();
      A = P * A * P + n * n.transpose();
      g = P * g;
      const Eigen::LLT<Mat3> restricted(A);
      if (restricted.info() != Eigen::Success) return Vec3::Zero();
      dx = -restricted.solve(g);
    }
    for (int d = 0; d < 3; ++d)
      if (mask & (1u << d)) dx[d] = 0.0;
  }
  return dx;
}

void PbngSolver::projectOntoColliders(int node, Positions& x) const {
  const unsigned char mask = fixed_mask_[node];
  if (mask == 7) return;
  for (const auto& collider : problem_->colliderTerms()) {
    const ColliderShape& shape = collider->collider().shape;
    const Vec3 xi = x.segment<3>(3 * node);
    if (!(signedDistance(shape, xi) < 0.0)) continue;
    // The closest surface point, in the node's free components only (a prescribed component
    // keeps its boundary value; a plane whose normal lies along free components is exact).
    const Vec3 target = closestPoint(shape, xi);
    for (int d = 0; d < 3; ++d)
      if (!(mask & (1u << d))) x[3 * node + d] = target[d];
  }
}

void PbngSolver::projectAllOntoColliders(Positions& x) const {
  if (problem_->colliderTerms().empty()) return;
  const int n = problem_->numNodes();
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; ++i) projectOntoColliders(i, x);
}

void PbngSolver::updateNode(int node, Positions& x, double& largest, P1ElementRecord* warm, int& fallbacks) const {
  const Vec3 dx = nodeStep(node, x, warm, fallbacks);
  const Vec3 before = x.segment<3>(3 * node);
  x.segment<3>(3 * node) += dx;  // eq. 28
  projectOntoColliders(node, x);  // §7.2
  largest = std::max(largest, (x.segment<3>(3 * node) - before).lpNorm<Eigen::Infinity>());
}

void PbngSolver::setScaling(Scaling scaling) {
  if (!scaling.node.empty() && scaling.node.size() != static_cast<size_t>(problem_->numNodes()))
    throw std::invalid_argument("PbngSolver::setScaling: " + std::to_string(scaling.node.size()) + " node scales for " +
                                std::to_string(problem_->numNodes()) + " nodes");
  if (scaling.added_force.size() > 0 && scaling.added_force.size() != problem_->numDofs())
    throw std::invalid_argument("PbngSolver::setScaling: an added force of " + std::to_string(scaling.added_force.size()) +
                                " entries for " + std::to_string(problem_->numDofs()) + " DOFs");
  if (!scaling.term.empty()) {
    if (scaling.term.size() != terms_.size())
      throw std::invalid_argument("PbngSolver::setScaling: " + std::to_string(scaling.term.size()) +
                                  " term scales for " + std::to_string(terms_.size()) + " visited terms");
    if (fast_term_ >= 0 && scaling.term[fast_term_] != 1.0)
      throw std::invalid_argument("PbngSolver::setScaling: the P1 fast path's term '" + terms_[fast_term_]->name() +
                                  "' cannot be scaled");
  }
  scaling_ = std::move(scaling);
}

std::vector<std::vector<int>> PbngSolver::sweepGroups(const std::vector<char>& include) const {
  std::vector<std::vector<int>> groups;
  for (const std::vector<int>& group : sweep_groups_) {
    std::vector<int> kept;
    for (int node : group)
      if (include[node]) kept.push_back(node);
    if (!kept.empty()) groups.push_back(std::move(kept));
  }
  return groups;
}

double PbngSolver::sweep(Positions& x) { return sweep(x, sweep_groups_); }

double PbngSolver::sweep(Positions& x, const std::vector<std::vector<int>>& groups) {
  double largest = 0.0;
  int fallbacks = 0;
  // The per-element rotations (warm start), written here only: a color's nodes share no
  // element, so each element's rotation has one writer per color.
  P1ElementRecord* warm = warm_rotations_ ? fast_elements_.data() : nullptr;
#pragma omp parallel reduction(max : largest) reduction(+ : fallbacks) if (worthThreads(x.size() / 3))
  for (const std::vector<int>& group : groups) {
    const int count = static_cast<int>(group.size());
#pragma omp for schedule(static)
    for (int k = 0; k < count; ++k) {
      // Asks early for the fast-path records of the node kPrefetchDistance ahead (written here:
      // GCC drops a call to a function that only prefetches, as having no effect).
      if (k + kPrefetchDistance < count) {
        const int ahead = group[k + kPrefetchDistance];
        const int end = fast_visit_begin_[ahead] + fast_visit_count_[ahead];
        for (int p = fast_visit_begin_[ahead]; p < end; ++p) {
          const char* record = reinterpret_cast<const char*>(fast_elements_.data() + (fast_visits_[p] >> 2));
          __builtin_prefetch(record, 1);  // the rotation, written
          __builtin_prefetch(record + 64, 0);
          __builtin_prefetch(record + 128, 0);
        }
      }
      updateNode(group[k], x, largest, warm, fallbacks);
    }
  }
  rotation_fallbacks_ += fallbacks;
  return largest;
}

void PbngSolver::advance(const StepObjective& objective, State& state, StepMonitor& monitor) {
  Positions x;
  beginStep(objective, x);
  const double colors = numColors();
  if (!x.allFinite()) {
    monitor.stopForNonFiniteStart(x, {{"colors", colors}});
    state.x = x;
    return;
  }
  const bool accelerated = options_.chebyshev() || options_.sor();
  double omega = options_.omega_auto ? 1.0 : options_.omega;  // "auto": plain until estimated
  std::vector<double> update_norms;  // the probe sweeps' |x^l - x^{l-1}|
  bool probing = options_.omega_auto;
  double probe_rate = 0.0;  // the rate estimated 4 sweeps ago
  Positions x_previous = x;  // x^{l-1} (x^{-1} = x^0)
  Positions x_current;       // x^l
  double chebyshev_weight = 1.0;
  bool stop = monitor.record(0, x, {{"colors", colors}});
  Positions last_finite = x;
  for (int iteration = 1; !stop; ++iteration) {
    if (accelerated) x_current = x;
    double largest = sweep(x);  // x = x^^{l+1}, l = iteration - 1
    if (accelerated) {
      const int l = iteration - 1;
      if (options_.chebyshev()) {
        const double rho2 = options_.chebyshev_rho * options_.chebyshev_rho;
        chebyshev_weight = l < 2 ? 1.0 : l == 2 ? 2.0 / (2.0 - rho2) : 4.0 / (4.0 - rho2 * chebyshev_weight);
        x = chebyshev_weight * (options_.chebyshev_gamma * (x - x_current) + x_current - x_previous) + x_previous;
      } else {
        if (probing) update_norms.push_back((x - x_current).norm());
        x = omega * (x - x_previous) + x_previous;  // SOR, §7.3
      }
      x_previous.swap(x_current);
      projectAllOntoColliders(x);
      largest = (x - x_previous).lpNorm<Eigen::Infinity>();  // x_previous now holds x^l
    }
    if (monitor.stopIfNotFinite(iteration, x, last_finite)) break;
    // No node moved beyond the positions' round-off: the residual is at its floor.
    if (largest <= 1e-14 * std::max(1.0, x.lpNorm<Eigen::Infinity>())) monitor.stopFor(StopReason::kRoundoff);
    stop = options_.sor() ? monitor.record(iteration, x, {{"omega", omega}}) : monitor.record(iteration, x);
    // "auto": probe until the rate settles, then use the estimate from the next iteration on.
    if (probing && iteration >= kOmegaProbeSweeps && iteration % 4 == 0) {
      const double rate = estimatedRate(update_norms);
      if (iteration >= kOmegaMaxProbeSweeps || (probe_rate > 0.0 && std::abs((1.0 - rate) - (1.0 - probe_rate)) <=
                                                                        0.05 * (1.0 - probe_rate))) {
        omega = estimatedOmega(update_norms);
        probing = false;
      }
      probe_rate = rate;
    }
  }
  state.x = x;
}

double PbngSolver::estimatedRate(const std::vector<double>& update_norms) {
  const size_t n = update_norms.size();
  if (n < 4) return 0.0;
  const double last = update_norms[n - 1], earlier = update_norms[n - 4];
  if (!(std::isfinite(last) && std::isfinite(earlier) && earlier > 0.0 && last < earlier)) return 0.0;
  return std::min(std::cbrt(last / earlier), 0.9999);
}

double PbngSolver::estimatedOmega(const std::vector<double>& update_norms) {
  const double mu = estimatedRate(update_norms);
  return 2.0 / (1.0 + std::sqrt(1.0 - mu * mu));
}

}  // namespace pbdlab
