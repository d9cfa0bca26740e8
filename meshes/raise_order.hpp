#pragma once
// P2 (tet10) and P3 (tet20) meshes from any P1 (tet4) mesh.
//
// The new nodes of an element sit at the reference coordinates of Gmsh's node order
// (ReferenceElement::nodeCoordinates of core/fem/reference_element.hpp, which is
// gmsh::model::mesh::getElementProperties' order), mapped affinely: straight edges and flat
// faces. A node is identified topologically by its barycentric position among the element's
// vertices ({(vertex, numerator)} over the vertices with a non-zero coordinate), so an edge or
// face node is created once and shared by every element around that edge or face.
#include "core/fem/mesh.hpp"

namespace pbdlab {

// Returns the mesh of order `order` (1 returns a copy; 2: tet10; 3: tet20). The corner nodes
// keep their indices 0 .. n-1; new nodes follow in the order elements first use them. A node
// set contains a new node when it contains every vertex the node lies between, so face sets
// such as "x-min" stay the nodes on that face. Throws std::invalid_argument unless the mesh
// is tet4 and order is 1, 2 or 3.
Mesh raiseOrder(const Mesh& tet4, int order);

}  // namespace pbdlab
