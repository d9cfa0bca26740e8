#pragma once
// The node sets every generated or imported mesh gets, computed from geometry.
#include "core/fem/mesh.hpp"

namespace pbdlab {

// Adds "x-min", "x-max", "y-min", "y-max", "z-min", "z-max" (the nodes on the faces of the
// bounding box, core's addBoundingBoxNodeSets) and "all". An axis along which the mesh is
// flat (a rectangle in z = 0) gets no sets: every node would be in both.
void addFaceNodeSets(Mesh& mesh);

}  // namespace pbdlab
