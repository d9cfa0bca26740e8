#include "core/materials/tangent_projection.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include "core/materials/polar_svd.hpp"

namespace pbdlab {

namespace {

template <int N>
Eigen::Matrix<double, N, N> clampedEigenvalues(const Eigen::Matrix<double, N, N>& A) {
  // Definite matrices are the common case: a Cholesky (a few hundred flops for 9x9) tells.
  const Eigen::Matrix<double, N, N> symmetric = 0.5 * (A + A.transpose());
  if (Eigen::LLT<Eigen::Matrix<double, N, N>>(symmetric).info() == Eigen::Success) return symmetric;
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, N, N>> eigen(symmetric);
  if (eigen.eigenvalues().minCoeff() >= 0.0) return symmetric;
  return eigen.eigenvectors() * eigen.eigenvalues().cwiseMax(0.0).asDiagonal() * eigen.eigenvectors().transpose();
}

}  // namespace

Mat9 projectToPositiveSemidefinite(const Mat9& A) { return clampedEigenvalues(A); }
Mat3 projectToPositiveSemidefinite(const Mat3& A) { return clampedEigenvalues(A); }

namespace {

// Eigenpairs (value, eigenvector) of the symmetric 2x2 [a b; b c].
void eigenSymmetric2x2(double a, double b, double c, Eigen::Vector2d& values, Eigen::Matrix2d& vectors) {
  const double mean = 0.5 * (a + c);
  const double radius = std::hypot(0.5 * (a - c), b);
  values << mean - radius, mean + radius;
  // Rotation angle of the eigenbasis: tan(2 theta) = 2 b / (a - c).
  const double theta = 0.5 * std::atan2(2.0 * b, a - c);
  const double cos_t = std::cos(theta), sin_t = std::sin(theta);
  vectors.col(1) << cos_t, sin_t;   // eigenvalue mean + radius
  vectors.col(0) << -sin_t, cos_t;  // eigenvalue mean - radius
}

}  // namespace

Mat9 projectIsotropicTangentToPositiveSemidefinite(const Mat3& F, const Mat9& A) {
  Mat9 projected = 0.5 * (A + A.transpose());
  if (Eigen::LLT<Mat9>(projected).info() == Eigen::Success) return projected;

  // Q's column i + 3 j is vec(u_i v_j^T), so vec(dF) = Q vec(U^T dF V); the tangent in that
  // frame is Q^T A Q, of which only the blocks are needed.
  const RotationVariantSvd svd = rotationVariantSvd(F);
  Mat9 Q;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) Q.col(i + 3 * j) = flatten(svd.U.col(i) * svd.V.col(j).transpose());
  const Mat9 AQ = projected * Q;
  auto entry = [&](int r, int c) { return Q.col(r).dot(AQ.col(c)); };

  // A = sum over the blocks' eigenpairs of value * w w^T, w = Q (block eigenvector), so
  // removing the negative pairs is the projection.
  constexpr int kDiagonal[3] = {0, 4, 8};  // u_i v_i^T
  Mat3 block;
  for (int a = 0; a < 3; ++a)
    for (int b = a; b < 3; ++b) block(a, b) = block(b, a) = entry(kDiagonal[a], kDiagonal[b]);
  Eigen::SelfAdjointEigenSolver<Mat3> eigen;
  eigen.computeDirect(block);
  for (int m = 0; m < 3; ++m) {
    const double value = eigen.eigenvalues()[m];
    if (value >= 0.0) continue;
    const Vec9 w = Q.col(0) * eigen.eigenvectors()(0, m) + Q.col(4) * eigen.eigenvectors()(1, m) +
                   Q.col(8) * eigen.eigenvectors()(2, m);
    projected.noalias() -= value * (w * w.transpose());
  }
  constexpr int kPairs[3][2] = {{1, 3}, {2, 6}, {5, 7}};  // (u_i v_j^T, u_j v_i^T)
  for (const auto& pair : kPairs) {
    Eigen::Vector2d values;
    Eigen::Matrix2d vectors;
    eigenSymmetric2x2(entry(pair[0], pair[0]), entry(pair[0], pair[1]), entry(pair[1], pair[1]), values, vectors);
    for (int m = 0; m < 2; ++m) {
      if (values[m] >= 0.0) continue;
      const Vec9 w = Q.col(pair[0]) * vectors(0, m) + Q.col(pair[1]) * vectors(1, m);
      projected.noalias() -= values[m] * (w * w.transpose());
    }
  }
  return projected;
}

}  // namespace pbdlab
