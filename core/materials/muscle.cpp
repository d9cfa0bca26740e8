// Anisotropic muscle model (PXPBD eq. 6-8; fibre curves after Blemker et al. 2005):
//   Psi = Psi_cor(F) + sigma_max / lambda_ofl * (alpha f_a(l) + f_p(l)),  l = |F v|,
// with Psi_cor the fixed corotated energy (mu, lambda), v the element's unit fibre direction and
// alpha in [0, 1] the activation (MaterialPointData). The curves are in muscle.hpp.
//
// Activation scales the ACTIVE term. PXPBD eq. 6 as printed is f_a + alpha f_p, which would
// leave the active (contractile) curve on at zero activation and switch the passive (elastic)
// one off; Blemker et al. 2005 (whom eq. 7-8 cite) have the fibre stress
// sigma_max (alpha f_active + f_passive) lambda / lambda_ofl, the activation multiplying the
// active part. We follow Blemker: alpha f_a + f_p.
//
// With W(l) = sigma_max / lambda_ofl (alpha f_a + f_p), n = F v / l:
//   P_fibre = W'(l) n v^T,
//   dP_fibre/dF = W''(l) vec(n v^T) vec(n v^T)^T + W'(l)/l (v v^T) (x) (I - n n^T)
// (block (j, m) of the 9x9 is v_j v_m [W'' n n^T + W'/l (I - n n^T)]). W' >= 0 everywhere, so
// only W'' can make it indefinite (the descending limb of the active curve, l > lambda_ofl);
// approximateTangent uses max(W'', 0) there: PSD without any eigen-solve, and equal to the
// true fibre Hessian wherever W'' >= 0.
//
// l = 0 would be singular (n undefined), but f_a = f_p = 0 for l <= 0.4 lambda_ofl, so the
// fibre term vanishes identically near l = 0 and is skipped there. Split "pxpbd": the
// corotated terms mu * |F - R|^2 and lambda * (J - 1)^2 / 2 plus sigma_max * Psi~_fibre,
// Psi~_fibre = (alpha f_a + f_p)/lambda_ofl >= 0, constant 0. Not shifted: Psi(I) =
// sigma_max/lambda_ofl alpha f_a(1) (+ f_p(1) if lambda_ofl < 1), and an active muscle is not
// stress-free at rest.
#include "core/materials/muscle.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/materials/material.hpp"
#include "core/materials/model_kernels.hpp"

namespace pbdlab {
namespace muscle {

CurveValue activeCurve(double l, double lambda_ofl) {
  const double L = lambda_ofl;
  const double t = l / L;
  if (t <= 0.4) return {};
  if (t < 0.6) {
    const double d = t - 0.4;
    return {3.0 * L * d * d * d, 9.0 * d * d, 18.0 * d / L};
  }
  if (t <= 1.4) {
    const double d = t - 1.0;
    return {l - 1.984 / 3.0 * L - 4.0 / 3.0 * L * d * d * d, 1.0 - 4.0 * d * d, -8.0 * d / L};
  }
  if (t <= 1.6) {
    const double d = t - 1.6;
    return {2.032 / 3.0 * L + 3.0 * L * d * d * d, 9.0 * d * d, 18.0 * d / L};
  }
  return {2.032 / 3.0 * L, 0.0, 0.0};
}

CurveValue passiveCurve(double l, double lambda_ofl) {
  const double L = lambda_ofl;
  const double t = l / L;
  if (t <= 1.0) return {};
  const double x = kPassiveP2 * (t - 1.0);
  const double ex = std::exp(x);
  // L P1/P2 (e^x - 1 - x), written with expm1 against cancellation just above t = 1.
  return {L * kPassiveP1 / kPassiveP2 * (std::expm1(x) - x), kPassiveP1 * std::expm1(x),
          kPassiveP1 * kPassiveP2 * ex / L};
}

void evaluateFibreTerm(double lambda_ofl, const Mat3& F, const Vec3& fibre_direction, double activation,
                       double* psi, Mat3* P, Mat9* dPdF, bool spd_hessian) {
  if (psi) *psi = 0.0;
  if (P) P->setZero();
  if (dPdF) dPdF->setZero();
  const double v_norm = fibre_direction.norm();
  if (!(v_norm > 0.0)) return;
  const Vec3 v = fibre_direction / v_norm;
  const Vec3 w = F * v;
  const double l = w.norm();
  if (l <= 0.4 * lambda_ofl) return;  // both curves are identically zero here
  const CurveValue a = activeCurve(l, lambda_ofl);
  const CurveValue p = passiveCurve(l, lambda_ofl);
  const double scale = 1.0 / lambda_ofl;
  if (psi) *psi = scale * (activation * a.value + p.value);
  if (!P && !dPdF) return;
  const double slope = scale * (activation * a.slope + p.slope);
  const Vec3 n = w / l;
  if (P) *P = slope * n * v.transpose();
  if (dPdF) {
    double curvature = scale * (activation * a.curvature + p.curvature);
    if (spd_hessian) curvature = std::max(curvature, 0.0);
    const double transverse = slope / l;
    const Mat3 nn = n * n.transpose();
    Mat3 M = (curvature - transverse) * nn;
    M.diagonal().array() += transverse;
    M = 0.5 * (M + M.transpose()).eval();  // exactly symmetric, so is the 9x9
    for (int m = 0; m < 3; ++m)
      for (int j = 0; j < 3; ++j) dPdF->block<3, 3>(3 * j, 3 * m) = (v(j) * v(m)) * M;
  }
}

}  // namespace muscle

namespace {

class Muscle final : public Material {
 public:
  Muscle(double mu, double lambda, double sigma_max, double lambda_ofl)
      : mu_(mu), lambda_(lambda), sigma_max_(sigma_max), lambda_ofl_(lambda_ofl) {}

  std::string name() const override { return "muscle"; }

  void evaluate(const Mat3& F, const MaterialPointData& data, double* psi, Mat3* P, Mat9* dPdF) const override {
    detail::fixedCorotatedEvaluate(mu_, lambda_, F, psi, P, dPdF);
    double fibre_psi = 0.0;
    Mat3 fibre_P;
    Mat9 fibre_K;
    muscle::evaluateFibreTerm(lambda_ofl_, F, data.fibre_direction, data.activation, psi ? &fibre_psi : nullptr,
                              P ? &fibre_P : nullptr, dPdF ? &fibre_K : nullptr);
    if (psi) *psi += sigma_max_ * fibre_psi;
    if (P) *P += sigma_max_ * fibre_P;
    if (dPdF) *dPdF += sigma_max_ * fibre_K;
  }

  void addToApproximateTangent(const Mat3& F, const MaterialPointData& data, Mat9& K) const override {
    Mat9 fibre_K;
    muscle::evaluateFibreTerm(lambda_ofl_, F, data.fibre_direction, data.activation, nullptr, nullptr, &fibre_K,
                              /*spd_hessian=*/true);
    K += std::max(sigma_max_, 0.0) * fibre_K;
  }

  std::vector<std::string> splitNames() const override { return {"pxpbd"}; }

  MaterialSplit split(const std::string& name) const override {
    MaterialSplit s;
    s.name = detail::resolveSplitName(this->name(), name, splitNames());
    const double lambda_ofl = lambda_ofl_;
    const MaterialTermEvaluator fibre = [lambda_ofl](const Mat3& F, const MaterialPointData& data, double* psi,
                                                     Mat3* P, Mat9* dPdF) {
      muscle::evaluateFibreTerm(lambda_ofl, F, data.fibre_direction, data.activation, psi, P, dPdF);
    };
    s.terms = {detail::corotatedStretchTerm(mu_), detail::volumeTerm("lambda", lambda_),
               {"fibre", sigma_max_, fibre, {}}};
    s.constant = 0.0;
    return s;
  }

  bool isIsotropic() const override { return false; }
  LameParameters modelParameters() const override { return {mu_, lambda_}; }

 private:
  double mu_;
  double lambda_;
  double sigma_max_;
  double lambda_ofl_;
};

}  // namespace

std::unique_ptr<Material> makeMuscle(double mu, double lambda, double sigma_max, double lambda_ofl) {
  if (!std::isfinite(mu) || !std::isfinite(lambda) || !std::isfinite(sigma_max) || !std::isfinite(lambda_ofl))
    throw std::invalid_argument("makeMuscle: mu, lambda, sigma_max and lambda_ofl must be finite");
  if (sigma_max < 0.0) throw std::invalid_argument("makeMuscle: sigma_max must be >= 0");
  if (!(lambda_ofl > 0.0)) throw std::invalid_argument("makeMuscle: lambda_ofl must be > 0");
  return std::make_unique<Muscle>(mu, lambda, sigma_max, lambda_ofl);
}

}  // namespace pbdlab
