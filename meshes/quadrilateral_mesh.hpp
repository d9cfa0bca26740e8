#pragma once
// A structured triangle mesh of a general convex quadrilateral in the plane z = 0 (2D, plane
// strain), through Gmsh's transfinite meshing: e.g. Cook's membrane, the trapezoid (0, 0),
// (48, 44), (48, 60), (0, 44). The recipe (docs/meshes.md):
//   {"type": "quadrilateral", "corners": [[x0, y0], [x1, y1], [x2, y2], [x3, y3]],
//    "cells": [n01, n12], "diagonals": "alternate" | "left" | "right"}
// Corners counter-clockwise; `cells[0]` cells along the edges 0-1 and 3-2, `cells[1]` along
// 1-2 and 0-3 (the transfinite map puts the interior nodes on the bilinear grid between the
// edges' equally spaced nodes). Node sets: the four edges "edge-01", "edge-12", "edge-23",
// "edge-30" (the nodes on each side, corners included), the bounding box's "x-min", "x-max",
// "y-min", "y-max" and "all".
#include <array>
#include <string>

#include "core/fem/mesh.hpp"
#include "meshes/gmsh_meshes.hpp"

namespace pbdlab {

struct QuadrilateralRecipe {
  std::array<std::array<double, 2>, 4> corners{{{0.0, 0.0}, {1.0, 0.0}, {1.0, 1.0}, {0.0, 1.0}}};
  std::array<int, 2> cells{1, 1};
  RectangleRecipe::Diagonals diagonals = RectangleRecipe::Diagonals::kAlternate;
  std::string describe() const;
};

// The names of the edge node sets, edge k from corner k to corner k + 1.
std::array<std::string, 4> quadrilateralEdgeSetNames();

// Throws std::invalid_argument naming the problem for corners that are not finite, not
// counter-clockwise or not convex, or bad cell counts; std::runtime_error if Gmsh fails.
Mesh makeQuadrilateralMesh(const QuadrilateralRecipe& recipe);

}  // namespace pbdlab
