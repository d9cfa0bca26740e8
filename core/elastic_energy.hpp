#pragma once
// The discrete elastic potential PE(x) = sum_e sum_q V_q Psi(F_q(x)) (PBNG eq. 15 for P1;
// high-order paper eqs. 10-13 for any element) with its gradient and Hessian. One stateless
// per-element kernel serves the assembled sums here, the Newton reference and every
// position-based solver, so all of them evaluate literally the same energy (STYLE.md 2).
//
// Per element and quadrature point, dN/dX = dN/dr J(X, r)^-1 (an N x 3 matrix) and
// V_q = w_q |det J(X, r_q)| are precomputed (high-order paper Alg. 3); then
// F_q = sum_a x_a (dN_a/dX)^T. A P1 tetrahedron is the same path with one point.
#include <memory>
#include <type_traits>
#include <vector>

#include "core/coloring.hpp"
#include "core/material.hpp"
#include "core/mesh.hpp"

namespace pbdlab {

enum class HessianKind {
  kTrue,       // dP/dF as it is (may be indefinite)
  kProjected,  // dP/dF with negative eigenvalues clamped to zero, so V B^T (dP/dF) B >= 0
               // (core/tangent_projection.hpp)
};

// Fixed-size element vectors and matrices for an element of N nodes.
template <int N>
using ElementVector = Eigen::Matrix<double, 3 * N, 1>;
template <int N>
using ElementMatrix = Eigen::Matrix<double, 3 * N, 3 * N>;
template <int N>
using ShapeGradients = Eigen::Matrix<double, N, 3, Eigen::RowMajor>;  // row a = (dN_a/dX)^T

// Calls f(std::integral_constant<int, N>{}) with N = nodesPerElement(type), so kernels can be
// written once with fixed-size types (solid element types only).
template <class Function>
decltype(auto) withNodeCount(ElementType type, Function&& f) {
  switch (nodesPerElement(type)) {
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 6: return f(std::integral_constant<int, 6>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 10: return f(std::integral_constant<int, 10>{});
    case 20: return f(std::integral_constant<int, 20>{});
  }
  throw std::invalid_argument("withNodeCount: unsupported element type " + elementTypeName(type));
}

class ElasticEnergy {
 public:
  // quadrature_degree <= 0: the element type's stiffness degree (ReferenceElement). Throws
  // InputError for an inverted or degenerate rest element, std::invalid_argument for a
  // non-solid element type (tri3).
  ElasticEnergy(const Mesh& mesh, std::shared_ptr<const Material> material, int quadrature_degree = 0);

  int numElements() const { return num_elements_; }
  int nodesPerElement() const { return nodes_per_element_; }
  int quadraturePointsPerElement() const { return points_per_element_; }
  int quadratureDegree() const { return quadrature_degree_; }
  ElementType elementType() const { return mesh_->element_type; }
  const Material& material() const { return *material_; }
  const Mesh& mesh() const { return *mesh_; }
  const Coloring& elementColoring() const { return coloring_; }

  // The element's node indices (nodesPerElement() of them).
  const int* elementNodes(int e) const { return mesh_->elements.data() + static_cast<size_t>(e) * nodes_per_element_; }
  double restVolume(int e) const { return volumes_[e]; }
  // dN/dX at quadrature point q of element e (N x 3, row-major) and its weight V_q.
  template <int N>
  Eigen::Map<const ShapeGradients<N>> shapeGradients(int e, int q) const {
    return Eigen::Map<const ShapeGradients<N>>(gradients_.data() + pointIndex(e, q) * N * 3);
  }
  double quadratureVolume(int e, int q) const { return point_volumes_[pointIndex(e, q)]; }

  Mat3 deformationGradient(int e, int q, const Positions& x) const;

  // The per-element kernel: energy sum_q V_q Psi, gradient (3N, nodal order
  // [x0 y0 z0 x1 ...]) and Hessian (3N x 3N). Any output pointer may be null.
  template <int N>
  void elementTerms(int e, const Positions& x, double* energy, ElementVector<N>* gradient,
                    ElementMatrix<N>* hessian, HessianKind kind = HessianKind::kTrue) const;
  // The same with run-time sizes (tests, set-up code; allocates).
  void elementTerms(int e, const Positions& x, double* energy, VecX* gradient, Eigen::MatrixXd* hessian,
                    HessianKind kind = HessianKind::kTrue) const;

  // Assembled sums over all elements (OpenMP over element colors).
  double energy(const Positions& x) const;
  // g += dPE/dx
  void addGradient(const Positions& x, VecX& g) const;

 private:
  size_t pointIndex(int e, int q) const { return static_cast<size_t>(e) * points_per_element_ + q; }
  Mat9 tangent(const Mat3& F, HessianKind kind) const;

  std::shared_ptr<const Mesh> mesh_;
  std::shared_ptr<const Material> material_;
  int num_elements_ = 0;
  int nodes_per_element_ = 0;
  int points_per_element_ = 0;
  int quadrature_degree_ = 0;
  std::vector<double> gradients_;      // per (element, point): N x 3 row-major
  std::vector<double> point_volumes_;  // per (element, point): V_q
  std::vector<double> volumes_;        // per element: sum_q V_q
  Coloring coloring_;
};

// ---------------------------------------------------------------------------------------

template <int N>
void ElasticEnergy::elementTerms(int e, const Positions& x, double* energy, ElementVector<N>* gradient,
                                 ElementMatrix<N>* hessian, HessianKind kind) const {
  const int* nodes = elementNodes(e);
  Eigen::Matrix<double, 3, N> xe;
  for (int a = 0; a < N; ++a) xe.col(a) = x.segment<3>(3 * nodes[a]);
  if (energy) *energy = 0.0;
  if (gradient) gradient->setZero();
  if (hessian) hessian->setZero();
  for (int q = 0; q < points_per_element_; ++q) {
    const Eigen::Matrix<double, N, 3> G = shapeGradients<N>(e, q);  // a local copy: aligned, column-major
    const double V = quadratureVolume(e, q);
    const Mat3 F = xe * G;
    if (energy) *energy += V * material_->energyDensity(F);
    if (gradient) {
      // dE/dx_a = V P dN_a/dX: the 3 x N matrix V P G^T, column-major = nodal order.
      const Eigen::Matrix<double, 3, N> g = V * material_->firstPiola(F) * G.transpose();
      *gradient += Eigen::Map<const ElementVector<N>>(g.data());
    }
    if (hessian) {
      // V B^T D B without forming B: with D_ik(j, l) = D(i + 3 j, k + 3 l), the entries are
      // H(i + 3 a, k + 3 b) = V G.row(a) D_ik G.row(b)^T (a third of the dense flops).
      const Mat9 D = tangent(F, kind);
      for (int k = 0; k < 3; ++k)
        for (int i = 0; i < 3; ++i) {
          Mat3 D_ik;
          for (int l = 0; l < 3; ++l)
            for (int j = 0; j < 3; ++j) D_ik(j, l) = D(i + 3 * j, k + 3 * l);
          const Eigen::Matrix<double, N, N> T = V * (G * D_ik * G.transpose());
          for (int b = 0; b < N; ++b)
            for (int a = 0; a < N; ++a) (*hessian)(i + 3 * a, k + 3 * b) += T(a, b);
        }
    }
  }
}

}  // namespace pbdlab
