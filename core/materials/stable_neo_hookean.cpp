// Stable Neo-Hookean model, Smith et al. 2018 (PBNG eq. 10 drops a lambda; see the papers'
// README): Psi = mu/2 (I_C - 3) + lambda/2 (J - alpha)^2 - mu/2 log(I_C + 1),
// alpha = 1 + 3 mu / (4 lambda), I_C = |F|^2. Shifted by its value at F = I,
// 9 mu^2 / (32 lambda) - mu/2 log 4, so that Psi(I) = 0 (derivatives unchanged); expanded, the
// shifted energy has no 1/lambda:
//   Psi = mu/2 (I_C - 3) + lambda/2 (J - 1)^2 - 3 mu/4 (J - 1) - mu/2 log((I_C + 1) / 4),
//   P = mu (1 - 1/(I_C + 1)) F + (lambda (J - 1) - 3 mu/4) cof(F).
// Small-strain moduli: mu_L = 3 mu/4, lambda_L = lambda - 5 mu/8.
#include <cmath>
#include <stdexcept>

#include <Eigen/LU>

#include "core/material.hpp"
#include "core/materials/polar_svd.hpp"

namespace pbdlab {
namespace {

class StableNeoHookean final : public Material {
 public:
  StableNeoHookean(double mu, double lambda) : mu_(mu), lambda_(lambda) {}

  std::string name() const override { return "stable_neo_hookean"; }

  double energyDensity(const Mat3& F) const override {
    const double Ic = F.squaredNorm();
    const double Jm1 = F.determinant() - 1.0;
    return 0.5 * mu_ * (Ic - 3.0) + 0.5 * lambda_ * Jm1 * Jm1 - 0.75 * mu_ * Jm1 -
           0.5 * mu_ * std::log((Ic + 1.0) / 4.0);
  }

  Mat3 firstPiola(const Mat3& F) const override {
    const double Ic = F.squaredNorm();
    return mu_ * (1.0 - 1.0 / (Ic + 1.0)) * F +
           (lambda_ * (F.determinant() - 1.0) - 0.75 * mu_) * cofactor(F);
  }

  Mat9 firstPiolaDerivative(const Mat3& F) const override {
    const double Ic = F.squaredNorm();
    const double inv = 1.0 / (Ic + 1.0);
    const Vec9 f = flatten(F);
    const Vec9 g = flatten(cofactor(F));
    // d/dF of mu (1 - 1/(I_C + 1)) F adds 2 mu / (I_C + 1)^2 vec(F) vec(F)^T.
    Mat9 K = (2.0 * mu_ * inv * inv) * (f * f.transpose());
    K.noalias() += lambda_ * (g * g.transpose());
    K.diagonal().array() += mu_ * (1.0 - inv);
    addScaledDeterminantHessian(lambda_ * (F.determinant() - 1.0) - 0.75 * mu_, F, K);
    return K;
  }

  LameParameters modelParameters() const override { return {mu_, lambda_}; }

 private:
  double mu_;
  double lambda_;
};

}  // namespace

std::unique_ptr<Material> makeStableNeoHookean(double mu, double lambda) {
  if (!std::isfinite(mu) || !std::isfinite(lambda))
    throw std::invalid_argument("makeStableNeoHookean: mu and lambda must be finite");
  return std::make_unique<StableNeoHookean>(mu, lambda);
}

}  // namespace pbdlab
