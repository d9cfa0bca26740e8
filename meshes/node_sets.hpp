#pragma once
// The node sets every generated or imported mesh gets, computed from geometry.
#include "core/fem/mesh.hpp"

namespace pbdlab {

// Adds "x-min", "x-max", "y-min", "y-max", "z-min", "z-max" (the nodes on the faces of the
// bounding box, core's addBoundingBoxNodeSets) and "all". An axis along which the mesh is
// flat (a rectangle in z = 0) gets no sets: every node would be in both.
void addFaceNodeSets(Mesh& mesh);

// Sets "surface": the nodes on the boundary of a tetrahedral mesh (tet4, tet10 or tet20), i.e.
// on the element faces that belong to one element only (faces matched by their corner nodes; a
// face's edge and face nodes found from the element's reference coordinates). Replaces a set
// of that name. Throws std::invalid_argument for other element types.
void setSurfaceNodeSet(Mesh& mesh);

}  // namespace pbdlab
