// Every material model: value, gradient and Hessian checked by one generic finite-difference
// test (STYLE.md 1), at random F in three families, plus rest state, invariance, the Lame
// mapping and the parameter parsing; the single-call evaluate(), PBNG's approximate tangent,
// the XPBD term splits and the muscle model (its fibre curves and the sets where they have no
// second derivative). The newer derivative tests use tests/support/finite_difference.hpp.
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

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <Eigen/LU>
#include <gtest/gtest.h>

#include "core/materials/closed_form_stress.hpp"
#include "core/materials/material.hpp"
#include "core/materials/muscle.hpp"
#include "core/materials/polar_svd.hpp"
#include "core/materials/term_kinds.hpp"
#include "tests/support/finite_difference.hpp"
#include "tests/support/random_samples.hpp"

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
//   muscle (default data)  P 8.3e-10          P 3.8e-10      P 2.6e-10
//                          dP 3.5e-10         dP 1.7e-10     dP 2.5e-10
//   corotated at sigma_2 + sigma_3 = 1e-2: P 8.6e-10, dP 4.1e-9 (truncation, (h / 1e-2)^2).
// New checks (generic checker, same step and tolerance): split terms P~ <= 2.0e-9,
// dP~/dF <= 8.4e-10 (the corotated |F - R|^2 term the worst); muscle with random fibres and
// activation 0, 0.5, 1: whole P 1.2e-9, dP 4.4e-10, fibre term alone P 3.5e-10, dP 3.5e-10;
// 1e-3 lambda_ofl from the fibre curves' breakpoints: whole P 1.7e-9, dP 4.4e-10, fibre term
// (step 1e-7, see that test) P 5.9e-9, dP 5.7e-9. Breaking the code once per test (a sign in a
// split term, Macklin's constant, the fibre Hessian's transverse term, a curvature 8 -> 7.9,
// alpha on the passive term as eq. 6 prints it, the printed constants of eq. 8, the sign of
// the energy-only SVD, no clamp in the approximate tangent) made them fail.
// kFdTolerance = 1e-7 is 50x above the families' worst (100x for the whole models), 25x above
// the corotated near-set case and 17x above the fibre term next to its breakpoints, for other
// compilers and flags; a wrong term is far above it (dropping stable Neo-Hookean's log
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

// The muscle runs the shared tests with the default MaterialPointData (fibre e_x, activation 0:
// its passive fibre term is on wherever |F e_x| > 1); its own tests vary fibre and activation.
const MaterialModel kAllModels[] = {MaterialModel::kFixedCorotated, MaterialModel::kNeoHookean,
                                    MaterialModel::kStableNeoHookean,
                                    MaterialModel::kStVenantKirchhoff, MaterialModel::kMuscle};

MaterialSpec specFor(MaterialModel model, LameMapping mapping = LameMapping::kMatchedToLinear) {
  MaterialSpec spec;
  spec.model = model;
  spec.youngs_modulus = kYoung;
  spec.poisson_ratio = kPoisson;
  spec.mapping = mapping;
  return spec;
}

using test::randomRotation;
using test::uniform;

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

// ---- The single-call interface, the approximate tangent, the splits and the muscle. ----
// Every new derivative check goes through the generic checker (tests/support/
// finite_difference.hpp) with kFdStep and kFdTolerance unless a test says otherwise.

Vec3 randomUnit(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  return Vec3(normal(rng), normal(rng), normal(rng)).normalized();
}

MaterialTermEvaluator evaluatorOf(const Material& m) {
  return [&m](const Mat3& F, const MaterialPointData& data, double* psi, Mat3* P, Mat9* K) {
    m.evaluate(F, data, psi, P, K);
  };
}

// Psi(vec F) with its gradient and Hessian, for the generic checker.
test::EnergyFunction energyOf(const MaterialTermEvaluator& f, const MaterialPointData& data) {
  return [f, data](const Eigen::VectorXd& x, double* value, Eigen::VectorXd* gradient, Eigen::MatrixXd* hessian) {
    const Mat3 F = Eigen::Map<const Mat3>(x.data());
    Mat3 P;
    Mat9 K;
    f(F, data, value, gradient ? &P : nullptr, hessian ? &K : nullptr);
    if (gradient) *gradient = flatten(P);
    if (hessian) *hessian = K;
  };
}

Eigen::VectorXd vecOf(const Mat3& F) { return flatten(F); }

// Options for a whole material (floors of the order of mu, as checkDerivatives) and for a split
// term (dimensionless; the floors only reject exact zeros).
test::FiniteDifferenceOptions materialOptions(const Material& m, double step = kFdStep) {
  test::FiniteDifferenceOptions options;
  options.step = step;
  options.tolerance = kFdTolerance;
  options.min_gradient_norm = 1e-2 * m.modelParameters().mu;
  options.min_hessian_norm = 1e-1 * m.modelParameters().mu;
  return options;
}
test::FiniteDifferenceOptions termOptions(double step = kFdStep) {
  test::FiniteDifferenceOptions options;
  options.step = step;
  options.tolerance = kFdTolerance;
  options.min_gradient_norm = 1e-9;
  options.min_hessian_norm = 1e-9;
  return options;
}

struct WorstErrors {
  double gradient = 0.0;
  double hessian = 0.0;
  int checked = 0;
  void add(const test::FiniteDifferenceErrors& e) {
    gradient = std::max(gradient, e.gradient);
    hessian = std::max(hessian, e.hessian);
    ++checked;
  }
};

const double kActivations[] = {0.0, 0.5, 1.0};

// F + (l / |F v| - 1) (F v) v^T: now |F v| = l; det F is scaled by l / |F v| > 0 (sign kept).
Mat3 withFibreStretch(const Mat3& F, const Vec3& v, double l) {
  const Vec3 w = F * v;
  return F + (l / w.norm() - 1.0) * w * v.transpose();
}

// A fibre stretch t = l / lambda_ofl at distance >= 0.02 from every breakpoint of the fibre
// curves, in each piece in turn (index % 6).
double fibreStretchAwayFromBreakpoints(int index, std::mt19937& rng) {
  static const double kPieces[6][2] = {{0.1, 0.38}, {0.42, 0.58}, {0.62, 0.98},
                                       {1.02, 1.38}, {1.42, 1.58}, {1.62, 2.0}};
  return uniform(rng, kPieces[index % 6][0], kPieces[index % 6][1]);
}

// A sample of the family with |F v| = l, at distance >= 0.05 from the corotated part's set
// without derivative (sigma_2 + sigma_3 = 0).
Mat3 muscleSample(Family family, int index, const Vec3& v, double l, std::mt19937& rng) {
  for (;;) {
    const Mat3 F = withFibreStretch(randomF(family, index, rng), v, l);
    const RotationVariantSvd svd = rotationVariantSvd(F);
    if (svd.sigma(1) + svd.sigma(2) > 0.05) return F;
  }
}

MaterialSpec muscleSpec(double lambda_ofl = 1.0) {
  MaterialSpec spec = specFor(MaterialModel::kMuscle);
  spec.lambda_ofl = lambda_ofl;
  return spec;
}

// F for a model's tests: the muscle's with a fibre stretch in each curve piece in turn.
Mat3 sampleFor(MaterialModel model, Family family, int index, const MaterialPointData& data, std::mt19937& rng) {
  if (model != MaterialModel::kMuscle) return randomF(family, index, rng);
  return muscleSample(family, index, data.fibre_direction, fibreStretchAwayFromBreakpoints(index, rng), rng);
}

MaterialPointData randomPointData(int index, std::mt19937& rng) {
  MaterialPointData data;
  data.fibre_direction = randomUnit(rng);
  data.activation = kActivations[index % 3];
  return data;
}

TEST_P(MaterialModelTest, EvaluateGivesTheSameAnswersWhicheverOutputsAreAsked) {
  // The energy-only path of the corotated models takes singular values without U, V: same
  // value up to round-off. Every other output comes from the same arithmetic.
  const MaterialModel model = GetParam();
  const auto material = makeMaterial(specFor(model));
  std::mt19937 rng(515u);
  for (Family family : {Family::kWellConditioned, Family::kInverted, Family::kNearSingular})
    for (int n = 0; n < kSamplesPerFamily; ++n) {
      const MaterialPointData data = randomPointData(n, rng);
      const Mat3 F = sampleFor(model, family, n, data, rng);
      double psi_all = 0.0, psi_only = 0.0;
      Mat3 P_all, P_only;
      Mat9 K_all, K_only;
      material->evaluate(F, data, &psi_all, &P_all, &K_all);
      material->evaluate(F, data, &psi_only, nullptr, nullptr);
      material->evaluate(F, data, nullptr, &P_only, nullptr);
      material->evaluate(F, data, nullptr, nullptr, &K_only);
      EXPECT_NEAR(psi_only, psi_all, 1e-13 * std::abs(psi_all)) << familyName(family) << " sample " << n;
      EXPECT_EQ(P_only, P_all) << familyName(family) << " sample " << n;
      EXPECT_EQ(K_only, K_all) << familyName(family) << " sample " << n;
      EXPECT_EQ(material->energyDensity(F, data), psi_only);
      EXPECT_EQ(material->firstPiola(F, data), P_all);
      EXPECT_EQ(material->firstPiolaDerivative(F, data), K_all);
    }
}

// ---- PBNG's approximate tangent (TOG eq. 32-34). ----

// Deformation gradients where definiteness could fail: the three families plus exactly
// singular, reflected and collapsed ones.
std::vector<Mat3> tangentTestGradients(std::mt19937& rng) {
  std::vector<Mat3> out;
  for (Family family : {Family::kWellConditioned, Family::kInverted, Family::kNearSingular})
    for (int n = 0; n < kSamplesPerFamily; ++n) out.push_back(randomF(family, n, rng));
  out.push_back(Mat3::Identity());
  out.push_back(-Mat3::Identity());
  out.push_back(Mat3::Zero());
  out.push_back(Vec3(1.0, 1.0, -1.0).asDiagonal().toDenseMatrix());
  out.push_back(withSingularValues(rng, Vec3(1.3, 0.7, 0.0)));   // rank 2
  out.push_back(withSingularValues(rng, Vec3(2.0, 0.0, 0.0)));   // rank 1
  out.push_back(withSingularValues(rng, Vec3(3.0, 2.5, -2.0)));  // strongly inverted, stretched
  return out;
}

double minEigenvalue(const Mat9& A) {
  return Eigen::SelfAdjointEigenSolver<Mat9>(A, Eigen::EigenvaluesOnly).eigenvalues().minCoeff();
}

// Eq. 32 with "the associated Lamé parameters computed from Young's modulus E" (eq. 9) by
// default, whatever the model's own parameters; with TangentParameters::kModel the model's own.
TEST_P(MaterialModelTest, ApproximateTangentIsPbngEq32AndPositiveSemidefinite) {
  const MaterialModel model = GetParam();
  for (LameMapping mapping : {LameMapping::kMatchedToLinear, LameMapping::kRaw})
    for (TangentParameters which : {TangentParameters::kYoungsPoisson, TangentParameters::kModel}) {
    MaterialSpec spec = specFor(model, mapping);
    if (mapping == LameMapping::kRaw) spec.poisson_ratio = -0.5;  // lambda < 0: clamped
    const auto material = makeMaterial(spec);
    const LameParameters p = which == TangentParameters::kModel
                                 ? material->modelParameters()
                                 : lameFromYoungPoisson(spec.youngs_modulus, spec.poisson_ratio);
    std::mt19937 rng(616u);
    int n = 0;
    for (const Mat3& F : tangentTestGradients(rng)) {
      const MaterialPointData data = randomPointData(n++, rng);
      const Mat9 A = which == TangentParameters::kModel ? material->approximateTangent(F, data, which)
                                                        : material->approximateTangent(F, data);
      EXPECT_EQ(A, A.transpose()) << "F =\n" << F;
      EXPECT_GE(minEigenvalue(A), -1e-12 * A.norm()) << "F =\n" << F;
      // The eigensolver's own error is a few eps |A|: with clang it put the minimum of a
      // stretched F's tangent just below 2 mu (1 - 1e-12) (muscle; scripts/sanitize.sh).
      const double eigen_roundoff = 64.0 * std::numeric_limits<double>::epsilon() * A.norm();
      EXPECT_GE(minEigenvalue(A), 2.0 * p.mu * (1.0 - 1e-12) - eigen_roundoff)
          << "2 mu I is its floor; F =\n" << F;
      // 2 mu I_9 + lambda vec(cof F) vec(cof F)^T, written out here once more.
      const Vec9 g = flatten(F.determinant() * F.inverse().transpose());
      Mat9 expected = Mat9::Identity() * (2.0 * p.mu) + std::max(p.lambda, 0.0) * g * g.transpose();
      if (std::abs(F.determinant()) < 1e-9) {
        // F^-1 does not exist: compare with the cofactor of the model's own helper.
        const Vec9 c = flatten(cofactor(F));
        expected = Mat9::Identity() * (2.0 * p.mu) + std::max(p.lambda, 0.0) * c * c.transpose();
      }
      if (model != MaterialModel::kMuscle) {
        EXPECT_LT((A - expected).norm(), 1e-12 * expected.norm()) << "F =\n" << F;
      }
    }
  }
}

// smallStrainParameters() are the Lamé parameters of the model's tangent at rest; under the
// matched mapping they are (E, nu)'s, which a material made by makeMaterial records.
TEST_P(MaterialModelTest, SmallStrainParametersAreTheTangentAtRest) {
  const MaterialModel model = GetParam();
  for (LameMapping mapping : {LameMapping::kMatchedToLinear, LameMapping::kRaw}) {
    const MaterialSpec spec = specFor(model, mapping);
    const auto material = makeMaterial(spec);
    const LameParameters small = material->smallStrainParameters();
    MaterialPointData data;
    data.fibre_direction = Vec3::Zero();  // the muscle's fibre term off
    const Mat9 at_rest = material->firstPiolaDerivative(Mat3::Identity(), data);
    EXPECT_LT((at_rest - linearElasticityTangent(small)).norm(), 1e-12 * at_rest.norm())
        << materialModelName(model) << " " << lameMappingName(mapping);
    const LameParameters lame = lameFromYoungPoisson(spec.youngs_modulus, spec.poisson_ratio);
    EXPECT_EQ(material->youngsPoissonLame().mu, lame.mu);
    EXPECT_EQ(material->youngsPoissonLame().lambda, lame.lambda);
    if (mapping == LameMapping::kMatchedToLinear) {
      EXPECT_NEAR(small.mu, lame.mu, 1e-12 * lame.mu);
      EXPECT_NEAR(small.lambda, lame.lambda, 1e-12 * lame.lambda);
    }
  }
}

TEST(MuscleApproximateTangent, IsTheFibreHessianWhereItsCurvatureIsPositiveAndPsdWhereNot) {
  // The fibre part of approximateTangent (its difference from the corotated part's eq. 32) is
  // the true fibre Hessian with W'' clamped at 0. On the descending limb of the active curve
  // (t in (1, 1.6) with activation 1) the true fibre Hessian is indefinite; the clamp keeps the
  // approximation PSD.
  const MaterialSpec spec = muscleSpec();
  const auto material = makeMaterial(spec);
  const MaterialSplit split = material->split();
  const MaterialTerm& fibre = split.terms.back();
  std::mt19937 rng(717u);
  int indefinite = 0, equal = 0;
  for (int n = 0; n < 120; ++n) {
    MaterialPointData data;
    data.fibre_direction = randomUnit(rng);
    data.activation = 1.0;
    const double t = fibreStretchAwayFromBreakpoints(n, rng);
    const Mat3 F = muscleSample(Family::kWellConditioned, n, data.fibre_direction, t, rng);
    Mat9 fibre_hessian;
    fibre.evaluate(F, data, nullptr, nullptr, &fibre_hessian);
    fibre_hessian *= fibre.stiffness;
    const Mat9 fibre_part = material->approximateTangent(F, data) - pbngApproximateTangent(F, material->modelParameters());
    EXPECT_GE(minEigenvalue(fibre_part), -1e-10 * std::max(fibre_part.norm(), 1.0)) << "t = " << t;
    const muscle::CurveValue a = muscle::activeCurve(t, spec.lambda_ofl);
    const muscle::CurveValue p = muscle::passiveCurve(t, spec.lambda_ofl);
    if (a.curvature + p.curvature >= 0.0) {
      EXPECT_LT((fibre_part - fibre_hessian).norm(), 1e-12 * std::max(fibre_hessian.norm(), 1.0)) << "t = " << t;
      ++equal;
    } else {
      EXPECT_LT(minEigenvalue(fibre_hessian), -1e-3 * fibre_hessian.norm()) << "t = " << t;
      ++indefinite;
    }
  }
  EXPECT_GT(equal, 10);
  EXPECT_GT(indefinite, 10);
}

// ---- Splits: sum_k k_k Psi~_k = Psi + c, each term checked by finite differences. ----

struct SplitCase {
  MaterialModel model;
  const char* split;
};

const SplitCase kAllSplits[] = {{MaterialModel::kFixedCorotated, "pxpbd"},
                                {MaterialModel::kNeoHookean, "developed"},
                                {MaterialModel::kNeoHookean, "macklin_mueller"},
                                {MaterialModel::kNeoHookean, "macklin_table2"},
                                {MaterialModel::kStableNeoHookean, "lame"},
                                {MaterialModel::kStVenantKirchhoff, "lame"},
                                {MaterialModel::kMuscle, "pxpbd"}};

std::string splitCaseName(const SplitCase& c) { return materialModelName(c.model) + "_" + c.split; }
void PrintTo(const SplitCase& c, std::ostream* os) { *os << splitCaseName(c); }

class MaterialSplits : public ::testing::TestWithParam<std::tuple<SplitCase, Family>> {};

TEST_P(MaterialSplits, SumOfTermsIsTheEnergyPlusTheStatedConstant) {
  const auto [split_case, family] = GetParam();
  const auto material = makeMaterial(specFor(split_case.model));
  const MaterialSplit split = material->split(split_case.split);
  ASSERT_EQ(split.name, split_case.split);
  std::mt19937 rng(818u + 5u * static_cast<unsigned>(family));
  double worst = 0.0;
  for (int n = 0; n < kSamplesPerFamily; ++n) {
    const MaterialPointData data = randomPointData(n, rng);
    const Mat3 F = sampleFor(split_case.model, family, n, data, rng);
    double psi = 0.0;
    Mat3 P;
    Mat9 K;
    material->evaluate(F, data, &psi, &P, &K);
    double sum = 0.0, scale = std::abs(psi) + std::abs(split.constant);
    Mat3 P_sum = Mat3::Zero();
    Mat9 K_sum = Mat9::Zero();
    for (const MaterialTerm& term : split.terms) {
      double psi_k = 0.0;
      Mat3 P_k;
      Mat9 K_k;
      term.evaluate(F, data, &psi_k, &P_k, &K_k);
      sum += term.stiffness * psi_k;
      scale += std::abs(term.stiffness * psi_k);
      P_sum += term.stiffness * P_k;
      K_sum += term.stiffness * K_k;
    }
    const double error = std::abs(sum - psi - split.constant) / scale;
    worst = std::max(worst, error);
    EXPECT_LT(error, 1e-13) << "sample " << n << "\nF =\n" << F;
    EXPECT_LT(relativeError(P_sum, P), 1e-13) << "sample " << n;
    EXPECT_LT(relativeError(K_sum, K), 1e-13) << "sample " << n;
  }
  std::printf("[ measured ] split %s %s: |sum k Psi~ - Psi - c| / scale %.2e\n", splitCaseName(split_case).c_str(),
              familyName(family).c_str(), worst);
}

TEST_P(MaterialSplits, EachTermMatchesCentralFiniteDifferences) {
  const auto [split_case, family] = GetParam();
  const auto material = makeMaterial(specFor(split_case.model));
  const MaterialSplit split = material->split(split_case.split);
  std::mt19937 rng(919u + 5u * static_cast<unsigned>(family));
  for (const MaterialTerm& term : split.terms) {
    WorstErrors worst;
    int zero = 0;
    for (int n = 0; n < kSamplesPerFamily; ++n) {
      const MaterialPointData data = randomPointData(n, rng);
      const Mat3 F = sampleFor(split_case.model, family, n, data, rng);
      Mat3 P;
      term.evaluate(F, data, nullptr, &P, nullptr);
      if (term.name == "fibre" && P.norm() == 0.0) {  // l <= 0.4 lambda_ofl, or passive only and l <= lambda_ofl
        ++zero;
        continue;
      }
      test::FiniteDifferenceErrors e;
      EXPECT_TRUE(test::derivativesMatchFiniteDifferences(energyOf(term.evaluate, data), vecOf(F), termOptions(), &e))
          << term.name << " sample " << n;
      worst.add(e);
    }
    EXPECT_GE(worst.checked, kSamplesPerFamily / 2) << term.name;
    std::printf("[ measured ] split %s term %s %s: P~ %.2e, dP~/dF %.2e (%d checked, %d zero)\n",
                splitCaseName(split_case).c_str(), term.name.c_str(), familyName(family).c_str(), worst.gradient,
                worst.hessian, worst.checked, zero);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllSplits, MaterialSplits,
    ::testing::Combine(::testing::ValuesIn(kAllSplits),
                       ::testing::Values(Family::kWellConditioned, Family::kInverted, Family::kNearSingular)),
    [](const auto& info) { return splitCaseName(std::get<0>(info.param)) + "_" + familyName(std::get<1>(info.param)); });

TEST(MaterialSplitNames, EachModelListsItsSplitsAndTheirConstants) {
  const auto names = [](MaterialModel model) { return makeMaterial(specFor(model))->splitNames(); };
  using Names = std::vector<std::string>;
  EXPECT_EQ(names(MaterialModel::kFixedCorotated), (Names{"pxpbd"}));
  EXPECT_EQ(names(MaterialModel::kNeoHookean), (Names{"developed", "macklin_mueller", "macklin_table2"}));
  EXPECT_EQ(names(MaterialModel::kStableNeoHookean), (Names{"lame"}));
  EXPECT_EQ(names(MaterialModel::kStVenantKirchhoff), (Names{"lame"}));
  EXPECT_EQ(names(MaterialModel::kMuscle), (Names{"pxpbd"}));
  for (MaterialModel model : kAllModels) {
    const auto material = makeMaterial(specFor(model));
    const LameParameters p = material->modelParameters();
    EXPECT_EQ(material->split().name, material->defaultSplitName());
    EXPECT_EQ(material->defaultSplitName(), material->splitNames().front());
    for (const std::string& name : material->splitNames()) {
      const MaterialSplit split = material->split(name);
      ASSERT_GE(split.numTerms(), 2);
      EXPECT_EQ(split.terms[0].name, "mu");
      EXPECT_EQ(split.terms[0].stiffness, p.mu);
      EXPECT_EQ(split.terms[1].stiffness, p.lambda);
      const double expected_constant = name == "macklin_table2"    ? p.mu * p.mu / (2.0 * p.lambda)
                                       : name == "macklin_mueller" ? 1.5 * p.mu + p.mu * p.mu / (2.0 * p.lambda)
                                                                   : 0.0;
      EXPECT_EQ(split.constant, expected_constant) << materialModelName(model) << " " << name;
    }
    try {
      material->split("no_such_split");
      ADD_FAILURE() << "accepted an unknown split";
    } catch (const std::invalid_argument& e) {
      for (const std::string& name : material->splitNames())
        EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
  const MaterialSpec spec = muscleSpec();
  const MaterialSplit muscle_split = makeMaterial(spec)->split();
  ASSERT_EQ(muscle_split.numTerms(), 3);
  EXPECT_EQ(muscle_split.terms[2].name, "fibre");
  EXPECT_EQ(muscle_split.terms[2].stiffness, spec.sigma_max);
  // Macklin's split needs gamma = 1 + mu / lambda_hat.
  EXPECT_THROW(makeNeoHookean(1.0, 0.0)->split("macklin_mueller"), std::invalid_argument);
  EXPECT_THROW(makeNeoHookean(1.0, 0.0)->split("macklin_table2"), std::invalid_argument);
  EXPECT_NO_THROW(makeNeoHookean(1.0, 0.0)->split("developed"));
}

TEST(MaterialSplitNames, TermStressesAtRest) {
  // Every term of every split is stress-free at F = I (Smith's condition, high-order paper
  // §4.2) except Macklin's: P~_mu(I) = I and P~_lambda_hat(I) = (1 - gamma) I, which cancel
  // only in the weighted sum.
  const Mat3 I = Mat3::Identity();
  for (const SplitCase& c : kAllSplits) {
    const auto material = makeMaterial(specFor(c.model));
    const LameParameters p = material->modelParameters();
    for (const MaterialTerm& term : material->split(c.split).terms) {
      Mat3 P;
      term.evaluate(I, MaterialPointData{}, nullptr, &P, nullptr);
      if (std::string(c.split) == "macklin_mueller" || std::string(c.split) == "macklin_table2") {
        const double expected = term.name == "mu" ? 1.0 : -p.mu / p.lambda;
        EXPECT_LT((P - expected * I).norm(), 1e-15) << term.name;
      } else {
        EXPECT_LT(P.norm(), 1e-15) << splitCaseName(c) << " " << term.name;
      }
    }
  }
}

TEST(MaterialSplitNames, SignedRootsSquareToTheirTerms) {
  // Only Macklin and Mueller's hydrostatic term is a signed root (C_H = det F - gamma); every
  // term that has one satisfies r^2 / 2 = Psi~, inverted F included (where r < 0 matters).
  std::mt19937 rng(404u);
  int roots = 0;
  for (const SplitCase& c : kAllSplits) {
    const auto material = makeMaterial(specFor(c.model));
    for (const MaterialTerm& term : material->split(c.split).terms) {
      const bool expect_root = std::string(c.split) == "macklin_mueller" && term.name == "lambda_hat";
      ASSERT_EQ(static_cast<bool>(term.signed_root), expect_root) << splitCaseName(c) << " " << term.name;
      if (!term.signed_root) continue;
      ++roots;
      const LameParameters p = material->modelParameters();
      EXPECT_NEAR(term.signed_root(Mat3::Identity(), MaterialPointData{}), -p.mu / p.lambda, 1e-15);
      int negative = 0;
      for (Family family : {Family::kWellConditioned, Family::kInverted, Family::kNearSingular})
        for (int n = 0; n < kSamplesPerFamily; ++n) {
          const MaterialPointData data = randomPointData(n, rng);
          const Mat3 F = sampleFor(c.model, family, n, data, rng);
          double psi = 0.0;
          term.evaluate(F, data, &psi, nullptr, nullptr);
          const double r = term.signed_root(F, data);
          EXPECT_NEAR(0.5 * r * r, psi, 1e-13 * (1.0 + psi));
          negative += r < 0.0;
        }
      EXPECT_GT(negative, 0);
    }
  }
  EXPECT_EQ(roots, 1);
}

// A term's kind names the closed form its evaluate computes (closedFormTerm, term_kinds.hpp;
// the XPBD lanes evaluate the kind, the generic path evaluate): the two agree on every split
// that carries kinds, inverted and near-singular F included. The kinds carried: fixed
// corotated's "pxpbd", Neo-Hookean's three, stable Neo-Hookean's "lame"; St. Venant-Kirchhoff
// and the muscle have none besides the corotated ones the muscle reuses.
TEST(MaterialSplitNames, TermKindsAreTheirTermsClosedForms) {
  std::mt19937 rng(505u);
  int checked = 0;
  for (const SplitCase& c : kAllSplits) {
    const auto material = makeMaterial(specFor(c.model));
    for (const MaterialTerm& term : material->split(c.split).terms) {
      if (term.kind == MaterialTermKind::kGeneric) continue;
      ++checked;
      for (Family family : {Family::kWellConditioned, Family::kInverted, Family::kNearSingular})
        for (int n = 0; n < kSamplesPerFamily; ++n) {
          const MaterialPointData data = randomPointData(n, rng);
          const Mat3 F = sampleFor(c.model, family, n, data, rng);
          double psi = 0.0;
          Mat3 P;
          term.evaluate(F, data, &psi, &P, nullptr);
          const Mat3 C = cofactor(F), R = polarRotation(F);
          Mat3 closed_P;
          const double closed_psi =
              closedFormTerm(term.kind, term.shift, F.data(), C.data(), F.determinant(), R.data(), closed_P.data());
          EXPECT_NEAR(closed_psi, psi, 1e-12 * (1.0 + std::abs(psi))) << splitCaseName(c) << " " << term.name;
          EXPECT_LT((closed_P - P).norm(), 1e-12 * (1.0 + P.norm())) << splitCaseName(c) << " " << term.name;
          if (term.signed_root) {
            EXPECT_NEAR(term.signed_root(F, data), F.determinant() - term.shift, 1e-13);
          }
        }
    }
  }
  EXPECT_EQ(checked, 12);  // corotated 2, muscle 2 of 3, Neo-Hookean 3 x 2, stable Neo-Hookean 2
}

// The lane kernels' closed-form stresses (closedFormStress, closed_form_stress.hpp: PBNG's node
// visits, FP-PXPBD's element solves) are the models' own P, in the uniform and in the general
// form, inverted and near-singular F included; the other models have none.
TEST(ClosedFormStresses, AreTheModelsStresses) {
  std::mt19937 rng(606u);
  int checked = 0;
  for (MaterialModel model : kAllModels) {
    for (LameMapping mapping : {LameMapping::kMatchedToLinear, LameMapping::kRaw}) {
      const auto material = makeMaterial(specFor(model, mapping));
      const ClosedFormStress s = closedFormStressOf(*material);
      const bool has_closed_form = model == MaterialModel::kFixedCorotated || model == MaterialModel::kNeoHookean ||
                                   model == MaterialModel::kStableNeoHookean;
      ASSERT_EQ(s.kind != ClosedFormStressKind::kNone, has_closed_form) << materialModelName(model);
      if (!has_closed_form) continue;
      ++checked;
      for (Family family : {Family::kWellConditioned, Family::kInverted, Family::kNearSingular})
        for (int n = 0; n < kSamplesPerFamily; ++n) {
          const MaterialPointData data = randomPointData(n, rng);
          const Mat3 F = sampleFor(model, family, n, data, rng);
          Mat3 P;
          material->evaluate(F, data, nullptr, &P, nullptr);
          const Mat3 C = cofactor(F), R = polarRotation(F);
          const double J = F.determinant();
          Mat3 uniform, general;
          switch (s.kind) {
            case ClosedFormStressKind::kCorotated:
              closedFormStress<ClosedFormStressKind::kCorotated>(s.a0, s.c, s.bJ, s.b0, s.snh, F.data(), C.data(), J,
                                                                R.data(), uniform.data());
              break;
            case ClosedFormStressKind::kNeoHookean:
              closedFormStress<ClosedFormStressKind::kNeoHookean>(s.a0, s.c, s.bJ, s.b0, s.snh, F.data(), C.data(), J,
                                                                 R.data(), uniform.data());
              break;
            default:
              closedFormStress<ClosedFormStressKind::kStableNeoHookean>(s.a0, s.c, s.bJ, s.b0, s.snh, F.data(),
                                                                       C.data(), J, R.data(), uniform.data());
          }
          closedFormStress<ClosedFormStressKind::kNone>(s.a0, s.c, s.bJ, s.b0, s.snh, F.data(), C.data(), J, R.data(),
                                                        general.data());
          const double scale = 1e-12 * (1.0 + P.norm());
          EXPECT_LT((uniform - P).norm(), scale) << materialModelName(model) << " " << static_cast<int>(family);
          EXPECT_LT((general - P).norm(), scale) << materialModelName(model) << " " << static_cast<int>(family);
        }
    }
  }
  EXPECT_EQ(checked, 6);
}

TEST(MaterialSplitNames, DevelopedShapeTermIsNegativeUnderDilation) {
  // Psi~_mu = (I2 - 2 I3 - 1) / 2 = -(s - 1)^2 (2 s + 1) / 2 for F = s I (papers' README).
  const MaterialSplit split = makeMaterial(specFor(MaterialModel::kNeoHookean))->split("developed");
  for (double s : {1.1, 1.5, 2.0}) {
    double psi = 0.0;
    split.terms[0].evaluate(s * Mat3::Identity(), MaterialPointData{}, &psi, nullptr, nullptr);
    EXPECT_NEAR(psi, -0.5 * (s - 1.0) * (s - 1.0) * (2.0 * s + 1.0), 1e-14);
    EXPECT_LT(psi, 0.0);
  }
}

// ---- The muscle model (PXPBD eq. 6-8). ----

class MuscleDerivatives : public ::testing::TestWithParam<std::tuple<Family, double>> {};

TEST_P(MuscleDerivatives, MatchCentralFiniteDifferencesWithRandomFibres) {
  const auto [family, activation] = GetParam();
  const auto material = makeMaterial(muscleSpec());
  const MaterialSplit split = material->split();
  const MaterialTerm& fibre = split.terms.back();
  std::mt19937 rng(1111u + 3u * static_cast<unsigned>(family) + static_cast<unsigned>(10 * activation));
  WorstErrors whole, term;
  for (int n = 0; n < 30; ++n) {
    MaterialPointData data;
    data.fibre_direction = randomUnit(rng);
    data.activation = activation;
    const double t = fibreStretchAwayFromBreakpoints(n, rng);
    const Mat3 F = muscleSample(family, n, data.fibre_direction, t, rng);
    test::FiniteDifferenceErrors e;
    EXPECT_TRUE(test::derivativesMatchFiniteDifferences(energyOf(evaluatorOf(*material), data), vecOf(F),
                                                        materialOptions(*material), &e))
        << "sample " << n << ", t = " << t;
    whole.add(e);
    if (t <= 0.4 || (activation == 0.0 && t <= 1.0)) continue;  // the fibre term is zero there
    EXPECT_TRUE(test::derivativesMatchFiniteDifferences(energyOf(fibre.evaluate, data), vecOf(F), termOptions(), &e))
        << "fibre term, sample " << n << ", t = " << t;
    term.add(e);
  }
  EXPECT_GE(term.checked, 10);
  std::printf("[ measured ] muscle %s activation %.1f: whole P %.2e dP %.2e; fibre term P %.2e dP %.2e (%d)\n",
              familyName(family).c_str(), activation, whole.gradient, whole.hessian, term.gradient, term.hessian,
              term.checked);
}

INSTANTIATE_TEST_SUITE_P(
    ActivationsAndFamilies, MuscleDerivatives,
    ::testing::Combine(::testing::Values(Family::kWellConditioned, Family::kInverted, Family::kNearSingular),
                       ::testing::ValuesIn(kActivations)),
    [](const auto& info) {
      return familyName(std::get<0>(info.param)) + "_activation_" +
             std::to_string(static_cast<int>(10 * std::get<1>(info.param)));
    });

TEST(Muscle, DerivativesHoldNextToTheSetsWithoutSecondDerivatives) {
  // The fibre curves have no second derivative at l = 0.6, 1.4 (active) and 1 (passive) times
  // lambda_ofl; at 0.4 and 1.6 only the third jumps. l = 0 (n = F v / l undefined) lies where
  // the fibre term is identically zero (l <= 0.4 lambda_ofl): there only the corotated part
  // is checked. Each point is at distance 1e-3 lambda_ofl from its set, on both sides, for two
  // lambda_ofl and three activations. The fibre term alone is differenced with step 1e-7 (not
  // 1e-6): just above l = 0.4 lambda_ofl its gradient is ~5e-6 while its third derivative is
  // O(1), so the truncation error h^2 f''' / 6 relative to the gradient is ~(h / 1e-3)^2: 3e-7
  // with 1e-6, 3e-9 with 1e-7. (The pieces are polynomials and an exponential: no stencil
  // crosses a breakpoint, so nothing else grows near them.)
  constexpr double kStep = 1e-7;
  constexpr double kDistance = 1e-3;
  std::mt19937 rng(1212u);
  WorstErrors whole, term;
  for (double lambda_ofl : {1.0, 1.25}) {
    const auto material = makeMaterial(muscleSpec(lambda_ofl));
    const MaterialSplit split = material->split();
    const MaterialTerm& fibre = split.terms.back();
    std::vector<double> stretches = {kDistance};  // next to l = 0
    for (double t : muscle::kBreakpoints) {
      stretches.push_back(t - kDistance);
      stretches.push_back(t + kDistance);
    }
    for (double t : stretches)
      for (double activation : kActivations)
        for (int n = 0; n < 3; ++n) {
          MaterialPointData data;
          data.fibre_direction = randomUnit(rng);
          data.activation = activation;
          const Mat3 F = muscleSample(Family::kWellConditioned, n, data.fibre_direction, t * lambda_ofl, rng);
          test::FiniteDifferenceErrors e;
          EXPECT_TRUE(test::derivativesMatchFiniteDifferences(energyOf(evaluatorOf(*material), data), vecOf(F),
                                                              materialOptions(*material), &e))
              << "t = " << t << ", activation " << activation;
          whole.add(e);
          if (t <= 0.4 || (activation == 0.0 && t <= 1.0)) continue;
          EXPECT_TRUE(test::derivativesMatchFiniteDifferences(energyOf(fibre.evaluate, data), vecOf(F),
                                                              termOptions(kStep), &e))
              << "fibre term, t = " << t << ", activation " << activation << ", lambda_ofl " << lambda_ofl;
          term.add(e);
        }
  }
  std::printf("[ measured ] muscle at 1e-3 from the breakpoints: whole P %.2e dP %.2e; fibre term P %.2e dP %.2e (%d)\n",
              whole.gradient, whole.hessian, term.gradient, term.hessian, term.checked);
}

TEST(Muscle, ActivationScalesTheActiveTermOnly) {
  // At F = I with a unit fibre v and lambda_ofl = 1: P = sigma_max alpha f_active(1) v v^T
  // = alpha sigma_max v v^T (the passive curve is zero up to l = lambda_ofl), and Psi(I) =
  // sigma_max alpha f_a(1) (not shifted). Far along the descending limb (l = 1.8 lambda_ofl,
  // f_active = 0) the fibre stress is the passive one, whatever the activation. Eq. 6 as
  // printed (f_a + alpha f_p) would give the reverse.
  const MaterialSpec spec = muscleSpec();
  const auto material = makeMaterial(spec);
  std::mt19937 rng(1313u);
  for (double activation : kActivations) {
    MaterialPointData data;
    data.fibre_direction = randomUnit(rng);
    data.activation = activation;
    const Vec3 v = data.fibre_direction;
    double psi = 0.0;
    Mat3 P;
    material->evaluate(Mat3::Identity(), data, &psi, &P, nullptr);
    EXPECT_NEAR(psi, spec.sigma_max * activation * muscle::activeCurve(1.0, 1.0).value, 1e-9 * spec.sigma_max);
    EXPECT_LT((P - activation * spec.sigma_max * v * v.transpose()).norm(), 1e-10 * spec.sigma_max);
    const Mat3 F = Mat3::Identity() + 0.8 * v * v.transpose();  // |F v| = 1.8
    const Mat3 fibre_stress = material->firstPiola(F, data) - makeFixedCorotated(material->modelParameters().mu,
                                                                                 material->modelParameters().lambda)
                                                                  ->firstPiola(F);
    const double passive = spec.sigma_max * muscle::passiveCurve(1.8, 1.0).slope;
    EXPECT_GT(passive, 0.0);
    EXPECT_LT((fibre_stress - passive * v * v.transpose()).norm(), 1e-10 * passive);
  }
  // alpha = 1 contracts: the fibre stress at rest is tensile, so shortening the fibre lowers Psi.
}

TEST(Muscle, IsAnisotropic) {
  const auto material = makeMaterial(muscleSpec());
  EXPECT_FALSE(material->isIsotropic());
  MaterialPointData data;
  data.fibre_direction = Vec3::UnitX();
  data.activation = 1.0;
  const Mat3 F = Vec3(1.2, 0.9, 0.9).asDiagonal();
  const Mat3 Q = Eigen::AngleAxisd(M_PI / 2, Vec3::UnitZ()).toRotationMatrix();
  // Psi(Q F) = Psi(F) (frame indifference), Psi(F Q) != Psi(F): the fibre sees F Q v.
  EXPECT_NEAR(material->energyDensity(Q * F, data), material->energyDensity(F, data), 1e-9);
  EXPECT_GT(std::abs(material->energyDensity(F * Q, data) - material->energyDensity(F, data)), 1e2);
}

TEST(Muscle, RejectsInvalidParameters) {
  EXPECT_THROW(makeMuscle(1.0, 1.0, -1.0, 1.0), std::invalid_argument);
  EXPECT_THROW(makeMuscle(1.0, 1.0, 1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(makeMuscle(1.0, 1.0, std::nan(""), 1.0), std::invalid_argument);
  EXPECT_NO_THROW(makeMuscle(1.0, 1.0, 0.0, 1.0));
  // A zero fibre direction switches the fibre term off.
  const auto material = makeMaterial(muscleSpec());
  MaterialPointData off;
  off.fibre_direction = Vec3::Zero();
  off.activation = 1.0;
  const Mat3 F = Vec3(1.3, 0.9, 1.1).asDiagonal();
  EXPECT_EQ(material->energyDensity(F, off),
            makeFixedCorotated(material->modelParameters().mu, material->modelParameters().lambda)->energyDensity(F));
}

// ---- The fibre curves. ----

TEST(MuscleCurves, AreContinuousWithContinuousSlopesAtTheirBreakpoints) {
  // Over 2e-9 lambda_ofl a C1 curve changes its value by <= 2e-9 |slope| (slope <= 1 here,
  // 0.33 passive at 1.6) and its slope by <= 2e-9 |curvature| (<= 4 / lambda_ofl): tolerances
  // 1e-8 lambda_ofl and 1e-7 catch any jump of the size eq. 7-8's printed constants make
  // (1.6e-4 and larger, next test).
  for (double L : {1.0, 1.25}) {
    const double d = 1e-9 * L;
    for (double t : muscle::kBreakpoints) {
      for (const auto curve : {&muscle::activeCurve, &muscle::passiveCurve}) {
        const muscle::CurveValue left = curve(t * L - d, L), at = curve(t * L, L), right = curve(t * L + d, L);
        EXPECT_NEAR(left.value, right.value, 1e-8 * L) << "t = " << t;
        EXPECT_NEAR(at.value, right.value, 1e-8 * L) << "t = " << t;
        EXPECT_NEAR(left.slope, right.slope, 1e-7) << "t = " << t;
        EXPECT_NEAR(at.slope, right.slope, 1e-7) << "t = " << t;
      }
    }
  }
}

TEST(MuscleCurves, ActiveSlopePeaksAtTheOptimalFibreLength) {
  // df_a/dl = f_active(l / lambda_ofl): 1 at l = lambda_ofl, below it elsewhere, never negative;
  // the passive slope is zero up to lambda_ofl and grows after. Zero at and below 0.4.
  for (double L : {1.0, 1.25}) {
    EXPECT_DOUBLE_EQ(muscle::activeCurve(L, L).slope, 1.0);
    for (int k = 0; k <= 2200; ++k) {
      const double t = k * 1e-3;
      const muscle::CurveValue a = muscle::activeCurve(t * L, L), p = muscle::passiveCurve(t * L, L);
      EXPECT_GE(a.slope, 0.0);
      EXPECT_GE(p.slope, 0.0);
      EXPECT_GE(p.value, 0.0);
      if (k != 1000) {
        EXPECT_LT(a.slope, 1.0) << "t = " << t;
      }
      if (t <= 0.4) {
        EXPECT_EQ(a.value, 0.0);
      }
      if (t <= 1.0) {
        EXPECT_EQ(p.value, 0.0);
      }
      if (t >= 1.6) {
        EXPECT_EQ(a.slope, 0.0);
      }
    }
  }
}

TEST(MuscleCurves, AreEquations7And8UpToTheirPrintedRounding) {
  // Eq. 8 as printed, and eq. 7 minus its value 0.0076 lambda_ofl at l = lambda_ofl+.
  const auto printed_active = [](double l, double L) {
    const double t = l / L;
    if (t <= 0.4) return 0.0;
    if (t < 0.6) return 3.0 * L * std::pow(t - 0.4, 3);
    if (t <= 1.4) return -0.6612 * L + l - 1.33 * L * std::pow(t - 1.0, 3);
    if (t <= 1.6) return 0.6774 * L + 3.0 * L * std::pow(t - 1.6, 3);
    return 0.6774 * L;
  };
  const auto printed_passive = [](double l, double L) {
    if (l <= L) return 0.0;
    return 0.0076 * L * (std::exp(6.6 * (l / L - 1.0)) - 1.0) - 0.05 * (l - L);
  };
  // The printed constants make f_a jump (why we use exact ones): 8e-5 L at 0.6, 2.8e-4 L at 1.4.
  const double e = 1e-12;
  EXPECT_NEAR(printed_active(0.6 + e, 1.0) - printed_active(0.6 - e, 1.0), -8e-5, 1e-9);
  EXPECT_NEAR(printed_active(1.4 + e, 1.0) - printed_active(1.4 - e, 1.0), -2.8e-4, 1e-9);
  for (double L : {1.0, 1.25}) {
    double worst_active = 0.0, worst_passive = 0.0;
    for (int k = 0; k <= 1600; ++k) {
      const double l = k * 1e-3 * L;
      worst_active = std::max(worst_active, std::abs(muscle::activeCurve(l, L).value - printed_active(l, L)));
      worst_passive = std::max(worst_passive, std::abs(muscle::passiveCurve(l, L).value - printed_passive(l, L)));
    }
    // 4/3 vs 1.33 and the rounded constants: <= 3.47e-4 L (at t = 1.4); 0.05/6.6 vs 0.0076:
    // 2.4e-5 (e^x - 1) <= 1.25e-3 L up to l = 1.6 lambda_ofl.
    EXPECT_LT(worst_active, 3.6e-4 * L);
    EXPECT_LT(worst_passive, 1.3e-3 * L);
    std::printf("[ measured ] lambda_ofl %.2f: |f_a - eq. 8 printed| %.2e, |f_p - (eq. 7 - 0.0076 L)| %.2e\n", L,
                worst_active, worst_passive);
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
  ASSERT_EQ(names.size(), 5u);
  for (const std::string& name : names) EXPECT_EQ(materialModelName(parseMaterialModel(name)), name);
  EXPECT_EQ(parseMaterialModel("stvk"), MaterialModel::kStVenantKirchhoff);
  EXPECT_EQ(parseMaterialModel("muscle"), MaterialModel::kMuscle);
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
