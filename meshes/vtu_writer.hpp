#pragma once
// VTK unstructured grid (.vtu, XML, ASCII) output for ParaView, for every element type:
// tet4 -> VTK_TETRA (10), tet10 -> VTK_QUADRATIC_TETRA (24), tet20 ->
// VTK_LAGRANGE_TETRAHEDRON (71), hex8 -> VTK_HEXAHEDRON (12), prism6 -> VTK_WEDGE (13),
// pyramid5 -> VTK_PYRAMID (14), tri3 -> VTK_TRIANGLE (5).
//
// pbdlab's node order is Gmsh's; VTK's differs for some cells. The permutation is derived,
// not typed in: each Gmsh reference node (ReferenceElement::nodeCoordinates) is mapped into
// VTK's reference cell (gmshToVtkReference) and matched with VTK's list of reference
// coordinates (vtkReferenceCoordinates, taken from VTK's cell definitions; see the .cpp).
#include <string>
#include <utility>
#include <vector>

#include "core/mesh.hpp"

namespace pbdlab {

// The VTK cell type of an element type.
int vtkCellType(ElementType type);
// VTK's reference coordinates of the cell's nodes, in VTK's node order.
std::vector<Vec3> vtkReferenceCoordinates(ElementType type);
// The point of VTK's reference cell that corresponds to the point r of pbdlab's (Gmsh's)
// reference element (for the pyramid: its collapsed-cube parametrization, apex (0, 0, 1)).
Vec3 gmshToVtkReference(ElementType type, const Vec3& r);
// order[i] = the pbdlab node of an element written as VTK node i. Throws std::logic_error if
// the reference coordinates do not match one to one.
const std::vector<int>& vtkNodeOrder(ElementType type);

struct VtuField {
  std::string name;
  int components = 1;         // 1 (scalar) or 3 (vector)
  std::vector<double> values; // size = count * components
};

// Writes the mesh at deformed positions x (flat, 3 per node), with per-node fields (a
// "displacement" field x - X is always added) and per-element fields (e.g. energy density). Writes to a temporary
// file in the same folder and renames it, so no half-written file is ever left behind.
// Throws std::runtime_error naming the path on failure.
void writeVtu(const std::string& path, const Mesh& mesh, const Positions& x,
              const std::vector<VtuField>& point_fields = {},
              const std::vector<VtuField>& cell_fields = {});

}  // namespace pbdlab
