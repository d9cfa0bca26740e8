#pragma once
// St. Venant-Kirchhoff in Voigt form as XPBD constraints of one linear element (multi-layer
// XPBD paper, Mercier-Aubin & Kry 2024, §3 eq. 5-8; docs/multi-layer-xpbd.md).
//
// Per element e (D = 3: tet4; D = 2: tri3 in plane strain), E = (F^T F - I)/2 and
//   C_e = [E11, E22, E33, 2E23, 2E13, 2E12]  (3D),   C_e = [E11, E22, 2E12]  (2D),
//   alpha_e = (V_e K)^-1,  K = [[l+2m, l, l], [l, l+2m, l], [l, l, l+2m]] (+) m I3
//                          (2D: [[l+2m, l], [l, l+2m]] (+) m),
// so that 1/2 C^T alpha^-1 C = V_e (mu |E|^2 + lambda/2 tr(E)^2) = V_e Psi_StVK exactly (eq. 7
// puts mu on the shear diagonal, which matches Psi only with the engineering shears 2E_ij).
//
// Plane strain: pbdlab's F = [F_2d 0; 0 1] (core/terms/elastic_energy.hpp) gives E_33 = E_13 =
// E_23 = 0, so the 2D constraints are the 3D ones restricted to the in-plane axes; the z
// row of F is 0 because every z is pinned at 0.
//
// Gradients (P1, g_a = dN_a/dX constant, f_i = column i of F):
//   dE_ii/dx_a = f_i (g_a)_i,   d(2E_ij)/dx_a = f_i (g_a)_j + f_j (g_a)_i.
//
// Every type here has a fixed size: the per-element update allocates nothing.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>

#include "core/materials/material.hpp"
#include "core/terms/elastic_energy.hpp"

namespace pbdlab {

template <int D>
struct VoigtDims {
  static_assert(D == 2 || D == 3, "Voigt constraints are built for tri3 (plane strain) and tet4");
  static constexpr int kNodes = D + 1;
  static constexpr int kNormal = D;                      // E_ii: the coupled block of eq. 8
  static constexpr int kShear = D * (D - 1) / 2;         // 2 E_ij: scalar eq. 5 updates
  static constexpr int kConstraints = kNormal + kShear;  // 6 in 3D, 3 in 2D
};

// The axes (i, j) of shear constraint k (C_{D + k} = 2 E_ij): 3D [23, 13, 12]; 2D [12].
template <int D>
inline void shearAxes(int k, int& i, int& j) {
  if (D == 2) {
    i = 0;
    j = 1;
    return;
  }
  static constexpr int kAxes[3][2] = {{1, 2}, {0, 2}, {0, 1}};
  i = kAxes[k][0];
  j = kAxes[k][1];
}

template <int D>
using VoigtVector = Eigen::Matrix<double, VoigtDims<D>::kConstraints, 1>;
// Column k: dC_k/dx over the element's nodes in nodal order [x0 y0 z0 x1 ...].
template <int D>
using VoigtGradient = Eigen::Matrix<double, 3 * VoigtDims<D>::kNodes, VoigtDims<D>::kConstraints>;
// Row a: (dN_a/dX)^T on the D axes of the element (constant for P1).
template <int D>
using VoigtShapeGradients = Eigen::Matrix<double, VoigtDims<D>::kNodes, D>;
template <int D>
using VoigtNodes = Eigen::Matrix<double, 3, VoigtDims<D>::kNodes>;  // the element's node positions

// The compliance block alpha_e = (V_e K)^-1: the normal block (D x D) and the shear diagonal.
template <int D>
struct VoigtCompliance {
  Eigen::Matrix<double, D, D> normal;
  double shear = 0.0;
};

// K of eq. 7 (with mu on the shear diagonal), D(D+1)/2 square.
template <int D>
Eigen::Matrix<double, VoigtDims<D>::kConstraints, VoigtDims<D>::kConstraints> voigtStiffness(double mu,
                                                                                               double lambda) {
  constexpr int V = VoigtDims<D>::kConstraints;
  Eigen::Matrix<double, V, V> K = Eigen::Matrix<double, V, V>::Zero();
  K.template topLeftCorner<D, D>().setConstant(lambda);
  K.template topLeftCorner<D, D>().diagonal().array() += 2.0 * mu;
  K.template bottomRightCorner<V - D, V - D>().diagonal().setConstant(mu);
  return K;
}

// alpha_e = (V_e K)^-1. The normal block in closed form: (2 mu I + l 1 1^T)^-1 =
// (I - l / (2 mu + D l) 1 1^T) / (2 mu). Needs mu > 0 and 2 mu + D l > 0 (K positive definite;
// MlXpbdSolver refuses other materials).
template <int D>
VoigtCompliance<D> voigtCompliance(double mu, double lambda, double volume) {
  VoigtCompliance<D> alpha;
  const double coupling = lambda / (2.0 * mu + D * lambda);
  alpha.normal.setConstant(-coupling);
  alpha.normal.diagonal().array() += 1.0;
  alpha.normal /= 2.0 * mu * volume;
  alpha.shear = 1.0 / (mu * volume);
  return alpha;
}

// The whole block alpha_e (tests, logs).
template <int D>
Eigen::Matrix<double, VoigtDims<D>::kConstraints, VoigtDims<D>::kConstraints> complianceMatrix(
    const VoigtCompliance<D>& alpha) {
  constexpr int V = VoigtDims<D>::kConstraints;
  Eigen::Matrix<double, V, V> A = Eigen::Matrix<double, V, V>::Zero();
  A.template topLeftCorner<D, D>() = alpha.normal;
  A.template bottomRightCorner<V - D, V - D>().diagonal().setConstant(alpha.shear);
  return A;
}

// alpha~ lambda with alpha~ = alpha / h^2 = alpha * inv_h2 (the normal block couples).
template <int D>
VoigtVector<D> compliantMultiplier(const VoigtCompliance<D>& alpha, double inv_h2, const VoigtVector<D>& lambda) {
  VoigtVector<D> result;
  result.template head<D>() = inv_h2 * (alpha.normal * lambda.template head<D>());
  result.template tail<VoigtDims<D>::kShear>() = (inv_h2 * alpha.shear) * lambda.template tail<VoigtDims<D>::kShear>();
  return result;
}

// C_e at node positions xe and, if `gradient` is not null, its gradient (see the header).
template <int D>
void voigtStrainConstraints(const VoigtShapeGradients<D>& G, const VoigtNodes<D>& xe, VoigtVector<D>& C,
                            VoigtGradient<D>* gradient) {
  constexpr int N = VoigtDims<D>::kNodes;
  const Eigen::Matrix<double, 3, D> F = xe * G;  // column i = f_i = sum_a x_a (g_a)_i
  for (int i = 0; i < D; ++i) C[i] = 0.5 * (F.col(i).squaredNorm() - 1.0);
  for (int k = 0; k < VoigtDims<D>::kShear; ++k) {
    int i, j;
    shearAxes<D>(k, i, j);
    C[D + k] = F.col(i).dot(F.col(j));  // 2 E_ij
  }
  if (!gradient) return;
  for (int a = 0; a < N; ++a) {
    for (int i = 0; i < D; ++i) gradient->template block<3, 1>(3 * a, i) = G(a, i) * F.col(i);
    for (int k = 0; k < VoigtDims<D>::kShear; ++k) {
      int i, j;
      shearAxes<D>(k, i, j);
      gradient->template block<3, 1>(3 * a, D + k) = G(a, j) * F.col(i) + G(a, i) * F.col(j);
    }
  }
}

// One visit of an element (eq. 5-8), one linearization: C and grad C at xe, then
//   normal block (eq. 8): (gradC_s M^-1 gradC_s^T + alpha~_ss) dl_s = -C_s - alpha~_ss l_s,
//   each shear j (eq. 5): dl_j = (-C_j - alpha~_jj l_j) / (gradC_j M^-1 gradC_j^T + alpha~_jj),
//   dx = M^-1 grad C^T dl (eq. 6, all constraints), l += dl.
// inverse_mass: 3N per-DOF inverse masses of the element's nodes (0 for prescribed DOFs);
// lambda: the element's D(D+1)/2 multipliers, updated in place; xe moved in place.
template <int D>
void voigtElementUpdate(const VoigtShapeGradients<D>& G, const VoigtCompliance<D>& alpha, double inv_h2,
                        const double* inverse_mass, VoigtNodes<D>& xe, double* lambda) {
  constexpr int N = VoigtDims<D>::kNodes;
  constexpr int V = VoigtDims<D>::kConstraints;
  VoigtVector<D> C;
  VoigtGradient<D> gradient;
  voigtStrainConstraints<D>(G, xe, C, &gradient);
  const Eigen::Map<const Eigen::Matrix<double, 3 * N, 1>> w(inverse_mass);
  const VoigtGradient<D> weighted = w.asDiagonal() * gradient;  // M^-1 grad C^T
  Eigen::Map<VoigtVector<D>> l(lambda);
  VoigtVector<D> dl;

  const Eigen::Matrix<double, D, D> alpha_normal = inv_h2 * alpha.normal;
  const Eigen::Matrix<double, D, D> lhs =
      gradient.template leftCols<D>().transpose() * weighted.template leftCols<D>() + alpha_normal;
  const Eigen::Matrix<double, D, 1> rhs = -C.template head<D>() - alpha_normal * l.template head<D>();
  dl.template head<D>() = lhs.ldlt().solve(rhs);  // alpha~_ss is positive definite, so is lhs

  const double alpha_shear = inv_h2 * alpha.shear;
  for (int k = D; k < V; ++k) {
    const double denominator = gradient.col(k).dot(weighted.col(k)) + alpha_shear;
    dl[k] = (-C[k] - alpha_shear * l[k]) / denominator;
  }
  const Eigen::Matrix<double, 3 * N, 1> dx = weighted * dl;
  xe += Eigen::Map<const VoigtNodes<D>>(dx.data());
  l += dl;
}

// The element's contributions to the secondary residuals of §3.6: the paper's C + alpha~ l
// (eq. 30) and the authors' MATLAB variant | |C| - min(|C|, |alpha~ l|) | (component-wise),
// each as a sum of squares.
template <int D>
void voigtSecondaryResiduals(const VoigtShapeGradients<D>& G, const VoigtCompliance<D>& alpha, double inv_h2,
                             const VoigtNodes<D>& xe, const double* lambda, double& paper_squared,
                             double& matlab_squared) {
  VoigtVector<D> C;
  voigtStrainConstraints<D>(G, xe, C, nullptr);
  const VoigtVector<D> compliant = compliantMultiplier<D>(alpha, inv_h2, Eigen::Map<const VoigtVector<D>>(lambda));
  paper_squared = (C + compliant).squaredNorm();
  const VoigtVector<D> matlab = C.cwiseAbs() - C.cwiseAbs().cwiseMin(compliant.cwiseAbs());
  matlab_squared = matlab.squaredNorm();
}

// Why `material` has no Voigt StVK constraints ("" when it has): it must be pbdlab's "stvk"
// with mu > 0 and 2 mu + D lambda > 0 (K of eq. 7 positive definite, so alpha_e exists).
std::string voigtMaterialProblem(const Material& material, int dimension);

// dN/dX of P1 element e of `energy` on the element's D axes (tri3 plane strain: D = 2, whose
// z column is 0; tet4: D = 3), and the same element's rest volume is energy.restVolume(e).
template <int D>
VoigtShapeGradients<D> voigtShapeGradients(const ElasticEnergy& energy, int e);

}  // namespace pbdlab
