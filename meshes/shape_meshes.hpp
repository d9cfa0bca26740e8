#pragma once
// Curved solids meshed by Gmsh's OpenCASCADE kernel: a ball (sphere) and a torus, tet4 filled by
// Gmsh's Delaunay mesher at a target size, the bodies of a "glass box" scene (PXPBD Fig. 1,
// issue 30; docs/meshes.md). Deterministic for the same recipe (Gmsh runs single-threaded).
//
// Both are meshed about the origin (the torus about the z axis, the only axis Gmsh 4.8's
// addTorus has), then turned to the recipe's axis by a cyclic permutation of the coordinates
// (exact, orientation-preserving) and moved to the centre: the same shape at another centre is
// the same mesh translated.
#include <string>

#include "core/fem/mesh.hpp"

namespace pbdlab {

struct SphereRecipe {
  Vec3 center = Vec3::Zero();
  double radius = 1.0;        // > 0
  double target_size = 0.0;   // Gmsh's maximum element size, in (0, radius]
  std::string describe() const;
};

struct TorusRecipe {
  Vec3 center = Vec3::Zero();
  double major_radius = 1.0;  // R: the centre of the tube's circle from the axis
  double minor_radius = 0.25; // r: the tube's radius, 0 < r < R
  int axis = 2;               // 0 x, 1 y, 2 z: the axis the torus turns about
  double target_size = 0.0;   // in (0, minor_radius]
  std::string describe() const;
};

// The volumes the meshes converge to (from below: the polyhedral surface lies inside the
// convex ball; O(h^2) for both): 4/3 pi r^3 and 2 pi^2 R r^2.
double sphereVolume(double radius);
double torusVolume(double major_radius, double minor_radius);
// About how many tetrahedra Gmsh makes: the volume over a regular tet of edge target_size.
double estimatedShapeTets(double volume, double target_size);

// Tet4, positively oriented, with the bounding-box node sets ("x-min" ... "z-max": the nodes
// at the extreme coordinates, few on a curved surface), "all" and "surface" (every boundary
// node). Throws std::invalid_argument for a bad recipe (the recipe parser checks first, naming
// the field), std::runtime_error if Gmsh fails.
Mesh makeSphereMesh(const SphereRecipe& recipe);
Mesh makeTorusMesh(const TorusRecipe& recipe);

}  // namespace pbdlab
