// Neo-Hookean model of PBNG eq. 8 (Macklin and Mueller 2021):
//   Psi = mu/2 |F|^2 + lambda_hat/2 (J - 1 - mu/lambda_hat)^2,
// minus its value at F = I, 3 mu/2 + mu^2/(2 lambda_hat), so that Psi(I) = 0 (derivatives
// unchanged). Expanded, the shifted energy has no 1/lambda_hat, so lambda_hat = 0 (the raw
// mapping at nu = 0) is harmless:
//   Psi = mu/2 (|F|^2 - 3) + lambda_hat/2 (J - 1)^2 - mu (J - 1),
//   P = mu F + (lambda_hat (J - 1) - mu) cof(F).
// P(I) = 0 for any mu, lambda_hat; matching linear elasticity needs lambda_hat = mu + lambda.
#include <cmath>
#include <stdexcept>

#include <Eigen/LU>

#include "core/material.hpp"
#include "core/materials/polar_svd.hpp"

namespace pbdlab {
namespace {

class NeoHookean final : public Material {
 public:
  NeoHookean(double mu, double lambda_hat) : mu_(mu), lambda_hat_(lambda_hat) {}

  std::string name() const override { return "neo_hookean"; }

  double energyDensity(const Mat3& F) const override {
    const double Jm1 = F.determinant() - 1.0;
    return 0.5 * mu_ * (F.squaredNorm() - 3.0) + 0.5 * lambda_hat_ * Jm1 * Jm1 - mu_ * Jm1;
  }

  Mat3 firstPiola(const Mat3& F) const override {
    return mu_ * F + (lambda_hat_ * (F.determinant() - 1.0) - mu_) * cofactor(F);
  }

  Mat9 firstPiolaDerivative(const Mat3& F) const override {
    const Vec9 g = flatten(cofactor(F));
    Mat9 K = lambda_hat_ * (g * g.transpose());
    K.diagonal().array() += mu_;
    addScaledDeterminantHessian(lambda_hat_ * (F.determinant() - 1.0) - mu_, F, K);
    return K;
  }

  LameParameters modelParameters() const override { return {mu_, lambda_hat_}; }

 private:
  double mu_;
  double lambda_hat_;
};

}  // namespace

std::unique_ptr<Material> makeNeoHookean(double mu, double lambda_hat) {
  if (!std::isfinite(mu) || !std::isfinite(lambda_hat))
    throw std::invalid_argument("makeNeoHookean: mu and lambda_hat must be finite");
  return std::make_unique<NeoHookean>(mu, lambda_hat);
}

}  // namespace pbdlab
