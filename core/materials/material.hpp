#pragma once
// Hyperelastic energy densities Psi(F) with P = dPsi/dF and dP/dF (9x9, column-major vec, see
// types.hpp). Each model takes the parameters that appear in its own formula; how those come
// from Young's modulus and Poisson's ratio is the explicit LameMapping below (PBNG §9).
//
// Three views of one model (docs/materials.md):
//  - evaluate(): Psi, P and dP/dF in one call (one SVD for the corotated models);
//  - approximateTangent(): PBNG's SPD tangent 2 mu I_9 + lambda vec(cof F) vec(cof F)^T
//    (PBNG TOG eq. 32-34) with the Lamé parameters of (E, nu), no SVD, no eigen-solve;
//  - split(): the energy as a sum of stiffness-weighted terms, sum_k k_k Psi~_k(F) = Psi(F) + c,
//    one XPBD constraint C_k = sqrt(2 V Psi~_k) with compliance 1/k_k per term.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/support/types.hpp"

namespace pbdlab {

struct LameParameters {
  double mu = 0.0;
  double lambda = 0.0;
};

// mu = E / (2 (1 + nu)), lambda = E nu / ((1 + nu)(1 - 2 nu)) (PBNG eq. 9). Throws
// std::invalid_argument for E <= 0, nu outside (-1, 0.5) or non-finite input.
LameParameters lameFromYoungPoisson(double youngs_modulus, double poisson_ratio);

// Which mu and lambda PBNG eq. 32 writes its approximate tangent with (Material::approximateTangent).
enum class TangentParameters { kYoungsPoisson, kModel };

// Per-element (per quadrature point) data of a material. Isotropic models ignore it.
struct MaterialPointData {
  // The muscle's fibre direction v in the rest configuration (normalized by the model; a zero
  // vector switches the fibre term off).
  Vec3 fibre_direction = Vec3::UnitX();
  // The muscle's activation alpha, expected in [0, 1] (not checked: evaluate() is hot).
  double activation = 0.0;
};

// Psi~_k, P~_k = dPsi~_k/dF and dP~_k/dF of one split term at F; any output may be null.
using MaterialTermEvaluator =
    std::function<void(const Mat3& F, const MaterialPointData& data, double* psi, Mat3* P, Mat9* dPdF)>;

// One term of a split: the energy density contributes stiffness * Psi~(F). For XPBD the
// constraint is C = sqrt(2 V Psi~) with compliance 1/stiffness (so 1/2 C^2 stiffness = V k Psi~).
// A term may be NEGATIVE for some F: the "developed" Neo-Hookean Psi~ = (I2 - 2 I3 - 1)/2 is
// -(s - 1)^2 (2 s + 1)/2 < 0 under pure dilation F = s I, s > 1, and Macklin's (I2 - 3)/2 is
// negative under compression. A solver then uses C = sqrt(2 V |Psi~|) with the force-consistent
// gradient dC/dx = V dPsi~/dx / C (the papers' README): -grad C k C = -k V dPsi~/dx for either sign.
//
// A term Psi~ = r(F)^2 / 2 may carry r itself (`signed_root`): its constraint is then the signed
// C = sign(sum_q V_q r_q) sqrt(2 sum_q V_q Psi~_q), which for one quadrature point is sqrt(V) r,
// smooth through r = 0 (Macklin and Mueller 2021's hydrostatic C_H = det F - gamma). Without
// it C = sqrt(2 V |Psi~|) >= 0, a cone where Psi~ changes sign. While the sign holds, the XPBD
// iterates of the two are the same (the multiplier carries the sign).
using MaterialTermRoot = std::function<double(const Mat3& F, const MaterialPointData& data)>;

// What a term is, for kernels that evaluate it in closed form rather than through `evaluate`
// (the XPBD family's P1 lanes, solvers/pbd_xpbd/p1_lanes.hpp; the formulas are
// closedFormTerm, core/materials/term_kinds.hpp). kGeneric: only `evaluate` knows. A kind
// names the formula `evaluate` computes: test_term_kinds checks the two against each other.
enum class MaterialTermKind {
  kGeneric,
  kCorotatedStretch,       // |F - R|^2, R the polar rotation (PXPBD eq. 3)
  kVolume,                 // (J - s)^2 / 2, s = shift (1, or Macklin and Mueller's gamma)
  kInvariantI2,            // (I2 - s) / 2, I2 = |F|^2 (s = 0 or 3)
  kNeoHookeanShape,        // (I2 - 2 J - 1) / 2 (neo_hookean "developed")
  kStableNeoHookeanShape,  // (I_C - 3)/2 - 3/4 (J - 1) - 1/2 log((I_C + 1)/4) (stable_neo_hookean)
};

struct MaterialTerm {
  std::string name;        // e.g. "mu", "lambda", "fibre"
  double stiffness = 0.0;  // k_k (Pa): mu, lambda, lambda_hat or sigma_max
  MaterialTermEvaluator evaluate;
  MaterialTermRoot signed_root;  // r(F) with Psi~ = r^2 / 2, or empty (kVolume's: J - s)
  MaterialTermKind kind = MaterialTermKind::kGeneric;
  double shift = 0.0;  // the kind's constant s (above)
};

// The energy density as sum_k terms[k].stiffness * Psi~_k(F) = Psi(F) + constant, for every F
// (and every MaterialPointData). The terms are self-contained (they hold copies of the model's
// parameters) and outlive the Material that made them.
struct MaterialSplit {
  std::string name;
  std::vector<MaterialTerm> terms;
  double constant = 0.0;  // c
  int numTerms() const { return static_cast<int>(terms.size()); }
};

class Material {
 public:
  virtual ~Material() = default;
  virtual std::string name() const = 0;

  // Psi, P = dPsi/dF and dP/dF (9x9, vec ordering of types.hpp) at F in one call; any output
  // pointer may be null (and the work only it needs is skipped).
  virtual void evaluate(const Mat3& F, const MaterialPointData& data, double* psi, Mat3* P,
                        Mat9* dPdF) const = 0;

  // PBNG's symmetric positive semi-definite approximate tangent (TOG eq. 32-34):
  // 2 mu I_9 + lambda vec(cof F) vec(cof F)^T, each parameter clamped at zero (lambda < 0 for
  // nu < 0 would break definiteness). With kYoungsPoisson (the default) mu and lambda are the
  // Lamé parameters of (E, nu), as the paper writes it ("mu and lambda are the associated Lamé
  // parameters computed from Young's modulus", eq. 9); with kModel the model's own
  // (modelParameters(): lambda_hat = mu + lambda for neo_hookean, 4/3 mu and lambda + 5/6 mu for
  // stable_neo_hookean under the matched mapping). No SVD, no eigen-solve; PSD for every F
  // (positive definite when mu > 0), inverted and singular F included. The muscle model adds
  // the fibre term's Hessian with its negative curvature along the fibre removed (muscle.cpp).
  Mat9 approximateTangent(const Mat3& F, const MaterialPointData& data,
                          TangentParameters which = TangentParameters::kYoungsPoisson) const;
  LameParameters tangentParameters(TangentParameters which) const {
    return which == TangentParameters::kModel ? modelParameters() : youngsPoissonLame();
  }

  // The Lamé parameters of (E, nu) this material was made from (makeMaterial records them); a
  // model made from its own parameters (makeNeoHookean, ...) reports its small-strain moduli,
  // the (E, nu) Lamé parameters of the matched mapping.
  LameParameters youngsPoissonLame() const {
    return youngs_poisson_lame_.value_or(smallStrainParameters());
  }
  void recordYoungsPoissonLame(const LameParameters& lame) { youngs_poisson_lame_ = lame; }

  // The splits this model offers (the first is the default) and one of them by name ("" is the
  // default). Throws std::invalid_argument, listing the valid names, for an unknown name or a
  // split the parameters do not allow (Macklin's with lambda_hat = 0).
  virtual std::vector<std::string> splitNames() const = 0;
  std::string defaultSplitName() const { return splitNames().front(); }
  virtual MaterialSplit split(const std::string& name = "") const = 0;

  // Single-output wrappers of evaluate() (default MaterialPointData: isotropic callers, tests).
  double energyDensity(const Mat3& F, const MaterialPointData& data = {}) const {
    double psi = 0.0;
    evaluate(F, data, &psi, nullptr, nullptr);
    return psi;
  }
  Mat3 firstPiola(const Mat3& F, const MaterialPointData& data = {}) const {
    Mat3 P;
    evaluate(F, data, nullptr, &P, nullptr);
    return P;
  }
  Mat9 firstPiolaDerivative(const Mat3& F, const MaterialPointData& data = {}) const {
    Mat9 K;
    evaluate(F, data, nullptr, nullptr, &K);
    return K;
  }

  // Psi(Q F R) = Psi(F) for rotations Q, R: the tangent is block diagonal in F's SVD frame,
  // which the Hessian projection uses. The anisotropic muscle model says false (it is
  // invariant under Q F only).
  virtual bool isIsotropic() const { return true; }
  // The parameters of the model's own formula (e.g. lambda_hat for PBNG eq. 8; the corotated
  // part's mu and lambda for the muscle).
  virtual LameParameters modelParameters() const = 0;
  // The Lamé parameters of linear elasticity that dP/dF at F = I equals (the model's small-strain
  // moduli): modelParameters() for the corotated, StVK and muscle models, (mu, lambda_hat - mu)
  // for neo_hookean, (3/4 mu, lambda - 5/8 mu) for stable_neo_hookean.
  virtual LameParameters smallStrainParameters() const { return modelParameters(); }

 protected:
  // What a model adds to eq. 32 (the muscle's fibre term); nothing for the isotropic models.
  virtual void addToApproximateTangent(const Mat3& F, const MaterialPointData& data, Mat9& K) const;

 private:
  std::optional<LameParameters> youngs_poisson_lame_;
};

// How the model's parameters come from the Lamé parameters of (E, nu):
//  - kRaw: the model's mu and lambda are the Lamé parameters themselves;
//  - kMatchedToLinear: chosen so that dP/dF at F = I equals linear elasticity's
//    (PBNG §9): identity for corotated, muscle and StVK, lambda_hat = mu + lambda for PBNG
//    eq. 8, Smith et al. 2018's mu = 4/3 mu_L, lambda = lambda_L + 5/6 mu_L for stable
//    Neo-Hookean.
enum class LameMapping { kRaw, kMatchedToLinear };

enum class MaterialModel { kFixedCorotated, kNeoHookean, kStableNeoHookean, kStVenantKirchhoff, kMuscle };

// Scene names: "fixed_corotated", "neo_hookean", "stable_neo_hookean", "stvk", "muscle";
// "raw", "matched".
MaterialModel parseMaterialModel(const std::string& name);  // throws std::invalid_argument
std::string materialModelName(MaterialModel model);
LameMapping parseLameMapping(const std::string& name);  // throws std::invalid_argument
std::string lameMappingName(LameMapping mapping);
std::vector<std::string> materialModelNames();

struct MaterialSpec {
  MaterialModel model = MaterialModel::kStableNeoHookean;
  double youngs_modulus = 1e5;
  double poisson_ratio = 0.3;
  LameMapping mapping = LameMapping::kMatchedToLinear;
  double density = 1000.0;
  // Muscle only (PXPBD eq. 6-8; the paper gives neither value). sigma_max (Pa) is the peak
  // active fibre stress at l = lambda_ofl (Blemker et al. 2005's physiological 3e5 Pa belongs
  // to real tissue moduli). The default 3e4 Pa is 0.3 E for the default E = 1e5: a free bar
  // then shortens about 23% along its fibres at full activation. Scale it with E.
  double sigma_max = 3e4;
  // Optimal fibre stretch lambda_ofl (dimensionless): the active force-length curve peaks at
  // l = |F v| = lambda_ofl; 1 = the rest length.
  double lambda_ofl = 1.0;
};

// The parameters of the model's formula for this spec (see LameMapping).
LameParameters modelParameters(const MaterialSpec& spec);

std::unique_ptr<Material> makeMaterial(const MaterialSpec& spec);

// The model classes, for tests and kernels that want them directly.
std::unique_ptr<Material> makeFixedCorotated(double mu, double lambda);
std::unique_ptr<Material> makeNeoHookean(double mu, double lambda_hat);
std::unique_ptr<Material> makeStableNeoHookean(double mu, double lambda);
std::unique_ptr<Material> makeStVenantKirchhoff(double mu, double lambda);
// Fixed corotated (mu, lambda) plus the fibre term of PXPBD eq. 6-8 (core/materials/muscle.hpp).
// Throws std::invalid_argument for non-finite input, sigma_max < 0 or lambda_ofl <= 0.
std::unique_ptr<Material> makeMuscle(double mu, double lambda, double sigma_max, double lambda_ofl);

// Isotropic linear elasticity's tangent 2 mu sym + lambda tr, as a 9x9 (for tests at F = I).
Mat9 linearElasticityTangent(const LameParameters& lame);

// PBNG TOG eq. 32: 2 mu I_9 + lambda vec(cof F) vec(cof F)^T, mu and lambda clamped at 0 (the
// default approximateTangent).
Mat9 pbngApproximateTangent(const Mat3& F, const LameParameters& parameters);

}  // namespace pbdlab
