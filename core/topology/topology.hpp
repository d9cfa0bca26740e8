#pragma once
// Topology services computed once per topology (DESIGN.md "Energy terms"): the surface
// triangles of a solid mesh (for collisions and rendering) and the hinges of a triangle
// surface (edge -> its two triangles, for dihedral bending). Node -> stencil adjacency and
// the colorings are in core/topology/coloring.hpp.
#include <array>
#include <vector>

#include "core/fem/mesh.hpp"

namespace pbdlab {

// The boundary of a solid mesh as triangles of corner nodes, oriented with their normal
// pointing out of the body: element faces that belong to one element only (a quadrilateral
// face is split into two triangles along its 0-2 diagonal). For a tri3 mesh: its triangles.
// High-order elements contribute their corner nodes (a flat approximation of curved faces).
std::vector<std::array<int, 3>> surfaceTriangles(const Mesh& mesh);

// A hinge: two triangles sharing the edge (v0, v1), with v2 opposite in the first and v3
// opposite in the second. The first triangle is (v0, v1, v2) in its own orientation; the
// second contains the edge as (v1, v0), so for a consistently oriented surface the two
// normals (v1 - v0) x (v2 - v0) and (v0 - v1) x (v3 - v1) agree when the hinge is flat.
struct Hinge {
  std::array<int, 4> nodes;  // v0, v1, v2, v3
};

// Every interior edge of a triangle surface (an edge of exactly two triangles). Edges of one
// triangle (the border) have no hinge; an edge of three or more triangles (non-manifold)
// throws std::invalid_argument naming it. Triangles must be consistently oriented (the shared
// edge appears once in each direction), else std::invalid_argument.
std::vector<Hinge> surfaceHinges(const std::vector<std::array<int, 3>>& triangles);

}  // namespace pbdlab
