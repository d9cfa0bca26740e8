#pragma once
// Shape functions and quadrature on the reference element of each type (node order and
// reference coordinates of core/element_type.hpp, i.e. Gmsh's). Used once per mesh to
// precompute, at every quadrature point of every element, J(X, r)^-1 dN/dr and
// V_q = w_q |det J(X, r_q)| (high-order paper, Alg. 3); never in a hot loop.
#include <Eigen/Core>
#include <vector>

#include "core/element_type.hpp"
#include "core/types.hpp"

namespace pbdlab {

struct QuadratureRule {
  std::vector<Vec3> points;     // reference coordinates (z = 0 for triangles)
  std::vector<double> weights;  // sum = reference element's measure
  int degree = 0;               // exact for polynomials of total degree <= degree
  int size() const { return static_cast<int>(weights.size()); }
};

class ReferenceElement {
 public:
  // The element of `type` (a static instance per type).
  static const ReferenceElement& of(ElementType type);

  ElementType type() const { return type_; }
  int numNodes() const { return nodesPerElement(type_); }
  int dimension() const { return elementDimension(type_); }
  // Reference coordinates of the nodes, in node order.
  const std::vector<Vec3>& nodeCoordinates() const { return nodes_; }
  // Measure of the reference element (tet 1/6, hex 8, prism 1, pyramid 4/3, tri 1/2).
  double referenceMeasure() const;

  // N_i(r), i = 0 .. numNodes-1.
  Eigen::VectorXd shapeValues(const Vec3& r) const;
  // dN_i/dr_k as a numNodes x 3 matrix (column 2 is zero for triangles).
  Eigen::MatrixXd shapeGradients(const Vec3& r) const;

  // A rule exact for polynomials of total degree <= `degree` on this element (for the
  // pyramid: for the functions of its rational basis' span up to that degree), with
  // positive weights. degree >= 1.
  QuadratureRule quadrature(int degree) const;
  // The degree that integrates the stiffness of an undistorted (affine-mapped) element
  // exactly: 2 (order - 1) for simplices; more for hex/prism/pyramid, whose gradients are
  // not polynomial of lower degree (see the implementation).
  int stiffnessQuadratureDegree() const;
  // Degree for the consistent mass: 2 * order (3 per variable for hex8 -> 6 total...).
  int massQuadratureDegree() const;

 private:
  explicit ReferenceElement(ElementType type);
  ElementType type_;
  std::vector<Vec3> nodes_;
};

}  // namespace pbdlab
