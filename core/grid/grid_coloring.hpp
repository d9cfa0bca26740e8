#pragma once
// The grid-based element coloring of PXPBD §4 (Fig. 6): an element is incident to every grid
// node that interpolates one of its vertices (up to 8 x 4 for a trilinear tet), and elements
// of one color share no incident node, so the element updates of one color can scatter into
// the grid unknowns in parallel. The incident nodes change with the weights every step: the
// coloring is redone from the previous step's colors (recolorElementsOnGrid). The greedy
// colorings are core/topology/coloring.hpp's, over these stencils.
#include <vector>

#include "core/fem/mesh.hpp"
#include "core/grid/grid_weights.hpp"
#include "core/topology/coloring.hpp"

namespace pbdlab {

// Per element, the stencils of its vertices one after another (vertex-major, repeats kept:
// the topology functions accept a node repeated within a stencil).
struct ElementGridNodes {
  int nodes_per_element = 0;
  std::vector<int> nodes;

  int numElements() const { return nodes_per_element == 0 ? 0 : static_cast<int>(nodes.size() / nodes_per_element); }
  // A view of `nodes`: valid while this object lives.
  StencilSet stencils() const;
};

// Throws std::invalid_argument when an element names a vertex the weights do not have.
ElementGridNodes elementGridNodes(const Connectivity& elements, const GridWeights& weights);

// Greedy in element order: each element takes the smallest color no incident grid node has
// registered yet (Fig. 6).
Coloring colorElementsOnGrid(const Connectivity& elements, const GridWeights& weights);
// The next step's coloring from `coloring`, the previous step's: an element keeps its color
// unless an element that kept the same color now shares a grid node with it
// (recolorStencils). Returns the number of elements whose color changed.
int recolorElementsOnGrid(Coloring& coloring, const Connectivity& elements, const GridWeights& weights);
// True if every element has one color and no two elements of one color share a grid node.
bool isValidGridColoring(const Connectivity& elements, const GridWeights& weights, const Coloring& coloring);

}  // namespace pbdlab
