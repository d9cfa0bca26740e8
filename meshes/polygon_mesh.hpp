#pragma once
// 2D regions bounded by straight edges, meshed with unstructured triangles (tri3, z = 0) by
// Gmsh's Frontal-Delaunay mesher at a target size: a polygon with holes, and the star (a
// 2n-gon whose vertices alternate between two radii: a star, a gear, a treaded wheel), the
// shapes of the multi-layer paper's Fig. 9 (docs/meshes.md).
#include <array>
#include <string>
#include <vector>

#include "core/fem/mesh.hpp"

namespace pbdlab {

struct PolygonRecipe {
  using Point = std::array<double, 2>;
  std::vector<Point> outline;             // >= 3 vertices, either orientation, a simple polygon
  std::vector<std::vector<Point>> holes;  // each simple, inside the outline, apart from the others
  double target_size = 0.0;               // Gmsh's maximum element size (> 0)
  std::string describe() const;
};

struct StarRecipe {
  std::array<double, 2> center{0.0, 0.0};
  int points = 5;             // tips (>= 2): the outline has 2 * points vertices
  double outer_radius = 1.0;  // the tips' radius; the first tip points along +y
  double inner_radius = 0.5;  // the notches' radius, in (0, outer_radius]
  double target_size = 0.0;
  std::string describe() const;
  PolygonRecipe polygon() const;
};

// Throws std::invalid_argument saying what is wrong: a non-finite vertex, fewer than 3
// vertices, a zero-length edge, crossing or touching edges (within a loop or between loops), a
// hole outside the outline or inside another hole, a target size that is not positive.
void checkPolygon(const PolygonRecipe& recipe);

// Counter-clockwise triangles in z = 0 with the bounding-box node sets ("x-min", ..., "all"),
// "outline" (the nodes on the outline's edges) and "hole-<k>" (on hole k's, from 0).
Mesh makePolygonMesh(const PolygonRecipe& recipe);

}  // namespace pbdlab
