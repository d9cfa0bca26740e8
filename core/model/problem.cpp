#include "core/model/problem.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/fem/field_sampling.hpp"
#include "core/fem/reference_element.hpp"
#include "core/model/collision_detection.hpp"
#include "core/support/input_error.hpp"
#include "core/terms/cloth_terms.hpp"
#include "core/terms/weak_constraint_term.hpp"
#include "core/topology/topology.hpp"

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

void validateMaterial(const std::string& source, const std::string& field, const MaterialSpec& material) {
  try {
    lameFromYoungPoisson(material.youngs_modulus, material.poisson_ratio);
  } catch (const std::invalid_argument& error) {
    throw InputError(source, field, error.what());
  }
  if (!(std::isfinite(material.density) && material.density > 0.0))
    throw InputError(source, field + "/density", "must be finite and > 0");
}

}  // namespace

void Problem::combineBodies(const std::string& source) {
  if (bodies.empty()) bodies.push_back(Body{"", mesh, material, {}, {}, 0.0});
  const bool named = bodies.size() > 1;
  // The element types present, in order of first appearance: one block each.
  std::vector<ElementType> types;
  block_bodies_.clear();
  int total_nodes = 0;
  for (size_t b = 0; b < bodies.size(); ++b) {
    const Body& body = bodies[b];
    const std::string field = named ? "/bodies/" + std::to_string(b) : "";
    if (named && body.name.empty()) throw InputError(source, field + "/name", "a body of several needs a name");
    for (size_t other = 0; other < b; ++other)
      if (bodies[other].name == body.name) throw InputError(source, field + "/name", "duplicate body name '" + body.name + "'");
    validateMaterial(source, field + "/material", body.material);
    validateMesh(body.mesh);  // names the mesh's source and the element
    if (!body.element_data.empty() && static_cast<int>(body.element_data.size()) != body.mesh.numElements())
      throw InputError(source, field + "/material", "per-element data needs one entry per element");
    size_t block = 0;
    while (block < types.size() && types[block] != body.mesh.element_type) ++block;
    if (block == types.size()) {
      types.push_back(body.mesh.element_type);
      block_bodies_.emplace_back();
    }
    block_bodies_[block].push_back(static_cast<int>(b));
    total_nodes += body.mesh.numNodes();
  }
  // Bodies of different types are solids only: a triangle body is a cloth or a plane strain
  // slab, whose terms, pinned z and outputs assume the whole problem is of that kind.
  if (types.size() > 1)
    for (size_t b = 0; b < bodies.size(); ++b)
      if (elementDimension(bodies[b].mesh.element_type) != 3)
        throw InputError(source, "/bodies/" + std::to_string(b) + "/mesh",
                         "bodies of different element types must all be solids (3D elements); body '" +
                             bodies[b].name + "' has " + elementTypeName(bodies[b].mesh.element_type) +
                             " elements (a cloth or plane strain body cannot share a problem with another element type)");

  body_first_node_.clear();
  int first = 0;
  for (const Body& body : bodies) {
    body_first_node_.push_back(first);
    first += body.mesh.numNodes();
  }
  body_first_node_.push_back(first);

  // The combined mesh: nodes and node sets of every body; elements only when there is one type.
  Mesh combined;
  if (!named) {
    combined = bodies[0].mesh;
  } else {
    combined.element_type = bodies[0].mesh.element_type;
    combined.rest_positions.resize(total_nodes, 3);
    combined.source.clear();
    for (size_t b = 0; b < bodies.size(); ++b) {
      const Body& body = bodies[b];
      const int node = body_first_node_[b];
      combined.rest_positions.middleRows(node, body.mesh.numNodes()) = body.mesh.rest_positions;
      for (const auto& [set, nodes] : body.mesh.node_sets) {
        std::vector<int>& global = combined.node_sets[body.name + "/" + set];
        for (int i : nodes) global.push_back(i + node);
      }
      combined.source += (combined.source.empty() ? "" : " + ") + body.name + ": " + body.mesh.source;
    }
  }
  auto blockElements = [&](size_t block) {
    int count = 0;
    for (int b : block_bodies_[block]) count += bodies[b].mesh.numElements();
    Connectivity elements(count, nodesPerElement(types[block]));
    int row = 0;
    for (int b : block_bodies_[block]) {
      elements.middleRows(row, bodies[b].mesh.numElements()) = bodies[b].mesh.elements.array() + body_first_node_[b];
      row += bodies[b].mesh.numElements();
    }
    return elements;
  };
  element_blocks_.clear();
  if (types.size() == 1) {
    if (named) combined.elements = blockElements(0);
    mesh = std::move(combined);
    shared_mesh_ = std::make_shared<const Mesh>(mesh);
    element_blocks_.push_back(shared_mesh_);  // the one block is the combined mesh itself
  } else {
    for (size_t block = 0; block < types.size(); ++block) {
      auto part = std::make_shared<Mesh>();
      part->rest_positions = combined.rest_positions;
      part->node_sets = combined.node_sets;
      part->element_type = types[block];
      part->elements = blockElements(block);
      part->source = combined.source + " [" + elementTypeName(types[block]) + " elements]";
      element_blocks_.push_back(std::move(part));
    }
    // Nodes and node sets only: a reader of mesh.elements finds none rather than some (see
    // problem.hpp); the elements are in elementBlocks().
    combined.elements.resize(0, 0);
    mesh = std::move(combined);
    shared_mesh_ = std::make_shared<const Mesh>(mesh);
  }
  material = bodies[0].material;
}

int Problem::numElements() const {
  int count = 0;
  for (const auto& block : element_blocks_) count += block->numElements();
  return count;
}

std::string Problem::elementTypesName() const {
  std::string name;
  for (const auto& block : element_blocks_) name += (name.empty() ? "" : "+") + elementTypeName(block->element_type);
  return name;
}

void Problem::bindNodeSets(const std::string& source) {
  for (size_t k = 0; k < bindings.size(); ++k) {
    const NodeSetBinding& binding = bindings[k];
    const std::string field = "/bindings/" + std::to_string(k);
    auto set = mesh.node_sets.find(binding.node_set);
    if (set == mesh.node_sets.end()) throw InputError(source, field + "/node_set", "unknown node set '" + binding.node_set + "'");
    int b = 0;
    while (b < numBodies() && bodies[b].name != binding.body) ++b;
    if (b == numBodies()) throw InputError(source, field + "/body", "unknown body '" + binding.body + "'");
    const Mesh& target = bodies[b].mesh;
    const FieldSampler sampler(target);
    const ReferenceElement& reference = ReferenceElement::of(target.element_type);
    for (int node : set->second) {
      if (node >= body_first_node_[b] && node < body_first_node_[b + 1])
        throw InputError(source, field, "node set '" + binding.node_set + "' lies in body '" + binding.body +
                                            "' itself: a body is bound to another one");
      const FieldSampler::Location at = sampler.locate(mesh.restPosition(node) + binding.offset);
      if (at.element < 0)
        throw InputError(source, field, "node " + std::to_string(node) + " of '" + binding.node_set + "'" +
                                            (binding.offset.isZero() ? std::string() : " moved by the offset") +
                                            " is not inside body '" + binding.body + "' at rest");
      WeakConstraint c;
      c.nodes_a = {node};
      c.weights_a = {1.0};
      const Eigen::VectorXd N = reference.shapeValues(at.reference);
      for (int j = 0; j < reference.numNodes(); ++j) {
        c.nodes_b.push_back(body_first_node_[b] + target.elements(at.element, j));
        c.weights_b.push_back(N[j]);
      }
      c.k_n = binding.k_n;
      c.k_t = binding.k_t;
      c.normal = binding.normal;
      weak_constraints.push_back(c);
    }
  }
  bindings.clear();  // they are weak constraints now (a second finalize must not add them twice)
}

std::string triangleModelName(TriangleModel model) {
  switch (model) {
    case TriangleModel::kAuto: return "auto";
    case TriangleModel::kPlaneStrain: return "plane_strain";
    case TriangleModel::kMembrane: return "membrane";
  }
  return "?";
}

void Problem::finalize(const std::string& source) {
  if (!allFinite(gravity)) throw InputError(source, "/gravity", "must be finite");
  if (!(std::isfinite(time.dt) && time.dt > 0.0)) throw InputError(source, "/time/dt", "must be finite and > 0");
  if (time.num_steps < 1) throw InputError(source, "/time/steps", "must be >= 1");
  if (time.substeps < 1) throw InputError(source, "/time/substeps", "must be >= 1");
  if (discretization.quadrature_degree > 20)
    throw InputError(source, "/discretization/quadrature_degree", "must be <= 20");
  if (bodies.empty()) validateMaterial(source, "/material", material);

  combineBodies(source);  // validates every body's mesh once; builds the element blocks

  // The elastic terms, one per element block: one material per body, elements in body order
  // (solids and 2D); triangle surfaces in 3D get membrane and bending terms instead. Mixed
  // types are solids only (combineBodies), so the triangle checks read one type.
  const bool triangle_mesh = !hasMixedElementTypes() && elementDimension(mesh.element_type) == 2;
  if (triangle_mesh && discretization.triangles == TriangleModel::kPlaneStrain && !isTwoDimensional(mesh))
    throw InputError(source, "/discretization/triangles",
                     "plane_strain needs a triangle mesh in the plane z = 0; this one is not flat there");
  if (!triangle_mesh && discretization.triangles != TriangleModel::kAuto)
    throw InputError(source, "/discretization/triangles",
                     "applies to triangle meshes; this one is " + elementTypesName());
  const bool surface = triangle_mesh && (discretization.triangles == TriangleModel::kMembrane ||
                                         (discretization.triangles == TriangleModel::kAuto && !isTwoDimensional(mesh)));
  const size_t num_blocks = element_blocks_.size();
  std::vector<ElementMaterials> block_materials(num_blocks);
  std::vector<std::vector<double>> block_densities(num_blocks);  // per element of the block
  std::vector<std::shared_ptr<const EnergyTerm>> surface_terms;
  for (size_t block = 0; block < num_blocks; ++block) {
    bool any_element_data = false;  // per-element data is stored only when some body of the block has it
    for (int b : block_bodies_[block]) any_element_data |= !bodies[b].element_data.empty();
    ElementMaterials& materials = block_materials[block];
    for (int b : block_bodies_[block]) {
      const Body& body = bodies[b];
      const std::string field = bodies.size() > 1 ? "/bodies/" + std::to_string(b) + "/material" : "/material";
      for (int e = 0; e < body.mesh.numElements(); ++e) block_densities[block].push_back(body.material.density);
      if (!(std::isfinite(body.bending_stiffness) && body.bending_stiffness >= 0.0))
        throw InputError(source, field + "/bending_stiffness", "must be finite and >= 0");
      if (surface) {
        if (body.material.model != MaterialModel::kFixedCorotated)
          throw InputError(source, field + "/model",
                           "a triangle surface in 3D (cloth) takes the corotated membrane of PBNG eq. 36: "
                           "use fixed_corotated");
        std::vector<std::array<int, 3>> triangles;
        const int first = body_first_node_[b];
        for (int e = 0; e < body.mesh.numElements(); ++e)
          triangles.push_back({body.mesh.elements(e, 0) + first, body.mesh.elements(e, 1) + first,
                               body.mesh.elements(e, 2) + first});
        const LameParameters lame = modelParameters(body.material);
        try {
          surface_terms.push_back(std::make_shared<MembraneTerm>(triangles, mesh.restPositionsFlat(), lame.mu, lame.lambda));
          if (body.bending_stiffness > 0.0)
            surface_terms.push_back(std::make_shared<BendingTerm>(surfaceHinges(triangles), body.bending_stiffness));
        } catch (const std::invalid_argument& error) {
          throw InputError(source, bodies.size() > 1 ? "/bodies/" + std::to_string(b) + "/mesh" : "/mesh", error.what());
        }
        continue;
      }
      if (body.bending_stiffness > 0.0)
        throw InputError(source, field + "/bending_stiffness", "only a triangle surface in 3D (cloth) bends");
      const int material_index = static_cast<int>(materials.materials.size());
      materials.materials.push_back(std::shared_ptr<const Material>(makeMaterial(body.material)));
      materials.activation.push_back(body.activation);
      for (int e = 0; e < body.mesh.numElements(); ++e) {
        materials.material_of_element.push_back(material_index);
        if (any_element_data) materials.element_data.push_back(body.element_data.empty() ? MaterialPointData{} : body.element_data[e]);
      }
    }
  }
  elastic_terms_.clear();
  if (!surface) {
    for (size_t block = 0; block < num_blocks; ++block) {
      try {
        elastic_terms_.push_back(std::make_shared<ElasticEnergy>(element_blocks_[block], std::move(block_materials[block]),
                                                                 discretization.quadrature_degree));
      } catch (const std::invalid_argument& error) {
        throw InputError(source, hasMixedElementTypes() ? "/bodies" : "/mesh", error.what());
      }
    }
  }
  terms_.clear();
  for (const auto& elastic : elastic_terms_) terms_.push_back(elastic);
  for (auto& term : surface_terms) terms_.push_back(std::move(term));
  bindNodeSets(source);
  if (!weak_constraints.empty()) {
    try {
      terms_.push_back(std::make_shared<WeakConstraintTerm>(weak_constraints, mesh.numNodes()));
    } catch (const std::invalid_argument& error) {
      throw InputError(source, "/weak_constraints", error.what());
    }
  }

  collider_terms_.clear();
  for (size_t c = 0; c < colliders.size(); ++c) {
    try {
      collider_terms_.push_back(std::make_shared<ColliderTerm>(colliders[c], mesh.numNodes()));
    } catch (const std::invalid_argument& error) {
      throw InputError(source, "/colliders/" + std::to_string(c), error.what());
    }
    terms_.push_back(collider_terms_.back());
  }

  collision_detector_.reset();
  if (collisions.enabled) {
    for (const auto& [key, value] : {std::pair{"k_n", collisions.k_n}, std::pair{"k_t", collisions.k_t}})
      if (!(std::isfinite(value) && value >= 0.0))
        throw InputError(source, std::string("/collisions/") + key, "must be finite and >= 0");
    if (!(collisions.k_n > 0.0 || collisions.k_t > 0.0))
      throw InputError(source, "/collisions/k_n", "k_n or k_t must be > 0 (else the contacts push nothing)");
    if (numBodies() < 2)
      throw InputError(source, "/collisions", "collisions act between bodies; the scene has only one");
    collision_detector_ = std::make_shared<CollisionDetector>(*this, collisions);
  }

  const int n = mesh.numNodes();
  // Every body was validated above; each block is the concatenation of its bodies, so the
  // sum over blocks is every body's lumped masses, concatenated (one block: as it always was).
  node_masses_ = VecX::Zero(n);
  for (size_t block = 0; block < num_blocks; ++block)
    node_masses_ += lumpedNodeMasses(*element_blocks_[block], block_densities[block], discretization.mass_lumping,
                                     MeshCheck::kTrusted);
  dof_masses_.resize(3 * n);
  gravity_force_.resize(3 * n);
  for (int i = 0; i < n; ++i) {
    dof_masses_.segment<3>(3 * i).setConstant(node_masses_[i]);
    gravity_force_.segment<3>(3 * i) = node_masses_[i] * gravity;
  }

  is_fixed_.assign(3 * n, 0);
  dof_condition_.assign(3 * n, -1);
  // Plane strain: z is pinned at 0 (the 2D problem lives in the xy plane).
  if (isPlaneStrain()) {
    if (gravity.z() != 0.0) throw InputError(source, "/gravity/2", "must be 0 for a 2D (plane strain) mesh");
    for (int i = 0; i < n; ++i) is_fixed_[3 * i + 2] = 1;
  }
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
        if (condition.components[k] && !(k == 2 && isPlaneStrain())) {
          is_fixed_[3 * node + k] = 1;
          dof_condition_[3 * node + k] = static_cast<int>(c);
        }
  }
  free_dofs_.clear();
  fixed_dofs_.clear();
  for (int dof = 0; dof < 3 * n; ++dof) (is_fixed_[dof] ? fixed_dofs_ : free_dofs_).push_back(dof);
  buildLoads(source);
}

void Problem::buildLoads(const std::string& source) {
  nodal_loads_.clear();
  const bool cloth = !hasMixedElementTypes() && mesh.element_type == ElementType::kTri3 && !isPlaneStrain();
  for (size_t k = 0; k < loads.size(); ++k) {
    const Load& load = loads[k];
    const bool traction = load.kind == Load::Kind::kTraction;
    const std::string field = "/loads/" + std::to_string(k);
    const std::string set_field = field + (traction ? "/boundary" : "/node_set");
    const std::string value_field = field + (load.is_total ? "/total_force" : traction ? "/traction" : "/force");
    if (!load.value.allFinite()) throw InputError(source, value_field, "must be finite");
    if (isPlaneStrain() && load.value.z() != 0.0)
      throw InputError(source, value_field + "/2", "must be 0 for a 2D (plane strain) mesh (z is pinned)");
    auto set = mesh.node_sets.find(load.node_set);
    if (set == mesh.node_sets.end()) {
      std::string known;
      for (const auto& [name, nodes] : mesh.node_sets) known += (known.empty() ? "" : ", ") + name;
      throw InputError(source, set_field, "unknown node set '" + load.node_set + "' (the mesh has: " + known + ")");
    }
    if (set->second.empty()) throw InputError(source, set_field, "node set '" + load.node_set + "' is empty");
    NodalLoad nodal;
    if (traction) {
      if (cloth)
        throw InputError(source, field + "/type",
                         "a traction on a cloth (a triangle surface in 3D) is not supported: its boundary is a set of "
                         "edges without a thickness; load its nodes with a \"point\" load instead");
      const std::vector<BoundaryFace> faces = boundaryFacesWithin(element_blocks_, set->second);
      if (faces.empty())
        throw InputError(source, set_field,
                         "node set '" + load.node_set + "' holds no boundary face (no face of exactly one element " +
                             "has all its corner nodes in the set), so a traction on it acts nowhere");
      // The area first (a unit traction), then the nodal forces of the actual traction.
      nodal = tractionNodalForces(element_blocks_, faces, Vec3::UnitX());
      if (!(nodal.area > 0.0)) throw InputError(source, set_field, "the boundary's faces have no area");
      const Vec3 t = load.is_total ? Vec3(load.value / nodal.area) : load.value;
      for (Vec3& f : nodal.forces) f = f.x() * t;
    } else {
      nodal.nodes = set->second;
      std::sort(nodal.nodes.begin(), nodal.nodes.end());
      nodal.nodes.erase(std::unique(nodal.nodes.begin(), nodal.nodes.end()), nodal.nodes.end());
      const Vec3 f = load.is_total ? Vec3(load.value / static_cast<double>(nodal.nodes.size())) : load.value;
      nodal.forces.assign(nodal.nodes.size(), f);
    }
    nodal.schedule = load.schedule;
    nodal_loads_.push_back(std::move(nodal));
  }
}

VecX Problem::externalForce(double t) const {
  VecX f = gravity_force_;
  for (const NodalLoad& load : nodal_loads_) {
    const double s = load.scale(t);
    if (s == 0.0) continue;
    for (size_t i = 0; i < load.nodes.size(); ++i) f.segment<3>(3 * load.nodes[i]) += s * load.forces[i];
  }
  return f;
}

const ElasticEnergy& Problem::elasticEnergy() const {
  if (elastic_terms_.empty())
    throw std::logic_error("Problem::elasticEnergy: this problem has no solid elements (a cloth)");
  if (elastic_terms_.size() > 1)
    throw std::logic_error("Problem::elasticEnergy: this problem's bodies have different element types (" +
                           elementTypesName() + "), one elastic term each: use elasticTerms()");
  return *elastic_terms_[0];
}

void Problem::applyDirichlet(Positions& x, double t) const {
  for (int dof : fixed_dofs_) {
    const int node = dof / 3;
    if (dof_condition_[dof] < 0) {  // plane strain's pinned z
      x[dof] = 0.0;
      continue;
    }
    const Vec3 p = dirichlet[dof_condition_[dof]].motion.positionAt(mesh.restPosition(node), t);
    x[dof] = p[dof % 3];
  }
}

}  // namespace pbdlab
