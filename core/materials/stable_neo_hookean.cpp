// Stable Neo-Hookean model, Smith et al. 2018 (PBNG eq. 10 drops a lambda; see the papers'
// README): Psi = mu/2 (I_C - 3) + lambda/2 (J - alpha)^2 - mu/2 log(I_C + 1),
// alpha = 1 + 3 mu / (4 lambda), I_C = |F|^2. Shifted by its value at F = I,
// 9 mu^2 / (32 lambda) - mu/2 log 4, so that Psi(I) = 0 (derivatives unchanged); expanded, the
// shifted energy has no 1/lambda:
//   Psi = mu/2 (I_C - 3) + lambda/2 (J - 1)^2 - 3 mu/4 (J - 1) - mu/2 log((I_C + 1) / 4),
//   P = mu (1 - 1/(I_C + 1)) F + (lambda (J - 1) - 3 mu/4) cof(F).
// Small-strain moduli: mu_L = 3 mu/4, lambda_L = lambda - 5 mu/8.
//
// Split "lame": mu * Psi~_mu + lambda * (J - 1)^2/2 with the mu part (everything multiplying mu,
// the log and Smith's 3/4 (J - 1) included)
//   Psi~_mu = (I_C - 3)/2 - 3/4 (J - 1) - 1/2 log((I_C + 1)/4),
// constant 0 (the shifted Psi term by term); both P~ vanish at F = I. Psi~_mu < 0 under large
// dilation (e.g. F = 2 I).
#include <cmath>
#include <stdexcept>

#include <Eigen/LU>

#include "core/materials/material.hpp"
#include "core/materials/model_kernels.hpp"
#include "core/materials/polar_svd.hpp"

namespace pbdlab {
namespace {

// mu * Psi~_mu + lambda * (J - 1)^2 / 2 with derivatives; any output may be null.
void evaluateStableNeoHookean(double mu, double lambda, const Mat3& F, double* psi, Mat3* P, Mat9* dPdF) {
  const double Ic = F.squaredNorm();
  const double Jm1 = F.determinant() - 1.0;
  if (psi)
    *psi = 0.5 * mu * (Ic - 3.0) + 0.5 * lambda * Jm1 * Jm1 - 0.75 * mu * Jm1 - 0.5 * mu * std::log((Ic + 1.0) / 4.0);
  if (!P && !dPdF) return;
  const double inv = 1.0 / (Ic + 1.0);
  const double volumetric = lambda * Jm1 - 0.75 * mu;
  const Mat3 C = cofactor(F);
  if (P) *P = mu * (1.0 - inv) * F + volumetric * C;
  if (dPdF) {
    Mat9& K = *dPdF;
    const Vec9 f = flatten(F);
    const Vec9 g = flatten(C);
    // d/dF of mu (1 - 1/(I_C + 1)) F adds 2 mu / (I_C + 1)^2 vec(F) vec(F)^T.
    K = (2.0 * mu * inv * inv) * (f * f.transpose());
    K.noalias() += lambda * (g * g.transpose());
    K.diagonal().array() += mu * (1.0 - inv);
    addScaledDeterminantHessian(volumetric, F, K);
  }
}

class StableNeoHookean final : public Material {
 public:
  StableNeoHookean(double mu, double lambda) : mu_(mu), lambda_(lambda) {}

  std::string name() const override { return "stable_neo_hookean"; }

  void evaluate(const Mat3& F, const MaterialPointData&, double* psi, Mat3* P, Mat9* dPdF) const override {
    evaluateStableNeoHookean(mu_, lambda_, F, psi, P, dPdF);
  }

  std::vector<std::string> splitNames() const override { return {"lame"}; }

  MaterialSplit split(const std::string& name) const override {
    MaterialSplit s;
    s.name = detail::resolveSplitName(this->name(), name, splitNames());
    const MaterialTermEvaluator shape = [](const Mat3& F, const MaterialPointData&, double* psi, Mat3* P,
                                           Mat9* dPdF) { evaluateStableNeoHookean(1.0, 0.0, F, psi, P, dPdF); };
    s.terms = {{"mu", mu_, shape, {}, MaterialTermKind::kStableNeoHookeanShape},
               detail::volumeTerm("lambda", lambda_)};
    s.constant = 0.0;
    return s;
  }

  LameParameters modelParameters() const override { return {mu_, lambda_}; }
  // Smith et al. 2018: mu_L = 3 mu/4, lambda_L = lambda - 5 mu/8.
  LameParameters smallStrainParameters() const override { return {0.75 * mu_, lambda_ - 0.625 * mu_}; }

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
