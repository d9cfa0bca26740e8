#pragma once
// The mesh every solver shares: rest positions, element connectivity of one element type
// (any of core/fem/element_type.hpp, node order Gmsh's), and named node sets. Geometry (volumes,
// validity, masses, quality) goes through the isoparametric map x(r) = sum_i X_i N_i(r) of
// core/fem/reference_element.hpp, J(X, r) = sum_i X_i dN_i/dr^T (high-order paper, eq. 9).
#include <map>
#include <string>
#include <vector>

#include "core/fem/element_type.hpp"
#include "core/fem/reference_element.hpp"
#include "core/support/types.hpp"

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

// True for a tri3 mesh whose nodes all have z == 0: a 2D mesh, whose triangles have a sign
// (det J of the 2x2 map). Other tri3 meshes are surfaces in 3D (det J = area element >= 0).
bool isTwoDimensional(const Mesh& mesh);

// Rest positions of the nodes of element e, one row per node in element order.
using ElementNodes = Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor, 20, 3>;
ElementNodes elementRestPositions(const Mesh& mesh, int e);

// Whether restVolumes and lumpedNodeMasses check the mesh as validateMesh (rel_tol 1e-10) does,
// or trust a caller that has already run validateMesh on this very mesh. kTrusted evaluates
// det J at the mass quadrature points only (they give the volume), skipping the index and
// finiteness checks and det J at the nodes and stiffness points; the results are the same for
// a valid mesh, and undefined (no InputError) for an invalid one.
enum class MeshCheck { kValidate, kTrusted };

// Rest volume (area for tri3) of every element: the sum over the points of the element's mass
// quadrature rule of w_q |det J(X, r_q)|. That rule integrates det J exactly for straight
// simplices, curved tet10/tet20 and every hex8/prism6/pyramid5 geometry, so the volume is
// exact. Throws InputError like validateMesh (rel_tol 1e-10) if an element is inverted or
// degenerate (with MeshCheck::kValidate).
std::vector<double> restVolumes(const Mesh& mesh, MeshCheck check = MeshCheck::kValidate);

// Checks the mesh, for every element type: connectivity columns = nodesPerElement(type), node
// indices in range, finite coordinates, and every rest element valid: det J(X, r) > rel_tol *
// h^3 (h = the element's longest corner edge; h^2 for tri3) at every node's reference
// coordinate and every point of the stiffness and mass quadrature rules (on a straight
// tet4/tri3 J is constant, one evaluation covers them all). det J < -threshold is reported as
// "inverted", the rest as "degenerate". Throws InputError(mesh.source, "element <i>", ...)
// with the type, the det J found, where, and the threshold, for the first bad element.
void validateMesh(const Mesh& mesh, double rel_tol = 1e-10);

// Adds the node sets "x-min", "x-max", "y-min", ... of the nodes on the faces of the bounding
// box (within tol times the box diagonal).
void addBoundingBoxNodeSets(Mesh& mesh, double tol = 1e-9);

// How an element's mass rho_e V_e is spread over its nodes. Both give strictly positive
// masses for every element type. Row-sum lumping of the consistent mass does not: on a P2 tet
// the vertex rows sum to -rho V / 20 (tests/core/test_mesh.cpp shows it).
enum class MassLumping {
  // PXPBD eq. 50: m_i = sum over the elements e containing i of rho_e V_e / n_e, with n_e the
  // number of nodes of e (corner or not).
  kEqualShare,
  // Hinton-Rock-Zienkiewicz: the diagonal of the consistent mass, Mcons_ii = integral of
  // rho N_i^2 (mass quadrature), scaled to the element mass: m_i = rho V_e Mcons_ii /
  // sum_j Mcons_jj.
  kHrz,
};
MassLumping parseMassLumping(const std::string& name);  // "equal_share", "hrz"; throws std::invalid_argument
std::string massLumpingName(MassLumping lumping);

// Lumped mass per node (sums to sum_e rho_e V_e). Throws std::invalid_argument if the number
// of densities is not the number of elements, InputError for an invalid mesh (with
// MeshCheck::kValidate).
VecX lumpedNodeMasses(const Mesh& mesh, const std::vector<double>& element_densities,
                      MassLumping lumping = MassLumping::kEqualShare, MeshCheck check = MeshCheck::kValidate);

struct MeshSummary {
  int nodes = 0;
  int elements = 0;
  ElementType element_type = ElementType::kTet4;
  // Elements per type name ("tet10" -> count). One type per mesh: a single entry (none for
  // an empty mesh).
  std::map<std::string, int> elements_per_type;
  double min_volume = 0.0;
  double max_volume = 0.0;
  double total_volume = 0.0;
  Vec3 bbox_min = Vec3::Zero();
  Vec3 bbox_max = Vec3::Zero();
  // Smallest dihedral angle between two faces meeting at a corner edge, in degrees, over all
  // elements: for tets the angles of the corner tetrahedron (the straight tet of its 4 corner
  // nodes; midside nodes are ignored); for hex8/prism6/pyramid5 the angle at every corner
  // edge between the two faces through it, each face represented by the corner next to the
  // edge (exact for planar faces; for warped faces the angle of the corner tet spanned by the
  // edge and those two neighbours, taken at both ends of the edge). tri3: the smallest
  // interior angle of the triangles.
  double min_dihedral_angle_deg = 0.0;
  // min over the elements of (min det J / max det J) over the element's nodes and stiffness
  // and mass quadrature points: 1 for affine elements, smaller for distorted ones, > 0 for a
  // valid mesh.
  double min_scaled_jacobian = 0.0;
};
// Throws InputError like validateMesh (rel_tol 1e-10) if a rest element is inverted or
// degenerate. There is no trusted variant: min_scaled_jacobian needs det J at every point the
// validation checks, so the check itself costs nothing extra here (the dihedral angles
// dominate).
MeshSummary summarize(const Mesh& mesh);

}  // namespace pbdlab
