#pragma once
// The element types of pbdlab. Node order and reference element follow Gmsh (so meshes
// read from Gmsh need no reordering; the .vtu writer maps to VTK's order):
//   tet:     (0,0,0) (1,0,0) (0,1,0) (0,0,1)
//   hex:     [-1,1]^3
//   prism:   triangle (0,0) (1,0) (0,1) in (u,v) times w in [-1,1]
//   pyramid: square [-1,1]^2 at w = 0, apex (0,0,1)
//   tri:     (0,0) (1,0) (0,1)
#include <string>
#include <vector>

namespace pbdlab {

enum class ElementType {
  kTet4,      // P1 tetrahedron        (Gmsh type 4)
  kTet10,     // P2 tetrahedron        (Gmsh type 11)
  kTet20,     // P3 tetrahedron        (Gmsh type 29)
  kHex8,      // Q1 hexahedron         (Gmsh type 5)
  kPrism6,    // linear wedge          (Gmsh type 6)
  kPyramid5,  // linear pyramid        (Gmsh type 7)
  kTri3,      // P1 triangle, 2D or a surface in 3D (Gmsh type 2)
};

int nodesPerElement(ElementType type);
// 3 for solids, 2 for triangles.
int elementDimension(ElementType type);
// Polynomial order of the element's interpolation (1, 2 or 3).
int elementOrder(ElementType type);
// Number of corner (vertex) nodes: the first nodes of every element.
int cornerNodesPerElement(ElementType type);
// "tet4", "tet10", "tet20", "hex8", "prism6", "pyramid5", "tri3".
std::string elementTypeName(ElementType type);
ElementType parseElementType(const std::string& name);  // throws std::invalid_argument
std::vector<ElementType> allElementTypes();
int gmshElementType(ElementType type);
// Throws std::invalid_argument naming the code for a Gmsh type pbdlab does not support.
ElementType fromGmshElementType(int gmsh_type);

}  // namespace pbdlab
