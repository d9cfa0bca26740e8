#include "core/terms/membrane_kernel.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pbdlab {

MembraneRest membraneRest(const Vec3& X0, const Vec3& X1, const Vec3& X2) {
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

Mat32 membraneDeformationGradient(const MembraneRest& rest, const Vec9& x) {
  Mat32 F = Mat32::Zero();
  for (int a = 0; a < 3; ++a) F.noalias() += x.segment<3>(3 * a) * rest.dN_dX.row(a);
  return F;
}

void membraneDensity(double mu, double lambda, const Mat32& F, double* psi, Mat32* P, Mat6* dPdF,
                     HessianKind kind) {
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
  if (isApproximate(kind)) {
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

void membraneTerms(const MembraneRest& rest, double mu, double lambda, const Vec9& x, double* value,
                   Vec9* gradient, Mat9* hessian, HessianKind kind) {
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
