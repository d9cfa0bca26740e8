#include "meshes/quadrilateral_mesh.hpp"

#include <Eigen/Geometry>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "meshes/gmsh_module.hpp"
#include "meshes/node_sets.hpp"

namespace pbdlab {

std::array<std::string, 4> quadrilateralEdgeSetNames() { return {"edge-01", "edge-12", "edge-23", "edge-30"}; }

std::string QuadrilateralRecipe::describe() const {
  std::ostringstream out;
  out.precision(6);
  out << "quadrilateral";
  for (const auto& c : corners) out << " (" << c[0] << ", " << c[1] << ")";
  out << ", " << cells[0] << "x" << cells[1] << " cells, " << diagonalsName(diagonals) << " diagonals";
  return out.str();
}

Mesh makeQuadrilateralMesh(const QuadrilateralRecipe& recipe) {
  const std::string source = recipe.describe();
  Vec3 p[4];
  for (int k = 0; k < 4; ++k) {
    p[k] = Vec3(recipe.corners[k][0], recipe.corners[k][1], 0.0);
    if (!p[k].allFinite()) throw std::invalid_argument(source + ": corners must be finite");
  }
  double scale = 0.0;
  for (int k = 0; k < 4; ++k) scale = std::max(scale, (p[(k + 1) % 4] - p[k]).norm());
  for (int k = 0; k < 4; ++k) {
    const Vec3 a = p[(k + 1) % 4] - p[k], b = p[(k + 2) % 4] - p[(k + 1) % 4];
    if (!(a.cross(b).z() > 1e-12 * scale * scale))
      throw std::invalid_argument(source + ": the corners must be counter-clockwise and the quadrilateral convex (turn at corner " +
                                  std::to_string((k + 1) % 4) + " is not a left turn)");
  }
  if (recipe.cells[0] < 1 || recipe.cells[1] < 1) throw std::invalid_argument(source + ": cells per side must be >= 1");
  if (2.0 * recipe.cells[0] * recipe.cells[1] > 5e7) throw std::invalid_argument(source + ": too many cells");

  Mesh mesh = gmshModule().quadrilateral(recipe, source);
  orientTrianglesCounterClockwise(mesh);  // as every 2D mesh
  mesh.rest_positions.col(2).setZero();
  mesh.source = source;
  addFaceNodeSets(mesh);
  // The edges: nodes within round-off of the segment from corner k to corner k + 1.
  const std::array<std::string, 4> names = quadrilateralEdgeSetNames();
  for (int k = 0; k < 4; ++k) {
    const Vec3 a = p[k], d = p[(k + 1) % 4] - p[k];
    std::vector<int>& set = mesh.node_sets[names[static_cast<std::size_t>(k)]];
    for (int i = 0; i < mesh.numNodes(); ++i) {
      const Vec3 r = mesh.restPosition(i) - a;
      const double along = r.dot(d) / d.squaredNorm();
      if (std::abs(d.cross(r).z()) <= 1e-10 * scale * d.norm() && along >= -1e-10 && along <= 1.0 + 1e-10) set.push_back(i);
    }
  }
  return mesh;
}

}  // namespace pbdlab
