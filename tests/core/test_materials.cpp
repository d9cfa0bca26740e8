// Every material model: value, gradient and Hessian checked by one generic finite-difference
// test (STYLE.md 1), at random F in three families, plus rest state, invariance, the Lame
// mapping and the parameter parsing.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <Eigen/Geometry>
#include <Eigen/LU>
#include <gtest/gtest.h>

#include "core/material.hpp"
#include "core/materials/polar_svd.hpp"

namespace pbdlab {

// Found by argument-dependent lookup, so it lives in MaterialModel's namespace.
void PrintTo(MaterialModel model, std::ostream* os) { *os << materialModelName(model); }

namespace {

// E and nu of every test material; nu = 0.4 makes lambda dominate (lambda = 4 mu) as in the
// near-incompressible scenes, so a wrong volumetric term cannot hide behind the mu terms.
constexpr double kYoung = 1e5;
constexpr double kPoisson = 0.4;
constexpr int kSamplesPerFamily = 25;

// Central differences with step h = 1e-6 on the entries of F (dimensionless, O(1)). Their
// error is ~h^2 |third derivative| (truncation) + ~1e-16 |value| / h (rounding), about 1e-10
// relative here. Measured (Release, GCC 12, libstdc++ distributions, these seeds) as the largest relative Frobenius
// error |FD - analytic| / |analytic| over 25 samples:
//                          well-conditioned   inverted       near-singular
//   fixed_corotated        P 9.7e-10          P 3.7e-10      P 2.6e-10
//                          dP 3.5e-10         dP 1.7e-10     dP 2.5e-10
//   neo_hookean            P 2.2e-10          P 2.0e-10      P 1.4e-10
//                          dP 1.2e-10         dP 1.1e-10     dP 1.1e-10
//   stable_neo_hookean     P 2.6e-10          P 2.7e-10      P 1.8e-10
//                          dP 1.2e-10         dP 1.6e-10     dP 1.0e-10
//   stvk                   P 1.2e-10          P 1.4e-10      P 1.7e-10
//                          dP 9.9e-11         dP 1.1e-10     dP 9.7e-11
//   corotated at sigma_2 + sigma_3 = 1e-2: P 8.6e-10, dP 4.1e-9 (truncation, (h / 1e-2)^2).
// kFdTolerance = 1e-7 is 100x above the families' worst and 25x above the near-set case, for
// other compilers and flags; a wrong term is far above it (dropping stable Neo-Hookean's log
// Hessian term gives 1.7e-2, adding 1e-3 to each sigma_i + sigma_j in dR/dF gives 2.6e-4).
constexpr double kFdStep = 1e-6;
constexpr double kFdTolerance = 1e-7;

enum class Family { kWellConditioned, kInverted, kNearSingular };

std::string familyName(Family family) {
  switch (family) {
    case Family::kWellConditioned: return "well_conditioned";
    case Family::kInverted: return "inverted";
    case Family::kNearSingular: return "near_singular";
  }
  return "unknown";
}

// Readable parameters in gtest's messages.
void PrintTo(Family family, std::ostream* os) { *os << familyName(family); }

const MaterialModel kAllModels[] = {MaterialModel::kFixedCorotated, MaterialModel::kNeoHookean,
                                    MaterialModel::kStableNeoHookean,
                                    MaterialModel::kStVenantKirchhoff};

MaterialSpec specFor(MaterialModel model, LameMapping mapping = LameMapping::kMatchedToLinear) {
  MaterialSpec spec;
  spec.model = model;
  spec.youngs_modulus = kYoung;
  spec.poisson_ratio = kPoisson;
  spec.mapping = mapping;
  return spec;
}

Mat3 randomRotation(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  Eigen::Quaterniond q(normal(rng), normal(rng), normal(rng), normal(rng));
  q.normalize();
  return q.toRotationMatrix();
}

double uniform(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

Mat3 withSingularValues(std::mt19937& rng, const Vec3& s) {
  return randomRotation(rng) * s.asDiagonal() * randomRotation(rng).transpose();
}

// Sample `index` of a family. The magnitudes are kept >= 0.2 apart, so every F is at distance
// >= 0.2 from the set where the corotated model has no derivative (sigma_2 + sigma_3 = 0).
Mat3 randomF(Family family, int index, std::mt19937& rng) {
  Vec3 s(uniform(rng, 1.2, 1.6), uniform(rng, 0.8, 1.0), uniform(rng, 0.4, 0.6));
  switch (family) {
    case Family::kWellConditioned:
      break;
    case Family::kInverted:
      s(index % 3) = -s(index % 3);  // any one of them: the SVD must move the sign itself
      break;
    case Family::kNearSingular:
      s(2) = (index % 2 == 0 ? 1.0 : -1.0) * uniform(rng, 1e-3, 2e-3);
      break;
  }
  return withSingularValues(rng, s);
}

double relativeError(const Eigen::MatrixXd& approx, const Eigen::MatrixXd& exact) {
  return (approx - exact).norm() / exact.norm();
}

Mat3 fdFirstPiola(const Material& m, const Mat3& F, double h) {
  Mat3 P;
  for (int a = 0; a < 9; ++a) {
    Mat3 Fp = F, Fm = F;
    Fp.data()[a] += h;
    Fm.data()[a] -= h;
    P.data()[a] = (m.energyDensity(Fp) - m.energyDensity(Fm)) / (2.0 * h);
  }
  return P;
}

Mat9 fdFirstPiolaDerivative(const Material& m, const Mat3& F, double h) {
  Mat9 K;
  for (int b = 0; b < 9; ++b) {
    Mat3 Fp = F, Fm = F;
    Fp.data()[b] += h;
    Fm.data()[b] -= h;
    K.col(b) = flatten(m.firstPiola(Fp) - m.firstPiola(Fm)) / (2.0 * h);
  }
  return K;
}

Mat9 fdPolarRotationDerivative(const Mat3& F, double h) {
  Mat9 K;
  for (int b = 0; b < 9; ++b) {
    Mat3 Fp = F, Fm = F;
    Fp.data()[b] += h;
    Fm.data()[b] -= h;
    K.col(b) = flatten(polarRotation(Fp) - polarRotation(Fm)) / (2.0 * h);
  }
  return K;
}

struct FdErrors {
  double gradient = 0.0;  // Psi -> P
  double hessian = 0.0;   // P -> dP/dF
};

// The FD check of one material at one F, with the non-vacuity guard: |P| and |dP/dF| must be
// of the order of the model's mu, else a zero implementation would pass.
FdErrors checkDerivatives(const Material& m, const Mat3& F) {
  const double mu = m.modelParameters().mu;
  const Mat3 P = m.firstPiola(F);
  const Mat9 K = m.firstPiolaDerivative(F);
  EXPECT_GT(P.norm(), 1e-2 * mu) << "gradient near zero: FD check would be vacuous";
  EXPECT_GT(K.norm(), 1e-1 * mu) << "Hessian near zero: FD check would be vacuous";
  return {relativeError(fdFirstPiola(m, F, kFdStep), P),
          relativeError(fdFirstPiolaDerivative(m, F, kFdStep), K)};
}

// ---- One energy, three answers, one test: every model x every family. ----

class MaterialDerivatives : public ::testing::TestWithParam<std::tuple<MaterialModel, Family>> {};

TEST_P(MaterialDerivatives, MatchCentralFiniteDifferences) {
  const auto [model, family] = GetParam();
  const auto material = makeMaterial(specFor(model));
  std::mt19937 rng(20240611u + 7u * static_cast<unsigned>(family));
  FdErrors worst;
  for (int n = 0; n < kSamplesPerFamily; ++n) {
    const Mat3 F = randomF(family, n, rng);
    if (family == Family::kWellConditioned) {
      ASSERT_GT(F.determinant(), 0.0);
    } else if (family == Family::kInverted) {
      ASSERT_LT(F.determinant(), 0.0);
    }
    const FdErrors e = checkDerivatives(*material, F);
    EXPECT_LT(e.gradient, kFdTolerance) << "sample " << n << "\nF =\n" << F;
    EXPECT_LT(e.hessian, kFdTolerance) << "sample " << n << "\nF =\n" << F;
    worst.gradient = std::max(worst.gradient, e.gradient);
    worst.hessian = std::max(worst.hessian, e.hessian);
  }
  RecordProperty("max_rel_error_P", std::to_string(worst.gradient));
  RecordProperty("max_rel_error_dPdF", std::to_string(worst.hessian));
  std::printf("[ measured ] %s %s: Psi->P %.2e, P->dP/dF %.2e\n", materialModelName(model).c_str(),
              familyName(family).c_str(), worst.gradient, worst.hessian);
}

TEST_P(MaterialDerivatives, HessianIsSymmetric) {
  // dP/dF is the Hessian of Psi with respect to vec F.
  const auto [model, family] = GetParam();
  const auto material = makeMaterial(specFor(model));
  std::mt19937 rng(99u + static_cast<unsigned>(family));
  for (int n = 0; n < kSamplesPerFamily; ++n) {
    const Mat9 K = material->firstPiolaDerivative(randomF(family, n, rng));
    EXPECT_LT((K - K.transpose()).norm(), 1e-13 * K.norm()) << "sample " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllModels, MaterialDerivatives,
    ::testing::Combine(::testing::ValuesIn(kAllModels),
                       ::testing::Values(Family::kWellConditioned, Family::kInverted,
                                         Family::kNearSingular)),
    [](const auto& info) {
      return materialModelName(std::get<0>(info.param)) + "_" +
             familyName(std::get<1>(info.param));
    });

// ---- Per-model properties. ----

class MaterialModelTest : public ::testing::TestWithParam<MaterialModel> {};

TEST_P(MaterialModelTest, RestStateHasZeroEnergyAndStress) {
  const auto material = makeMaterial(specFor(GetParam()));
  const double mu = material->modelParameters().mu;
  const Mat3 I = Mat3::Identity();
  EXPECT_LE(std::abs(material->energyDensity(I)), 1e-14 * mu);
  EXPECT_LE(material->firstPiola(I).norm(), 1e-14 * mu);
}

TEST_P(MaterialModelTest, IsRotationInvariant) {
  const auto material = makeMaterial(specFor(GetParam()));
  std::mt19937 rng(4242u);
  for (Family family : {Family::kWellConditioned, Family::kInverted, Family::kNearSingular})
    for (int n = 0; n < kSamplesPerFamily; ++n) {
      const Mat3 F = randomF(family, n, rng);
      const Mat3 Q = randomRotation(rng);
      const double psi = material->energyDensity(F);
      EXPECT_NEAR(material->energyDensity(Q * F), psi, 1e-12 * std::abs(psi))
          << familyName(family) << " sample " << n;
      const Mat3 P = material->firstPiola(F);
      EXPECT_LT(relativeError(material->firstPiola(Q * F), Q * P), 1e-12)
          << familyName(family) << " sample " << n;
    }
}

TEST_P(MaterialModelTest, MatchedMappingReproducesLinearElasticityAtRest) {
  const MaterialModel model = GetParam();
  const LameParameters lame = lameFromYoungPoisson(kYoung, kPoisson);
  const Mat9 linear = linearElasticityTangent(lame);
  const Mat3 I = Mat3::Identity();

  const auto matched = makeMaterial(specFor(model, LameMapping::kMatchedToLinear));
  EXPECT_LT(relativeError(matched->firstPiolaDerivative(I), linear), 1e-10);

  // The mapping matters: the raw Lame values give another small-strain material for both
  // Neo-Hookean models (and change nothing for corotated and StVK).
  const auto raw = makeMaterial(specFor(model, LameMapping::kRaw));
  const double raw_error = relativeError(raw->firstPiolaDerivative(I), linear);
  if (model == MaterialModel::kNeoHookean || model == MaterialModel::kStableNeoHookean) {
    EXPECT_GT(raw_error, 0.05);
  } else {
    EXPECT_LT(raw_error, 1e-10);
  }
}

TEST_P(MaterialModelTest, FactoryAgreesWithSpec) {
  const MaterialModel model = GetParam();
  const MaterialSpec spec = specFor(model);
  const auto material = makeMaterial(spec);
  EXPECT_EQ(material->name(), materialModelName(model));
  EXPECT_EQ(parseMaterialModel(material->name()), model);
  EXPECT_DOUBLE_EQ(material->modelParameters().mu, modelParameters(spec).mu);
  EXPECT_DOUBLE_EQ(material->modelParameters().lambda, modelParameters(spec).lambda);
}

INSTANTIATE_TEST_SUITE_P(AllModels, MaterialModelTest, ::testing::ValuesIn(kAllModels),
                         [](const auto& info) { return materialModelName(info.param); });

// ---- Fixed corotated near the set where it has no derivative. ----

// In the rotation-variant SVD (sigma_1 >= sigma_2 >= |sigma_3|), R = U V^T and so the
// corotated P and dP/dF are undefined exactly on {sigma_2 + sigma_3 = 0}: inverted F whose two
// smallest singular values are equal in magnitude. R jumps across it.
TEST(FixedCorotated, RotationJumpsAcrossTheSetWithoutDerivative) {
  const double d = 1e-8;
  const Mat3 R_above = polarRotation(Vec3(2.0, 1.0 + d, -1.0).asDiagonal().toDenseMatrix());
  const Mat3 R_below = polarRotation(Vec3(2.0, 1.0 - d, -1.0).asDiagonal().toDenseMatrix());
  EXPECT_LT((R_above - Mat3::Identity()).norm(), 1e-12);
  EXPECT_LT((R_below - Vec3(1.0, -1.0, -1.0).asDiagonal().toDenseMatrix()).norm(), 1e-12);
}

TEST(FixedCorotated, DerivativesHoldInTheNeighbourhoodOfThatSet) {
  // sigma = (1.3, 0.505, -0.495): inverted, sigma_2 + sigma_3 = 1e-2. dR/dF there scales like
  // 1/(sigma_2 + sigma_3) and its FD truncation error like (h / 1e-2)^2 = 1e-8, still far
  // inside kFdTolerance with h = 1e-6.
  const auto material = makeMaterial(specFor(MaterialModel::kFixedCorotated));
  std::mt19937 rng(7u);
  double worst_gradient = 0.0, worst_hessian = 0.0;
  for (int n = 0; n < 10; ++n) {
    const Mat3 F = withSingularValues(rng, Vec3(1.3, 0.505, -0.495));
    const RotationVariantSvd svd = rotationVariantSvd(F);
    ASSERT_NEAR(svd.sigma(1) + svd.sigma(2), 1e-2, 1e-12);
    // Non-vacuous: the rotation term dominates the stiffness here.
    const double mu = material->modelParameters().mu;
    EXPECT_GT(material->firstPiolaDerivative(F).norm(), 50.0 * mu);
    const FdErrors e = checkDerivatives(*material, F);
    EXPECT_LT(e.gradient, kFdTolerance) << "sample " << n;
    EXPECT_LT(e.hessian, kFdTolerance) << "sample " << n;
    worst_gradient = std::max(worst_gradient, e.gradient);
    worst_hessian = std::max(worst_hessian, e.hessian);
  }
  RecordProperty("max_rel_error_P", std::to_string(worst_gradient));
  RecordProperty("max_rel_error_dPdF", std::to_string(worst_hessian));
  std::printf("[ measured ] fixed_corotated sigma2+sigma3=1e-2: Psi->P %.2e, P->dP/dF %.2e\n",
              worst_gradient, worst_hessian);
}

// ---- The inversion-safe SVD itself. ----

TEST(PolarSvd, IsRotationVariantWithTheSignOnTheSmallestValue) {
  std::mt19937 rng(11u);
  for (Family family : {Family::kWellConditioned, Family::kInverted, Family::kNearSingular})
    for (int n = 0; n < kSamplesPerFamily; ++n) {
      const Mat3 F = randomF(family, n, rng);
      const RotationVariantSvd svd = rotationVariantSvd(F);
      EXPECT_LT(relativeError(svd.U * svd.sigma.asDiagonal() * svd.V.transpose(), F), 1e-14);
      EXPECT_NEAR(svd.U.determinant(), 1.0, 1e-14);
      EXPECT_NEAR(svd.V.determinant(), 1.0, 1e-14);
      EXPECT_GE(svd.sigma(0), svd.sigma(1));
      EXPECT_GE(svd.sigma(1), std::abs(svd.sigma(2)));
      EXPECT_EQ(svd.sigma(2) < 0.0, F.determinant() < 0.0);
      const Mat3 R = polarRotation(svd);
      EXPECT_LT((R.transpose() * R - Mat3::Identity()).norm(), 1e-14);
    }
}

TEST(PolarSvd, RotationDerivativeMatchesFiniteDifferences) {
  std::mt19937 rng(13u);
  for (Family family : {Family::kWellConditioned, Family::kInverted, Family::kNearSingular})
    for (int n = 0; n < kSamplesPerFamily; ++n) {
      const Mat3 F = randomF(family, n, rng);
      const Mat9 dR = polarRotationDerivative(rotationVariantSvd(F));
      ASSERT_GT(dR.norm(), 0.1);
      EXPECT_LT(relativeError(fdPolarRotationDerivative(F, kFdStep), dR), kFdTolerance)
          << familyName(family) << " sample " << n;
    }
}

// ---- Parameters and names. ----

TEST(LameParameters, FromYoungPoisson) {
  const LameParameters lame = lameFromYoungPoisson(1e5, 0.3);
  EXPECT_DOUBLE_EQ(lame.mu, 1e5 / 2.6);
  EXPECT_DOUBLE_EQ(lame.lambda, 1e5 * 0.3 / (1.3 * 0.4));
}

TEST(LameParameters, RejectsInvalidInput) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THROW(lameFromYoungPoisson(0.0, 0.3), std::invalid_argument);
  EXPECT_THROW(lameFromYoungPoisson(-1e5, 0.3), std::invalid_argument);
  EXPECT_THROW(lameFromYoungPoisson(1e5, -1.0), std::invalid_argument);
  EXPECT_THROW(lameFromYoungPoisson(1e5, 0.5), std::invalid_argument);
  EXPECT_THROW(lameFromYoungPoisson(1e5, 0.7), std::invalid_argument);
  EXPECT_THROW(lameFromYoungPoisson(nan, 0.3), std::invalid_argument);
  EXPECT_THROW(lameFromYoungPoisson(1e5, nan), std::invalid_argument);
  EXPECT_THROW(lameFromYoungPoisson(inf, 0.3), std::invalid_argument);
  EXPECT_THROW(lameFromYoungPoisson(1e5, -inf), std::invalid_argument);
  EXPECT_NO_THROW(lameFromYoungPoisson(1e5, -0.99));
  EXPECT_NO_THROW(lameFromYoungPoisson(1e5, 0.499));
}

TEST(LameParameters, MappingFollowsEachModelsFormula) {
  const LameParameters lame = lameFromYoungPoisson(kYoung, kPoisson);
  const auto matched = [](MaterialModel model) { return modelParameters(specFor(model)); };
  EXPECT_DOUBLE_EQ(matched(MaterialModel::kFixedCorotated).lambda, lame.lambda);
  EXPECT_DOUBLE_EQ(matched(MaterialModel::kStVenantKirchhoff).mu, lame.mu);
  EXPECT_DOUBLE_EQ(matched(MaterialModel::kNeoHookean).mu, lame.mu);
  EXPECT_DOUBLE_EQ(matched(MaterialModel::kNeoHookean).lambda, lame.mu + lame.lambda);
  EXPECT_DOUBLE_EQ(matched(MaterialModel::kStableNeoHookean).mu, 4.0 / 3.0 * lame.mu);
  EXPECT_DOUBLE_EQ(matched(MaterialModel::kStableNeoHookean).lambda,
                   lame.lambda + 5.0 / 6.0 * lame.mu);
  for (MaterialModel model : kAllModels) {
    const LameParameters raw = modelParameters(specFor(model, LameMapping::kRaw));
    EXPECT_DOUBLE_EQ(raw.mu, lame.mu);
    EXPECT_DOUBLE_EQ(raw.lambda, lame.lambda);
  }
}

TEST(MaterialNames, RoundTrip) {
  const std::vector<std::string> names = materialModelNames();
  ASSERT_EQ(names.size(), 4u);
  for (const std::string& name : names) EXPECT_EQ(materialModelName(parseMaterialModel(name)), name);
  EXPECT_EQ(parseMaterialModel("stvk"), MaterialModel::kStVenantKirchhoff);
  EXPECT_EQ(parseLameMapping("raw"), LameMapping::kRaw);
  EXPECT_EQ(parseLameMapping("matched"), LameMapping::kMatchedToLinear);
  EXPECT_EQ(lameMappingName(LameMapping::kMatchedToLinear), "matched");
}

TEST(MaterialNames, RejectUnknownNamesAndListTheValidOnes) {
  for (const char* bad : {"", "neohookean", "Neo_Hookean", "corotated", "stvk "}) {
    try {
      parseMaterialModel(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      for (const std::string& name : materialModelNames())
        EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parseLameMapping("Matched"), std::invalid_argument);
  EXPECT_THROW(parseLameMapping("linear"), std::invalid_argument);
  try {
    parseLameMapping("");
    ADD_FAILURE() << "accepted an empty mapping";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("raw"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("matched"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pbdlab
