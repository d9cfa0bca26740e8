// Neo-Hookean model of PBNG eq. 8 (Macklin and Mueller 2021):
//   Psi = mu/2 |F|^2 + lambda_hat/2 (J - 1 - mu/lambda_hat)^2,
// minus its value at F = I, 3 mu/2 + mu^2/(2 lambda_hat), so that Psi(I) = 0 (derivatives
// unchanged). Expanded, the shifted energy has no 1/lambda_hat, so lambda_hat = 0 (the raw
// mapping at nu = 0) is harmless:
//   Psi = mu/2 (|F|^2 - 3) + lambda_hat/2 (J - 1)^2 - mu (J - 1),
//   P = mu F + (lambda_hat (J - 1) - mu) cof(F).
// P(I) = 0 for any mu, lambda_hat; matching linear elasticity needs lambda_hat = mu + lambda.
//
// Splits (with lambda = lambda_hat):
//  - "developed" (default; high-order paper eq. 24-25): mu * (I2 - 2 I3 - 1)/2
//    + lambda_hat * (I3 - 1)^2/2, constant 0 (it is the shifted Psi above term by term); both P~
//    vanish at F = I (Smith's stability condition), but Psi~_mu = -(s - 1)^2 (2 s + 1)/2 < 0 for
//    F = s I, s > 1.
//  - "macklin_mueller" (Macklin and Mueller 2021, the constraints PXPBD §5.4 cites): deviatoric
//    C_D = sqrt(tr F^T F) with compliance 1/mu and hydrostatic C_H = det F - gamma (signed) with
//    compliance 1/lambda_hat, gamma = 1 + mu/lambda_hat: terms mu * I2/2 and
//    lambda_hat * (J - gamma)^2/2 with signed_root J - gamma, constant 3 mu/2 + mu^2/(2 lambda_hat).
//    C_D = sqrt(3 V) at rest: smooth there, and positive for every F but F = 0.
//  - "macklin_table2" (the high-order paper's Table 2 rendering of the same split): mu *
//    (I2 - 3)/2 + lambda_hat * (J - gamma)^2/2, constant mu^2/(2 lambda_hat). Same forces, but
//    the constraint sqrt(V |I2 - 3|) has a cone at rest and its gradient flips sign under
//    compression (I2 < 3), so XPBD iterates differently (docs/materials.md).
//  Both Macklin splits have P~_lambda(I) = -mu/lambda_hat I != 0 and are undefined for
//  lambda_hat = 0 (throw).
#include <cmath>
#include <stdexcept>

#include <Eigen/LU>

#include "core/materials/material.hpp"
#include "core/materials/model_kernels.hpp"
#include "core/materials/polar_svd.hpp"

namespace pbdlab {
namespace {

// Psi~ = (I2 - 2 I3 - 1)/2, P~ = F - cof F, dP~/dF = I - d cof/dF.
void developedShapeTerm(const Mat3& F, const MaterialPointData&, double* psi, Mat3* P, Mat9* dPdF) {
  if (psi) *psi = 0.5 * (F.squaredNorm() - 2.0 * F.determinant() - 1.0);
  if (P) *P = F - cofactor(F);
  if (dPdF) {
    *dPdF = Mat9::Identity();
    addScaledDeterminantHessian(-1.0, F, *dPdF);
  }
}

// Psi~ = (I2 - 3)/2, P~ = F, dP~/dF = I (the high-order paper's Table 2).
void macklinTable2ShapeTerm(const Mat3& F, const MaterialPointData&, double* psi, Mat3* P, Mat9* dPdF) {
  if (psi) *psi = 0.5 * (F.squaredNorm() - 3.0);
  if (P) *P = F;
  if (dPdF) *dPdF = Mat9::Identity();
}

// Psi~ = I2/2, P~ = F, dP~/dF = I: C_D^2 / 2 of Macklin and Mueller 2021.
void macklinMuellerShapeTerm(const Mat3& F, const MaterialPointData&, double* psi, Mat3* P, Mat9* dPdF) {
  if (psi) *psi = 0.5 * F.squaredNorm();
  if (P) *P = F;
  if (dPdF) *dPdF = Mat9::Identity();
}

class NeoHookean final : public Material {
 public:
  NeoHookean(double mu, double lambda_hat) : mu_(mu), lambda_hat_(lambda_hat) {}

  std::string name() const override { return "neo_hookean"; }

  void evaluate(const Mat3& F, const MaterialPointData&, double* psi, Mat3* P, Mat9* dPdF) const override {
    const double Jm1 = F.determinant() - 1.0;
    if (psi) *psi = 0.5 * mu_ * (F.squaredNorm() - 3.0) + 0.5 * lambda_hat_ * Jm1 * Jm1 - mu_ * Jm1;
    if (!P && !dPdF) return;
    const Mat3 C = cofactor(F);
    const double volumetric = lambda_hat_ * Jm1 - mu_;
    if (P) *P = mu_ * F + volumetric * C;
    if (dPdF) {
      Mat9& K = *dPdF;
      const Vec9 g = flatten(C);
      K = lambda_hat_ * (g * g.transpose());
      K.diagonal().array() += mu_;
      addScaledDeterminantHessian(volumetric, F, K);
    }
  }

  std::vector<std::string> splitNames() const override {
    return {"developed", "macklin_mueller", "macklin_table2"};
  }

  MaterialSplit split(const std::string& name) const override {
    MaterialSplit s;
    s.name = detail::resolveSplitName(this->name(), name, splitNames());
    if (s.name == "developed") {
      s.terms = {{"mu", mu_, developedShapeTerm, {}, MaterialTermKind::kNeoHookeanShape},
                 detail::volumeTerm("lambda_hat", lambda_hat_)};
      s.constant = 0.0;
      return s;
    }
    if (lambda_hat_ == 0.0)
      throw std::invalid_argument("neo_hookean: split '" + s.name +
                                  "' needs lambda_hat != 0 (gamma = 1 + mu/lambda_hat)");
    const double gamma = 1.0 + mu_ / lambda_hat_;
    // Psi~ = (J - gamma)^2 / 2, P~ = (J - gamma) cof F.
    const MaterialTermEvaluator volume = [gamma](const Mat3& F, const MaterialPointData&, double* psi, Mat3* P,
                                                 Mat9* dPdF) {
      const double Jg = F.determinant() - gamma;
      if (psi) *psi = 0.5 * Jg * Jg;
      if (!P && !dPdF) return;
      const Mat3 C = cofactor(F);
      if (P) *P = Jg * C;
      if (dPdF) {
        const Vec9 g = flatten(C);
        *dPdF = g * g.transpose();
        addScaledDeterminantHessian(Jg, F, *dPdF);
      }
    };
    const double rest_constant = mu_ * mu_ / (2.0 * lambda_hat_);
    if (s.name == "macklin_table2") {
      s.terms = {{"mu", mu_, macklinTable2ShapeTerm, {}, MaterialTermKind::kInvariantI2, 3.0},
                 {"lambda_hat", lambda_hat_, volume, {}, MaterialTermKind::kVolume, gamma}};
      s.constant = rest_constant;
      return s;
    }
    const MaterialTermRoot hydrostatic = [gamma](const Mat3& F, const MaterialPointData&) {
      return F.determinant() - gamma;
    };
    s.terms = {{"mu", mu_, macklinMuellerShapeTerm, {}, MaterialTermKind::kInvariantI2, 0.0},
               {"lambda_hat", lambda_hat_, volume, hydrostatic, MaterialTermKind::kVolume, gamma}};
    s.constant = 1.5 * mu_ + rest_constant;
    return s;
  }

  LameParameters modelParameters() const override { return {mu_, lambda_hat_}; }
  LameParameters smallStrainParameters() const override { return {mu_, lambda_hat_ - mu_}; }

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
