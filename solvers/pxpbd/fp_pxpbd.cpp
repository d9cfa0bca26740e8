#include "solvers/pxpbd/fp_pxpbd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "core/materials/tangent_projection.hpp"
#include "core/support/thread_settings.hpp"
#include "core/terms/elastic_energy.hpp"
#include "solvers/pxpbd/distortional_step.hpp"
#include "solvers/pxpbd/fp_pxpbd_lanes.hpp"

namespace pbdlab {

std::string FpPxpbdSolver::rejectionReason(const Problem& problem) const {
  if (problem.time.integrator != Integrator::kBackwardEuler)
    return "solver fp_pxpbd needs backward Euler (its per-element Newton step is held by the element's inertia, "
           "PXPBD eq. 29 and 33); the scene is quasistatic";
  if (!problem.hasElasticEnergy()) return "solver fp_pxpbd needs an elastic body";
  if (problem.hasMixedElementTypes())
    return "solver fp_pxpbd works on P1 tetrahedra (tet4) only; the scene's bodies have different element types (" +
           problem.elementTypesName() + ")";
  if (problem.elasticEnergy().elementType() != ElementType::kTet4)
    return "solver fp_pxpbd works on P1 tetrahedra (tet4: one F per element, PXPBD eq. 2); the mesh has " +
           elementTypeName(problem.elasticEnergy().elementType()) + " elements";
  if (problem.terms().size() != 1 || !problem.colliderTerms().empty() || problem.collisionDetector())
    return "solver fp_pxpbd sweeps elastic elements only; the scene has weak constraints, colliders or collisions";
  return "";
}

void FpPxpbdSolver::setup(const Problem& problem) {
  if (const std::string reason = rejectionReason(problem); !reason.empty()) throw std::invalid_argument(reason);
  problem_ = &problem;
  buildElements(problem, problem.stepDt());
  warnings_.clear();
  if (options_.initial_stress == FpPxpbdOptions::InitialStress::kPrevious) {
    const auto [largest, median] = stiffnessRatio(problem, problem.stepDt());
    if (largest > kWarmStartStabilityLimit)
      warnings_.push_back(fmt::format(
          "fp_pxpbd: initial_stress \"previous\" (warm-started stresses) with dt^2 E / (rho h^2) up to {:.3g} "
          "(median {:.3g}; h the shortest rest edge), beyond about {:g}, where warm starts were measured to diverge "
          "(solvers/pxpbd/fp_pxpbd.hpp); initial_stress \"zero\" or a smaller dt stays stable there",
          largest, median, kWarmStartStabilityLimit));
  }
}

std::pair<double, double> FpPxpbdSolver::stiffnessRatio(const Problem& problem, double dt) {
  const ElasticEnergy& energy = problem.elasticEnergy();
  double density = problem.material.density;
  if (!problem.bodies.empty()) {
    density = std::numeric_limits<double>::infinity();
    for (const Body& body : problem.bodies) density = std::min(density, body.material.density);
  }
  std::vector<double> ratios;
  ratios.reserve(energy.numElements());
  for (int e = 0; e < energy.numElements(); ++e) {
    const LameParameters lame = energy.material(e).youngsPoissonLame();
    const double youngs = lame.mu * (3.0 * lame.lambda + 2.0 * lame.mu) / (lame.lambda + lame.mu);
    const int* nodes = energy.elementNodes(e);
    double shortest = std::numeric_limits<double>::infinity();
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b)
        shortest = std::min(shortest, (problem.mesh.restPosition(nodes[a]) - problem.mesh.restPosition(nodes[b])).norm());
    ratios.push_back(dt * dt * youngs / (density * shortest * shortest));
  }
  if (ratios.empty()) return {0.0, 0.0};
  const auto middle = ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2);
  std::nth_element(ratios.begin(), middle, ratios.end());
  const double median = *middle;
  return {*std::max_element(ratios.begin(), ratios.end()), median};
}

std::vector<int> FpPxpbdSolver::elementsOfColor(int c) const {
  std::vector<int> result;
  for (int k = color_start_[c]; k < color_start_[c + 1]; ++k) result.push_back(elements_[k].element);
  return result;
}

void FpPxpbdSolver::buildElements(const Problem& problem, double dt) {
  const ElasticEnergy& energy = problem.elasticEnergy();
  const Coloring& coloring = energy.elementColoring();
  const VecX& masses = problem.nodeMasses();
  const double dt2 = dt * dt;
  elements_.clear();
  elements_.reserve(energy.numElements());
  color_start_.assign(1, 0);
  lane_end_.clear();
  closed_forms_.clear();
  std::vector<const Material*> distinct;  // closed_forms_[i] is distinct[i]'s
  const bool lanes = options_.p1_lanes && options_.local_tolerance == 0.0;
  auto servedByLanes = [&](const AffineElement& el) { return lanes && el.rankOne() && el.fixed_mask == 0; };
  for (const std::vector<int>& group : coloring.groups) {
    for (int e : group) {
      AffineElement el;
      el.element = e;
      const int* nodes = energy.elementNodes(e);
      el.shape_gradients = energy.shapeGradients<4>(e, 0);
      el.volume = energy.restVolume(e);
      Vec3 weighted = Vec3::Zero();
      for (int a = 0; a < 4; ++a) {
        el.nodes[a] = nodes[a];
        el.masses[a] = masses[nodes[a]];
        weighted += el.masses[a] * problem.mesh.restPosition(nodes[a]);
        for (int d = 0; d < 3; ++d)
          if (problem.isFixedDof(3 * nodes[a] + d)) el.fixed_mask |= static_cast<unsigned short>(1u << (3 * a + d));
      }
      el.total_mass = el.masses.sum();
      const Vec3 com = weighted / el.total_mass;  // eq. 33: mass-weighted rest centroid
      Mat3 affine_inertia = Mat3::Zero();         // M^ of eq. 36
      for (int a = 0; a < 4; ++a) {
        el.offsets.col(a) = problem.mesh.restPosition(nodes[a]) - com;
        affine_inertia += el.masses[a] * el.offsets.col(a) * el.offsets.col(a).transpose();
      }
      const Material& material = energy.material(e);
      const auto known = std::find(distinct.begin(), distinct.end(), &material);
      el.material = static_cast<int>(known - distinct.begin());
      if (known == distinct.end()) {
        distinct.push_back(&material);
        closed_forms_.push_back(closedFormStressOf(material));
      }
      const LameParameters lame = material.modelParameters();
      const bool approximate = options_.hessian == FpPxpbdOptions::Hessian::kApproximate;
      if (approximate && material.name() == "fixed_corotated") {
        el.kind = TangentKind::kCorotatedRankOne;
        el.rank_one_scale = 2.0 * lame.mu;  // eq. 48
      } else if (approximate && material.name() == "neo_hookean") {
        el.kind = TangentKind::kNeoHookeanRankOne;
        el.rank_one_scale = lame.mu;  // eq. 52 (lambda = the model's lambda_hat)
      } else {
        el.kind = material.isIsotropic() ? TangentKind::kProjectedIsotropic : TangentKind::kProjectedGeneral;
      }
      el.lambda = lame.lambda;
      if (el.kind == TangentKind::kCorotatedRankOne || el.kind == TangentKind::kNeoHookeanRankOne) {
        el.affine_block = shermanMorrisonBlock(affine_inertia, el.rank_one_scale * el.volume * dt2);
        el.rank_one_c = lame.lambda * el.volume * dt2;
      } else {
        el.affine_block = affine_inertia;
      }
      elements_.push_back(el);
    }
    // The lane kernel's elements first (their order within the color is immaterial).
    const auto lane_end = std::stable_partition(elements_.begin() + color_start_.back(), elements_.end(), servedByLanes);
    lane_end_.push_back(static_cast<int>(lane_end - elements_.begin()));
    color_start_.push_back(static_cast<int>(elements_.size()));
  }
  // The lanes' stress kind: one formula when every lane element has the same (the common case).
  std::optional<ClosedFormStressKind> kind;
  for (const AffineElement& el : elements_) {
    if (!servedByLanes(el)) continue;
    if (!kind) {
      kind = closed_forms_[el.material].kind;
    } else if (*kind != closed_forms_[el.material].kind) {
      kind = ClosedFormStressKind::kNone;
      break;
    }
  }
  lane_kind_ = kind.value_or(ClosedFormStressKind::kNone);
  rotation_fallbacks_ = 0;
  rotation_.assign(elements_.size(), Mat3::Identity());
  rotations_ready_ = false;
  stress_.assign(elements_.size(), Mat3::Zero());
  element_scratch_.assign(elements_.size(), 0.0);
  built_dt_ = dt;
  dt2_ = dt2;
}

bool FpPxpbdSolver::needsTrueTangent(const AffineElement& el) const {
  return el.kind == TangentKind::kProjectedIsotropic || el.kind == TangentKind::kProjectedGeneral;
}

Mat9 FpPxpbdSolver::tangent(const AffineElement& el, const Mat3& F, const Mat9* dPdF) const {
  switch (el.kind) {
    case TangentKind::kCorotatedRankOne:
    case TangentKind::kNeoHookeanRankOne: return rankOneTangent(el.rank_one_scale, el.lambda, F);
    case TangentKind::kProjectedIsotropic: return projectIsotropicTangentToPositiveSemidefinite(F, *dPdF);
    case TangentKind::kProjectedGeneral: break;
  }
  return projectToPositiveSemidefinite(*dPdF);
}

Mat9 FpPxpbdSolver::elementTangent(int element, const Mat3& F, double t) const {
  for (const AffineElement& el : elements_) {
    if (el.element != element) continue;
    Mat9 dPdF = Mat9::Zero();
    if (needsTrueTangent(el)) {
      const ElasticEnergy& energy = problem_->elasticEnergy();
      energy.material(element).evaluate(F, energy.pointData(element, t), nullptr, nullptr, &dPdF);
    }
    return tangent(el, F, &dPdF);
  }
  throw std::out_of_range("FpPxpbdSolver::elementTangent: no element " + std::to_string(element) + " (after setup?)");
}

void FpPxpbdSolver::beginStep(const StepObjective& objective, Positions& x) {
  const Problem& problem = objective.problem();
  if (problem_ != &problem || built_dt_ != objective.dt()) {
    if (const std::string reason = rejectionReason(problem); !reason.empty()) throw std::invalid_argument(reason);
    problem_ = &problem;
    buildElements(problem, objective.dt());
  }
  time_ = objective.timeNext();
  const VecX& dof_masses = problem.dofMasses();
  const VecX& f_ext = objective.externalForce();
  const Positions& x_tilde = objective.inertialTarget();
  const Positions& x_previous = objective.previousPositions();
  inertial_rhs_ = dof_masses.cwiseProduct(x_tilde) + dt2_ * f_ext;
  x = x_tilde;
  objective.applyBoundary(x);  // the prescribed DOFs are final

  // The initial stresses P0 (FpPxpbdOptions::initial_stress) and the internal force
  // sum_e B^e P0^e, scattered color by color (no races; the same sum order for any thread
  // count). An element whose every DOF is prescribed never moves: its stress is taken at the
  // boundary values, where it stays.
  const ElasticEnergy& energy = problem.elasticEnergy();
  const bool zero_start = options_.initial_stress == FpPxpbdOptions::InitialStress::kZero;
  stress_force_.setZero(x.size());
  const int colors = numColors();
#pragma omp parallel if (worthThreads(numElements()))
  for (int c = 0; c < colors; ++c) {
#pragma omp for schedule(static)
    for (int k = color_start_[c]; k < color_start_[c + 1]; ++k) {
      const AffineElement& el = elements_[k];
      const bool immobile = el.fixed_mask == 0xFFF;
      if (zero_start && !immobile) {
        stress_[k].setZero();
        continue;
      }
      const Positions& at = immobile ? x : x_previous;
      Eigen::Matrix<double, 3, 4> xe;
      for (int a = 0; a < 4; ++a) xe.col(a) = at.segment<3>(3 * el.nodes[a]);
      const Mat3 F = xe * el.shape_gradients;
      energy.material(el.element).evaluate(F, energy.pointData(el.element, time_), nullptr, &stress_[k], nullptr);
      const Eigen::Matrix<double, 3, 4> force = el.volume * stress_[k] * el.shape_gradients.transpose();
      for (int a = 0; a < 4; ++a) stress_force_.segment<3>(3 * el.nodes[a]) += force.col(a);
    }
  }
  // x0 from eq. 24 with g = 0: M (x0 - x~) = dt^2 (f_ext - B P0) on the free DOFs.
  for (int dof : problem.freeDofs()) x[dof] = x_tilde[dof] + dt2_ * (f_ext[dof] - stress_force_[dof]) / dof_masses[dof];
}

void FpPxpbdSolver::solveElement(int k, Positions& x) {
  const AffineElement& el = elements_[k];
  if (el.fixed_mask == 0xFFF) return;  // every DOF prescribed: nothing moves, P^e stays
  const ElasticEnergy& energy = problem_->elasticEnergy();
  const Material& material = energy.material(el.element);
  const MaterialPointData data = energy.pointData(el.element, time_);
  const Eigen::Matrix<double, 4, 3>& G = el.shape_gradients;
  const double dt2_V = dt2_ * el.volume;

  // Positions and the constant part of eq. 29: rhs_a = m_a x~_a + dt^2 (f_ext_a - forces of
  // the other elements' stresses), so that g_a = m_a x_a - rhs_a + dt^2 V P G_a.
  Eigen::Matrix<double, 3, 4> xe, rhs;
  const Eigen::Matrix<double, 3, 4> own_force = el.volume * stress_[k] * G.transpose();
  for (int a = 0; a < 4; ++a) {
    const int i = el.nodes[a];
    xe.col(a) = x.segment<3>(3 * i);
    rhs.col(a) = inertial_rhs_.segment<3>(3 * i) - dt2_ * (stress_force_.segment<3>(3 * i) - own_force.col(a));
  }
  const bool true_tangent = needsTrueTangent(el);
  Mat3 P;
  Mat9 dPdF;
  Eigen::Matrix<double, 3, 4> g;
  double first_norm = 0.0;
  for (int l = 0;; ++l) {
    const Mat3 F = xe * G;
    const bool last = l == options_.newton_iterations;
    material.evaluate(F, data, nullptr, &P, (true_tangent && !last) ? &dPdF : nullptr);
    if (last) break;  // Algorithm 2 step 6: P^e = P(F^e(x^e))
    g = xe * el.masses.asDiagonal();  // eq. 29
    g += dt2_V * P * G.transpose() - rhs;
    if (options_.local_tolerance > 0.0) {
      Eigen::Matrix<double, 3, 4> g_free = g;
      for (int p = 0; p < 12; ++p)
        if (el.fixed_mask & (1u << p)) g_free(p % 3, p / 3) = 0.0;
      const double norm = g_free.norm();
      if (l == 0) first_norm = norm;
      else if (norm <= options_.local_tolerance * first_norm)
        break;  // P is already P(F^e(x^e))
    }
    if (el.fixed_mask == 0) {
      // Eq. 33: the translation; eq. 35: G = D^T g (the m_a b term of eq. 35 sums to zero
      // because X_com is the mass-weighted centroid).
      const Vec3 b = -g.rowwise().sum() / el.total_mass;
      const Mat3 G_affine = g * el.offsets.transpose();
      Mat3 dF;
      if (el.kind == TangentKind::kCorotatedRankOne || el.kind == TangentKind::kNeoHookeanRankOne)
        dF = shermanMorrisonStep(el.affine_block, el.rank_one_c, cofactor(F), G_affine);  // eq. 49
      else
        dF = denseDistortionalStep(el.affine_block, dt2_V, tangent(el, F, &dPdF), G_affine);  // eq. 34
      xe += dF * el.offsets;  // eq. 32
      xe.colwise() += b;
    } else {
      // An element with prescribed DOFs: eq. 31 in its nodal DOFs, prescribed rows removed.
      const Mat9 D = tangent(el, F, &dPdF);
      Mat12 K = Mat12::Zero();
      for (int kk = 0; kk < 3; ++kk)
        for (int i = 0; i < 3; ++i) {
          Mat3 D_ik;  // D_ik(j, l) = D(i + 3 j, kk + 3 l)
          for (int ll = 0; ll < 3; ++ll)
            for (int j = 0; j < 3; ++j) D_ik(j, ll) = D(i + 3 * j, kk + 3 * ll);
          const Eigen::Matrix4d T = dt2_V * (G * D_ik * G.transpose());
          for (int bb = 0; bb < 4; ++bb)
            for (int a = 0; a < 4; ++a) K(i + 3 * a, kk + 3 * bb) += T(a, bb);
        }
      Vec12 r = -Eigen::Map<const Vec12>(g.data());
      for (int p = 0; p < 12; ++p) {
        K(p, p) += el.masses[p / 3];
        if (el.fixed_mask & (1u << p)) {
          K.row(p).setZero();
          K.col(p).setZero();
          K(p, p) = 1.0;
          r[p] = 0.0;
        }
      }
      const Vec12 dx = K.llt().solve(r);
      xe += Eigen::Map<const Eigen::Matrix<double, 3, 4>>(dx.data());
    }
  }
  const Eigen::Matrix<double, 3, 4> new_force = el.volume * P * G.transpose();
  for (int a = 0; a < 4; ++a) {
    const int i = el.nodes[a];
    x.segment<3>(3 * i) = xe.col(a);
    stress_force_.segment<3>(3 * i) += new_force.col(a) - own_force.col(a);
  }
  stress_[k] = P;
}

int FpPxpbdSolver::numLaneElements() const {
  int count = 0;
  for (int c = 0; c < numColors(); ++c) count += lane_end_[c] - color_start_[c];
  return count;
}

void FpPxpbdSolver::sweep(Positions& x) {
  FpPxpbdLaneSolve solve;
  solve.dt2 = dt2_;
  solve.newton_iterations = options_.newton_iterations;
  solve.warm_rotations = options_.rotation == FpPxpbdOptions::Rotation::kWarmStart;
  solve.uniform = lane_kind_;
  if (solve.warm_rotations && !rotations_ready_) {
    // The first warm start: the SVD's rotations at x (then one Newton step a visit keeps up).
    const int n = numElements();
#pragma omp parallel for schedule(static) if (worthThreads(n))
    for (int k = 0; k < n; ++k) rotation_[k] = polarRotation(elements_[k].deformationGradient(x.data()));
    rotations_ready_ = true;
  }
  const int colors = numColors();
  int fallbacks = 0;
  // One parallel region, a barrier after each color: its lane batches, then its other elements.
#pragma omp parallel reduction(+ : fallbacks) if (worthThreads(numElements()))
  for (int c = 0; c < colors; ++c) {
    const int begin = color_start_[c], lanes_end = lane_end_[c];
    const int batches = (lanes_end - begin + kFpPxpbdLanes - 1) / kFpPxpbdLanes;
#pragma omp for schedule(static) nowait
    for (int b = 0; b < batches; ++b) {
      const int first = begin + b * kFpPxpbdLanes;
      solveFpPxpbdLaneElements(solve, closed_forms_, first, std::min(first + kFpPxpbdLanes, lanes_end),
                               elements_.data(), stress_.data(), rotation_.data(), inertial_rhs_.data(),
                               stress_force_.data(), x.data(), fallbacks);
    }
#pragma omp for schedule(static)
    for (int k = lanes_end; k < color_start_[c + 1]; ++k) solveElement(k, x);
  }
  rotation_fallbacks_ += fallbacks;
}

double FpPxpbdSolver::primalResidual(const Positions& x) const {
  double sum = 0.0;
  const VecX& m = problem_->dofMasses();
  for (int dof : problem_->freeDofs()) {
    const double g = m[dof] * x[dof] - inertial_rhs_[dof] + dt2_ * stress_force_[dof];  // eq. 24
    sum += g * g;
  }
  return std::sqrt(sum);
}

double FpPxpbdSolver::secondaryResidual(const Positions& x) {
  const ElasticEnergy& energy = problem_->elasticEnergy();
  const int n = numElements();
#pragma omp parallel for schedule(static) if (worthThreads(n))
  for (int k = 0; k < n; ++k) {
    const AffineElement& el = elements_[k];
    Mat3 P;
    energy.material(el.element).evaluate(el.deformationGradient(x.data()), energy.pointData(el.element, time_), nullptr, &P,
                                         nullptr);
    element_scratch_[k] = (P - stress_[k]).squaredNorm();  // eq. 25
  }
  double sum = 0.0;
  for (double s : element_scratch_) sum += s;  // in order: deterministic
  return std::sqrt(sum);
}

void FpPxpbdSolver::advance(const StepObjective& objective, State& state, StepMonitor& monitor) {
  Positions x;
  beginStep(objective, x);
  if (!x.allFinite()) {
    monitor.stopForNonFiniteStart(x);
    state.x = x;
    return;
  }
  const Budget& budget = monitor.budget();
  const int stride = std::max(1, budget.record_every);
  auto residualsDue = [&](int iteration) { return iteration % stride == 0 || iteration >= budget.max_iterations; };
  // g and h are for the log only: their time is not solver time.
  auto residualsForLog = [&](int iteration) {
    double primal = 0.0, secondary = std::numeric_limits<double>::quiet_NaN();
    {
      const StepMonitor::ClockPause diagnostics(monitor);
      primal = primalResidual(x);
      if (options_.log_secondary_residual) secondary = secondaryResidual(x);
    }
    return monitor.record(iteration, x, {{"primal_residual", primal}, {"secondary_residual", secondary}});
  };
  bool stop = residualsForLog(0);
  Positions last_finite = x;
  for (int iteration = 1; !stop; ++iteration) {
    sweep(x);
    if (monitor.stopIfNotFinite(iteration, x, last_finite)) break;
    if (residualsDue(iteration))
      stop = residualsForLog(iteration);
    else
      stop = monitor.record(iteration, x);
  }
  state.x = x;
}

}  // namespace pbdlab
