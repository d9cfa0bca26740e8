#include "core/materials/polar_svd.hpp"

#include <algorithm>

#include <Eigen/LU>
#include <Eigen/SVD>

namespace pbdlab {

RotationVariantSvd rotationVariantSvd(const Mat3& F) {
  // A square input never uses JacobiSVD's QR preconditioner, so skip constructing one.
  const Eigen::JacobiSVD<Mat3, Eigen::NoQRPreconditioner> svd(
      F, Eigen::ComputeFullU | Eigen::ComputeFullV);
  RotationVariantSvd out{svd.matrixU(), svd.singularValues(), svd.matrixV()};
  // Eigen gives sigma >= 0 in decreasing order and U, V possibly reflections. Negating the last
  // column of a reflection together with sigma_3 keeps F = U diag(sigma) V^T; afterwards
  // det F = sigma_1 sigma_2 sigma_3, so sigma_3 carries its sign.
  if (out.U.determinant() < 0.0) {
    out.U.col(2) = -out.U.col(2);
    out.sigma(2) = -out.sigma(2);
  }
  if (out.V.determinant() < 0.0) {
    out.V.col(2) = -out.V.col(2);
    out.sigma(2) = -out.sigma(2);
  }
  return out;
}

Vec3 rotationVariantSingularValues(const Mat3& F) {
  const Eigen::JacobiSVD<Mat3, Eigen::NoQRPreconditioner> svd(F);
  Vec3 sigma = svd.singularValues();
  // det U det V = sign(det F); the convention puts that sign on the smallest value.
  if (F.determinant() < 0.0) sigma(2) = -sigma(2);
  return sigma;
}

Mat3 polarRotation(const Mat3& F) { return polarRotation(rotationVariantSvd(F)); }

Mat9 polarRotationDerivative(const RotationVariantSvd& svd) {
  constexpr int kPairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  // sigma_i + sigma_j >= 0 always (sigma_2 >= |sigma_3|); the floor only acts on the set
  // without a derivative (see the header).
  const double floor = kSigmaSumFloor * std::max(svd.sigma(0), 1.0);
  Mat9 dR = Mat9::Zero();
  for (const auto& pair : kPairs) {
    const int i = pair[0];
    const int j = pair[1];
    const Mat3 T = svd.U.col(i) * svd.V.col(j).transpose() - svd.U.col(j) * svd.V.col(i).transpose();
    const Vec9 t = flatten(T);
    dR.noalias() += (1.0 / std::max(svd.sigma(i) + svd.sigma(j), floor)) * (t * t.transpose());
  }
  return dR;
}

}  // namespace pbdlab
