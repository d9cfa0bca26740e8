#pragma once
// The mesh every solver shares: rest positions, element connectivity of one element type,
// and named node sets. The meshes issue adds element types; P1 tetrahedra come first.
#include <map>
#include <string>
#include <vector>

#include "core/element_type.hpp"
#include "core/types.hpp"

namespace pbdlab {

using Connectivity = Eigen::Matrix<int, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct Mesh {
  MatX3 rest_positions;  // one row per node
  ElementType element_type = ElementType::kTet4;
  Connectivity elements;  // one row per element, nodesPerElement(element_type) columns
  std::map<std::string, std::vector<int>> node_sets;
  std::string source = "<mesh>";  // file name or recipe, used in error messages

  int numNodes() const { return static_cast<int>(rest_positions.rows()); }
  int numElements() const { return static_cast<int>(elements.rows()); }
  Vec3 restPosition(int node) const { return rest_positions.row(node).transpose(); }
  // Rest positions stacked as one vector [x0 y0 z0 x1 ...].
  Positions restPositionsFlat() const;
};

// Signed volume of the tetrahedron (a, b, c, d): positive when (b-a, c-a, d-a) is right-handed.
double signedTetVolume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);

// Rest volume of every element (throws InputError if one is inverted or degenerate).
std::vector<double> restVolumes(const Mesh& mesh);

// Checks the mesh: node indices in range, finite coordinates, and every rest element of
// positive volume above a relative threshold (volume > rel_tol * h^3 with h its longest edge).
// Throws InputError naming mesh.source and the first bad element.
void validateMesh(const Mesh& mesh, double rel_tol = 1e-10);

// Adds the node sets "x-min", "x-max", "y-min", ... of the nodes on the faces of the bounding
// box (within tol times the box diagonal).
void addBoundingBoxNodeSets(Mesh& mesh, double tol = 1e-9);

// Lumped mass per node: m_i = sum over elements containing i of rho_e V_e / n_e.
VecX lumpedNodeMasses(const Mesh& mesh, const std::vector<double>& element_densities);

struct MeshSummary {
  int nodes = 0;
  int elements = 0;
  double min_volume = 0.0;
  double max_volume = 0.0;
  double total_volume = 0.0;
  Vec3 bbox_min = Vec3::Zero();
  Vec3 bbox_max = Vec3::Zero();
};
MeshSummary summarize(const Mesh& mesh);

}  // namespace pbdlab
