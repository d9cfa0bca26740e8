#include "meshes/shape_meshes.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/support/short_number.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "meshes/gmsh_module.hpp"
#include "meshes/node_sets.hpp"

namespace pbdlab {

namespace {

constexpr double kShapePi = 3.14159265358979323846;
constexpr double kMaxShapeTets = 5e7;

std::string shapeVecText(const Vec3& v) {
  return "(" + shortNumber(v.x()) + ", " + shortNumber(v.y()) + ", " + shortNumber(v.z()) + ")";
}

void checkShapeSize(const std::string& source, double volume, double target_size, double largest, const char* largest_name) {
  if (!std::isfinite(target_size) || !(target_size > 0.0))
    throw std::invalid_argument(source + ": target_size must be positive and finite");
  if (!(target_size <= largest))
    throw std::invalid_argument(source + ": target_size must be at most the " + largest_name);
  if (estimatedShapeTets(volume, target_size) > kMaxShapeTets)
    throw std::invalid_argument(source + ": target_size would make more than 5e7 tetrahedra");
}

// Gmsh's mesh about the origin (axis z) turned to `axis` and moved to `center`. A cyclic
// permutation of the coordinates (z -> axis) is a rotation: exact, orientation kept.
void placeShape(Mesh& mesh, int axis, const Vec3& center) {
  // Axis z: identity; x: (x, y, z) -> (z, x, y); y: (x, y, z) -> (y, z, x).
  const int from[3][3] = {{2, 0, 1}, {1, 2, 0}, {0, 1, 2}};
  MatX3 placed(mesh.numNodes(), 3);
  for (int n = 0; n < mesh.numNodes(); ++n)
    for (int d = 0; d < 3; ++d) placed(n, d) = mesh.rest_positions(n, from[axis][d]) + center[d];
  mesh.rest_positions = std::move(placed);
}

void finishShape(Mesh& mesh, const std::string& source) {
  mesh.source = source;
  orientTetsPositively(mesh);
  addFaceNodeSets(mesh);
  setSurfaceNodeSet(mesh);
}

}  // namespace

std::string SphereRecipe::describe() const {
  return "sphere of radius " + shortNumber(radius) + " about " + shapeVecText(center) + ", target size " +
         shortNumber(target_size);
}

std::string TorusRecipe::describe() const {
  static const char* const kAxis[3] = {"x", "y", "z"};
  return "torus of radii " + shortNumber(major_radius) + " and " + shortNumber(minor_radius) + " about " +
         shapeVecText(center) + ", axis " + kAxis[axis < 0 || axis > 2 ? 2 : axis] + ", target size " + shortNumber(target_size);
}

double sphereVolume(double radius) { return 4.0 / 3.0 * kShapePi * radius * radius * radius; }
double torusVolume(double major_radius, double minor_radius) {
  return 2.0 * kShapePi * kShapePi * major_radius * minor_radius * minor_radius;
}
double estimatedShapeTets(double volume, double target_size) {
  return volume / (std::pow(target_size, 3) / (6.0 * std::sqrt(2.0)));
}

Mesh makeSphereMesh(const SphereRecipe& recipe) {
  const std::string source = recipe.describe();
  if (!recipe.center.allFinite()) throw std::invalid_argument(source + ": center must be finite");
  if (!std::isfinite(recipe.radius) || !(recipe.radius > 0.0))
    throw std::invalid_argument(source + ": radius must be positive and finite");
  checkShapeSize(source, sphereVolume(recipe.radius), recipe.target_size, recipe.radius, "radius");
  Mesh mesh = gmshModule().sphere(recipe.radius, recipe.target_size, source);
  placeShape(mesh, 2, recipe.center);
  finishShape(mesh, source);
  return mesh;
}

Mesh makeTorusMesh(const TorusRecipe& recipe) {
  const std::string source = recipe.describe();
  if (!recipe.center.allFinite()) throw std::invalid_argument(source + ": center must be finite");
  if (recipe.axis < 0 || recipe.axis > 2) throw std::invalid_argument(source + ": axis must be 0, 1 or 2");
  if (!std::isfinite(recipe.minor_radius) || !(recipe.minor_radius > 0.0))
    throw std::invalid_argument(source + ": minor_radius must be positive and finite");
  if (!std::isfinite(recipe.major_radius) || !(recipe.major_radius > recipe.minor_radius))
    throw std::invalid_argument(source + ": major_radius must be finite and larger than minor_radius");
  checkShapeSize(source, torusVolume(recipe.major_radius, recipe.minor_radius), recipe.target_size, recipe.minor_radius,
            "minor radius");
  Mesh mesh = gmshModule().torus(recipe.major_radius, recipe.minor_radius, recipe.target_size, source);
  placeShape(mesh, recipe.axis, recipe.center);
  finishShape(mesh, source);
  return mesh;
}

}  // namespace pbdlab
