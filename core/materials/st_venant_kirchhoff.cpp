// St. Venant-Kirchhoff: Psi = mu |E|^2 + lambda/2 tr(E)^2, E = (F^T F - I)/2,
//   P = F S with S = 2 mu E + lambda tr(E) I,
//   dP[i+3j]/dF[k+3l] = delta_ik S_lj + mu (F_il F_kj + (F F^T)_ik delta_jl) + lambda F_ij F_kl.
// Already Psi(I) = 0, P(I) = 0 and dP/dF(I) = linear elasticity with the same mu, lambda.
#include <cmath>
#include <stdexcept>

#include "core/material.hpp"

namespace pbdlab {
namespace {

class StVenantKirchhoff final : public Material {
 public:
  StVenantKirchhoff(double mu, double lambda) : mu_(mu), lambda_(lambda) {}

  std::string name() const override { return "stvk"; }

  double energyDensity(const Mat3& F) const override {
    const Mat3 E = greenStrain(F);
    const double trE = E.trace();
    return mu_ * E.squaredNorm() + 0.5 * lambda_ * trE * trE;
  }

  Mat3 firstPiola(const Mat3& F) const override { return F * secondPiola(greenStrain(F)); }

  Mat9 firstPiolaDerivative(const Mat3& F) const override {
    const Mat3 S = secondPiola(greenStrain(F));
    const Mat3 B = F * F.transpose();
    const Vec9 f = flatten(F);
    Mat9 K = lambda_ * (f * f.transpose());
    for (int l = 0; l < 3; ++l)
      for (int k = 0; k < 3; ++k)
        for (int j = 0; j < 3; ++j)
          for (int i = 0; i < 3; ++i) {
            double v = mu_ * F(i, l) * F(k, j);
            if (j == l) v += mu_ * B(i, k);
            if (i == k) v += S(l, j);
            K(i + 3 * j, k + 3 * l) += v;
          }
    return K;
  }

  LameParameters modelParameters() const override { return {mu_, lambda_}; }

 private:
  static Mat3 greenStrain(const Mat3& F) {
    return 0.5 * (F.transpose() * F - Mat3::Identity());
  }
  Mat3 secondPiola(const Mat3& E) const {
    return 2.0 * mu_ * E + lambda_ * E.trace() * Mat3::Identity();
  }

  double mu_;
  double lambda_;
};

}  // namespace

std::unique_ptr<Material> makeStVenantKirchhoff(double mu, double lambda) {
  if (!std::isfinite(mu) || !std::isfinite(lambda))
    throw std::invalid_argument("makeStVenantKirchhoff: mu and lambda must be finite");
  return std::make_unique<StVenantKirchhoff>(mu, lambda);
}

}  // namespace pbdlab
