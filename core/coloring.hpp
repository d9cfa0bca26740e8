#pragma once
// Greedy graph colorings, computed once per topology: elements of one color share no node,
// so a loop over one color can scatter into nodal arrays in parallel without races.
#include <vector>

#include "core/mesh.hpp"

namespace pbdlab {

struct Coloring {
  std::vector<std::vector<int>> groups;  // groups[c] = the items of color c
  int numColors() const { return static_cast<int>(groups.size()); }
  std::vector<int> sizes() const;
};

// Elements that share a node get different colors (greedy, in element order: deterministic).
Coloring colorElements(const Mesh& mesh);

// True if no two items of one color share a node (for tests).
bool isValidElementColoring(const Mesh& mesh, const Coloring& coloring);

}  // namespace pbdlab
