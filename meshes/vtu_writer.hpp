#pragma once
// VTK unstructured grid (.vtu, XML; binary zlib-compressed by default, or ASCII) and ParaView
// collection (.pvd) output, for every element type:
// tet4 -> VTK_TETRA (10), tet10 -> VTK_QUADRATIC_TETRA (24), tet20 ->
// VTK_LAGRANGE_TETRAHEDRON (71), hex8 -> VTK_HEXAHEDRON (12), prism6 -> VTK_WEDGE (13),
// pyramid5 -> VTK_PYRAMID (14), tri3 -> VTK_TRIANGLE (5).
//
// pbdlab's node order is Gmsh's; VTK's differs for some cells. The permutation is derived,
// not typed in: each Gmsh reference node (ReferenceElement::nodeCoordinates) is mapped into
// VTK's reference cell (gmshToVtkReference) and matched with VTK's list of reference
// coordinates (vtkReferenceCoordinates, taken from VTK's cell definitions; see the .cpp).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/fem/mesh.hpp"

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

// How the data arrays are stored. Both binary forms are zlib-compressed in VTK's
// "vtkZLibDataCompressor" layout (blocks of 32 KiB, header_type UInt64), which ParaView/VTK and
// meshio read.
enum class VtuFormat {
  kBinary,  // default: one <AppendedData encoding="raw"> section (format="appended"); smallest
  kBase64,  // each array inline, base64 (format="binary"): the file is plain XML text
  kAscii,   // each array inline as text (format="ascii"), 17 significant digits
};
// "binary", "base64", "ascii" (the scene's output.vtu_format).
const char* vtuFormatName(VtuFormat format);
// The format of a name vtuFormatName gives; throws std::invalid_argument for any other.
VtuFormat vtuFormatFromName(const std::string& name);

// Writes the mesh and the state x (flat, 3 per node) for ParaView. The displacement convention
// (docs/meshes.md, "Output: .vtu and .pvd"): the points are the REST (reference) positions X,
// and the point array "displacement" (the active vectors) is x - X, so ParaView's "Warp By
// Vector" with scale factor 1 shows the deformed shape x; coloring by "displacement" shows its
// magnitude. Per-node fields (the name "displacement" is reserved) and per-element fields
// (e.g. energy density) are added as point and cell data. Writes to a temporary file in the
// same folder and renames it, so no half-written file is ever left behind. Throws
// std::invalid_argument for bad sizes or names, std::runtime_error naming the path on a
// write failure.
void writeVtu(const std::string& path, const Mesh& mesh, const Positions& x,
              const std::vector<VtuField>& point_fields = {},
              const std::vector<VtuField>& cell_fields = {},
              VtuFormat format = VtuFormat::kBinary);

// The same for several element blocks sharing one node numbering and the same rest positions
// (Problem::elementBlocks(): bodies of different element types): one file, one set of points,
// the cells of every block in block order, each with its own VTK cell type (an unstructured
// grid holds cells of mixed types). Cell fields have one value per cell of every block, in that
// order. One block writes exactly what writeVtu(path, mesh, ...) writes. Throws
// std::invalid_argument if the blocks do not share their nodes.
void writeVtu(const std::string& path, const std::vector<std::shared_ptr<const Mesh>>& blocks, const Positions& x,
              const std::vector<VtuField>& point_fields = {},
              const std::vector<VtuField>& cell_fields = {},
              VtuFormat format = VtuFormat::kBinary);

// One dataset of a ParaView collection: its time and its file, relative to the .pvd's folder.
struct PvdEntry {
  double time = 0.0;
  std::string file;
};
// Writes a ParaView data collection (.pvd) listing the files with their times, so ParaView
// opens them as one time series. Written atomically like writeVtu.
void writePvd(const std::string& path, const std::vector<PvdEntry>& entries);

}  // namespace pbdlab
