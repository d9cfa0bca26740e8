// Fixed corotated model, Stomakhin et al. 2012 (PBNG eq. 7):
//   Psi = mu |F - R|_F^2 + lambda/2 (J - 1)^2,  P = 2 mu (F - R) + lambda (J - 1) cof(F),
//   dP/dF = 2 mu (I - dR/dF) + lambda vec(cof) vec(cof)^T + lambda (J - 1) d cof/dF.
// R is the rotation of the inversion-safe SVD (polar_svd.hpp); dP/dF does not exist where
// sigma_2 + sigma_3 = 0. Psi(I) = 0 and P(I) = 0 without any shift.
#include <cmath>
#include <stdexcept>

#include <Eigen/LU>

#include "core/material.hpp"
#include "core/materials/polar_svd.hpp"

namespace pbdlab {
namespace {

class FixedCorotated final : public Material {
 public:
  FixedCorotated(double mu, double lambda) : mu_(mu), lambda_(lambda) {}

  std::string name() const override { return "fixed_corotated"; }

  double energyDensity(const Mat3& F) const override {
    // |F - R|^2 = |U (Sigma - I) V^T|^2 = sum (sigma_i - 1)^2, without cancellation in F - R.
    const RotationVariantSvd svd = rotationVariantSvd(F);
    const double Jm1 = F.determinant() - 1.0;
    return mu_ * (svd.sigma.array() - 1.0).square().sum() + 0.5 * lambda_ * Jm1 * Jm1;
  }

  Mat3 firstPiola(const Mat3& F) const override {
    return 2.0 * mu_ * (F - polarRotation(F)) + lambda_ * (F.determinant() - 1.0) * cofactor(F);
  }

  Mat9 firstPiolaDerivative(const Mat3& F) const override {
    const Vec9 g = flatten(cofactor(F));
    Mat9 K = -2.0 * mu_ * polarRotationDerivative(rotationVariantSvd(F));
    K.diagonal().array() += 2.0 * mu_;
    K.noalias() += lambda_ * (g * g.transpose());
    addScaledDeterminantHessian(lambda_ * (F.determinant() - 1.0), F, K);
    return K;
  }

  LameParameters modelParameters() const override { return {mu_, lambda_}; }

 private:
  double mu_;
  double lambda_;
};

}  // namespace

std::unique_ptr<Material> makeFixedCorotated(double mu, double lambda) {
  if (!std::isfinite(mu) || !std::isfinite(lambda))
    throw std::invalid_argument("makeFixedCorotated: mu and lambda must be finite");
  return std::make_unique<FixedCorotated>(mu, lambda);
}

}  // namespace pbdlab
