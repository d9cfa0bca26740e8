// Fixed corotated model, Stomakhin et al. 2012 (PBNG eq. 7):
//   Psi = mu |F - R|_F^2 + lambda/2 (J - 1)^2,  P = 2 mu (F - R) + lambda (J - 1) cof(F),
//   dP/dF = 2 mu (I - dR/dF) + lambda vec(cof) vec(cof)^T + lambda (J - 1) d cof/dF.
// R is the rotation of the inversion-safe SVD (polar_svd.hpp); dP/dF does not exist where
// sigma_2 + sigma_3 = 0. Psi(I) = 0 and P(I) = 0 without any shift. P given R is
// fixedCorotatedStress (fixed_corotated.hpp), shared with PBNG's warm-started fast path.
// Split "pxpbd" (PXPBD eq. 3-5): mu * |F - R|^2 + lambda * (J - 1)^2 / 2, constant 0.
#include <cmath>
#include <stdexcept>

#include <Eigen/LU>

#include "core/materials/fixed_corotated.hpp"
#include "core/materials/material.hpp"
#include "core/materials/model_kernels.hpp"
#include "core/materials/polar_svd.hpp"

namespace pbdlab {
namespace detail {

void fixedCorotatedEvaluate(double mu, double lambda, const Mat3& F, double* psi, Mat3* P, Mat9* dPdF) {
  const double Jm1 = F.determinant() - 1.0;
  if (!P && !dPdF) {
    // |F - R|^2 = |U (Sigma - I) V^T|^2 = sum (sigma_i - 1)^2, without cancellation in F - R.
    if (psi) *psi = mu * (rotationVariantSingularValues(F).array() - 1.0).square().sum() + 0.5 * lambda * Jm1 * Jm1;
    return;
  }
  const RotationVariantSvd svd = rotationVariantSvd(F);  // the one SVD of this call
  if (psi) *psi = mu * (svd.sigma.array() - 1.0).square().sum() + 0.5 * lambda * Jm1 * Jm1;
  const Mat3 C = cofactor(F);
  if (P) *P = fixedCorotatedStress(mu, lambda, F, polarRotation(svd), C);
  if (dPdF) {
    Mat9& K = *dPdF;
    const Vec9 g = flatten(C);
    K = -2.0 * mu * polarRotationDerivative(svd);
    K.diagonal().array() += 2.0 * mu;
    K.noalias() += lambda * (g * g.transpose());
    addScaledDeterminantHessian(lambda * Jm1, F, K);
  }
}

MaterialTerm corotatedStretchTerm(double mu) {
  // Psi~ = |F - R|^2, P~ = 2 (F - R), dP~/dF = 2 (I - dR/dF).
  return {"mu", mu, [](const Mat3& F, const MaterialPointData&, double* psi, Mat3* P, Mat9* dPdF) {
            fixedCorotatedEvaluate(1.0, 0.0, F, psi, P, dPdF);
          },
          {},
          MaterialTermKind::kCorotatedStretch};
}

MaterialTerm volumeTerm(const std::string& name, double lambda) {
  // Psi~ = (J - 1)^2 / 2, P~ = (J - 1) cof F, dP~/dF = vec(cof) vec(cof)^T + (J - 1) d cof/dF.
  return {name, lambda, [](const Mat3& F, const MaterialPointData&, double* psi, Mat3* P, Mat9* dPdF) {
            const double Jm1 = F.determinant() - 1.0;
            if (psi) *psi = 0.5 * Jm1 * Jm1;
            if (!P && !dPdF) return;
            const Mat3 C = cofactor(F);
            if (P) *P = Jm1 * C;
            if (dPdF) {
              const Vec9 g = flatten(C);
              *dPdF = g * g.transpose();
              addScaledDeterminantHessian(Jm1, F, *dPdF);
            }
          },
          {},
          MaterialTermKind::kVolume,
          1.0};
}

void throwUnknownSplit(const std::string& model, const std::string& split, const std::vector<std::string>& valid) {
  std::string names;
  for (const std::string& name : valid) names += (names.empty() ? "" : ", ") + name;
  throw std::invalid_argument("unknown split '" + split + "' of material model '" + model +
                              "'; valid names: " + names);
}

std::string resolveSplitName(const std::string& model, const std::string& split,
                             const std::vector<std::string>& valid) {
  if (split.empty()) return valid.front();
  for (const std::string& name : valid)
    if (name == split) return name;
  throwUnknownSplit(model, split, valid);
}

}  // namespace detail

namespace {

class FixedCorotated final : public Material {
 public:
  FixedCorotated(double mu, double lambda) : mu_(mu), lambda_(lambda) {}

  std::string name() const override { return "fixed_corotated"; }

  void evaluate(const Mat3& F, const MaterialPointData&, double* psi, Mat3* P, Mat9* dPdF) const override {
    detail::fixedCorotatedEvaluate(mu_, lambda_, F, psi, P, dPdF);
  }

  std::vector<std::string> splitNames() const override { return {"pxpbd"}; }

  MaterialSplit split(const std::string& name) const override {
    MaterialSplit s;
    s.name = detail::resolveSplitName(this->name(), name, splitNames());
    s.terms = {detail::corotatedStretchTerm(mu_), detail::volumeTerm("lambda", lambda_)};
    s.constant = 0.0;
    return s;
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
