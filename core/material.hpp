#pragma once
// Hyperelastic energy densities Psi(F) with P = dPsi/dF and dP/dF (9x9, column-major vec, see
// types.hpp). Each model takes the parameters that appear in its own formula; how those come
// from Young's modulus and Poisson's ratio is the explicit LameMapping below (PBNG §9).
#include <memory>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace pbdlab {

struct LameParameters {
  double mu = 0.0;
  double lambda = 0.0;
};

// mu = E / (2 (1 + nu)), lambda = E nu / ((1 + nu)(1 - 2 nu)) (PBNG eq. 9). Throws
// std::invalid_argument for E <= 0, nu outside (-1, 0.5) or non-finite input.
LameParameters lameFromYoungPoisson(double youngs_modulus, double poisson_ratio);

class Material {
 public:
  virtual ~Material() = default;
  virtual std::string name() const = 0;
  virtual double energyDensity(const Mat3& F) const = 0;
  virtual Mat3 firstPiola(const Mat3& F) const = 0;
  virtual Mat9 firstPiolaDerivative(const Mat3& F) const = 0;
  // Psi(Q F R) = Psi(F) for rotations Q, R: the tangent is block diagonal in F's SVD frame,
  // which the Hessian projection uses. The anisotropic muscle model will say false.
  virtual bool isIsotropic() const { return true; }
  // The parameters of the model's own formula (e.g. lambda_hat for PBNG eq. 8).
  virtual LameParameters modelParameters() const = 0;
};

// How the model's parameters come from the Lamé parameters of (E, nu):
//  - kRaw: the model's mu and lambda are the Lamé parameters themselves;
//  - kMatchedToLinear: chosen so that dP/dF at F = I equals linear elasticity's
//    (PBNG §9): identity for corotated and StVK, lambda_hat = mu + lambda for PBNG eq. 8,
//    Smith et al. 2018's mu = 4/3 mu_L, lambda = lambda_L + 5/6 mu_L for stable Neo-Hookean.
enum class LameMapping { kRaw, kMatchedToLinear };

enum class MaterialModel { kFixedCorotated, kNeoHookean, kStableNeoHookean, kStVenantKirchhoff };

// Scene names: "fixed_corotated", "neo_hookean", "stable_neo_hookean", "stvk"; "raw", "matched".
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
};

// The parameters of the model's formula for this spec (see LameMapping).
LameParameters modelParameters(const MaterialSpec& spec);

std::unique_ptr<Material> makeMaterial(const MaterialSpec& spec);

// The model classes, for tests and kernels that want them directly.
std::unique_ptr<Material> makeFixedCorotated(double mu, double lambda);
std::unique_ptr<Material> makeNeoHookean(double mu, double lambda_hat);
std::unique_ptr<Material> makeStableNeoHookean(double mu, double lambda);
std::unique_ptr<Material> makeStVenantKirchhoff(double mu, double lambda);

// Isotropic linear elasticity's tangent 2 mu sym + lambda tr, as a 9x9 (for tests at F = I).
Mat9 linearElasticityTangent(const LameParameters& lame);

}  // namespace pbdlab
