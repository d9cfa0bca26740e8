#pragma once
// Corotated membrane of one triangle of a surface in 3D: PBNG (TOG) eq. 35-36 and §8.1.
//
//   E(x) = A Psi_cm(F),  Psi_cm(F) = mu |F - R(F)|_F^2 + lambda/2 (J - 1)^2,
//
// F = [x0 x1 x2] G (3x2) the deformation gradient over the triangle, G = dN/dX (3x2) in the
// triangle's own 2D rest frame, A the rest area, R(F) the 3x2 polar factor (orthonormal
// columns, F = R S with S symmetric 2x2), J = sqrt(det(F^T F)) = |f1 x f2| the area ratio.
// With the thin SVD F = U_2 diag(s1, s2) V^T (s1 >= s2 >= 0), Psi_cm is the function of the
// singular values
//
//   psi(s1, s2) = mu ((s1 - 1)^2 + (s2 - 1)^2) + lambda/2 (s1 s2 - 1)^2,
//
// and dPsi/dF = U_2 diag(psi_1, psi_2) V^T (psi_i = d psi / d s_i). Stateless, fixed-size,
// no heap allocation.
//
// Hessian of Psi in F (6x6, vec(F)[i + 3 c] = F(i, c), the ordering of core/support/types.hpp). In the
// orthonormal basis u_i v_j^T (U = [u1 u2 u3] the full 3x3 left factor) it is block diagonal
// (Lewis and Sendov's formula for rectangular matrices; Smith et al. 2019 for the square case):
//   {u1 v1^T, u2 v2^T}:      the 2x2 Hessian of psi in (s1, s2);
//   (u1 v2^T + u2 v1^T)/√2:  (psi_1 - psi_2)/(s1 - s2) = 2 mu - lambda (J - 1)  (closed form:
//                            no division, so s1 = s2 needs no special case);
//   (u1 v2^T - u2 v1^T)/√2:  (psi_1 + psi_2)/(s1 + s2) = 2 mu + lambda (J - 1) - 4 mu / (s1 + s2);
//   u3 v_j^T (out of plane): psi_j / s_j = (2 mu (s_j - 1) + lambda (J - 1) s_k) / s_j.
//
// Where no derivative exists. Psi_cm is smooth wherever F has full column rank, i.e. s2 > 0,
// i.e. J > 0 (R(F) = F (F^T F)^(-1/2) is analytic there, J = |f1 x f2| too). Equal singular
// values s1 = s2 (e.g. the rest state, any uniform scaling) are NOT singular: the SVD is not
// unique there but R, Psi and every formula above are (the only 1/(s1 - s2) is cancelled in
// closed form). The set without a derivative is {s2 = 0} = {J = 0}: the deformed triangle is
// degenerate (its nodes collinear or coincident). There |F - R|^2 = |F|^2 - 2 (s1 + s2) + 2 has
// the kink of the nuclear norm, J = |f1 x f2| the kink of a norm, and the out-of-plane
// curvature psi_2 / s2 ~ -(2 mu + lambda s1) / s2 diverges as the triangle collapses. The
// kernel stays finite there: s_j and s1 + s2 in the denominators are floored at
// kMembraneSigmaFloor * max(s1, 1) (the result is then one element of the subdifferential for
// the gradient, and not a derivative for the Hessian). Note that a membrane cannot invert:
// J >= 0 always, a triangle turned over is just rotated (Psi is invariant under reflections).
//
// Hessian kinds (core/terms/energy_term.hpp):
//   kTrue:        A B^T (d^2 Psi / dF^2) B, B (6x9) with vec(F) = B x; indefinite under
//                 compression (out-of-plane buckling directions).
//   kProjected:   the same with the eigenvalues of the 6x6 d^2 Psi / dF^2 clamped at zero.
//                 They are known in closed form in the basis above (one 2x2 eigen-solve), so
//                 the projection is exact and cheap; A B^T K+ B is then PSD. This is the
//                 project's "projection at the material level" (docs/ARCHITECTURE.md).
//   kApproximate: PBNG §8.1, d^2 Psi / dF^2 ~ 2 mu I + lambda/4 J^2 L (x) L with
//                 L = F (F^T F)^-T + F (F^T F)^-1 = 2 F (F^T F)^-1, i.e. 2 mu I + lambda
//                 dJ/dF (x) dJ/dF (dJ/dF = J F (F^T F)^-1 = s2 u1 v1^T + s1 u2 v2^T, which
//                 is how it is computed: defined at J = 0 too). SPD for mu > 0.
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/support/types.hpp"
#include "core/terms/energy_term.hpp"  // HessianKind

namespace pbdlab {

using Mat32 = Eigen::Matrix<double, 3, 2>;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;

// Relative floor of the singular values (and of s1 + s2) that divide the Hessian; see above.
constexpr double kMembraneSigmaFloor = 1e-12;
// A rest triangle is degenerate when 2 A <= kMembraneDegenerateArea * (longest edge)^2.
constexpr double kMembraneDegenerateArea = 1e-12;

// Per-triangle rest data.
struct MembraneRest {
  Mat32 dN_dX;        // G: F = [x0 x1 x2] G, row a = node a; each column sums to zero
  double area = 0.0;  // rest area A
};

// Rest data from the rest positions. The 2D rest frame is t1 = (X1 - X0)/|X1 - X0|,
// t2 = n x t1 with n the unit normal of (X0, X1, X2); in it the edges are D = [[|e1|, e2.t1],
// [0, e2.t2]] and G = [[-1, -1], [1, 0], [0, 1]] D^-1. Throws std::invalid_argument on a
// degenerate triangle (see kMembraneDegenerateArea) or non-finite input.
inline MembraneRest membraneRest(const Vec3& X0, const Vec3& X1, const Vec3& X2) {
  const Vec3 e1 = X1 - X0;
  const Vec3 e2 = X2 - X0;
  const Vec3 normal = e1.cross(e2);
  const double twice_area = normal.norm();
  const double longest_sq = std::max({e1.squaredNorm(), e2.squaredNorm(), (X2 - X1).squaredNorm()});
  if (!std::isfinite(twice_area) || !std::isfinite(longest_sq) ||
      !(twice_area > kMembraneDegenerateArea * longest_sq))
    throw std::invalid_argument("membraneRest: degenerate rest triangle (zero area or non-finite points)");
  const double a = e1.norm();
  const Vec3 t1 = e1 / a;
  const Vec3 t2 = (normal / twice_area).cross(t1);
  const double b = e2.dot(t1);
  const double c = e2.dot(t2);  // = twice_area / a > 0
  Eigen::Matrix2d D_inverse;
  D_inverse << 1.0 / a, -b / (a * c), 0.0, 1.0 / c;
  Mat32 S;
  S << -1.0, -1.0, 1.0, 0.0, 0.0, 1.0;
  MembraneRest rest;
  rest.dN_dX = S * D_inverse;
  rest.area = 0.5 * twice_area;
  return rest;
}

// F = [x0 x1 x2] G for the stacked positions x = [x0; x1; x2].
inline Mat32 membraneDeformationGradient(const MembraneRest& rest, const Vec9& x) {
  Mat32 F = Mat32::Zero();
  for (int a = 0; a < 3; ++a) F.noalias() += x.segment<3>(3 * a) * rest.dN_dX.row(a);
  return F;
}

// The density Psi_cm(F), dPsi/dF (3x2) and d^2 Psi/dF^2 (6x6, of the given kind) in the
// ordering vec(F)[i + 3 c]; any output may be null.
inline void membraneDensity(double mu, double lambda, const Mat32& F, double* psi, Mat32* P, Mat6* dPdF,
                            HessianKind kind = HessianKind::kTrue) {
  const Eigen::JacobiSVD<Mat32> svd(F, Eigen::ComputeFullU | Eigen::ComputeFullV);
  const Eigen::Vector2d s = svd.singularValues();  // s1 >= s2 >= 0
  const Mat3& U = svd.matrixU();
  const Eigen::Matrix2d& V = svd.matrixV();
  const double J = s(0) * s(1);
  if (psi) *psi = mu * ((s(0) - 1.0) * (s(0) - 1.0) + (s(1) - 1.0) * (s(1) - 1.0)) + 0.5 * lambda * (J - 1.0) * (J - 1.0);
  const double psi1 = 2.0 * mu * (s(0) - 1.0) + lambda * (J - 1.0) * s(1);
  const double psi2 = 2.0 * mu * (s(1) - 1.0) + lambda * (J - 1.0) * s(0);
  if (P) *P = psi1 * U.col(0) * V.col(0).transpose() + psi2 * U.col(1) * V.col(1).transpose();
  if (!dPdF) return;

  constexpr double kHalfSqrt2 = 0.70710678118654752440;  // 1/sqrt(2)
  auto basis = [&](int i, int j) -> Vec6 {
    const Mat32 E = U.col(i) * V.col(j).transpose();
    return Eigen::Map<const Vec6>(E.data());
  };
  const Vec6 d11 = basis(0, 0), d22 = basis(1, 1);
  if (kind == HessianKind::kApproximate) {
    const Vec6 dJ = s(1) * d11 + s(0) * d22;  // dJ/dF
    *dPdF = 2.0 * mu * Mat6::Identity() + lambda * dJ * dJ.transpose();
    return;
  }
  const Vec6 twist_symmetric = (basis(0, 1) + basis(1, 0)) * kHalfSqrt2;
  const Vec6 twist_rotation = (basis(0, 1) - basis(1, 0)) * kHalfSqrt2;
  const Vec6 out1 = basis(2, 0), out2 = basis(2, 1);

  const double floor = kMembraneSigmaFloor * std::max(s(0), 1.0);
  Eigen::Matrix2d diagonal;
  diagonal << 2.0 * mu + lambda * s(1) * s(1), lambda * (2.0 * J - 1.0), lambda * (2.0 * J - 1.0),
      2.0 * mu + lambda * s(0) * s(0);
  double lambda_symmetric = 2.0 * mu - lambda * (J - 1.0);
  double lambda_rotation = 2.0 * mu + lambda * (J - 1.0) - 4.0 * mu / std::max(s(0) + s(1), floor);
  double lambda_out1 = psi1 / std::max(s(0), floor);
  double lambda_out2 = psi2 / std::max(s(1), floor);

  Eigen::Matrix<double, 6, 2> D;
  D << d11, d22;
  if (kind == HessianKind::kProjected) {
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eigen;
    eigen.computeDirect(diagonal);
    diagonal = eigen.eigenvectors() * eigen.eigenvalues().cwiseMax(0.0).asDiagonal() *
               eigen.eigenvectors().transpose();
    lambda_symmetric = std::max(lambda_symmetric, 0.0);
    lambda_rotation = std::max(lambda_rotation, 0.0);
    lambda_out1 = std::max(lambda_out1, 0.0);
    lambda_out2 = std::max(lambda_out2, 0.0);
  }
  *dPdF = D * diagonal * D.transpose() + lambda_symmetric * twist_symmetric * twist_symmetric.transpose() +
          lambda_rotation * twist_rotation * twist_rotation.transpose() + lambda_out1 * out1 * out1.transpose() +
          lambda_out2 * out2 * out2.transpose();
}

// The triangle's energy A Psi_cm(F(x)), its gradient (9) and Hessian (9x9, of the given kind)
// in the stacked positions x = [x0; x1; x2]; any output may be null.
inline void membraneTerms(const MembraneRest& rest, double mu, double lambda, const Vec9& x, double* value,
                          Vec9* gradient, Mat9* hessian, HessianKind kind = HessianKind::kTrue) {
  const Mat32 F = membraneDeformationGradient(rest, x);
  double psi = 0.0;
  Mat32 P;
  Mat6 dPdF;
  membraneDensity(mu, lambda, F, value ? &psi : nullptr, gradient ? &P : nullptr, hessian ? &dPdF : nullptr, kind);
  if (value) *value = rest.area * psi;
  if (gradient) {
    const Mat3 g = rest.area * P * rest.dN_dX.transpose();  // column a = dE/dx_a
    *gradient = Eigen::Map<const Vec9>(g.data());
  }
  if (hessian) {
    // vec(F) = B x: B(i + 3 c, 3 a + i) = G(a, c).
    Eigen::Matrix<double, 6, 9> B = Eigen::Matrix<double, 6, 9>::Zero();
    for (int a = 0; a < 3; ++a)
      for (int c = 0; c < 2; ++c)
        for (int i = 0; i < 3; ++i) B(i + 3 * c, 3 * a + i) = rest.dN_dX(a, c);
    *hessian = rest.area * B.transpose() * dPdF * B;
  }
}

}  // namespace pbdlab
