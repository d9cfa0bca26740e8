// The inversion-safe SVD of polar_svd.hpp (a Jacobi method of its own, polar_svd.cpp) against
// its contract and against Eigen::JacobiSVD: F = U diag(sigma) V^T to 1e-12 |F|, U and V
// orthogonal to 1e-12 with det +1, sigma_1 >= sigma_2 >= |sigma_3|, sign(sigma_3) = sign(det F),
// sigma within 1e-12 |F| of JacobiSVD's (sign convention applied), on random, repeated, nearly
// repeated, inverted, rank-deficient, graded, tiny and huge F and on the set where R jumps;
// the warm-started rotation (one Newton step from a previous R) against polarRotation.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "core/materials/polar_svd.hpp"
#include "tests/support/random_samples.hpp"

namespace pbdlab {
namespace {

constexpr double kTol = 1e-12;

using test::randomRotation;

Mat3 randomMatrix(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  Mat3 F;
  for (int k = 0; k < 9; ++k) F.data()[k] = normal(rng);
  return F;
}

using test::uniform;

// det(F / |F|): the sign of det F without under- or overflow at extreme scales.
double normalizedDeterminant(const Mat3& F) {
  const double norm = F.norm();
  return norm > 0.0 ? Mat3(F / norm).determinant() : 0.0;
}

// JacobiSVD's singular values with the rotation-variant sign convention applied.
Vec3 referenceSigma(const Mat3& F) {
  const Eigen::JacobiSVD<Mat3, Eigen::NoQRPreconditioner> svd(F);
  Vec3 sigma = svd.singularValues();
  if (normalizedDeterminant(F) < 0.0) sigma(2) = -sigma(2);
  return sigma;
}

// The worst errors over a family, reported once per test.
struct SvdWorst {
  double reconstruction = 0.0, orthogonality = 0.0, sigma = 0.0;
  int checked = 0;
  void print(const char* name) const {
    std::printf("[ measured ] %-28s n=%5d  |USV^T-F|/|F| %.1e  |U^TU-I|,|V^TV-I| %.1e  |sigma-ref|/|F| %.1e\n",
                name, checked, reconstruction, orthogonality, sigma);
  }
};

// Every clause of the contract for one F. Returns the SVD for further checks.
RotationVariantSvd checkContract(const Mat3& F, const std::string& what, SvdWorst& worst) {
  const RotationVariantSvd svd = rotationVariantSvd(F);
  const double norm = F.norm();
  const double scale = norm > 0.0 ? norm : 1.0;
  const double reconstruction = (svd.U * svd.sigma.asDiagonal() * svd.V.transpose() - F).norm() / scale;
  const double orthogonality = std::max((svd.U.transpose() * svd.U - Mat3::Identity()).norm(),
                                        (svd.V.transpose() * svd.V - Mat3::Identity()).norm());
  const double sigma_error = (svd.sigma - referenceSigma(F)).norm() / scale;
  EXPECT_LE(reconstruction, kTol) << what << "\nF =\n" << F;
  EXPECT_LE(orthogonality, kTol) << what << "\nF =\n" << F;
  EXPECT_NEAR(svd.U.determinant(), 1.0, kTol) << what;
  EXPECT_NEAR(svd.V.determinant(), 1.0, kTol) << what;
  EXPECT_GE(svd.sigma(0), svd.sigma(1)) << what;
  EXPECT_GE(svd.sigma(1), std::abs(svd.sigma(2))) << what;
  // The sign of det F is only meaningful above its rounding error (~eps |F|^3).
  const double det = normalizedDeterminant(F);
  if (std::abs(det) > 1e-10) {
    EXPECT_EQ(svd.sigma(2) < 0.0, det < 0.0) << what << " det F = " << det << " sigma = " << svd.sigma.transpose();
  }
  EXPECT_LE(sigma_error, kTol) << what << " sigma = " << svd.sigma.transpose()
                               << " reference = " << referenceSigma(F).transpose();
  // The values-only entry point does the same arithmetic.
  EXPECT_EQ(rotationVariantSingularValues(F), svd.sigma) << what;
  EXPECT_LE((polarRotation(F) - svd.U * svd.V.transpose()).norm(), 1e-15) << what;
  worst.reconstruction = std::max(worst.reconstruction, reconstruction);
  worst.orthogonality = std::max(worst.orthogonality, orthogonality);
  worst.sigma = std::max(worst.sigma, sigma_error);
  ++worst.checked;
  return svd;
}

// R1 diag(s) R2^T with random rotations, and the plain diagonal and one-sided versions.
void checkWithSingularValues(const Vec3& s, std::mt19937& rng, const std::string& what, SvdWorst& worst,
                             double scale = 1.0) {
  const Mat3 D = scale * s.asDiagonal().toDenseMatrix();
  checkContract(D, what + " (diagonal)", worst);
  checkContract(randomRotation(rng) * D, what + " (R diag)", worst);
  const RotationVariantSvd svd = checkContract(randomRotation(rng) * D * randomRotation(rng).transpose(), what, worst);
  // The values themselves, sorted by magnitude with the sign of det on the last one.
  Vec3 expected = s.cwiseAbs();
  std::sort(expected.data(), expected.data() + 3, [](double x, double y) { return x > y; });
  if (s.prod() < 0.0) expected(2) = -expected(2);
  EXPECT_LE((svd.sigma - scale * expected).norm(), kTol * scale * s.norm()) << what;
}

TEST(PolarSvd, RandomMatricesAtThreeScales) {
  std::mt19937 rng(101u);
  for (double scale : {1.0, 1e-3, 1e3}) {
    SvdWorst worst;
    int inverted = 0;
    for (int n = 0; n < 3000; ++n) {
      const Mat3 F = scale * randomMatrix(rng);
      inverted += F.determinant() < 0.0;
      checkContract(F, "random, scale " + std::to_string(scale), worst);
    }
    EXPECT_GT(inverted, 1000);  // about half of them
    char name[32];
    std::snprintf(name, sizeof name, "random, scale %g", scale);
    worst.print(name);
  }
}

TEST(PolarSvd, RotationsAndReflectionsThroughTheOrigin) {
  std::mt19937 rng(102u);
  SvdWorst worst;
  for (int n = 0; n < 500; ++n) {
    const Mat3 R = randomRotation(rng);
    const RotationVariantSvd svd = checkContract(R, "rotation", worst);
    EXPECT_LE((svd.sigma - Vec3::Ones()).norm(), kTol);
    EXPECT_LE((polarRotation(R) - R).norm(), kTol);
    // -R: det = -1, sigma = (1, 1, -1).
    const RotationVariantSvd minus = checkContract(Mat3(-R), "minus rotation", worst);
    EXPECT_LE((minus.sigma - Vec3(1.0, 1.0, -1.0)).norm(), kTol);
  }
  worst.print("rotations");
}

TEST(PolarSvd, RepeatedSingularValues) {
  std::mt19937 rng(103u);
  SvdWorst worst;
  for (int n = 0; n < 300; ++n) {
    const double a = uniform(rng, 0.2, 3.0);
    checkWithSingularValues(Vec3(a, a, a), rng, "all three equal", worst);
    checkWithSingularValues(Vec3(2.0 * a, a, a), rng, "two smallest equal", worst);
    checkWithSingularValues(Vec3(a, a, 0.3 * a), rng, "two largest equal", worst);
    checkWithSingularValues(Vec3(a, -a, a), rng, "all equal, one negative", worst);
  }
  worst.print("repeated");
}

TEST(PolarSvd, NearlyRepeatedSingularValues) {
  std::mt19937 rng(104u);
  SvdWorst worst;
  for (double d : {1e-8, -1e-8, 1e-12, 1e-6}) {
    for (int n = 0; n < 200; ++n) {
      const double a = uniform(rng, 0.5, 1.5);
      checkWithSingularValues(Vec3(a, a + d, a - d), rng, "three within 1e-8", worst);
      checkWithSingularValues(Vec3(a + d, a, 0.4), rng, "largest two within 1e-8", worst);
      checkWithSingularValues(Vec3(2.0, a, a + d), rng, "smallest two within 1e-8", worst);
      checkWithSingularValues(Vec3(a, a + d, -a), rng, "inverted, within 1e-8", worst);
    }
  }
  worst.print("nearly repeated");
}

TEST(PolarSvd, InvertedOneOrThreeNegative) {
  std::mt19937 rng(105u);
  SvdWorst worst;
  for (int n = 0; n < 500; ++n) {
    Vec3 s(uniform(rng, 0.2, 2.0), uniform(rng, 0.2, 2.0), uniform(rng, 0.2, 2.0));
    Vec3 one = s;
    one(n % 3) = -one(n % 3);
    checkWithSingularValues(one, rng, "one negative", worst);
    checkWithSingularValues(-s, rng, "three negative", worst);
    Vec3 two = -s;
    two(n % 3) = -two(n % 3);
    checkWithSingularValues(two, rng, "two negative (not inverted)", worst);
  }
  worst.print("inverted");
}

TEST(PolarSvd, RankDeficientAndZero) {
  std::mt19937 rng(106u);
  SvdWorst worst;
  for (int n = 0; n < 500; ++n) {
    const double a = uniform(rng, 0.2, 2.0), b = uniform(rng, 0.2, 2.0);
    checkWithSingularValues(Vec3(a, b, 0.0), rng, "rank 2", worst);
    checkWithSingularValues(Vec3(a, 0.0, 0.0), rng, "rank 1", worst);
    // Products of random vectors: exactly rank 1 and 2 up to the rounding of the products.
    const Vec3 p = randomMatrix(rng).col(0), q = randomMatrix(rng).col(1), r = randomMatrix(rng).col(2);
    checkContract(p * q.transpose(), "p q^T", worst);
    checkContract(p * q.transpose() + r * p.transpose(), "p q^T + r p^T", worst);
    Mat3 F = randomMatrix(rng);
    F.col(n % 3) = 0.5 * F.col((n + 1) % 3) - 2.0 * F.col((n + 2) % 3);  // dependent columns
    checkContract(F, "dependent columns", worst);
    Mat3 single = Mat3::Zero();
    single(n % 3, (n / 3) % 3) = a;
    checkContract(single, "one non-zero entry", worst);
  }
  const RotationVariantSvd zero = checkContract(Mat3::Zero(), "zero", worst);
  EXPECT_EQ(zero.sigma, Vec3::Zero());
  worst.print("rank deficient");
}

// Widely spread singular values: F^T F alone would give the small ones' vectors only to
// eps sigma_1^2 / sigma_i^2; the reconstruction of the small part must still be exact.
TEST(PolarSvd, GradedSingularValues) {
  std::mt19937 rng(107u);
  SvdWorst worst;
  for (int n = 0; n < 300; ++n) {
    checkWithSingularValues(Vec3(1.0, 1e-6, 1e-9), rng, "graded 1, 1e-6, 1e-9", worst);
    checkWithSingularValues(Vec3(1.0, 1e-4, -1e-8), rng, "graded inverted", worst);
    checkWithSingularValues(Vec3(1.0, 1e-8, 1e-8 * (1.0 + 1e-8)), rng, "graded, small pair equal", worst);
  }
  worst.print("graded");
}

TEST(PolarSvd, TinyAndHugeScales) {
  std::mt19937 rng(108u);
  SvdWorst worst;
  for (double scale : {1e-3, 1e3, 1e-150, 1e150}) {
    for (int n = 0; n < 300; ++n) {
      char what_buffer[32];
      std::snprintf(what_buffer, sizeof what_buffer, "scale %g", scale);
      const std::string what = what_buffer;
      checkContract(scale * randomMatrix(rng), what, worst);
      checkWithSingularValues(Vec3(1.5, 0.8, -0.6), rng, what + " inverted", worst, scale);
      checkWithSingularValues(Vec3(1.0, 1.0, 1e-7), rng, what + " near singular", worst, scale);
    }
  }
  worst.print("tiny and huge");
}

// F = R1 diag(2, 1 + d, -1) R2^T: R = U V^T jumps from R1 R2^T to R1 diag(1, -1, -1) R2^T as d
// changes sign (polar_svd.hpp); on either side the SVD itself must be exact.
TEST(PolarSvd, AcrossTheSetWhereTheRotationJumps) {
  std::mt19937 rng(109u);
  SvdWorst worst;
  const Mat3 flip = Vec3(1.0, -1.0, -1.0).asDiagonal();
  for (double d : {1e-6, -1e-6, 1e-8, -1e-8}) {
    for (int n = 0; n < 300; ++n) {
      const Mat3 R1 = randomRotation(rng), R2 = randomRotation(rng);
      const Mat3 F = R1 * Vec3(2.0, 1.0 + d, -1.0).asDiagonal() * R2.transpose();
      const RotationVariantSvd svd = checkContract(F, "jump set, d = " + std::to_string(d), worst);
      EXPECT_NEAR(svd.sigma(1) + svd.sigma(2), std::abs(d), kTol);  // |1 + d| - 1 either way
      const Mat3 expected = d > 0.0 ? Mat3(R1 * R2.transpose()) : Mat3(R1 * flip * R2.transpose());
      // R amplifies the rounding of F (~eps) by 1 / (sigma_2 + sigma_3) = 1 / |d|.
      EXPECT_LE((polarRotation(F) - expected).norm(), 1e-14 / std::abs(d)) << "d = " << d;
    }
    const RotationVariantSvd diag =
        checkContract(Vec3(2.0, 1.0 + d, -1.0).asDiagonal().toDenseMatrix(), "jump set, diagonal", worst);
    EXPECT_LE((polarRotation(diag) - (d > 0.0 ? Mat3(Mat3::Identity()) : flip)).norm(), kTol) << "d = " << d;
  }
  worst.print("jump set");
}

// For det F > 0, R = U V^T is the polar factor: R^T F symmetric positive definite.
TEST(PolarSvd, PolarRotationIsThePolarFactor) {
  std::mt19937 rng(110u);
  for (int n = 0; n < 1000; ++n) {
    Mat3 F = randomMatrix(rng);
    if (F.determinant() < 0.0) F.col(0) = -F.col(0);
    const Mat3 R = polarRotation(F);
    const Mat3 S = R.transpose() * F;
    EXPECT_LE((S - S.transpose()).norm(), kTol * F.norm());
    EXPECT_GT(Eigen::SelfAdjointEigenSolver<Mat3>(0.5 * (S + S.transpose())).eigenvalues().minCoeff(), 0.0);
    EXPECT_NEAR(R.determinant(), 1.0, kTol);
  }
}


// --- the warm-started polar rotation (warmStartedPolarRotation) -------------------------------

double orthonormalityError(const Mat3& R) { return (R.transpose() * R - Mat3::Identity()).norm(); }

// R exp([v]) for a rotation vector v (Eigen's angle-axis, independent of the code under test).
Mat3 rotatedBy(const Mat3& R, const Vec3& v) {
  const double angle = v.norm();
  return angle > 0.0 ? Mat3(R * Eigen::AngleAxisd(angle, v / angle).toRotationMatrix()) : R;
}

// Chained steps from R0 = polarRotation(F) exp([v]), |v| = 0.3: the error |R_k - R*| shrinks
// quadratically, e_{k+1} <= C e_k^2, down to round-off, for det F > 0 and for inverted F
// (sigma_2 + sigma_3 >= 0.3 here: the Newton step converges to the rotation-variant R). It is
// in fact cubic (the pulled-back energy's third-order term is proportional to its gradient):
// measured below as e_{k+1} / e_k^3.
TEST(PolarSvd, WarmStartedStepConvergesQuadratically) {
  std::mt19937 rng(201u);
  double worst_ratio = 0.0, worst_cubic = 0.0, worst_final = 0.0, worst_orthonormality = 0.0;
  int printed = 0;
  for (int n = 0; n < 400; ++n) {
    // sigma_1 >= sigma_2 >= sigma_3 + 0.3: sigma_2 + sigma_3 >= 0.3 even when inverted.
    Vec3 s(uniform(rng, 1.5, 2.0), uniform(rng, 1.0, 1.5), uniform(rng, 0.3, 0.7));
    if (n % 2 == 1) s(n % 3) = -s(n % 3);  // inverted: det F < 0 (any one sign: the same up to rotations)
    const Mat3 F = randomRotation(rng) * s.asDiagonal() * randomRotation(rng).transpose();
    const Mat3 target = polarRotation(F);
    std::normal_distribution<double> normal;
    Vec3 v(normal(rng), normal(rng), normal(rng));
    v *= 0.3 / v.norm();
    Mat3 R = rotatedBy(target, v);
    double error = (R - target).norm();
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1e", error);
    std::string history = buffer;
    for (int k = 0; k < 4; ++k) {
      Mat3 next;
      ASSERT_TRUE(warmStartedPolarRotation(F, R, next)) << "step " << k << " sigma " << s.transpose();
      const double next_error = (next - target).norm();
      std::snprintf(buffer, sizeof buffer, " %.1e", next_error);
      history += buffer;
      // Quadratic while above round-off: e_{k+1} / e_k^2 bounded (measured below).
      if (error > 1e-4) {
        worst_ratio = std::max(worst_ratio, next_error / (error * error));
        worst_cubic = std::max(worst_cubic, next_error / (error * error * error));
      }
      worst_orthonormality = std::max(worst_orthonormality, orthonormalityError(next));
      EXPECT_NEAR(next.determinant(), 1.0, 1e-14);
      R = next;
      error = next_error;
    }
    if (printed < 2 && (n % 2 == printed)) {
      std::printf("[ measured ] det F %s: |R_k - R*| = %s\n", n % 2 ? "< 0" : "> 0", history.c_str());
      ++printed;
    }
    worst_final = std::max(worst_final, error);
  }
  std::printf("[ measured ] warm-started step: worst e_{k+1} / e_k^2 %.3f, e_{k+1} / e_k^3 %.3f, worst error "
              "after 4 steps %.1e, worst |R^T R - I| %.1e\n",
              worst_ratio, worst_cubic, worst_final, worst_orthonormality);
  // Measured 0.21 and 0.49 (seed 201).
  EXPECT_LT(worst_ratio, 1.0);
  EXPECT_LT(worst_cubic, 2.0);
  EXPECT_LT(worst_final, 1e-14);
  EXPECT_LT(worst_orthonormality, 1e-14);
}

// One step from a nearby R0 (PBNG's use: F moved a little since R0 was computed): the error
// of the one step is (at least) second order in the distance to the maximizer; measured third.
TEST(PolarSvd, WarmStartedOneStepIsSecondOrder) {
  std::mt19937 rng(202u);
  for (double distance : {1e-2, 1e-3, 1e-4}) {
    double worst = 0.0, worst_cubic = 0.0;
    for (int n = 0; n < 200; ++n) {
      const Vec3 s(uniform(rng, 0.5, 2.0), uniform(rng, 0.5, 2.0), uniform(rng, 0.5, 2.0));
      const Mat3 F = randomRotation(rng) * s.asDiagonal() * randomRotation(rng).transpose();
      const Mat3 target = polarRotation(F);
      std::normal_distribution<double> normal;
      Vec3 v(normal(rng), normal(rng), normal(rng));
      Mat3 R;
      ASSERT_TRUE(warmStartedPolarRotation(F, rotatedBy(target, distance * v / v.norm()), R));
      worst = std::max(worst, (R - target).norm() / (distance * distance));
      worst_cubic = std::max(worst_cubic, (R - target).norm() / (distance * distance * distance));
      EXPECT_LT(orthonormalityError(R), 1e-14);
    }
    std::printf("[ measured ] one step from distance %.0e: |R - R*| / distance^2 <= %.2e, / distance^3 <= %.3f\n",
                distance, worst, worst_cubic);
    EXPECT_LT(worst, 1.0);
    EXPECT_LT(worst_cubic, 2.0);  // measured 0.53 at every distance
  }
}

// Thousands of chained steps (a rotation carried across many sweeps) stay orthonormal: the
// Bjorck step keeps round-off from accumulating.
TEST(PolarSvd, WarmStartedChainStaysARotation) {
  std::mt19937 rng(203u);
  Mat3 R = Mat3::Identity();
  double worst = 0.0;
  for (int n = 0; n < 20000; ++n) {
    // F turns slowly: a different rotation and stretch every call, R follows.
    const double angle = 1e-2 * n;
    const Mat3 turn = Eigen::AngleAxisd(angle, Vec3(1.0, 2.0, 3.0).normalized()).toRotationMatrix();
    const Vec3 s(1.0 + 0.3 * std::sin(1e-3 * n), 1.2, 0.8 + uniform(rng, -1e-3, 1e-3));
    const Mat3 F = turn * s.asDiagonal();
    Mat3 next;
    ASSERT_TRUE(warmStartedPolarRotation(F, R, next)) << n;
    R = next;
    worst = std::max(worst, orthonormalityError(R));
  }
  std::printf("[ measured ] 20000 chained steps: worst |R^T R - I| %.1e\n", worst);
  EXPECT_LT(worst, 1e-14);
  EXPECT_NEAR(R.determinant(), 1.0, 1e-14);
}

// The failure report: R0 far from the maximizer (turned by 90 degrees or more, or not a
// rotation at all: -R*), F near the jump set sigma_2 + sigma_3 = 0 (the Newton system is
// nearly singular there), F of rank <= 1 and non-finite input. The caller then takes the
// SVD's polarRotation(F).
TEST(PolarSvd, WarmStartedStepReportsFailure) {
  std::mt19937 rng(204u);
  Mat3 R;
  int far = 0, jump = 0, rank_one = 0;
  const int trials = 200;
  for (int n = 0; n < trials; ++n) {
    const Mat3 Q = randomRotation(rng);
    const Vec3 s(uniform(rng, 0.5, 2.0), uniform(rng, 0.5, 2.0), uniform(rng, 0.5, 2.0));
    const Mat3 F = Q * s.asDiagonal() * randomRotation(rng).transpose();
    const Mat3 target = polarRotation(F);
    // -R* (a reflection) and R* turned by pi about a random axis.
    far += !warmStartedPolarRotation(F, -target, R);
    std::normal_distribution<double> normal;
    Vec3 axis(normal(rng), normal(rng), normal(rng));
    far += !warmStartedPolarRotation(F, rotatedBy(target, 3.14159265358979 * axis / axis.norm()), R);
    // Near the jump set: sigma = (2, 1 + 1e-9, -1), R0 1e-2 from the maximizer.
    const Mat3 G = Q * Vec3(2.0, 1.0 + 1e-9, -1.0).asDiagonal() * randomRotation(rng).transpose();
    Vec3 v(normal(rng), normal(rng), normal(rng));
    const Mat3 near_jump = rotatedBy(polarRotation(G), 1e-2 * v / v.norm());
    jump += !warmStartedPolarRotation(G, near_jump, R);
    // Rank one: sigma = (1, 0, 0).
    const Mat3 line = Q * Vec3(1.0, 0.0, 0.0).asDiagonal();
    rank_one += !warmStartedPolarRotation(line, Q, R);
  }
  std::printf("[ measured ] failures reported: far R0 %d / %d, near the jump set %d / %d, rank one %d / %d\n",
              far, 2 * trials, jump, trials, rank_one, trials);
  EXPECT_EQ(far, 2 * trials);
  EXPECT_EQ(jump, trials);
  EXPECT_EQ(rank_one, trials);
  const double nan = std::nan("");
  EXPECT_FALSE(warmStartedPolarRotation(Mat3::Constant(nan), Mat3::Identity(), R));
  EXPECT_FALSE(warmStartedPolarRotation(Mat3::Identity(), Mat3::Constant(nan), R));
  EXPECT_FALSE(warmStartedPolarRotation(Mat3::Zero(), Mat3::Identity(), R));
  // Turned by 89 degrees at F = I: H is positive definite (2 cos 89 deg > 0), but the step
  // (tan 89 deg) exceeds kWarmStartMaxAngle; at 0.3 rad it is taken.
  EXPECT_FALSE(warmStartedPolarRotation(Mat3::Identity(), rotatedBy(Mat3::Identity(), Vec3(0.0, 0.0, 1.553)), R));
  EXPECT_TRUE(warmStartedPolarRotation(Mat3::Identity(), rotatedBy(Mat3::Identity(), Vec3(0.0, 0.0, 0.3)), R));
}

}  // namespace
}  // namespace pbdlab
