#include "core/problem.hpp"

#include <cmath>
#include <stdexcept>

#include "core/input_error.hpp"

namespace pbdlab {

std::string integratorName(Integrator integrator) {
  return integrator == Integrator::kQuasistatic ? "quasistatic" : "backward_euler";
}

namespace {

bool allFinite(const Vec3& v) { return v.allFinite(); }

void validateMotion(const std::string& source, const std::string& field, const BoundaryMotion& motion) {
  for (size_t s = 0; s < motion.stages.size(); ++s) {
    const MotionStage& stage = motion.stages[s];
    const std::string at = field + "/motion/" + std::to_string(s);
    if (!std::isfinite(stage.t_start) || !std::isfinite(stage.t_end) || stage.t_end < stage.t_start)
      throw InputError(source, at, "needs finite t_start <= t_end");
    if (!allFinite(stage.translation) || !allFinite(stage.axis_point) || !std::isfinite(stage.angle))
      throw InputError(source, at, "has a non-finite value");
    if (stage.kind == MotionStage::Kind::kRotate &&
        !(allFinite(stage.axis_direction) && stage.axis_direction.norm() > 0.0))
      throw InputError(source, at + "/axis_direction", "must be a finite non-zero vector");
  }
}

}  // namespace

void Problem::finalize(const std::string& source) {
  // Material: E, nu and density, checked before anything is built on them.
  try {
    lameFromYoungPoisson(material.youngs_modulus, material.poisson_ratio);
  } catch (const std::invalid_argument& error) {
    throw InputError(source, "/material", error.what());
  }
  if (!(std::isfinite(material.density) && material.density > 0.0))
    throw InputError(source, "/material/density", "must be finite and > 0");
  if (!allFinite(gravity)) throw InputError(source, "/gravity", "must be finite");
  if (!(std::isfinite(time.dt) && time.dt > 0.0)) throw InputError(source, "/time/dt", "must be finite and > 0");
  if (time.num_steps < 1) throw InputError(source, "/time/steps", "must be >= 1");

  if (discretization.quadrature_degree > 20)
    throw InputError(source, "/discretization/quadrature_degree", "must be <= 20");
  validateMesh(mesh);  // names mesh.source and the element
  try {
    elastic_ = std::make_shared<ElasticEnergy>(mesh, std::shared_ptr<const Material>(makeMaterial(material)),
                                               discretization.quadrature_degree);
  } catch (const std::invalid_argument& error) {  // e.g. a surface mesh given to solid elasticity
    throw InputError(source, "/mesh", error.what());
  }

  const int n = mesh.numNodes();
  node_masses_ = lumpedNodeMasses(mesh, std::vector<double>(mesh.numElements(), material.density),
                                  discretization.mass_lumping);
  dof_masses_.resize(3 * n);
  external_force_.resize(3 * n);
  for (int i = 0; i < n; ++i) {
    dof_masses_.segment<3>(3 * i).setConstant(node_masses_[i]);
    external_force_.segment<3>(3 * i) = node_masses_[i] * gravity;
  }

  is_fixed_.assign(3 * n, 0);
  dof_condition_.assign(3 * n, -1);
  for (size_t c = 0; c < dirichlet.size(); ++c) {
    const DirichletCondition& condition = dirichlet[c];
    const std::string field = "/dirichlet/" + std::to_string(c);
    auto set = mesh.node_sets.find(condition.node_set);
    if (set == mesh.node_sets.end()) {
      std::string known;
      for (const auto& [name, nodes] : mesh.node_sets) known += (known.empty() ? "" : ", ") + name;
      throw InputError(source, field + "/node_set",
                       "unknown node set '" + condition.node_set + "' (the mesh has: " + known + ")");
    }
    if (set->second.empty()) throw InputError(source, field + "/node_set", "node set '" + condition.node_set + "' is empty");
    validateMotion(source, field, condition.motion);
    for (int node : set->second)
      for (int k = 0; k < 3; ++k)
        if (condition.components[k]) {
          is_fixed_[3 * node + k] = 1;
          dof_condition_[3 * node + k] = static_cast<int>(c);
        }
  }
  free_dofs_.clear();
  fixed_dofs_.clear();
  for (int dof = 0; dof < 3 * n; ++dof) (is_fixed_[dof] ? fixed_dofs_ : free_dofs_).push_back(dof);
}

void Problem::applyDirichlet(Positions& x, double t) const {
  for (int dof : fixed_dofs_) {
    const int node = dof / 3;
    const Vec3 p = dirichlet[dof_condition_[dof]].motion.positionAt(mesh.restPosition(node), t);
    x[dof] = p[dof % 3];
  }
}

}  // namespace pbdlab
