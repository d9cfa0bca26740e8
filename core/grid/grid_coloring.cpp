#include "core/grid/grid_coloring.hpp"

#include <stdexcept>
#include <string>

namespace pbdlab {

StencilSet ElementGridNodes::stencils() const {
  const int* data = nodes.data();
  const int per_element = nodes_per_element;
  return {numElements(), per_element,
          [data, per_element](int e) { return data + static_cast<size_t>(e) * static_cast<size_t>(per_element); }};
}

ElementGridNodes elementGridNodes(const Connectivity& elements, const GridWeights& weights) {
  const int vertices = static_cast<int>(elements.cols());
  const int per_vertex = weights.nodes_per_point;
  ElementGridNodes out;
  out.nodes_per_element = vertices * per_vertex;
  out.nodes.resize(static_cast<size_t>(elements.rows()) * static_cast<size_t>(out.nodes_per_element));
  size_t slot = 0;
  for (Eigen::Index e = 0; e < elements.rows(); ++e)
    for (int k = 0; k < vertices; ++k) {
      const int vertex = elements(e, k);
      if (vertex < 0 || vertex >= weights.numPoints())
        throw std::invalid_argument("grid coloring: element " + std::to_string(e) + " has vertex " +
                                    std::to_string(vertex) + ", the grid weights have " +
                                    std::to_string(weights.numPoints()) + " points");
      const size_t first = weights.entry(vertex);
      for (int a = 0; a < per_vertex; ++a) out.nodes[slot++] = weights.node[first + a];
    }
  return out;
}

Coloring colorElementsOnGrid(const Connectivity& elements, const GridWeights& weights) {
  // From no colors recolorStencils is colorStencils' greedy (the same colors, tested), and
  // it reads a node repeated within an element once: here each node comes up to 4 times.
  Coloring coloring;
  recolorStencils(coloring, elementGridNodes(elements, weights).stencils());
  return coloring;
}

int recolorElementsOnGrid(Coloring& coloring, const Connectivity& elements, const GridWeights& weights) {
  const ElementGridNodes incident = elementGridNodes(elements, weights);
  return recolorStencils(coloring, incident.stencils());
}

bool isValidGridColoring(const Connectivity& elements, const GridWeights& weights, const Coloring& coloring) {
  const ElementGridNodes incident = elementGridNodes(elements, weights);
  return isValidStencilColoring(incident.stencils(), coloring);
}

}  // namespace pbdlab
