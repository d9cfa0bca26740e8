#include "core/topology/coloring.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pbdlab {

std::vector<int> Coloring::sizes() const {
  std::vector<int> out;
  out.reserve(groups.size());
  for (const auto& group : groups) out.push_back(static_cast<int>(group.size()));
  return out;
}

namespace {

// The greedy step of both colorings: `item` takes the smallest color c with
// forbidden[c] != item (its colored neighbours marked their colors with `item`), opening a
// new color when all are taken, and joins that color's group.
int takeSmallestFreeColor(int item, std::vector<int>& forbidden, Coloring& coloring) {
  int c = 0;
  while (c < static_cast<int>(forbidden.size()) && forbidden[c] == item) ++c;
  if (c == static_cast<int>(forbidden.size())) {
    forbidden.push_back(-1);
    coloring.groups.emplace_back();
  }
  coloring.groups[c].push_back(item);
  return c;
}

}  // namespace

NodeAdjacency nodeAdjacency(int num_nodes, const StencilSet& stencils) {
  NodeAdjacency adjacency;
  adjacency.start.assign(static_cast<size_t>(num_nodes) + 1, 0);
  for (int s = 0; s < stencils.count; ++s) {
    const int* nodes = stencils.nodes(s);
    for (int k = 0; k < stencils.nodes_per_stencil; ++k) {
      if (nodes[k] < 0 || nodes[k] >= num_nodes)
        throw std::invalid_argument("stencil " + std::to_string(s) + " has node index " + std::to_string(nodes[k]) +
                                    " out of range [0, " + std::to_string(num_nodes) + ")");
      ++adjacency.start[static_cast<size_t>(nodes[k]) + 1];
    }
  }
  for (int i = 0; i < num_nodes; ++i) adjacency.start[i + 1] += adjacency.start[i];
  adjacency.stencil.resize(adjacency.start[num_nodes]);
  adjacency.local.resize(adjacency.start[num_nodes]);
  std::vector<int> fill(adjacency.start.begin(), adjacency.start.end() - 1);
  for (int s = 0; s < stencils.count; ++s) {
    const int* nodes = stencils.nodes(s);
    for (int k = 0; k < stencils.nodes_per_stencil; ++k) {
      const int slot = fill[nodes[k]]++;
      adjacency.stencil[slot] = s;
      adjacency.local[slot] = k;
    }
  }
  return adjacency;
}

Coloring colorStencils(int num_stencils, int nodes_per_stencil, const StencilNodes& nodes) {
  int num_nodes = 0;
  for (int s = 0; s < num_stencils; ++s)
    for (int k = 0; k < nodes_per_stencil; ++k) num_nodes = std::max(num_nodes, nodes(s)[k] + 1);
  const NodeAdjacency adjacency = nodeAdjacency(num_nodes, {num_stencils, nodes_per_stencil, nodes});

  // Greedy in stencil order: each stencil takes the smallest color none of its already
  // colored neighbours (stencils sharing a node) has. forbidden[c] == s marks color c taken.
  std::vector<int> color(static_cast<size_t>(num_stencils), -1);
  std::vector<int> forbidden;
  Coloring coloring;
  for (int s = 0; s < num_stencils; ++s) {
    const int* stencil_nodes = nodes(s);
    for (int k = 0; k < nodes_per_stencil; ++k) {
      const int node = stencil_nodes[k];
      for (int p = adjacency.start[node]; p < adjacency.start[node + 1]; ++p) {
        const int other = adjacency.stencil[p];
        if (other >= s) break;  // adjacency lists are sorted: the rest are not colored yet
        forbidden[color[other]] = s;
      }
    }
    color[s] = takeSmallestFreeColor(s, forbidden, coloring);
  }
  return coloring;
}

Coloring colorElements(const Mesh& mesh) {
  const int per_element = static_cast<int>(mesh.elements.cols());
  for (int e = 0; e < mesh.numElements(); ++e)
    for (int k = 0; k < per_element; ++k)
      if (mesh.elements(e, k) < 0 || mesh.elements(e, k) >= mesh.numNodes())
        throw std::invalid_argument("colorElements: element " + std::to_string(e) + " has node index " +
                                    std::to_string(mesh.elements(e, k)) + " out of range (validate the mesh first)");
  return colorStencils(mesh.numElements(), per_element,
                       [&mesh, per_element](int e) { return mesh.elements.data() + static_cast<size_t>(e) * per_element; });
}

namespace {

// Calls f(other) for every node sharing a stencil of any set with `node` (with repeats).
template <class Function>
void forEachNeighbour(int node, const std::vector<StencilSet>& sets, const std::vector<NodeAdjacency>& adjacency,
                      Function&& f) {
  for (size_t k = 0; k < sets.size(); ++k) {
    const NodeAdjacency& a = adjacency[k];
    for (int p = a.start[node]; p < a.start[node + 1]; ++p) {
      const int* nodes = sets[k].nodes(a.stencil[p]);
      for (int j = 0; j < sets[k].nodes_per_stencil; ++j)
        if (nodes[j] != node) f(nodes[j]);
    }
  }
}

std::vector<NodeAdjacency> adjacencies(int num_nodes, const std::vector<StencilSet>& sets) {
  std::vector<NodeAdjacency> out;
  for (const StencilSet& set : sets) out.push_back(nodeAdjacency(num_nodes, set));
  return out;
}

}  // namespace

Coloring colorNodes(int num_nodes, const std::vector<StencilSet>& stencil_sets) {
  const std::vector<NodeAdjacency> adjacency = adjacencies(num_nodes, stencil_sets);
  std::vector<int> color(static_cast<size_t>(num_nodes), -1);
  std::vector<int> forbidden;
  Coloring coloring;
  for (int i = 0; i < num_nodes; ++i) {
    forEachNeighbour(i, stencil_sets, adjacency, [&](int other) {
      if (color[other] >= 0) forbidden[color[other]] = i;
    });
    color[i] = takeSmallestFreeColor(i, forbidden, coloring);
  }
  return coloring;
}

std::vector<int> colorOfNode(int num_nodes, const Coloring& coloring) {
  std::vector<int> color(static_cast<size_t>(num_nodes), -1);
  for (int c = 0; c < coloring.numColors(); ++c)
    for (int node : coloring.groups[c]) color[node] = c;
  return color;
}

int recolorNodes(Coloring& coloring, const std::vector<StencilSet>& stencil_sets, const std::vector<int>& touched) {
  int num_nodes = 0;
  for (const auto& group : coloring.groups)
    for (int node : group) num_nodes = std::max(num_nodes, node + 1);
  for (int node : touched) num_nodes = std::max(num_nodes, node + 1);
  const std::vector<NodeAdjacency> adjacency = adjacencies(num_nodes, stencil_sets);
  std::vector<int> color = colorOfNode(num_nodes, coloring);
  std::vector<int> order = touched;
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  std::vector<char> used;
  int changed = 0;
  for (int node : order) {
    used.assign(coloring.groups.size() + 1, 0);
    forEachNeighbour(node, stencil_sets, adjacency, [&](int other) {
      if (color[other] >= 0) used[color[other]] = 1;
    });
    const int old = color[node];
    if (old >= 0 && !used[old]) continue;  // the previous color is still free: keep it
    int c = 0;
    while (used[c]) ++c;
    if (c == static_cast<int>(coloring.groups.size())) coloring.groups.emplace_back();
    color[node] = c;
    ++changed;
  }
  if (changed > 0) {  // rebuild the groups in node order (deterministic)
    for (auto& group : coloring.groups) group.clear();
    for (int node = 0; node < num_nodes; ++node)
      if (color[node] >= 0) coloring.groups[color[node]].push_back(node);
    while (!coloring.groups.empty() && coloring.groups.back().empty()) coloring.groups.pop_back();
  }
  return changed;
}

int recolorStencils(Coloring& coloring, const StencilSet& stencils) {
  const int count = stencils.count;
  int num_nodes = 0;
  for (int s = 0; s < count; ++s)
    for (int k = 0; k < stencils.nodes_per_stencil; ++k) num_nodes = std::max(num_nodes, stencils.nodes(s)[k] + 1);
  const NodeAdjacency adjacency = nodeAdjacency(num_nodes, stencils);
  std::vector<int> previous(static_cast<size_t>(count), -1);
  for (int c = 0; c < coloring.numColors(); ++c)
    for (int s : coloring.groups[c])
      if (s >= 0 && s < count) previous[s] = c;
  // f(other) for every stencil sharing a node with s; a node repeated within s is read once
  // (a grid element lists a node once per vertex it interpolates).
  std::vector<int> read_at(static_cast<size_t>(num_nodes), -1);
  int visit = 0;
  auto forEachNeighbour = [&](int s, auto&& f) {
    ++visit;
    const int* nodes = stencils.nodes(s);
    for (int k = 0; k < stencils.nodes_per_stencil; ++k) {
      if (read_at[nodes[k]] == visit) continue;
      read_at[nodes[k]] = visit;
      for (int p = adjacency.start[nodes[k]]; p < adjacency.start[nodes[k] + 1]; ++p)
        if (adjacency.stencil[p] != s) f(adjacency.stencil[p]);
    }
  };
  // Keep: only stencils decided before s have a color yet.
  std::vector<int> color(static_cast<size_t>(count), -1);
  for (int s = 0; s < count; ++s) {
    if (previous[s] < 0) continue;
    bool free = true;
    forEachNeighbour(s, [&](int other) { free = free && color[other] != previous[s]; });
    if (free) color[s] = previous[s];
  }
  // Recolor the rest against every colored neighbour, kept or recolored before.
  std::vector<int> forbidden(coloring.groups.size(), -1);
  int changed = 0;
  for (int s = 0; s < count; ++s) {
    if (color[s] >= 0) continue;
    forEachNeighbour(s, [&](int other) {
      if (color[other] >= 0) forbidden[color[other]] = s;
    });
    int c = 0;
    while (c < static_cast<int>(forbidden.size()) && forbidden[c] == s) ++c;
    if (c == static_cast<int>(forbidden.size())) forbidden.push_back(-1);
    color[s] = c;
    ++changed;
  }
  coloring.groups.assign(forbidden.size(), {});
  for (int s = 0; s < count; ++s) coloring.groups[color[s]].push_back(s);
  while (!coloring.groups.empty() && coloring.groups.back().empty()) coloring.groups.pop_back();
  return changed;
}

bool isValidStencilColoring(const StencilSet& stencils, const Coloring& coloring) {
  std::vector<char> seen(static_cast<size_t>(stencils.count), 0);
  std::vector<int> last_color, last_stencil;  // a node may repeat within one stencil
  int covered = 0;
  for (int c = 0; c < coloring.numColors(); ++c)
    for (int s : coloring.groups[c]) {
      if (s < 0 || s >= stencils.count || seen[s]) return false;
      seen[s] = 1;
      ++covered;
      const int* nodes = stencils.nodes(s);
      for (int k = 0; k < stencils.nodes_per_stencil; ++k) {
        const int node = nodes[k];
        if (node < 0) return false;
        if (node >= static_cast<int>(last_color.size())) last_color.resize(node + 1, -1), last_stencil.resize(node + 1, -1);
        if (last_color[node] == c && last_stencil[node] != s) return false;
        last_color[node] = c;
        last_stencil[node] = s;
      }
    }
  return covered == stencils.count;
}

bool isValidElementColoring(const Mesh& mesh, const Coloring& coloring) {
  const int per_element = static_cast<int>(mesh.elements.cols());
  for (int e = 0; e < mesh.numElements(); ++e)
    for (int k = 0; k < per_element; ++k)
      if (mesh.elements(e, k) < 0 || mesh.elements(e, k) >= mesh.numNodes()) return false;
  return isValidStencilColoring(
      {mesh.numElements(), per_element,
       [&mesh, per_element](int e) { return mesh.elements.data() + static_cast<size_t>(e) * per_element; }},
      coloring);
}

bool isValidNodeColoring(int num_nodes, const std::vector<StencilSet>& stencil_sets, const Coloring& coloring) {
  std::vector<int> color(static_cast<size_t>(num_nodes), -1);
  for (int c = 0; c < coloring.numColors(); ++c)
    for (int node : coloring.groups[c]) {
      if (node < 0 || node >= num_nodes || color[node] >= 0) return false;
      color[node] = c;
    }
  for (int c : color)
    if (c < 0) return false;
  for (const StencilSet& set : stencil_sets)
    for (int s = 0; s < set.count; ++s) {
      const int* nodes = set.nodes(s);
      for (int a = 0; a < set.nodes_per_stencil; ++a)
        for (int b = a + 1; b < set.nodes_per_stencil; ++b)
          if (nodes[a] != nodes[b] && color[nodes[a]] == color[nodes[b]]) return false;
    }
  return true;
}

}  // namespace pbdlab
