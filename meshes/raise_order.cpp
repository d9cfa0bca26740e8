#include "meshes/raise_order.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/fem/reference_element.hpp"

namespace pbdlab {

namespace {

// A node's barycentric position among the mesh vertices: up to four (vertex, numerator)
// pairs sorted by vertex, numerators summing to the order; unused slots are (-1, 0).
using NodeKey = std::array<std::int64_t, 4>;  // vertex << 8 | numerator

struct KeyHash {
  std::size_t operator()(const NodeKey& k) const {
    std::uint64_t h = 1469598103934665603ull;
    for (std::int64_t v : k) {
      h ^= static_cast<std::uint64_t>(v);
      h *= 1099511628211ull;
      h ^= h >> 29;
    }
    return static_cast<std::size_t>(h);
  }
};

// Barycentric numerators (of `order`) of a reference-tet point r: (1 - r0 - r1 - r2, r0, r1, r2).
std::array<int, 4> barycentricNumerators(const Vec3& r, int order) {
  const double lambda[4] = {1.0 - r[0] - r[1] - r[2], r[0], r[1], r[2]};
  std::array<int, 4> k{};
  int sum = 0;
  for (int i = 0; i < 4; ++i) {
    const double scaled = lambda[i] * order;
    k[i] = static_cast<int>(std::lround(scaled));
    if (std::abs(scaled - k[i]) > 1e-9 || k[i] < 0) {
      throw std::logic_error("raiseOrder: a reference node is not on the order-" + std::to_string(order) +
                             " lattice");
    }
    sum += k[i];
  }
  if (sum != order) throw std::logic_error("raiseOrder: barycentric numerators do not sum to the order");
  return k;
}

}  // namespace

Mesh raiseOrder(const Mesh& tet4, int order) {
  if (tet4.element_type != ElementType::kTet4) {
    throw std::invalid_argument("raiseOrder (" + tet4.source + "): needs a tet4 mesh, got " +
                                elementTypeName(tet4.element_type));
  }
  if (order < 1 || order > 3) {
    throw std::invalid_argument("raiseOrder (" + tet4.source + "): order must be 1, 2 or 3, got " +
                                std::to_string(order));
  }
  if (order == 1) return tet4;
  const ElementType type = order == 2 ? ElementType::kTet10 : ElementType::kTet20;
  const std::vector<Vec3>& reference = ReferenceElement::of(type).nodeCoordinates();
  const int per_element = static_cast<int>(reference.size());
  std::vector<std::array<int, 4>> numerators;
  for (const Vec3& r : reference) numerators.push_back(barycentricNumerators(r, order));

  const int n_vertices = tet4.numNodes();
  const int n_elements = tet4.numElements();
  Mesh out;
  out.source = tet4.source;
  out.element_type = type;
  out.elements.resize(n_elements, per_element);
  std::vector<Vec3> new_positions;
  std::vector<NodeKey> new_keys;
  std::unordered_map<NodeKey, int, KeyHash> index_of_key;
  index_of_key.reserve(static_cast<std::size_t>(n_elements) * (order == 2 ? 2 : 5));

  for (int e = 0; e < n_elements; ++e) {
    const int vertex[4] = {tet4.elements(e, 0), tet4.elements(e, 1), tet4.elements(e, 2), tet4.elements(e, 3)};
    for (int i = 0; i < per_element; ++i) {
      const std::array<int, 4>& k = numerators[static_cast<std::size_t>(i)];
      // A corner keeps its index.
      const auto corner = std::find(k.begin(), k.end(), order);
      if (corner != k.end()) {
        out.elements(e, i) = vertex[corner - k.begin()];
        continue;
      }
      std::array<std::pair<int, int>, 4> pairs;
      int used = 0;
      for (int v = 0; v < 4; ++v)
        if (k[v] > 0) pairs[used++] = {vertex[v], k[v]};
      std::sort(pairs.begin(), pairs.begin() + used);
      NodeKey key;
      key.fill(-1);
      for (int j = 0; j < used; ++j) key[j] = (static_cast<std::int64_t>(pairs[j].first) << 8) | pairs[j].second;
      const auto [it, inserted] = index_of_key.emplace(key, n_vertices + static_cast<int>(new_positions.size()));
      if (inserted) {
        // X = X_a + sum_j (k_j / p) (X_j - X_a): a coordinate shared by all the vertices
        // involved (a node on a flat box face) is reproduced exactly.
        const Vec3 anchor = tet4.restPosition(pairs[0].first);
        Vec3 x = anchor;
        for (int j = 1; j < used; ++j)
          x += (static_cast<double>(pairs[j].second) / order) * (tet4.restPosition(pairs[j].first) - anchor);
        new_positions.push_back(x);
        new_keys.push_back(key);
      }
      out.elements(e, i) = it->second;
    }
  }

  const int n_new = static_cast<int>(new_positions.size());
  out.rest_positions.resize(n_vertices + n_new, 3);
  out.rest_positions.topRows(n_vertices) = tet4.rest_positions;
  for (int i = 0; i < n_new; ++i) out.rest_positions.row(n_vertices + i) = new_positions[static_cast<std::size_t>(i)].transpose();

  // Node sets: a new node belongs to a set holding all the vertices it lies between.
  for (const auto& [name, nodes] : tet4.node_sets) {
    std::vector<char> member(static_cast<std::size_t>(n_vertices), 0);
    for (int n : nodes)
      if (n >= 0 && n < n_vertices) member[static_cast<std::size_t>(n)] = 1;
    std::vector<int> raised = nodes;
    for (int i = 0; i < n_new; ++i) {
      bool all = true;
      for (std::int64_t packed : new_keys[static_cast<std::size_t>(i)]) {
        if (packed < 0) break;
        if (!member[static_cast<std::size_t>(packed >> 8)]) {
          all = false;
          break;
        }
      }
      if (all) raised.push_back(n_vertices + i);
    }
    out.node_sets[name] = std::move(raised);
  }
  return out;
}

}  // namespace pbdlab
