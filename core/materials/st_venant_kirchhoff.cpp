// St. Venant-Kirchhoff: Psi = mu |E|^2 + lambda/2 tr(E)^2, E = (F^T F - I)/2,
//   P = F S with S = 2 mu E + lambda tr(E) I,
//   dP[i+3j]/dF[k+3l] = delta_ik S_lj + mu (F_il F_kj + (F F^T)_ik delta_jl) + lambda F_ij F_kl.
// Already Psi(I) = 0, P(I) = 0 and dP/dF(I) = linear elasticity with the same mu, lambda.
//
// Split "lame": mu * tr(E^2) + lambda * tr(E)^2/2, constant 0, with P~_mu = 2 F E and
// P~_lambda = tr(E) F. (High-order paper Table 2 writes Psi~_A = 2 tr(E^2) with the stiffness
// halved, and prints its stress as 2 F E; the derivative of 2 tr(E^2) is 4 F E.)
#include <cmath>
#include <stdexcept>

#include "core/materials/material.hpp"
#include "core/materials/model_kernels.hpp"

namespace pbdlab {
namespace {

// mu |E|^2 + lambda/2 tr(E)^2 with derivatives; any output may be null.
void evaluateStVenantKirchhoff(double mu, double lambda, const Mat3& F, double* psi, Mat3* P, Mat9* dPdF) {
  const Mat3 E = 0.5 * (F.transpose() * F - Mat3::Identity());
  const double trE = E.trace();
  if (psi) *psi = mu * E.squaredNorm() + 0.5 * lambda * trE * trE;
  if (!P && !dPdF) return;
  Mat3 S = 2.0 * mu * E;
  S.diagonal().array() += lambda * trE;
  if (P) *P = F * S;
  if (dPdF) {
    Mat9& K = *dPdF;
    const Mat3 B = F * F.transpose();
    const Vec9 f = flatten(F);
    K = lambda * (f * f.transpose());
    for (int l = 0; l < 3; ++l)
      for (int k = 0; k < 3; ++k)
        for (int j = 0; j < 3; ++j)
          for (int i = 0; i < 3; ++i) {
            double v = mu * F(i, l) * F(k, j);
            if (j == l) v += mu * B(i, k);
            if (i == k) v += S(l, j);
            K(i + 3 * j, k + 3 * l) += v;
          }
  }
}

class StVenantKirchhoff final : public Material {
 public:
  StVenantKirchhoff(double mu, double lambda) : mu_(mu), lambda_(lambda) {}

  std::string name() const override { return "stvk"; }

  void evaluate(const Mat3& F, const MaterialPointData&, double* psi, Mat3* P, Mat9* dPdF) const override {
    evaluateStVenantKirchhoff(mu_, lambda_, F, psi, P, dPdF);
  }

  std::vector<std::string> splitNames() const override { return {"lame"}; }

  MaterialSplit split(const std::string& name) const override {
    MaterialSplit s;
    s.name = detail::resolveSplitName(this->name(), name, splitNames());
    const MaterialTermEvaluator shape = [](const Mat3& F, const MaterialPointData&, double* psi, Mat3* P,
                                           Mat9* dPdF) { evaluateStVenantKirchhoff(1.0, 0.0, F, psi, P, dPdF); };
    const MaterialTermEvaluator volume = [](const Mat3& F, const MaterialPointData&, double* psi, Mat3* P,
                                            Mat9* dPdF) { evaluateStVenantKirchhoff(0.0, 1.0, F, psi, P, dPdF); };
    s.terms = {{"mu", mu_, shape, {}}, {"lambda", lambda_, volume, {}}};
    s.constant = 0.0;
    return s;
  }

  LameParameters modelParameters() const override { return {mu_, lambda_}; }

 private:
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
