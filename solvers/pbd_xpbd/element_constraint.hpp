#pragma once
// One XPBD element constraint built from one term of a material split (core/materials/material.hpp):
//   C_k = sqrt(2 |sum_q V_q Psi~_k(F_q)| + 2 V_e eps),   compliance alpha_k = 1 / k_k,
//   grad C_k = sum_q V_q P~_k(F_q) : dF_q/dx / C_k,
// so that 1/2 C_k^2 / alpha_k = k_k V_e (Psi~_k + eps) and -grad C_k C_k / alpha_k is the
// term's elastic force, for either sign of Psi~_k (the README's force-consistent gradient of
// terms that can be negative). The same code path serves every element type (P1 has one
// quadrature point); PXPBD eq. 5's C1 = sqrt(|F - R|^2 + eps), a1 = 1/(2 mu V), is this
// constraint scaled by sqrt(2 V), and the XPBD update is invariant to a scale of C.
//
// A term with a signed_root r (Psi~ = r^2/2, material.hpp) gives the signed constraint
//   C_k = sign(sum_q V_q r_q) sqrt(2 |sum_q V_q Psi~_k(F_q)| + 2 V_e eps),
// the same C_k times +-1 with its gradient times the same sign: for one quadrature point and
// eps = 0 it is sqrt(V) r (Macklin and Mueller's C_H = det F - gamma), smooth through r = 0.
//
// eps (in units of Psi~): PXPBD's regularization of C near C = 0, where grad C has no limit
// (|F - R| -> 0 for the corotated stretch). It shifts the energy by a constant only: the
// fixed point of XPBD (h = 0, lambda = -C / alpha~) has -lambda grad C = the exact force.
#include <Eigen/Core>
#include <cmath>

#include "core/materials/material.hpp"
#include "core/terms/elastic_energy.hpp"

namespace pbdlab {

// The energy as ONE constraint (PXPBD §5.3, the "sqrt(Psi)" constraint, expected unstable):
// a one-term split wrapping Material::evaluate, stiffness 1, so C = sqrt(2 V Psi). The term
// keeps a pointer to `material`, which must outlive it.
MaterialSplit sqrtPsiSplit(const Material& material);

// The split named `name` of `material`: "sqrt_psi" or one of material.splitNames() (""
// is the material's default). Throws std::invalid_argument listing the valid names.
MaterialSplit constraintSplit(const Material& material, const std::string& name);

// Why the split `name` cannot make XPBD constraints of every material of `energy` (a name the
// material lacks, a term of negative stiffness), as a sentence of solver `solver`; "" when it
// can. The XPBD family's rejectionReason (mesh and grid) asks it.
std::string splitRejection(const std::string& solver, const ElasticEnergy& energy, const std::string& name);

// dN/dX of one quadrature point as the kernel stores it: N x 3 column-major, each of the three
// columns contiguous over the element's nodes, so that the sums over the nodes in F and in
// the gradient below run on packed registers (P3: 20 nodes; the row-major ShapeGradients<N>
// of core/terms/elastic_energy.hpp would make them strided).
template <int N>
using NodeColumns = Eigen::Matrix<double, N, 3>;

// The quadrature data of one element, as the kernel reads it.
struct ElementQuadrature {
  const double* shape_gradients;  // per point: NodeColumns<N>, dN/dX column-major
  const double* point_volumes;    // per point: V_q
  int num_points = 0;
  double volume = 0.0;  // V_e = sum_q V_q
};

// C_k of an element at positions xe (3 x N, the element's nodes) and its gradient (3 x N).
// Returns C_k >= 0 (or signed, for a term with a signed_root); where C_k = 0 (eps = 0 and
// Psi~ = 0) the gradient is set to zero.
// `weighted_psi_out` (optional) receives sum_q V_q Psi~_k(F_q).
template <int N>
inline double elementConstraint(const ElementQuadrature& element, const Eigen::Matrix<double, 3, N>& xe,
                                const MaterialTerm& term, const MaterialPointData& data, double eps,
                                bool plane_strain, Eigen::Matrix<double, 3, N>& gradient,
                                double* weighted_psi_out = nullptr) {
  // Node-major copies (N x 3): F(i, j) = x_i . g_j and the gradient's columns are sums of the
  // columns of G, contiguous products that vectorize. The two copies cost O(N) per constraint
  // against O(N) per point for the products.
  const NodeColumns<N> X = xe.transpose();
  NodeColumns<N> gradient_columns = NodeColumns<N>::Zero();
  double weighted_psi = 0.0, weighted_root = 0.0;
  for (int q = 0; q < element.num_points; ++q) {
    const Eigen::Map<const NodeColumns<N>> G(element.shape_gradients + static_cast<size_t>(q) * N * 3);
    const double V = element.point_volumes[q];
    Mat3 F;
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) F(i, j) = X.col(i).dot(G.col(j));
    if (plane_strain) F(2, 2) = 1.0;
    double psi = 0.0;
    Mat3 P;
    term.evaluate(F, data, &psi, &P, nullptr);
    weighted_psi += V * psi;
    if (term.signed_root) weighted_root += V * term.signed_root(F, data);
    const Mat3 VP = V * P;
    // Row a of the gradient is (V P dN_a/dX)^T: gradient_columns += G (V P)^T.
    for (int i = 0; i < 3; ++i)
      gradient_columns.col(i) += G.col(0) * VP(i, 0) + G.col(1) * VP(i, 1) + G.col(2) * VP(i, 2);
  }
  if (weighted_psi_out) *weighted_psi_out = weighted_psi;
  const double magnitude = std::sqrt(2.0 * std::abs(weighted_psi) + 2.0 * element.volume * eps);
  const double C = weighted_root < 0.0 ? -magnitude : magnitude;
  if (magnitude > 0.0)
    gradient = gradient_columns.transpose() / C;
  else
    gradient.setZero();
  return C;
}

// The same for element e of `energy` at global positions x (tests, set-up; allocates).
// Also returns sum_q V_q Psi~ + V_e eps (the signed quantity whose gradient is C grad C).
double elementConstraintAt(const ElasticEnergy& energy, int e, const MaterialTerm& term, double eps,
                           const Positions& x, double t, VecX* gradient, double* signed_half_square = nullptr);

}  // namespace pbdlab
