#pragma once
// Shape functions and quadrature on the reference element of each type (node order and
// reference coordinates of core/fem/element_type.hpp, i.e. Gmsh's). Used once per mesh to
// precompute, at every quadrature point of every element, J(X, r)^-1 dN/dr and
// V_q = w_q |det J(X, r_q)| (high-order paper, Alg. 3); never in a hot loop.
//
// Bases (all checked against Gmsh's getBasisFunctions in tests/meshes/test_gmsh_basis.cpp):
//   tet4/tet10/tet20, tri3: Lagrange on the equispaced simplex lattice (Silvester's product
//     form in barycentric coordinates); edge nodes follow cornerEdges() (Gmsh's edge order
//     and direction), the tet20 face nodes are the centroids of cornerFaces() in order.
//   hex8: trilinear. prism6: linear triangle (u, v) times linear in w.
//   pyramid5: Gmsh's rational (Bedrosian) basis, see reference_element.cpp.
#include <Eigen/Core>
#include <array>
#include <vector>

#include "core/fem/element_type.hpp"
#include "core/support/types.hpp"

namespace pbdlab {

struct QuadratureRule {
  std::vector<Vec3> points;     // reference coordinates (z = 0 for triangles)
  std::vector<double> weights;  // sum = reference element's measure
  // Exact for polynomials of total degree <= degree (at least the degree asked for; a
  // collapsed or tensor rule of n points per direction reaches 2n - 1). Pyramid: see
  // ReferenceElement::quadrature.
  int degree = 0;
  int size() const { return static_cast<int>(weights.size()); }
};

// Gauss-Jacobi rule of n >= 1 points on [-1, 1] for the weight (1 - x)^alpha, alpha >= 0:
// integral_{-1}^{1} (1 - x)^alpha p(x) dx = sum_i weights[i] p(points[i]) for every p of
// degree <= 2n - 1. alpha = 0 is Gauss-Legendre. Computed by Newton's method on the
// orthogonal polynomial (three-term recurrence), nodes ascending. The collapsed (Duffy /
// Stroud conical product) simplex and pyramid rules are built from these.
struct GaussRule1D {
  std::vector<double> points;
  std::vector<double> weights;
};
GaussRule1D gaussJacobi(int n, double alpha);

class ReferenceElement {
 public:
  // The element of `type` (a static instance per type).
  static const ReferenceElement& of(ElementType type);

  ElementType type() const { return type_; }
  int numNodes() const { return nodesPerElement(type_); }
  int numCorners() const { return cornerNodesPerElement(type_); }
  int dimension() const { return elementDimension(type_); }
  // Reference coordinates of the nodes, in node order.
  const std::vector<Vec3>& nodeCoordinates() const { return nodes_; }
  // Measure of the reference element (tet 1/6, hex 8, prism 1, pyramid 4/3, tri 1/2).
  double referenceMeasure() const;
  // The edges between corner nodes, in Gmsh's edge order and direction (the k-th group of
  // edge nodes of a tet10/tet20 lies on edge k, ordered from its first to its second corner).
  const std::vector<std::array<int, 2>>& cornerEdges() const { return edges_; }
  // The faces as cycles of corner nodes, ordered so that (p1 - p0) x (p2 - p0) points out of
  // the element, in Gmsh's face order (the tet20 face nodes follow it; test_gmsh_basis checks
  // the order against the face nodes of Gmsh's tet20, hex27, prism18 and pyramid30). A
  // triangle has one face, itself.
  const std::vector<std::vector<int>>& cornerFaces() const { return faces_; }

  // N_i(r), i = 0 .. numNodes-1.
  Eigen::VectorXd shapeValues(const Vec3& r) const;
  // dN_i/dr_k as a numNodes x 3 matrix (column 2 is zero for triangles).
  Eigen::MatrixXd shapeGradients(const Vec3& r) const;

  // A rule exact for polynomials of total degree <= `degree` on this element (for the
  // pyramid: for the functions of its rational basis' span up to that degree), with
  // positive weights. degree >= 1 (throws std::invalid_argument otherwise).
  //   tet:  degree 1: 1 point (centroid); degree 2: 4 points (symmetric rule); degree 3:
  //         collapsed Gauss-Jacobi, 8 points; degree 4 and 5: the symmetric 14-point rule of
  //         degree 5 (Walkington 2000; interior points); degree >= 6: collapsed Gauss-Jacobi,
  //         n^3 points with n = ceil((degree + 1) / 2).
  //   tri:  degree 1: 1 point; degree 2: 3 points; degree >= 3: collapsed, n^2 points.
  //   hex:  tensor Gauss-Legendre, n = ceil((degree + 1) / 2) points per axis: exact for
  //         every polynomial of degree <= 2n - 1 in each variable separately (Q_{2n-1}).
  //   prism: triangle rule of `degree` times n-point Gauss-Legendre in w.
  //   pyramid: collapsed (u, v, w) = (a (1 - c), b (1 - c), c), Gauss-Legendre in a and b,
  //         Gauss-Jacobi (1 - c)^2 in c, n points each: exact for every g(a, b, c) of degree
  //         <= 2n - 1 in each of a, b, c. That space holds the polynomials of total degree
  //         <= 2n - 1 in (u, v, w) and every product of up to 2n - 1 pyramid basis functions
  //         or their r-gradients (each of degree <= 1 in a, b and c), which is what "exact"
  //         means for the rational basis.
  QuadratureRule quadrature(int degree) const;
  // The degree that integrates the stiffness (dN_i/dX . dN_j/dX) of an undistorted
  // (affine-mapped, constant J) element exactly. Simplices: 2 (order - 1), at least 1.
  // hex8, prism6, pyramid5: 2 (their gradients are not constant; see the implementation).
  int stiffnessQuadratureDegree() const;
  // The degree that integrates the consistent mass rho N_i N_j |det J| exactly: 2 * order for
  // affine simplices; 4 for hex8/prism6/pyramid5, which covers their non-affine geometries
  // (det J is then not constant; see the implementation).
  int massQuadratureDegree() const;

 private:
  explicit ReferenceElement(ElementType type);
  ElementType type_;
  std::vector<Vec3> nodes_;
  std::vector<std::array<int, 2>> edges_;
  std::vector<std::vector<int>> faces_;
  // Simplices: each node's barycentric lattice index (order * lambda_k at the node), k over
  // the dimension + 1 barycentric coordinates.
  std::vector<std::array<int, 4>> lattice_;
};

}  // namespace pbdlab
