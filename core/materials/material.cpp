#include "core/materials/material.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/materials/polar_svd.hpp"

namespace pbdlab {
namespace {

struct ModelName {
  MaterialModel model;
  const char* name;
};
constexpr ModelName kModelNames[] = {
    {MaterialModel::kFixedCorotated, "fixed_corotated"},
    {MaterialModel::kNeoHookean, "neo_hookean"},
    {MaterialModel::kStableNeoHookean, "stable_neo_hookean"},
    {MaterialModel::kStVenantKirchhoff, "stvk"},
    {MaterialModel::kMuscle, "muscle"},
};

struct MappingName {
  LameMapping mapping;
  const char* name;
};
constexpr MappingName kMappingNames[] = {
    {LameMapping::kRaw, "raw"},
    {LameMapping::kMatchedToLinear, "matched"},
};

template <typename Table>
std::string joinNames(const Table& table) {
  std::string out;
  for (const auto& entry : table) {
    if (!out.empty()) out += ", ";
    out += entry.name;
  }
  return out;
}

}  // namespace

LameParameters lameFromYoungPoisson(double youngs_modulus, double poisson_ratio) {
  const double E = youngs_modulus;
  const double nu = poisson_ratio;
  const auto fail = [&](const char* what) {
    std::ostringstream message;
    message << what << " (got E = " << E << ", nu = " << nu << ")";
    throw std::invalid_argument(message.str());
  };
  if (!std::isfinite(E) || !std::isfinite(nu))
    fail("Young's modulus and Poisson's ratio must be finite");
  if (!(E > 0.0)) fail("Young's modulus must be > 0");
  // nu -> -1 makes mu infinite, nu -> 0.5 makes lambda infinite (PBNG eq. 9).
  if (!(nu > -1.0 && nu < 0.5)) fail("Poisson's ratio must lie in (-1, 0.5)");
  return {E / (2.0 * (1.0 + nu)), E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))};
}

MaterialModel parseMaterialModel(const std::string& name) {
  for (const auto& entry : kModelNames)
    if (name == entry.name) return entry.model;
  throw std::invalid_argument("unknown material model '" + name +
                              "'; valid names: " + joinNames(kModelNames));
}

std::string materialModelName(MaterialModel model) {
  for (const auto& entry : kModelNames)
    if (model == entry.model) return entry.name;
  throw std::invalid_argument("materialModelName: invalid MaterialModel value");
}

LameMapping parseLameMapping(const std::string& name) {
  for (const auto& entry : kMappingNames)
    if (name == entry.name) return entry.mapping;
  throw std::invalid_argument("unknown Lame mapping '" + name +
                              "'; valid names: " + joinNames(kMappingNames));
}

std::string lameMappingName(LameMapping mapping) {
  for (const auto& entry : kMappingNames)
    if (mapping == entry.mapping) return entry.name;
  throw std::invalid_argument("lameMappingName: invalid LameMapping value");
}

std::vector<std::string> materialModelNames() {
  std::vector<std::string> names;
  for (const auto& entry : kModelNames) names.emplace_back(entry.name);
  return names;
}

LameParameters modelParameters(const MaterialSpec& spec) {
  const LameParameters lame = lameFromYoungPoisson(spec.youngs_modulus, spec.poisson_ratio);
  if (spec.mapping == LameMapping::kRaw) return lame;
  switch (spec.model) {
    case MaterialModel::kFixedCorotated:
    case MaterialModel::kStVenantKirchhoff:
    case MaterialModel::kMuscle:  // its corotated part; the fibre term is zero near F = I at alpha = 0
      return lame;  // their tangent at F = I already is linear elasticity's
    case MaterialModel::kNeoHookean:
      return {lame.mu, lame.mu + lame.lambda};  // lambda_hat of PBNG eq. 8, §9
    case MaterialModel::kStableNeoHookean:
      // Inverts Smith et al. 2018's mu_L = 3 mu/4, lambda_L = lambda - 5 mu/8.
      return {4.0 / 3.0 * lame.mu, lame.lambda + 5.0 / 6.0 * lame.mu};
  }
  throw std::invalid_argument("modelParameters: invalid MaterialModel value");
}

namespace {

std::unique_ptr<Material> makeModel(const MaterialSpec& spec) {
  const LameParameters p = modelParameters(spec);
  switch (spec.model) {
    case MaterialModel::kFixedCorotated:
      return makeFixedCorotated(p.mu, p.lambda);
    case MaterialModel::kNeoHookean:
      return makeNeoHookean(p.mu, p.lambda);
    case MaterialModel::kStableNeoHookean:
      return makeStableNeoHookean(p.mu, p.lambda);
    case MaterialModel::kStVenantKirchhoff:
      return makeStVenantKirchhoff(p.mu, p.lambda);
    case MaterialModel::kMuscle:
      return makeMuscle(p.mu, p.lambda, spec.sigma_max, spec.lambda_ofl);
  }
  throw std::invalid_argument("makeMaterial: invalid MaterialModel value");
}

}  // namespace

std::unique_ptr<Material> makeMaterial(const MaterialSpec& spec) {
  std::unique_ptr<Material> material = makeModel(spec);
  material->recordYoungsPoissonLame(lameFromYoungPoisson(spec.youngs_modulus, spec.poisson_ratio));
  return material;
}

Mat9 linearElasticityTangent(const LameParameters& lame) {
  // P = mu (H + H^T) + lambda tr(H) I: dP[i+3j]/dH[k+3l] =
  // mu (d_ik d_jl + d_il d_jk) + lambda d_ij d_kl.
  Mat9 K = Mat9::Zero();
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) {
      K(i + 3 * j, i + 3 * j) += lame.mu;
      K(i + 3 * j, j + 3 * i) += lame.mu;
      if (i == j)
        for (int k = 0; k < 3; ++k) K(i + 3 * i, k + 3 * k) += lame.lambda;
    }
  return K;
}

Mat9 pbngApproximateTangent(const Mat3& F, const LameParameters& parameters) {
  // Clamped at zero so that the result is PSD for any parameters (lambda < 0 for nu < 0).
  const double mu = std::max(parameters.mu, 0.0);
  const double lambda = std::max(parameters.lambda, 0.0);
  // sqrt(lambda) g g^T sqrt(lambda): entries s_i s_j, so K is exactly symmetric.
  const Vec9 s = std::sqrt(lambda) * flatten(cofactor(F));
  Mat9 K = s * s.transpose();
  K.diagonal().array() += 2.0 * mu;
  return K;
}

Mat9 Material::approximateTangent(const Mat3& F, const MaterialPointData& data, TangentParameters which) const {
  Mat9 K = pbngApproximateTangent(F, tangentParameters(which));
  addToApproximateTangent(F, data, K);
  return K;
}

void Material::addToApproximateTangent(const Mat3&, const MaterialPointData&, Mat9&) const {}

}  // namespace pbdlab
