#include "core/coloring.hpp"

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

Coloring colorElements(const Mesh& mesh) {
  const int n_nodes = mesh.numNodes();
  const int n_elements = mesh.numElements();
  const int per_element = static_cast<int>(mesh.elements.cols());

  // Node -> incident elements (CSR), in element order.
  std::vector<int> start(static_cast<std::size_t>(n_nodes) + 1, 0);
  for (int e = 0; e < n_elements; ++e) {
    for (int k = 0; k < per_element; ++k) {
      const int node = mesh.elements(e, k);
      if (node < 0 || node >= n_nodes) {
        throw std::invalid_argument("colorElements: element " + std::to_string(e) +
                                    " has node index " + std::to_string(node) +
                                    " out of range (validate the mesh first)");
      }
      ++start[static_cast<std::size_t>(node) + 1];
    }
  }
  for (int i = 0; i < n_nodes; ++i) start[i + 1] += start[i];
  std::vector<int> incident(static_cast<std::size_t>(start[n_nodes]));
  std::vector<int> fill(start.begin(), start.end() - 1);
  for (int e = 0; e < n_elements; ++e) {
    for (int k = 0; k < per_element; ++k) incident[fill[mesh.elements(e, k)]++] = e;
  }

  // Greedy in element order: each element takes the smallest color none of its already
  // colored neighbours (elements sharing a node) has. forbidden[c] == e marks color c taken.
  std::vector<int> color(static_cast<std::size_t>(n_elements), -1);
  std::vector<int> forbidden;
  Coloring coloring;
  for (int e = 0; e < n_elements; ++e) {
    for (int k = 0; k < per_element; ++k) {
      const int node = mesh.elements(e, k);
      for (int p = start[node]; p < start[node + 1]; ++p) {
        const int other = incident[p];
        if (other >= e) break;  // incident lists are sorted: the rest are not colored yet
        forbidden[color[other]] = e;
      }
    }
    int c = 0;
    while (c < static_cast<int>(forbidden.size()) && forbidden[c] == e) ++c;
    if (c == static_cast<int>(forbidden.size())) {
      forbidden.push_back(-1);
      coloring.groups.emplace_back();
    }
    color[e] = c;
    coloring.groups[c].push_back(e);
  }
  return coloring;
}

bool isValidElementColoring(const Mesh& mesh, const Coloring& coloring) {
  const int n_elements = mesh.numElements();
  const int per_element = static_cast<int>(mesh.elements.cols());
  // Every element exactly once, and within one color every node touched at most once.
  std::vector<char> seen(static_cast<std::size_t>(n_elements), 0);
  std::vector<int> last_color(static_cast<std::size_t>(mesh.numNodes()), -1);
  int covered = 0;
  for (int c = 0; c < coloring.numColors(); ++c) {
    for (int e : coloring.groups[c]) {
      if (e < 0 || e >= n_elements || seen[e]) return false;
      seen[e] = 1;
      ++covered;
      for (int k = 0; k < per_element; ++k) {
        const int node = mesh.elements(e, k);
        if (node < 0 || node >= mesh.numNodes()) return false;
        if (last_color[node] == c) return false;
        last_color[node] = c;
      }
    }
  }
  return covered == n_elements;
}

}  // namespace pbdlab
