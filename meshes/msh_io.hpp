#pragma once
// Gmsh .msh files in and out, without the Gmsh library: Gmsh 4.8's own reader accepts an
// empty or missing file without an error and, after a read error, leaves the library
// refusing every later call ("I'm busy! Ask me that later..."), so pbdlab parses the files
// itself and names the line (or byte) and element of every error.
#include <string>

#include "core/fem/mesh.hpp"

namespace pbdlab {

// Reads MSH 4.1 (ASCII or binary) or MSH 2.2 (ASCII). The mesh's elements are those of the
// highest dimension in the file (2 or 3), which must be of one type pbdlab supports (tet4,
// tet10, tet20, hex8, prism6, pyramid5, tri3), in file order; the nodes are the ones they
// use, renumbered 0.. in ascending tag order. Lower-dimensional elements (boundary triangles,
// lines, points) only feed node sets. Node sets: "x-min" ... "z-max" (bounding box faces),
// "all", and one per physical group, named by $PhysicalNames (or "physical_<dim>_<tag>"),
// holding the nodes of the group's elements; a physical name replaces a bounding-box set of
// the same name. The mesh is validated (validateMesh).
//
// Throws InputError(path, field, message): field "(file)" if the file cannot be read, "line
// N" (ASCII) or "byte N" (binary) for malformed or truncated content, "element tag T" for an
// unsupported or mixed element type or a missing node, and "element i (Gmsh element tag T)"
// for an inverted or degenerate element.
Mesh readMsh(const std::string& path);
// The same for the file's bytes already in memory (`path` names them in errors): what readMsh
// does after reading the file. A count in the file (nodes, elements) is checked against the
// bytes that follow before anything is allocated for it.
Mesh readMshText(const std::string& text, const std::string& path);

// The mesh as MSH 4.1 ASCII text: one entity holding every node and element (node tag =
// index + 1, element tag = index + 1) in the physical group of the mesh's dimension named
// "all" (meshio and Gmsh keep only elements that belong to a physical group), and each other
// node set as a physical group of point elements (so readMsh gives the node sets back, "all"
// from the mesh's group). Coordinates round-trip exactly.
std::string mshText(const Mesh& mesh);
// Writes mshText atomically. Throws std::runtime_error naming the path.
void writeMsh(const std::string& path, const Mesh& mesh);

}  // namespace pbdlab
