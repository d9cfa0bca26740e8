#pragma once
// Structured boxes through the Gmsh SDK: a transfinite hexahedral grid of nx x ny x nz cells,
// each cell split into tetrahedra. The meshes issue adds the other families.
#include <array>
#include <string>

#include "core/mesh.hpp"

namespace pbdlab {

enum class BoxTetSplit {
  kFive,      // 5 tets per cell, the split mirrored from cell to cell so faces match
              // ("Res N box" of PBNG/PXPBD: Res 16 = 4,096 vertices / 16,875 tets)
  kGmshSix,   // Gmsh's own transfinite split into 6 tets of one orientation
};
BoxTetSplit parseBoxTetSplit(const std::string& name);  // "five", "gmsh_six"; throws invalid_argument
std::string boxTetSplitName(BoxTetSplit split);

struct BoxMeshRecipe {
  Vec3 origin = Vec3::Zero();
  Vec3 size = Vec3::Ones();
  std::array<int, 3> cells{1, 1, 1};  // cells per axis (>= 1); nodes per axis = cells + 1
  BoxTetSplit split = BoxTetSplit::kFive;
  std::string describe() const;  // e.g. "box 4x1x1 m, 8x2x2 cells, five-tet split"
};

// The PBNG/PXPBD "Res N box": unit cube, N nodes per side, five-tet split.
BoxMeshRecipe resBox(int nodes_per_side);

// Generates the mesh with node sets "x-min", "x-max", "y-min", "y-max", "z-min", "z-max" and
// "all". Deterministic for the same recipe. Throws std::invalid_argument for a bad recipe.
Mesh makeBoxMesh(const BoxMeshRecipe& recipe);

}  // namespace pbdlab
