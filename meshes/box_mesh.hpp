#pragma once
// Boxes (and beams) of any size in every mesh family pbdlab uses. The structured families
// start from Gmsh's transfinite hexahedral grid of cells[0] x cells[1] x cells[2] cells; the
// unstructured family is Gmsh's 3D Delaunay mesher with a target element size. Tet families
// can be raised to P2 (tet10) or P3 (tet20) by meshes/raise_order.hpp. See docs/meshes.md.
#include <array>
#include <string>
#include <vector>

#include "core/fem/mesh.hpp"

namespace pbdlab {

enum class BoxFamily {
  kFiveTet,       // 5 tets per cell, mirrored from cell to cell so faces match ("unbiased";
                  // the "Res N box" of PBNG/PXPBD: Res 16 = 4,096 vertices / 16,875 tets)
  kBiased,        // 2 prisms per cell, 3 tets per prism, the same pattern in every cell: a
                  // preferred diagonal on every face (the high-order paper's "biased" mesh)
  kGmshSix,       // Gmsh's own transfinite split into 6 tets (the same tets as kBiased)
  kUnstructured,  // Gmsh's 3D mesher (Delaunay) with a target element size
  kHex,           // Q1 hexahedra: Gmsh transfinite + recombine
  kPrism,         // 2 prisms (wedges) per cell: the prisms the biased split cuts into tets
  kPyramid,       // 6 pyramids per cell, one on each face with a node added at the centre
};

// "five_tet" (also "five", the older name), "biased", "gmsh_six", "unstructured", "hex",
// "prism", "pyramid". Throws std::invalid_argument listing the names.
BoxFamily parseBoxFamily(const std::string& name);
std::string boxFamilyName(BoxFamily family);
std::vector<std::string> boxFamilyNames();
// Tetrahedral families (the ones an order 2 or 3 applies to).
bool isTetFamily(BoxFamily family);
// Element type of the family at order 1.
ElementType boxFamilyElementType(BoxFamily family);
// Elements per cell of a structured family (5, 6, 6, -, 1, 2, 6); 0 for kUnstructured.
int elementsPerCell(BoxFamily family);

struct BoxMeshRecipe {
  Vec3 origin = Vec3::Zero();
  Vec3 size = Vec3::Ones();
  std::array<int, 3> cells{1, 1, 1};  // structured families: cells per axis (>= 1)
  BoxFamily family = BoxFamily::kFiveTet;
  double target_size = 0.0;  // kUnstructured: Gmsh's maximum element size (> 0)
  int order = 1;             // tet families: 1 (tet4), 2 (tet10) or 3 (tet20)
  // e.g. "box 4x1x1 m, 8x2x2 cells, five-tet split"; used as Mesh::source.
  std::string describe() const;
};

// The PBNG/PXPBD "Res N box": unit cube, N nodes per side, five-tet split.
BoxMeshRecipe resBox(int nodes_per_side);

// Generates the mesh with node sets "x-min", "x-max", "y-min", "y-max", "z-min", "z-max" (the
// nodes on each face of the box) and "all". Deterministic for the same recipe: the same
// nodes, elements and node sets, bit for bit. Throws std::invalid_argument for a bad recipe
// and std::runtime_error if Gmsh fails.
Mesh makeBoxMesh(const BoxMeshRecipe& recipe);

}  // namespace pbdlab
