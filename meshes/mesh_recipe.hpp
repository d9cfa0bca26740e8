#pragma once
// A mesh recipe: the JSON object that names a mesh ("mesh" in a scene file, or the argument
// of `pbdlab mesh`), its canonical form and hash, and the mesh it makes, through the cache.
// The format is documented in docs/meshes.md and docs/scene-format.md:
//
//   {"type": "box", "family": "five_tet" | "biased" | "gmsh_six" | "hex" | "prism" | "pyramid",
//    "size": [x, y, z], "origin": [x, y, z], "cells": [nx, ny, nz], "order": 1 | 2 | 3}
//   {"type": "box", "family": "unstructured", "size", "origin", "target_size": h, "order"}
//   {"type": "res_box", "nodes_per_side": N, "order"}
//   {"type": "rectangle", "embedding": "2d" | "3d_surface", "size": [x, y], "origin",
//    "cells": [nx, ny] | "target_size": h, "diagonals", "plane"}
//   {"type": "quadrilateral", "corners": [[x, y] x 4, counter-clockwise], "cells": [n01, n12], "diagonals"}
//   {"type": "polygon", "points": [[x, y] x >= 3], "holes": [[[x, y] x >= 3], ...], "target_size": h}
//   {"type": "star", "center": [x, y], "points": n, "outer_radius": R, "inner_radius": r, "target_size": h}
//   {"type": "msh", "file": "path", "order"}
//   {"type": "stl", "file": "path", "target_size": h, "feature_angle": deg, "order"}
//   {"type": "bunny_surface", "subdivisions": s}
//   {"type": "sphere", "center": [x, y, z], "radius": r, "target_size": h, "order"}
//   {"type": "torus", "center": [x, y, z], "major_radius": R, "minor_radius": r,
//    "axis": "x" | "y" | "z", "target_size": h, "order"}
//
// File paths are relative to the folder of the file the recipe is in.
#include <nlohmann/json.hpp>
#include <string>

#include "core/fem/mesh.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "meshes/mesh_cache.hpp"
#include "meshes/polygon_mesh.hpp"
#include "meshes/quadrilateral_mesh.hpp"
#include "meshes/shape_meshes.hpp"

namespace pbdlab {

struct MeshRecipe {
  enum class Kind { kBox, kResBox, kRectangle, kQuadrilateral, kPolygon, kStar, kMsh, kStl, kBunnySurface, kSphere, kTorus };
  Kind kind = Kind::kBox;
  BoxMeshRecipe box;            // kBox; kResBox: the box it stands for
  int nodes_per_side = 0;       // kResBox
  RectangleRecipe rectangle;    // kRectangle
  QuadrilateralRecipe quadrilateral;  // kQuadrilateral
  PolygonRecipe polygon;        // kPolygon; kStar: the star's outline
  StarRecipe star;              // kStar
  SphereRecipe sphere;          // kSphere
  TorusRecipe torus;            // kTorus
  std::string file;             // kMsh, kStl: as written
  std::string path;             // kMsh, kStl: resolved against the recipe's folder
  double target_size = 0.0;     // kStl
  double feature_angle = 60.0;  // kStl, degrees
  int order = 1;                // every tet kind: 1, 2 or 3 (kBox: box.order)
  int subdivisions = 3;         // kBunnySurface
  nlohmann::json canonical;     // the recipe with every default filled in (sorted keys)
  std::string describe() const;
};

// Parses the recipe object `value` found at JSON pointer `at` of the file `source` (for error
// messages); relative paths are resolved against `base_dir` (the folder of `source`; "" for
// the working directory). Every key is checked: unknown keys, wrong types and values out of
// range throw InputError(source, at + "/<key>", message). Missing msh/stl files are reported
// at at + "/file".
MeshRecipe parseMeshRecipe(const nlohmann::json& value, const std::string& source, const std::string& at,
                           const std::string& base_dir);

// The cache key: the canonical recipe without file paths, plus the content hash of every
// input file, the cache format and the Gmsh version. Equal keys make identical meshes.
std::string meshRecipeKey(const MeshRecipe& recipe);

// The Gmsh SDK version pbdlab was built with (it meshes every recipe), e.g. "4.11.1".
std::string gmshVersion();

// Makes the mesh (no cache). Errors in input files throw InputError naming the file.
Mesh makeMesh(const MeshRecipe& recipe);

struct MeshLoad {
  Mesh mesh;
  enum class Cache { kOff, kHit, kStored, kNotStored } cache = Cache::kOff;
  std::string entry;  // the cache entry's path (when the cache is on)
  std::string note;   // why an entry was not stored
  double seconds = 0.0;
};
// The mesh of the recipe from the cache, or made and stored in it.
MeshLoad loadOrMakeMesh(const MeshRecipe& recipe, const MeshCache& cache);
std::string cacheOutcomeName(MeshLoad::Cache outcome);

}  // namespace pbdlab
