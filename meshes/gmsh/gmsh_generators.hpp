#pragma once
// The Gmsh module's generators: each opens a session and a model, meshes, and reads one element
// type back (the functions of the module's table, meshes/gmsh_module.hpp, which says what each
// returns). Recipes are checked by the callers in meshes/ before they come here.
#include <string>

#include "core/fem/mesh.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "meshes/polygon_mesh.hpp"
#include "meshes/quadrilateral_mesh.hpp"

namespace pbdlab::gmsh_generators {

Mesh unstructuredBox(const Vec3& origin, const Vec3& size, double target_size, const std::string& source);
Mesh transfiniteBox(const BoxMeshRecipe& recipe, ElementType type, const std::string& what);
Mesh rectangle(const RectangleRecipe& recipe, const std::string& source);
Mesh quadrilateral(const QuadrilateralRecipe& recipe, const std::string& source);
Mesh polygon(const PolygonRecipe& recipe, const std::string& source);
Mesh stlVolume(const std::string& gmsh_input, const std::string& path, double target_size, double feature_angle_deg,
               const std::string& source);
Mesh sphere(double radius, double target_size, const std::string& source);
Mesh torus(double major_radius, double minor_radius, double target_size, const std::string& source);

}  // namespace pbdlab::gmsh_generators
