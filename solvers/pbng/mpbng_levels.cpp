#include "solvers/pbng/mpbng_levels.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "core/fem/field_sampling.hpp"
#include "core/fem/reference_element.hpp"
#include "core/topology/coloring.hpp"

namespace pbdlab {

namespace {

// The distinct values of `values` (sorted), merging values closer than `tolerance`.
std::vector<double> distinctValues(std::vector<double> values, double tolerance) {
  std::sort(values.begin(), values.end());
  std::vector<double> distinct;
  for (double value : values)
    if (distinct.empty() || value - distinct.back() > tolerance) distinct.push_back(value);
  return distinct;
}

// The index of `value` in the sorted `distinct` (within tolerance), or -1.
int latticeIndex(const std::vector<double>& distinct, double value, double tolerance) {
  const auto it = std::lower_bound(distinct.begin(), distinct.end(), value - tolerance);
  if (it == distinct.end() || std::abs(*it - value) > tolerance) return -1;
  return static_cast<int>(it - distinct.begin());
}

double boundingBoxDiagonal(const Mesh& mesh) {
  return (mesh.rest_positions.colwise().maxCoeff() - mesh.rest_positions.colwise().minCoeff()).norm();
}

// The mean over the nodes with a free DOF of trace(A_i) / 3, A_i the approximate diagonal block
// (eq. 32-34) of the original's energy terms at rest (elastic, membrane, bending).
double meanRestBlock(const Problem& original) {
  const Positions rest = original.mesh.restPositionsFlat();
  const int n = original.numNodes();
  std::vector<double> trace(n, 0.0);
  for (const auto& term : original.terms()) {
    if (dynamic_cast<const WeakConstraintTerm*>(term.get()) || dynamic_cast<const ColliderTerm*>(term.get())) continue;
    const EnergyTerm* t = term.get();
    const NodeAdjacency adjacency =
        nodeAdjacency(n, {t->numStencils(), t->nodesPerStencil(), [t](int s) { return t->stencilNodes(s); }});
    for (int i = 0; i < n; ++i)
      for (int q = adjacency.start[i]; q < adjacency.start[i + 1]; ++q) {
        Vec3 gradient = Vec3::Zero();
        Mat3 block = Mat3::Zero();
        t->addNodeBlock(adjacency.stencil[q], adjacency.local[q], rest, 0.0, HessianKind::kApproximate, gradient, block);
        trace[i] += block.trace() / 3.0;
      }
  }
  double sum = 0.0;
  int count = 0;
  for (int i = 0; i < n; ++i) {
    bool free = false;
    for (int d = 0; d < 3; ++d) free |= !original.isFixedDof(3 * i + d);
    if (free) sum += trace[i], ++count;
  }
  return count > 0 ? sum / count : 0.0;
}

}  // namespace

std::string coarsenStructuredGrid(const Mesh& fine, int levels, std::vector<Mesh>& coarse) {
  coarse.clear();
  if (fine.element_type != ElementType::kTri3) return "the mesh is " + elementTypeName(fine.element_type) + ", not tri3";
  const double size = boundingBoxDiagonal(fine);
  const double tolerance = 1e-9 * std::max(size, 1e-300);
  int normal_axis = -1;
  for (int d = 0; d < 3 && normal_axis < 0; ++d)
    if (fine.rest_positions.col(d).maxCoeff() - fine.rest_positions.col(d).minCoeff() <= tolerance) normal_axis = d;
  if (normal_axis < 0) return "the surface is not flat in a coordinate plane";
  const int a = normal_axis == 0 ? 1 : 0, b = normal_axis == 2 ? 1 : 2;
  std::vector<double> ua, ub;
  for (int i = 0; i < fine.numNodes(); ++i) ua.push_back(fine.rest_positions(i, a)), ub.push_back(fine.rest_positions(i, b));
  const std::vector<double> lines_a = distinctValues(ua, tolerance), lines_b = distinctValues(ub, tolerance);
  const int na = static_cast<int>(lines_a.size()) - 1, nb = static_cast<int>(lines_b.size()) - 1;
  if (static_cast<long>(na + 1) * (nb + 1) != fine.numNodes())
    return "its " + std::to_string(fine.numNodes()) + " vertices are not a lattice (" + std::to_string(na + 1) + " x " +
           std::to_string(nb + 1) + " distinct coordinates)";
  std::vector<char> taken(static_cast<size_t>(na + 1) * (nb + 1), 0);
  for (int i = 0; i < fine.numNodes(); ++i) {
    const int ia = latticeIndex(lines_a, ua[i], tolerance), ib = latticeIndex(lines_b, ub[i], tolerance);
    char& slot = taken[static_cast<size_t>(ib) * (na + 1) + ia];
    if (ia < 0 || ib < 0 || slot) return "its vertices are not a lattice (two at one lattice point)";
    slot = 1;
  }
  const int factor = 1 << (levels - 1);
  if (na % factor != 0 || nb % factor != 0)
    return "its " + std::to_string(na) + " x " + std::to_string(nb) + " cells do not halve " + std::to_string(levels - 1) +
           " times (each side must be divisible by " + std::to_string(factor) + ")";
  // Orientation: the sign of the first triangle's normal along the normal axis.
  const Vec3 p0 = fine.restPosition(fine.elements(0, 0)), p1 = fine.restPosition(fine.elements(0, 1)),
             p2 = fine.restPosition(fine.elements(0, 2));
  const bool positive = (p1 - p0).cross(p2 - p0)[normal_axis] > 0.0;
  const double plane = fine.rest_positions(0, normal_axis);
  for (int level = 1; level < levels; ++level) {
    const int step = 1 << level;
    const int ca = na / step, cb = nb / step;
    Mesh mesh;
    mesh.element_type = ElementType::kTri3;
    mesh.source = fine.source + " (MPBNG level " + std::to_string(level) + ": every " + std::to_string(step) +
                  "th lattice line)";
    mesh.rest_positions.resize(static_cast<long>(ca + 1) * (cb + 1), 3);
    const auto node = [&](int i, int j) { return j * (ca + 1) + i; };
    for (int j = 0; j <= cb; ++j)
      for (int i = 0; i <= ca; ++i) {
        Vec3 X;
        X[a] = lines_a[i * step];
        X[b] = lines_b[j * step];
        X[normal_axis] = plane;
        mesh.rest_positions.row(node(i, j)) = X.transpose();
      }
    mesh.elements.resize(2L * ca * cb, 3);
    int e = 0;
    for (int j = 0; j < cb; ++j)
      for (int i = 0; i < ca; ++i) {
        const int n00 = node(i, j), n10 = node(i + 1, j), n01 = node(i, j + 1), n11 = node(i + 1, j + 1);
        // Diagonals alternate cell by cell (no preferred direction on the coarse levels).
        std::array<std::array<int, 3>, 2> triangles =
            (i + j) % 2 == 0 ? std::array<std::array<int, 3>, 2>{{{n00, n10, n11}, {n00, n11, n01}}}
                             : std::array<std::array<int, 3>, 2>{{{n00, n10, n01}, {n10, n11, n01}}};
        for (auto& triangle : triangles) {
          // (a, b) counter-clockwise has a normal along +e_a x e_b; flip to the fine mesh's side.
          const Vec3 q0 = mesh.restPosition(triangle[0]), q1 = mesh.restPosition(triangle[1]),
                     q2 = mesh.restPosition(triangle[2]);
          if (((q1 - q0).cross(q2 - q0)[normal_axis] > 0.0) != positive) std::swap(triangle[1], triangle[2]);
          for (int k = 0; k < 3; ++k) mesh.elements(e, k) = triangle[k];
          ++e;
        }
      }
    coarse.push_back(std::move(mesh));
  }
  return "";
}

void MpbngLevels::restrictToCoarse(VecX& field) const {
  const int coarse = first_node.back() - first_node[1];
  for (int j = 0; j < coarse; ++j) {
    Vec3 value = Vec3::Zero();
    for (int k = 0; k < restriction_width; ++k) {
      const size_t at = static_cast<size_t>(j) * restriction_width + k;
      value += restriction_weights[at] * field.segment<3>(3 * restriction_nodes[at]);
    }
    field.segment<3>(3 * (first_node[1] + j)) = value;
  }
}

VecX MpbngLevels::distributeForce(const VecX& force) const {
  VecX shares = VecX::Zero(problem.numDofs());
  const double L = numLevels();
  shares.head(force.size()) = force / L;
  if (binding_term < 0) return shares;
  // The bindings' stencils run level by level (0 -> 1, then 1 -> 2, ...): a vertex's share is
  // complete before it is passed on.
  const auto& bindings = dynamic_cast<const WeakConstraintTerm&>(*problem.terms()[binding_term]);
  for (int s = 0; s < bindings.numStencils(); ++s) {
    const int* nodes = bindings.stencilNodes(s);
    const Vec3 share = shares.segment<3>(3 * nodes[0]);
    for (int k = 1; k < bindings.nodesPerStencil(); ++k)
      shares.segment<3>(3 * nodes[k]) -= bindings.coefficient(s, k) * share;  // coefficient = -w_b
  }
  return shares;
}

std::string mpbngProblemRejection(const Problem& original) {
  if (original.numBodies() != 1)
    return "MPBNG builds its levels over one body; this scene has " + std::to_string(original.numBodies());
  if (original.collisions.enabled) return "MPBNG does not take collisions between bodies";
  for (const auto& term : original.terms())
    if (dynamic_cast<const WeakConstraintTerm*>(term.get())) return "MPBNG does not take the scene's own weak constraints";
  return "";
}

MpbngLevels buildMpbngLevels(const Problem& original, const std::vector<Mesh>& coarse, const MpbngLevelOptions& options) {
  const std::string rejection = mpbngProblemRejection(original);
  if (!rejection.empty()) throw std::invalid_argument(rejection);
  const int L = 1 + static_cast<int>(coarse.size());
  const Body& body = original.bodies[0];
  const double tolerance = 1e-9 * boundingBoxDiagonal(body.mesh);

  MpbngLevels levels;
  Problem& p = levels.problem;
  p.discretization = original.discretization;
  p.gravity = original.gravity;
  p.colliders = original.colliders;
  p.time = original.time;
  p.initial_map = original.initial_map;
  p.initial_map_fixed_point = original.initial_map_fixed_point;
  p.initial_velocity = original.initial_velocity;
  p.initial_angular_velocity = original.initial_angular_velocity;
  p.initial_spin_center = original.initial_spin_center;
  p.initial_spin_chord = original.initial_spin_chord;

  // The prescribed nodes of level 0, by condition, to find the coarse vertices at their rest points.
  for (int level = 0; level < L; ++level) {
    Body b;
    b.name = "level" + std::to_string(level);
    b.mesh = level == 0 ? body.mesh : coarse[level - 1];
    if (level > 0) b.mesh.node_sets.clear();
    std::vector<int> all(b.mesh.numNodes());
    for (int i = 0; i < b.mesh.numNodes(); ++i) all[i] = i;
    b.mesh.node_sets["all"] = all;
    b.material = body.material;
    b.material.youngs_modulus /= L;
    b.material.density /= L;
    b.material.sigma_max /= L;
    b.bending_stiffness = body.bending_stiffness / L;
    if (level == 0) {
      b.element_data = body.element_data;
      b.activation = body.activation;
    } else if (!body.element_data.empty()) {
      throw std::invalid_argument("MPBNG's coarse levels have no per-element material data (fibre directions)");
    }
    p.bodies.push_back(std::move(b));
  }
  for (const DirichletCondition& condition : original.dirichlet) {
    const std::vector<int>& fine_set = original.mesh.node_sets.at(condition.node_set);
    DirichletCondition on_level = condition;
    on_level.node_set = (L > 1 ? "level0/" : "") + condition.node_set;  // one body: names unprefixed
    p.bodies[0].mesh.node_sets[condition.node_set] = fine_set;
    p.dirichlet.push_back(on_level);
    if (!options.clamp_coarse) continue;
    for (int level = 1; level < L; ++level) {
      Mesh& mesh = p.bodies[level].mesh;
      // The coarse vertices in the bounding box of the prescribed set (its rest positions).
      Vec3 low = Vec3::Constant(1e300), high = Vec3::Constant(-1e300);
      for (int f : fine_set) low = low.cwiseMin(body.mesh.restPosition(f)), high = high.cwiseMax(body.mesh.restPosition(f));
      std::vector<int> set;
      for (int i = 0; i < mesh.numNodes(); ++i) {
        const Vec3 X = mesh.restPosition(i);
        if (((X - low).array() >= -tolerance).all() && ((high - X).array() >= -tolerance).all()) set.push_back(i);
      }
      if (set.empty()) continue;
      mesh.node_sets[condition.node_set] = set;
      on_level.node_set = p.bodies[level].name + "/" + condition.node_set;
      p.dirichlet.push_back(on_level);
    }
  }

  levels.mean_elastic_block = meanRestBlock(original) / L;
  levels.binding_stiffness = options.binding_factor * levels.mean_elastic_block;
  for (int level = 0; level + 1 < L; ++level) {
    NodeSetBinding binding;
    binding.node_set = p.bodies[level].name + "/all";
    binding.body = p.bodies[level + 1].name;
    binding.k_n = binding.k_t = levels.binding_stiffness;
    p.bindings.push_back(binding);
  }
  try {
    p.finalize("<MPBNG levels>");
  } catch (const std::exception& error) {
    throw std::invalid_argument(std::string("MPBNG's levels: ") + error.what());
  }
  levels.first_node.clear();
  for (int level = 0; level <= L; ++level) levels.first_node.push_back(level < L ? p.bodyFirstNode(level) : p.numNodes());
  for (size_t k = 0; k < p.terms().size(); ++k)
    if (dynamic_cast<const WeakConstraintTerm*>(p.terms()[k].get())) levels.binding_term = static_cast<int>(k);

  // Each coarse vertex located in level 0 (its rest point), for restrictToCoarse.
  if (L > 1) {
    const FieldSampler sampler(body.mesh);
    const ReferenceElement& reference = ReferenceElement::of(body.mesh.element_type);
    levels.restriction_width = reference.numNodes();
    for (int c = levels.first_node[1]; c < p.numNodes(); ++c) {
      const FieldSampler::Location at = sampler.locate(p.mesh.restPosition(c));
      if (at.element < 0)
        throw std::invalid_argument("MPBNG's levels: coarse vertex " + std::to_string(c - levels.first_node[1]) +
                                    " lies outside level 0 at rest");
      const Eigen::VectorXd N = reference.shapeValues(at.reference);
      for (int a = 0; a < reference.numNodes(); ++a) {
        levels.restriction_nodes.push_back(body.mesh.elements(at.element, a));
        levels.restriction_weights.push_back(N[a]);
      }
    }
  }
  return levels;
}

}  // namespace pbdlab
