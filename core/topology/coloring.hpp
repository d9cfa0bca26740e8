#pragma once
// Topology services, computed once per topology (DESIGN.md "Energy terms"): greedy
// colorings of stencils (elements, weak constraints, hinges, contacts) and of nodes, and the
// node -> stencil adjacency.
//  - Stencil coloring: stencils that share a node get different colors, so a loop over one
//    color can scatter into nodal arrays in parallel without races (XPBD's constraint
//    coloring, the Hessian assembly).
//  - Node coloring: nodes that share a stencil get different colors, over ANY set of stencils
//    (PBNG §10: a node's Gauss-Seidel update reads every stencil it belongs to).
#include <functional>
#include <vector>

#include "core/fem/mesh.hpp"

namespace pbdlab {

struct Coloring {
  std::vector<std::vector<int>> groups;  // groups[c] = the items of color c
  int numColors() const { return static_cast<int>(groups.size()); }
  std::vector<int> sizes() const;
};

// The nodes of stencil s: `nodes_per_stencil` node indices.
using StencilNodes = std::function<const int*(int s)>;

// A set of stencils of one size, seen through its node lists.
struct StencilSet {
  int count = 0;
  int nodes_per_stencil = 0;
  StencilNodes nodes;
};

// Node -> stencils (CSR): the stencils containing node i are stencil[start[i] .. start[i+1])
// with the node at position local[...] in each, in stencil order.
struct NodeAdjacency {
  std::vector<int> start;
  std::vector<int> stencil;
  std::vector<int> local;
  int numNodes() const { return static_cast<int>(start.size()) - 1; }
};
// Throws std::invalid_argument for a node index outside [0, num_nodes).
NodeAdjacency nodeAdjacency(int num_nodes, const StencilSet& stencils);

// Stencils sharing a node get different colors (greedy, in stencil order: deterministic).
Coloring colorStencils(int num_stencils, int nodes_per_stencil, const StencilNodes& nodes);
// Elements that share a node get different colors.
Coloring colorElements(const Mesh& mesh);

// Nodes that share a stencil of any of the sets get different colors (greedy in node order).
// Every node of [0, num_nodes) gets a color, nodes in no stencil included.
Coloring colorNodes(int num_nodes, const std::vector<StencilSet>& stencil_sets);
// Per node, its color in `coloring` (-1 for a node in none).
std::vector<int> colorOfNode(int num_nodes, const Coloring& coloring);
// Incremental recoloring after stencils were added (PBNG §10): only `touched` nodes may
// change color; each keeps its color if no neighbour over `stencil_sets` has it, else takes
// the smallest free one. Returns the number of nodes that changed color.
int recolorNodes(Coloring& coloring, const std::vector<StencilSet>& stencil_sets, const std::vector<int>& touched);

// Warm-started recoloring of stencils whose nodes changed (PXPBD §4: the grid-based coloring
// is redone every step from the previous step's colors). In stencil order a stencil keeps its
// color in `coloring` unless an earlier stencil that kept the same color shares a node with it;
// then, in stencil order, each other stencil takes the smallest color none of the stencils it
// shares a node with has. A stencil absent from `coloring` counts as new. Returns the number of
// stencils whose color changed (new ones included).
int recolorStencils(Coloring& coloring, const StencilSet& stencils);

// True if no two items of one color share a node (for tests).
bool isValidElementColoring(const Mesh& mesh, const Coloring& coloring);
bool isValidStencilColoring(const StencilSet& stencils, const Coloring& coloring);
// True if every node has exactly one color and no stencil holds two nodes of one color.
bool isValidNodeColoring(int num_nodes, const std::vector<StencilSet>& stencil_sets, const Coloring& coloring);

}  // namespace pbdlab
