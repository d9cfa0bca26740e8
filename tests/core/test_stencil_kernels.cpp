// The stencil kernels of the cloth and contact terms (core/terms/): the corotated membrane
// (PBNG TOG eq. 36, §8.1), dihedral bending (eq. 35, 37), the kinematic collider shapes
// (§7.2) and the point-triangle closest point. Every derivative goes through the one
// finite-difference checker (tests/support/finite_difference.hpp) at random states and at
// turned-over / near-degenerate ones; the sets without a derivative (named in each kernel's
// header) are approached, never sampled.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/terms/bending_kernel.hpp"
#include "core/terms/collider_shapes.hpp"
#include "core/terms/membrane_kernel.hpp"
#include "core/terms/point_triangle.hpp"
#include "tests/support/finite_difference.hpp"
#include "tests/support/random_samples.hpp"

namespace pbdlab {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int kSamples = 25;

using test::randomRotation;

Vec3 randomVec3(std::mt19937& rng, double scale) {
  std::uniform_real_distribution<double> uniform(-scale, scale);
  return Vec3(uniform(rng), uniform(rng), uniform(rng));
}

double uniformIn(std::mt19937& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }

double smallestEigenvalue(const Eigen::MatrixXd& H) {
  const Eigen::MatrixXd symmetric = 0.5 * (H + H.transpose());
  return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(symmetric).eigenvalues().minCoeff();
}

// The worst errors of a family of finite-difference checks.
struct KernelWorst {
  double gradient = 0.0;
  double hessian = 0.0;
  void add(const test::FiniteDifferenceErrors& e) {
    gradient = std::max(gradient, e.gradient);
    hessian = std::max(hessian, e.hessian);
  }
};

void reportWorst(const std::string& what, const KernelWorst& worst) {
  ::testing::Test::RecordProperty(what + "_gradient", std::to_string(worst.gradient));
  ::testing::Test::RecordProperty(what + "_hessian", std::to_string(worst.hessian));
  std::printf("[ measured ] %s: gradient %.2e, Hessian %.2e\n", what.c_str(), worst.gradient, worst.hessian);
}

// =====================================================================================
// Membrane
// =====================================================================================

// mu and lambda of the tests: lambda = 4 mu (nu = 0.4 in 3D terms), so a wrong area term
// cannot hide behind the mu terms.
constexpr double kMu = 1.0;
constexpr double kLambda = 4.0;

// Finite differences for the membrane: step 1e-6 on O(1) coordinates. Measured (Release,
// GCC 12, these seeds) as the worst relative Frobenius error over 25 samples per family:
//   random positions         gradient 6.8e-10  Hessian 8.9e-10
//   stretched or compressed  gradient 1.1e-9   Hessian 1.3e-9
//   turned over              gradient 1.6e-9   Hessian 1.7e-9
//   equal singular values    gradient 1.4e-9   Hessian 1.6e-9
//   near J = 0 (s2 = 1e-2)   gradient 7.6e-9   Hessian 2.1e-8  (truncation ~ (h |G| / s2)^2)
// kKernelFdTolerance 1e-7 is 60x above the regular families' worst; near J = 0 the tolerance is
// 1e-6 (48x). A wrong term is far above either: with the sign of 4 mu/(s1 + s2) in the
// rotation-twist eigenvalue flipped the Hessian error is 0.3-0.4, with lambda (J - 1) s2
// dropped from psi_1 the gradient error is 0.2-0.4, with the symmetric-twist eigenvalue
// 2 mu + lambda (J - 1) the Hessian error is 0.1-0.3.
constexpr double kKernelFdStep = 1e-6;
constexpr double kKernelFdTolerance = 1e-7;
constexpr double kFdToleranceNearSingular = 1e-6;

// A random rest triangle whose smallest height is at least 0.3 of its longest edge, with its
// orthonormal 2D frame computed here independently of membraneRest.
struct RestTriangle {
  Vec3 X[3];
  Mat32 frame;  // [t1 t2]
  Eigen::Vector2d xi[3];
  MembraneRest rest;
};

RestTriangle randomRestTriangle(std::mt19937& rng) {
  for (;;) {
    RestTriangle T;
    for (auto& X : T.X) X = randomVec3(rng, 1.0);
    const Vec3 e1 = T.X[1] - T.X[0], e2 = T.X[2] - T.X[0];
    const double longest = std::max({e1.norm(), e2.norm(), (T.X[2] - T.X[1]).norm()});
    const double twice_area = e1.cross(e2).norm();
    if (longest < 0.5 || twice_area / longest < 0.3 * longest) continue;
    T.frame.col(0) = e1.normalized();
    T.frame.col(1) = e1.cross(e2).normalized().cross(T.frame.col(0));
    for (int a = 0; a < 3; ++a) T.xi[a] = T.frame.transpose() * (T.X[a] - T.X[0]);
    T.rest = membraneRest(T.X[0], T.X[1], T.X[2]);
    return T;
  }
}

// Positions x_a = F xi_a + t, whose deformation gradient is exactly F.
Vec9 positionsWith(const RestTriangle& T, const Mat32& F, const Vec3& t) {
  Vec9 x;
  for (int a = 0; a < 3; ++a) x.segment<3>(3 * a) = F * T.xi[a] + t;
  return x;
}

Vec9 restPositions(const RestTriangle& T) {
  Vec9 x;
  for (int a = 0; a < 3; ++a) x.segment<3>(3 * a) = T.X[a];
  return x;
}

// F = Q [diag(s1, s2); 0] V^T, Q a random rotation, V a random rotation (or reflection: the
// triangle turned over relative to its rest orientation).
Mat32 deformationWithSingularValues(double s1, double s2, std::mt19937& rng, bool turned_over = false) {
  const Mat3 Q = randomRotation(rng);
  const double angle = uniformIn(rng, -kPi, kPi);
  Eigen::Matrix2d V;
  V << std::cos(angle), -std::sin(angle), std::sin(angle), std::cos(angle);
  if (turned_over) V.col(1) = -V.col(1);
  Mat32 S = Mat32::Zero();
  S(0, 0) = s1;
  S(1, 1) = s2;
  return Q * S * V.transpose();
}

double psiOfSingularValues(double s1, double s2) {
  return kMu * ((s1 - 1.0) * (s1 - 1.0) + (s2 - 1.0) * (s2 - 1.0)) + 0.5 * kLambda * (s1 * s2 - 1.0) * (s1 * s2 - 1.0);
}

test::EnergyFunction membraneFunction(const MembraneRest& rest, HessianKind kind = HessianKind::kTrue) {
  return [rest, kind](const Eigen::VectorXd& x, double* value, Eigen::VectorXd* gradient, Eigen::MatrixXd* hessian) {
    Vec9 g;
    Mat9 H;
    membraneTerms(rest, kMu, kLambda, Vec9(x), value, gradient ? &g : nullptr, hessian ? &H : nullptr, kind);
    if (gradient) *gradient = g;
    if (hessian) *hessian = H;
  };
}

TEST(MembraneRest, FrameAreaAndTranslationInvariance) {
  std::mt19937 rng(11);
  for (int k = 0; k < kSamples; ++k) {
    const RestTriangle T = randomRestTriangle(rng);
    const double area = 0.5 * (T.X[1] - T.X[0]).cross(T.X[2] - T.X[0]).norm();
    EXPECT_NEAR(T.rest.area, area, 1e-14 * area);
    // At rest F is the frame: orthonormal columns.
    const Mat32 F = membraneDeformationGradient(T.rest, restPositions(T));
    EXPECT_LT((F - T.frame).norm(), 1e-13);
    EXPECT_LT((F.transpose() * F - Eigen::Matrix2d::Identity()).norm(), 1e-13);
    // Each column of G sums to zero: a translation leaves F unchanged.
    EXPECT_LT(T.rest.dN_dX.colwise().sum().norm(), 1e-13 * T.rest.dN_dX.norm());
  }
}

TEST(MembraneRest, DegenerateTriangleThrows) {
  const Vec3 a(0.0, 0.0, 0.0), b(1.0, 1.0, 1.0);
  EXPECT_THROW(membraneRest(a, b, 2.0 * b), std::invalid_argument);                 // collinear
  EXPECT_THROW(membraneRest(a, b, b), std::invalid_argument);                       // coincident
  EXPECT_THROW(membraneRest(a, a, a), std::invalid_argument);                       // a point
  EXPECT_THROW(membraneRest(a, b, Vec3(0.5, 0.5, 0.5 + 1e-14)), std::invalid_argument);  // sliver
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(membraneRest(a, b, Vec3(nan, 0.0, 0.0)), std::invalid_argument);
  EXPECT_NO_THROW(membraneRest(a, Vec3(1.0, 0.0, 0.0), Vec3(0.0, 1e-3, 0.0)));  // thin but valid
}

TEST(Membrane, RestAndRigidMotionsHaveZeroEnergyAndGradient) {
  std::mt19937 rng(12);
  for (int k = 0; k < kSamples; ++k) {
    const RestTriangle T = randomRestTriangle(rng);
    Mat3 R = randomRotation(rng);
    if (k % 2) R.col(2) = -R.col(2);  // a reflection: the triangle turned over
    const Vec3 t = randomVec3(rng, 2.0);
    for (const Vec9& x : {restPositions(T), Vec9(positionsWith(T, R * T.frame, t))}) {
      double value = 1.0;
      Vec9 g;
      membraneTerms(T.rest, kMu, kLambda, x, &value, &g, nullptr);
      EXPECT_LT(std::abs(value), 1e-13);
      EXPECT_LT(g.norm(), 1e-12);
    }
  }
}

TEST(Membrane, EnergyIsAreaTimesPsiOfSingularValues) {
  std::mt19937 rng(13);
  for (int k = 0; k < kSamples; ++k) {
    const RestTriangle T = randomRestTriangle(rng);
    const double s1 = uniformIn(rng, 0.2, 2.0), s2 = uniformIn(rng, 0.0, s1);
    const Vec9 x = positionsWith(T, deformationWithSingularValues(s1, s2, rng, k % 2), randomVec3(rng, 1.0));
    double value = 0.0;
    membraneTerms(T.rest, kMu, kLambda, x, &value, nullptr, nullptr);
    const double expected = T.rest.area * psiOfSingularValues(s1, s2);
    EXPECT_NEAR(value, expected, 1e-12 * std::max(1.0, expected)) << "s = " << s1 << ", " << s2;
  }
}

// Translations and rotations leave E unchanged, so the gradient is force- and torque-free,
// and a reflection of the positions (the triangle turned over) leaves E unchanged too.
TEST(Membrane, GradientIsForceAndTorqueFreeAndReflectionInvariant) {
  std::mt19937 rng(14);
  for (int k = 0; k < kSamples; ++k) {
    const RestTriangle T = randomRestTriangle(rng);
    Vec9 x = restPositions(T);
    for (int i = 0; i < 9; ++i) x[i] += uniformIn(rng, -0.4, 0.4);
    double value = 0.0, mirrored_value = 0.0;
    Vec9 g;
    membraneTerms(T.rest, kMu, kLambda, x, &value, &g, nullptr);
    Vec3 force = Vec3::Zero(), torque = Vec3::Zero();
    for (int a = 0; a < 3; ++a) {
      force += g.segment<3>(3 * a);
      torque += x.segment<3>(3 * a).cross(g.segment<3>(3 * a));
    }
    EXPECT_LT(force.norm(), 1e-12 * g.norm());
    EXPECT_LT(torque.norm(), 1e-12 * g.norm() * x.norm());
    const Vec3 n = randomVec3(rng, 1.0).normalized();
    const Mat3 mirror = Mat3::Identity() - 2.0 * n * n.transpose();
    Vec9 y;
    for (int a = 0; a < 3; ++a) y.segment<3>(3 * a) = mirror * x.segment<3>(3 * a);
    membraneTerms(T.rest, kMu, kLambda, y, &mirrored_value, nullptr, nullptr);
    EXPECT_NEAR(mirrored_value, value, 1e-12 * value);
  }
}

enum class MembraneFamily { kRandomPositions, kStretchedOrCompressed, kTurnedOver, kEqualSingularValues, kNearZeroArea };

struct MembraneCase {
  MembraneFamily family;
  const char* name;
};
void PrintTo(const MembraneCase& c, std::ostream* os) { *os << c.name; }

class MembraneFiniteDifferences : public ::testing::TestWithParam<MembraneCase> {};

TEST_P(MembraneFiniteDifferences, GradientAndTrueHessian) {
  const MembraneFamily family = GetParam().family;
  std::mt19937 rng(100 + static_cast<int>(family));
  test::FiniteDifferenceOptions options;
  options.step = kKernelFdStep;
  options.tolerance = family == MembraneFamily::kNearZeroArea ? kFdToleranceNearSingular : kKernelFdTolerance;
  KernelWorst worst;
  for (int k = 0; k < kSamples; ++k) {
    const RestTriangle T = randomRestTriangle(rng);
    const Vec3 t = randomVec3(rng, 1.0);
    Vec9 x;
    switch (family) {
      case MembraneFamily::kRandomPositions:
        x = restPositions(T);
        for (int i = 0; i < 9; ++i) x[i] += uniformIn(rng, -0.4, 0.4);
        break;
      case MembraneFamily::kStretchedOrCompressed: {
        const double s1 = uniformIn(rng, 0.3, 2.0), s2 = uniformIn(rng, 0.3, 2.0);
        x = positionsWith(T, deformationWithSingularValues(s1, s2, rng), t);
        break;
      }
      case MembraneFamily::kTurnedOver: {
        const double s1 = uniformIn(rng, 0.3, 2.0), s2 = uniformIn(rng, 0.3, 2.0);
        x = positionsWith(T, deformationWithSingularValues(s1, s2, rng, true), t);
        break;
      }
      case MembraneFamily::kEqualSingularValues: {
        // s1 = s2 exactly (a uniform scaling: the SVD is not unique, Psi is smooth), and
        // within 1e-8 of it; never the rest state itself (zero gradient, nothing to check).
        const double s = k % 2 ? uniformIn(rng, 0.4, 0.9) : uniformIn(rng, 1.1, 1.8);
        const double s2 = k % 3 == 0 ? s * (1.0 + 1e-8) : s;
        x = positionsWith(T, deformationWithSingularValues(s, s2, rng, k % 2), t);
        break;
      }
      case MembraneFamily::kNearZeroArea: {
        // The triangle nearly collapsed onto a line: s2 = 1e-2 (J -> 0 has no derivative).
        const double s1 = uniformIn(rng, 0.5, 1.5);
        x = positionsWith(T, deformationWithSingularValues(s1, 1e-2, rng, k % 2), t);
        break;
      }
    }
    test::FiniteDifferenceErrors errors;
    EXPECT_TRUE(test::derivativesMatchFiniteDifferences(membraneFunction(T.rest), x, options, &errors))
        << GetParam().name << " sample " << k;
    worst.add(errors);
  }
  reportWorst(std::string("membrane ") + GetParam().name, worst);
}

INSTANTIATE_TEST_SUITE_P(Families, MembraneFiniteDifferences,
                         ::testing::Values(MembraneCase{MembraneFamily::kRandomPositions, "random_positions"},
                                           MembraneCase{MembraneFamily::kStretchedOrCompressed, "stretched_or_compressed"},
                                           MembraneCase{MembraneFamily::kTurnedOver, "turned_over"},
                                           MembraneCase{MembraneFamily::kEqualSingularValues, "equal_singular_values"},
                                           MembraneCase{MembraneFamily::kNearZeroArea, "near_zero_area"}),
                         [](const ::testing::TestParamInfo<MembraneCase>& info) { return std::string(info.param.name); });

// Exactly at J = 0 no derivative exists; the kernel must stay finite.
TEST(Membrane, CollapsedTriangleIsFinite) {
  std::mt19937 rng(15);
  const RestTriangle T = randomRestTriangle(rng);
  for (const double s1 : {0.0, 0.7}) {
    const Vec9 x = positionsWith(T, deformationWithSingularValues(s1, 0.0, rng), Vec3::Zero());
    for (const HessianKind kind : {HessianKind::kTrue, HessianKind::kProjected, HessianKind::kApproximate}) {
      double value = 0.0;
      Vec9 g;
      Mat9 H;
      membraneTerms(T.rest, kMu, kLambda, x, &value, &g, &H, kind);
      EXPECT_NEAR(value, T.rest.area * psiOfSingularValues(s1, 0.0), 1e-12);
      EXPECT_TRUE(g.allFinite());
      EXPECT_TRUE(H.allFinite());
    }
  }
}

// The projection clamps the 6x6 d^2Psi/dF^2's eigenvalues: the element Hessian is PSD, the
// correction (projected - true) is PSD, and where the true Hessian is already PSD nothing
// changes. Under compression the true Hessian is indefinite (out-of-plane buckling).
TEST(Membrane, ProjectedHessianIsPsdAndTouchesOnlyNegativeModes) {
  std::mt19937 rng(16);
  int unchanged_cases = 0, indefinite_cases = 0;
  for (int k = 0; k < 2 * kSamples; ++k) {
    const RestTriangle T = randomRestTriangle(rng);
    const bool stretched = k % 2 == 0;
    const double s1 = stretched ? uniformIn(rng, 1.0, 1.2) : uniformIn(rng, 0.2, 1.0);
    const double s2 = stretched ? uniformIn(rng, 1.0, 1.2) : uniformIn(rng, 0.2, 1.0);
    const Vec9 x = positionsWith(T, deformationWithSingularValues(s1, s2, rng, k % 3 == 0), randomVec3(rng, 1.0));
    Mat9 H, Hp;
    membraneTerms(T.rest, kMu, kLambda, x, nullptr, nullptr, &H, HessianKind::kTrue);
    membraneTerms(T.rest, kMu, kLambda, x, nullptr, nullptr, &Hp, HessianKind::kProjected);
    const double scale = H.norm();
    EXPECT_GE(smallestEigenvalue(Hp), -1e-12 * scale);
    EXPECT_GE(smallestEigenvalue(Hp - H), -1e-12 * scale);
    // PSD up to round-off (the three translations are exact zero modes of both) or clearly
    // indefinite; the band between is not classified.
    const double min_eigenvalue = smallestEigenvalue(H);
    if (min_eigenvalue >= -1e-12 * scale) {
      ++unchanged_cases;
      EXPECT_LT((Hp - H).norm(), 1e-12 * scale);
    } else if (min_eigenvalue < -1e-6 * scale) {
      ++indefinite_cases;
      EXPECT_GT((Hp - H).norm(), 1e-6 * scale);
    }
  }
  EXPECT_GT(unchanged_cases, 0);
  EXPECT_GT(indefinite_cases, 0);
}

// PBNG §8.1: 2 mu I + lambda/4 J^2 L (x) L = 2 mu I + lambda dJ/dF (x) dJ/dF in F, so the
// element matrix is 2 mu A B^T B + lambda A gJ gJ^T with gJ = dJ/dx. gJ comes from the
// gradient of the lambda-only energy A lambda/2 (J - 1)^2, whose gradient is A lambda (J - 1) gJ.
TEST(Membrane, ApproximateHessianIsPbngSection81) {
  std::mt19937 rng(17);
  for (int k = 0; k < kSamples; ++k) {
    const RestTriangle T = randomRestTriangle(rng);
    const double s1 = uniformIn(rng, 0.3, 2.0), s2 = uniformIn(rng, 0.3, 2.0);
    if (std::abs(s1 * s2 - 1.0) < 0.1) continue;
    const Vec9 x = positionsWith(T, deformationWithSingularValues(s1, s2, rng), randomVec3(rng, 1.0));
    Mat9 H_mu, H_lambda, H;
    membraneTerms(T.rest, 1.0, 0.0, x, nullptr, nullptr, &H_mu, HessianKind::kApproximate);
    Vec9 g_lambda;
    membraneTerms(T.rest, 0.0, 1.0, x, nullptr, &g_lambda, &H_lambda, HessianKind::kApproximate);
    const Vec9 gJ = g_lambda / (T.rest.area * (s1 * s2 - 1.0));
    EXPECT_LT((H_lambda - T.rest.area * gJ * gJ.transpose()).norm(), 1e-12 * H_lambda.norm());
    Mat9 BtB = Mat9::Zero();  // B^T B = (G G^T) (x) I3
    const Mat3 GGt = T.rest.dN_dX * T.rest.dN_dX.transpose();
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) BtB.block<3, 3>(3 * a, 3 * b) = GGt(a, b) * Mat3::Identity();
    EXPECT_LT((H_mu - 2.0 * T.rest.area * BtB).norm(), 1e-12 * H_mu.norm());
    membraneTerms(T.rest, kMu, kLambda, x, nullptr, nullptr, &H, HessianKind::kApproximate);
    EXPECT_GE(smallestEigenvalue(H), -1e-12 * H.norm());
  }
}

TEST(Membrane, NullOutputsAndConsistentValues) {
  std::mt19937 rng(18);
  const RestTriangle T = randomRestTriangle(rng);
  Vec9 x = restPositions(T);
  for (int i = 0; i < 9; ++i) x[i] += uniformIn(rng, -0.3, 0.3);
  membraneTerms(T.rest, kMu, kLambda, x, nullptr, nullptr, nullptr);
  double v1 = 0.0, v2 = 0.0;
  Vec9 g1, g2;
  Mat9 H;
  membraneTerms(T.rest, kMu, kLambda, x, &v1, nullptr, nullptr);
  membraneTerms(T.rest, kMu, kLambda, x, &v2, &g2, &H);
  membraneTerms(T.rest, kMu, kLambda, x, nullptr, &g1, nullptr);
  EXPECT_EQ(v1, v2);
  EXPECT_EQ(g1, g2);
  EXPECT_GT(v1, 0.0);
}

// =====================================================================================
// Dihedral bending
// =====================================================================================

constexpr double kBendingStiffness = 0.7;

// Finite differences for the hinge: step 1e-6 on O(1) coordinates. Measured (Release, GCC 12,
// these seeds), worst relative Frobenius error over 25 samples per family, for theta itself
// and for E = k_b/2 theta^2:
//   random hinges             theta: grad 5.7e-10, Hess 1.8e-10   E: grad 5.4e-10, Hess 1.9e-10
//   nearly closed (|theta| = pi - 0.05)
//                             theta: grad 3.4e-10, Hess 1.7e-10   E: grad 4.9e-10, Hess 1.8e-10
//   thin wing (h1 = 1e-2 |e|) theta: grad 5.9e-9,  Hess 1.5e-8    E: grad 3.3e-8,  Hess 2.0e-8
// (the thin wing's error is truncation, ~ (h / h1)^2). Tolerances: 1e-7 regular (175x),
// 1e-6 for the thin wing (30x). Dropping the alpha terms of Hess theta gives 0.57; a wrong
// sign of dtheta/dx3 gives 1.2.
constexpr double kHingeTolerance = 1e-7;
constexpr double kHingeToleranceThin = 1e-6;

// A hinge with edge x0 = o, x1 = o + L e_hat, wings at heights h1, h2 from the edge, feet at
// edge coordinates beta1, beta2 (fractions of L), and dihedral angle `theta`: x3 is turned by
// theta about the edge from the flat position, towards -n1 for theta > 0 (the orientation of
// bending_kernel.hpp). A random rigid motion on top.
Vec12 hingeWithAngle(double theta, std::mt19937& rng, double h1 = 0.8, double h2 = 0.6, double beta1 = 0.4,
                     double beta2 = 0.7, double L = 1.3) {
  const Mat3 R = randomRotation(rng);
  const Vec3 o = randomVec3(rng, 1.0);
  const Vec3 e_hat = R.col(0), u = R.col(1), n1 = R.col(2);  // n1 = e_hat x u
  Vec12 x;
  x.segment<3>(0) = o;
  x.segment<3>(3) = o + L * e_hat;
  x.segment<3>(6) = o + beta1 * L * e_hat + h1 * u;
  x.segment<3>(9) = o + beta2 * L * e_hat + h2 * (-std::cos(theta) * u - std::sin(theta) * n1);
  return x;
}

test::EnergyFunction thetaFunction() {
  return [](const Eigen::VectorXd& x, double* value, Eigen::VectorXd* gradient, Eigen::MatrixXd* hessian) {
    Vec12 g;
    Mat12 H;
    const double theta = hingeAngle(Vec12(x), gradient ? &g : nullptr, hessian ? &H : nullptr);
    if (value) *value = theta;
    if (gradient) *gradient = g;
    if (hessian) *hessian = H;
  };
}

test::EnergyFunction hingeFunction(HessianKind kind = HessianKind::kTrue) {
  return [kind](const Eigen::VectorXd& x, double* value, Eigen::VectorXd* gradient, Eigen::MatrixXd* hessian) {
    Vec12 g;
    Mat12 H;
    hingeTerms(kBendingStiffness, Vec12(x), value, gradient ? &g : nullptr, hessian ? &H : nullptr, kind);
    if (gradient) *gradient = g;
    if (hessian) *hessian = H;
  };
}

TEST(Hinge, FlatHingeHasZeroAngleEnergyAndGradient) {
  std::mt19937 rng(21);
  for (int k = 0; k < kSamples; ++k) {
    const Vec12 x = hingeWithAngle(0.0, rng, uniformIn(rng, 0.2, 2.0), uniformIn(rng, 0.2, 2.0),
                                   uniformIn(rng, -1.0, 2.0), uniformIn(rng, -1.0, 2.0), uniformIn(rng, 0.5, 2.0));
    double value = 1.0;
    Vec12 g;
    EXPECT_LT(std::abs(hingeAngle(x)), 1e-14);
    hingeTerms(kBendingStiffness, x, &value, &g, nullptr);
    EXPECT_LT(value, 1e-28);
    EXPECT_LT(g.norm(), 1e-13);
  }
}

TEST(Hinge, ReproducesKnownAnglesWithSign) {
  std::mt19937 rng(22);
  for (const double degrees : {30.0, 90.0, 150.0, 179.0}) {
    for (const double sign : {1.0, -1.0}) {
      const double angle = sign * degrees * kPi / 180.0;
      const Vec12 x = hingeWithAngle(angle, rng);
      EXPECT_NEAR(hingeAngle(x), angle, 1e-13) << degrees << " degrees, sign " << sign;
      double value = 0.0;
      hingeTerms(kBendingStiffness, x, &value, nullptr, nullptr);
      EXPECT_NEAR(value, 0.5 * kBendingStiffness * angle * angle, 1e-13);
      // theta > 0 exactly when x3 lies on the -n1 side of triangle 1.
      const Vec3 x0 = x.segment<3>(0), x1 = x.segment<3>(3), x2 = x.segment<3>(6), x3 = x.segment<3>(9);
      const Vec3 n1 = (x1 - x0).cross(x2 - x0);
      EXPECT_EQ(angle > 0.0, (x3 - x0).dot(n1) < 0.0);
    }
  }
  // Swapping the wings' roles (x0 <-> x1, x2 <-> x3) is the same hinge: the same angle.
  const Vec12 x = hingeWithAngle(0.9, rng);
  Vec12 swapped;
  swapped << x.segment<3>(3), x.segment<3>(0), x.segment<3>(9), x.segment<3>(6);
  EXPECT_NEAR(hingeAngle(swapped), 0.9, 1e-13);
}

enum class HingeFamily { kRandom, kNearlyClosed, kThinWing };

struct HingeCase {
  HingeFamily family;
  const char* name;
};
void PrintTo(const HingeCase& c, std::ostream* os) { *os << c.name; }

class HingeFiniteDifferences : public ::testing::TestWithParam<HingeCase> {};

TEST_P(HingeFiniteDifferences, AngleAndEnergy) {
  const HingeFamily family = GetParam().family;
  std::mt19937 rng(200 + static_cast<int>(family));
  test::FiniteDifferenceOptions options;
  options.step = 1e-6;
  options.tolerance = family == HingeFamily::kThinWing ? kHingeToleranceThin : kHingeTolerance;
  KernelWorst worst_theta, worst_energy;
  int sampled = 0;
  while (sampled < kSamples) {
    Vec12 x;
    switch (family) {
      case HingeFamily::kRandom: {
        // Random points; keep hinges with both heights >= 0.2 |e| and |theta| <= pi - 0.2.
        for (int i = 0; i < 12; ++i) x[i] = uniformIn(rng, -1.0, 1.0);
        const Vec3 e = x.segment<3>(3) - x.segment<3>(0);
        const double h1 = e.cross(x.segment<3>(6) - x.segment<3>(0)).norm() / e.norm();
        const double h2 = e.cross(x.segment<3>(9) - x.segment<3>(0)).norm() / e.norm();
        if (e.norm() < 0.3 || std::min(h1, h2) < 0.2 * e.norm() || std::abs(hingeAngle(x)) > kPi - 0.2) continue;
        break;
      }
      case HingeFamily::kNearlyClosed:
        x = hingeWithAngle((sampled % 2 ? 1.0 : -1.0) * (kPi - 0.05), rng, uniformIn(rng, 0.3, 1.5),
                           uniformIn(rng, 0.3, 1.5), uniformIn(rng, -0.5, 1.5), uniformIn(rng, -0.5, 1.5));
        break;
      case HingeFamily::kThinWing:
        x = hingeWithAngle(uniformIn(rng, -2.5, 2.5), rng, 1e-2, uniformIn(rng, 0.3, 1.5), uniformIn(rng, -0.5, 1.5),
                           uniformIn(rng, -0.5, 1.5), 1.0);
        if (sampled % 2) {  // the thin wing on the other side
          Vec12 swapped;
          swapped << x.segment<3>(3), x.segment<3>(0), x.segment<3>(9), x.segment<3>(6);
          x = swapped;
        }
        break;
    }
    ++sampled;
    test::FiniteDifferenceErrors errors;
    EXPECT_TRUE(test::derivativesMatchFiniteDifferences(thetaFunction(), x, options, &errors))
        << GetParam().name << " theta, sample " << sampled;
    worst_theta.add(errors);
    EXPECT_TRUE(test::derivativesMatchFiniteDifferences(hingeFunction(), x, options, &errors))
        << GetParam().name << " energy, sample " << sampled;
    worst_energy.add(errors);
    // The Hessian of theta comes out symmetric without being symmetrized.
    Mat12 H;
    hingeAngle(x, nullptr, &H);
    EXPECT_LT((H - H.transpose()).norm(), 1e-12 * H.norm());
  }
  reportWorst(std::string("hinge theta ") + GetParam().name, worst_theta);
  reportWorst(std::string("hinge energy ") + GetParam().name, worst_energy);
}

INSTANTIATE_TEST_SUITE_P(Families, HingeFiniteDifferences,
                         ::testing::Values(HingeCase{HingeFamily::kRandom, "random"},
                                           HingeCase{HingeFamily::kNearlyClosed, "nearly_closed"},
                                           HingeCase{HingeFamily::kThinWing, "thin_wing"}),
                         [](const ::testing::TestParamInfo<HingeCase>& info) { return std::string(info.param.name); });

TEST(Hinge, GradientIsForceAndTorqueFree) {
  std::mt19937 rng(23);
  for (int k = 0; k < kSamples; ++k) {
    const Vec12 x = hingeWithAngle(uniformIn(rng, -3.0, 3.0), rng, uniformIn(rng, 0.2, 1.5), uniformIn(rng, 0.2, 1.5),
                                   uniformIn(rng, -1.0, 2.0), uniformIn(rng, -1.0, 2.0));
    Vec12 g;
    hingeAngle(x, &g);
    Vec3 force = Vec3::Zero(), torque = Vec3::Zero();
    for (int a = 0; a < 4; ++a) {
      force += g.segment<3>(3 * a);
      torque += x.segment<3>(3 * a).cross(g.segment<3>(3 * a));
    }
    EXPECT_LT(force.norm(), 1e-13 * g.norm());
    EXPECT_LT(torque.norm(), 1e-13 * g.norm() * x.norm());
  }
}

// Eq. 37: the approximate Hessian is k_b grad theta grad theta^T (rank one, PSD); the true one
// adds k_b theta Hess theta; the projected one is PSD and equals the true one where that is.
TEST(Hinge, HessianKinds) {
  std::mt19937 rng(24);
  for (int k = 0; k < kSamples; ++k) {
    const Vec12 x = hingeWithAngle(uniformIn(rng, -3.0, 3.0), rng, uniformIn(rng, 0.2, 1.5), uniformIn(rng, 0.2, 1.5),
                                   uniformIn(rng, -1.0, 2.0), uniformIn(rng, -1.0, 2.0));
    Vec12 dtheta;
    Mat12 d2theta, H, Ha, Hp;
    const double theta = hingeAngle(x, &dtheta, &d2theta);
    hingeTerms(kBendingStiffness, x, nullptr, nullptr, &H, HessianKind::kTrue);
    hingeTerms(kBendingStiffness, x, nullptr, nullptr, &Ha, HessianKind::kApproximate);
    hingeTerms(kBendingStiffness, x, nullptr, nullptr, &Hp, HessianKind::kProjected);
    const Mat12 rank_one = kBendingStiffness * dtheta * dtheta.transpose();
    EXPECT_LT((Ha - rank_one).norm(), 1e-14 * rank_one.norm());
    EXPECT_LT((H - rank_one - kBendingStiffness * theta * d2theta).norm(), 1e-13 * H.norm());
    EXPECT_GE(smallestEigenvalue(Ha), -1e-12 * Ha.norm());
    EXPECT_GE(smallestEigenvalue(Hp), -1e-12 * H.norm());
    if (smallestEigenvalue(H) >= -1e-12 * H.norm()) {
      EXPECT_LT((Hp - H).norm(), 1e-12 * H.norm());
    }
  }
}

// The named degenerate set. theta = +-pi: E is continuous across the branch cut but its
// gradient flips sign. A zero-area wing: finite outputs, theta = 0 and zero derivatives.
TEST(Hinge, DegenerateSet) {
  const double epsilon = 1e-3;
  std::mt19937 rng_a(26), rng_b(26);  // the same rigid motion for both sides of the cut
  const Vec12 below = hingeWithAngle(kPi - epsilon, rng_a);
  const Vec12 above = hingeWithAngle(kPi + epsilon, rng_b);  // = -pi + epsilon
  EXPECT_NEAR(hingeAngle(below), kPi - epsilon, 1e-12);
  EXPECT_NEAR(hingeAngle(above), -kPi + epsilon, 1e-12);
  double e_below = 0.0, e_above = 0.0;
  Vec12 g_below, g_above;
  hingeTerms(kBendingStiffness, below, &e_below, &g_below, nullptr);
  hingeTerms(kBendingStiffness, above, &e_above, &g_above, nullptr);
  EXPECT_NEAR(e_below, e_above, 1e-12);
  EXPECT_LT((g_below + g_above).norm(), 1e-2 * g_below.norm());  // opposite, up to O(epsilon)

  // Exactly zero area needs exact coordinates (a point put on the edge by arithmetic is off it
  // by round-off, and there the derivatives are ~1/h1, e.g. 1e16: the exact derivative of that
  // nearly degenerate hinge): x2 on the edge's line, x3 on x1, the edge of zero length.
  Vec12 on_edge, on_vertex, zero_edge;
  on_edge << 0, 0, 0, 2, 0, 0, 1, 0, 0, 1, -1, 0.5;
  on_vertex << 0, 0, 0, 2, 0, 0, 1, 1, 0, 2, 0, 0;
  zero_edge << 1, 1, 1, 1, 1, 1, 1, 2, 0, 1, -1, 0.5;
  for (const Vec12& x : {on_edge, on_vertex, zero_edge}) {
    for (const HessianKind kind : {HessianKind::kTrue, HessianKind::kProjected, HessianKind::kApproximate}) {
      double value = 1.0;
      Vec12 g;
      Mat12 H;
      hingeTerms(kBendingStiffness, x, &value, &g, &H, kind);
      EXPECT_EQ(value, 0.0);
      EXPECT_EQ(g.norm(), 0.0);
      EXPECT_EQ(H.norm(), 0.0);
    }
  }
}

// =====================================================================================
// Collider shapes
// =====================================================================================

// Finite differences of phi with step 1e-6, at points at least 0.05 from every set where phi
// (or, for the Hessian, its gradient) has no derivative ("bulk"), and at points 0.01-0.03
// from them ("near"). Measured (Release, GCC 12, these seeds), worst relative error over up
// to 200 points per shape and band:
//   plane   gradient 4.0e-10 (Hessian 0 exactly)
//   sphere  bulk gradient 5.6e-10, Hessian 3.1e-10;  near the centre 2.8e-9, 5.1e-9
//   box     bulk gradient 4.0e-10, Hessian 3.3e-10;  near its kinks 3.9e-10, 2.6e-10 (Hessian
//           in the edge and corner regions; elsewhere it is 0 and the gradient is checked to
//           be locally constant)
// Tolerance 1e-7 bulk (180x), 1e-6 near (200x). Dropping the n n^T term of the sphere's
// Hessian gives 0.58; the box's Hessian on all axes instead of the active ones 0.71.
constexpr double kColliderTolerance = 1e-7;
constexpr double kColliderToleranceNear = 1e-6;
constexpr double kColliderMargin = 0.05;
constexpr int kColliderPoints = 200;

template <class Shape>
test::EnergyFunction phiFunction(const Shape& shape) {
  return [shape](const Eigen::VectorXd& x, double* value, Eigen::VectorXd* gradient, Eigen::MatrixXd* hessian) {
    Vec3 g;
    Mat3 H;
    const double phi = signedDistance(shape, Vec3(x), gradient ? &g : nullptr, hessian ? &H : nullptr);
    if (value) *value = phi;
    if (gradient) *gradient = g;
    if (hessian) *hessian = H;
  };
}

// x - closest = phi n and phi(closest) = 0, with n the gradient at x (the unit outward normal).
template <class Shape>
void expectClosestPointConsistent(const Shape& shape, const Vec3& x) {
  Vec3 gradient, normal;
  const double phi = signedDistance(shape, x, &gradient);
  const Vec3 closest = closestPoint(shape, x, &normal);
  EXPECT_LT((normal - gradient).norm(), 1e-12);
  EXPECT_NEAR(normal.norm(), 1.0, 1e-12);
  EXPECT_LT((x - closest - phi * normal).norm(), 1e-12 * std::max(1.0, x.norm()));
  EXPECT_NEAR(signedDistance(shape, closest), 0.0, 1e-12 * std::max(1.0, x.norm()));
}

TEST(Colliders, CheckedConstructors) {
  EXPECT_THROW(makePlaneCollider(Vec3::Zero(), Vec3::Zero()), std::invalid_argument);
  EXPECT_THROW(makeSphereCollider(Vec3::Zero(), 0.0), std::invalid_argument);
  EXPECT_THROW(makeSphereCollider(Vec3::Zero(), -1.0), std::invalid_argument);
  EXPECT_THROW(makeBoxCollider(Vec3::Zero(), Vec3(1.0, 0.0, 1.0)), std::invalid_argument);
  EXPECT_THROW(makeBoxCollider(Vec3::Zero(), Vec3(1.0, std::numeric_limits<double>::infinity(), 1.0)),
               std::invalid_argument);
  EXPECT_NEAR(makePlaneCollider(Vec3::Zero(), Vec3(0.0, 3.0, 4.0)).normal.norm(), 1.0, 1e-15);
}

TEST(Colliders, Plane) {
  std::mt19937 rng(31);
  const PlaneCollider plane = makePlaneCollider(Vec3(0.2, -0.1, 0.4), Vec3(1.0, 2.0, -0.5));
  EXPECT_NEAR(signedDistance(plane, plane.point + 0.3 * plane.normal), 0.3, 1e-15);
  EXPECT_NEAR(signedDistance(plane, plane.point - 0.3 * plane.normal), -0.3, 1e-15);
  test::FiniteDifferenceOptions options;
  options.tolerance = kColliderTolerance;
  options.check_hessian = false;  // the Hessian is exactly zero: checked below
  double worst = 0.0;
  for (int k = 0; k < kColliderPoints; ++k) {
    const Vec3 x = randomVec3(rng, 2.0);
    test::FiniteDifferenceErrors errors;
    EXPECT_TRUE(test::derivativesMatchFiniteDifferences(phiFunction(plane), x, options, &errors));
    worst = std::max(worst, errors.gradient);
    Mat3 H;
    signedDistance(plane, x, nullptr, &H);
    EXPECT_EQ(H.norm(), 0.0);
    expectClosestPointConsistent(plane, x);
  }
  reportWorst("plane", KernelWorst{worst, 0.0});
}

TEST(Colliders, Sphere) {
  std::mt19937 rng(32);
  const SphereCollider sphere = makeSphereCollider(Vec3(0.3, -0.2, 0.1), 0.8);
  const Vec3 direction = Vec3(1.0, -2.0, 2.0) / 3.0;
  EXPECT_NEAR(signedDistance(sphere, sphere.center + 2.0 * direction), 1.2, 1e-15);
  EXPECT_NEAR(signedDistance(sphere, sphere.center + 0.5 * direction), -0.3, 1e-15);
  EXPECT_LT((closestPoint(sphere, sphere.center + 2.0 * direction) - (sphere.center + 0.8 * direction)).norm(), 1e-15);
  // At the centre (no derivative): finite, phi = -r.
  Vec3 g;
  Mat3 H;
  EXPECT_EQ(signedDistance(sphere, sphere.center, &g, &H), -0.8);
  EXPECT_TRUE(g.allFinite() && H.allFinite());
  EXPECT_NEAR(closestPoint(sphere, sphere.center).norm(), (sphere.center + 0.8 * Vec3::UnitZ()).norm(), 1e-15);

  test::FiniteDifferenceOptions options;
  options.tolerance = kColliderTolerance;
  KernelWorst worst;
  for (int k = 0; k < kColliderPoints; ++k) {
    const Vec3 x = randomVec3(rng, 2.5);
    if ((x - sphere.center).norm() < kColliderMargin) continue;
    test::FiniteDifferenceErrors errors;
    EXPECT_TRUE(test::derivativesMatchFiniteDifferences(phiFunction(sphere), x, options, &errors));
    worst.add(errors);
    expectClosestPointConsistent(sphere, x);
  }
  reportWorst("sphere", worst);
}

TEST(Colliders, BoxKnownValues) {
  const BoxCollider box = makeBoxCollider(Vec3(0.5, -1.0, 2.0), Vec3(1.0, 2.0, 3.0));
  const Vec3 c = box.center;
  struct Expected {
    Vec3 offset, closest_offset, normal;
    double phi;
  };
  const Expected cases[] = {
      {Vec3(1.5, 0.5, -1.0), Vec3(1.0, 0.5, -1.0), Vec3(1.0, 0.0, 0.0), 0.5},                    // face
      {Vec3(2.0, 3.0, 0.0), Vec3(1.0, 2.0, 0.0), Vec3(1.0, 1.0, 0.0) / std::sqrt(2.0), std::sqrt(2.0)},  // edge
      {Vec3(-2.0, -4.0, 5.0), Vec3(-1.0, -2.0, 3.0), Vec3(-1.0, -2.0, 2.0) / 3.0, 3.0},         // corner
      {Vec3(0.8, 0.5, 1.0), Vec3(1.0, 0.5, 1.0), Vec3(1.0, 0.0, 0.0), -0.2},                      // inside, +x face
      {Vec3(0.1, -1.7, 0.2), Vec3(0.1, -2.0, 0.2), Vec3(0.0, -1.0, 0.0), -0.3},                   // inside, -y face
  };
  for (const Expected& e : cases) {
    Vec3 g, normal;
    EXPECT_NEAR(signedDistance(box, c + e.offset, &g), e.phi, 1e-14);
    EXPECT_LT((g - e.normal).norm(), 1e-14);
    EXPECT_LT((closestPoint(box, c + e.offset, &normal) - (c + e.closest_offset)).norm(), 1e-14);
    EXPECT_LT((normal - e.normal).norm(), 1e-14);
    // The same through the variant.
    const ColliderShape shape = box;
    EXPECT_EQ(signedDistance(shape, c + e.offset), signedDistance(box, c + e.offset));
  }
  // On the surface phi = 0; at a face's centre the point is its own closest point.
  EXPECT_EQ(signedDistance(box, c + Vec3(0.3, 2.0, -1.0)), 0.0);
  EXPECT_LT((closestPoint(box, c + Vec3(0.3, 2.0, -1.0)) - (c + Vec3(0.3, 2.0, -1.0))).norm(), 1e-15);
}

// Distance-like measure of x from the box's sets without a derivative (every |q_i|: the
// surface's edges and corners and, outside, the planes where the Hessian jumps; inside also
// the medial set: the gap between the two nearest faces' distances and, for the nearest
// axis, |d_k|, the tie of its two opposite faces), and the number of active axes (q_i > 0).
double boxKinkDistance(const BoxCollider& box, const Vec3& x, int* active) {
  const Vec3 d = x - box.center;
  Vec3 q;
  for (int i = 0; i < 3; ++i) q(i) = std::abs(d(i)) - box.half_extents(i);
  *active = static_cast<int>((q.array() > 0.0).count());
  double distance = q.cwiseAbs().minCoeff();
  if (*active == 0) {
    Vec3 sorted = q;
    std::sort(sorted.data(), sorted.data() + 3);
    int nearest = 0;
    q.maxCoeff(&nearest);
    distance = std::min({distance, sorted(2) - sorted(1), std::abs(d(nearest))});
  }
  return distance;
}

struct ColliderBand {
  const char* name;
  double lo, hi;     // kept points: lo <= kink distance < hi
  double tolerance;  // on the relative Frobenius error
};
// Bulk: at least kColliderMargin from the sets. Near: within [0.01, 0.03] of them (phi's
// curvature there is up to 1/0.01, so the truncation error grows like (h / 0.01)^2).
const ColliderBand kColliderBands[] = {{"bulk", kColliderMargin, 1e300, kColliderTolerance},
                                       {"near_kinks", 0.01, 0.03, kColliderToleranceNear}};

TEST(Colliders, SphereNearItsCentre) {
  std::mt19937 rng(34);
  const SphereCollider sphere = makeSphereCollider(Vec3(0.3, -0.2, 0.1), 0.8);
  test::FiniteDifferenceOptions options;
  options.tolerance = kColliderToleranceNear;
  KernelWorst worst;
  for (int k = 0; k < kColliderPoints; ++k) {
    const Vec3 x = sphere.center + uniformIn(rng, 0.01, 0.03) * randomVec3(rng, 1.0).normalized();
    test::FiniteDifferenceErrors errors;
    EXPECT_TRUE(test::derivativesMatchFiniteDifferences(phiFunction(sphere), x, options, &errors));
    worst.add(errors);
    expectClosestPointConsistent(sphere, x);
  }
  reportWorst("sphere near_centre", worst);
}

TEST(Colliders, BoxFiniteDifferencesAwayFromKinksAndMedialSet) {
  const BoxCollider box = makeBoxCollider(Vec3(0.5, -1.0, 2.0), Vec3(1.0, 0.6, 0.8));
  const double step = 1e-6;
  for (const ColliderBand& band : kColliderBands) {
    std::mt19937 rng(33);
    test::FiniteDifferenceOptions options;
    options.step = step;
    options.tolerance = band.tolerance;
    KernelWorst worst;
    int regions[4] = {0, 0, 0, 0};  // inside, face, edge, corner (by active axes)
    for (int k = 0; k < 40 * kColliderPoints; ++k) {
      const Vec3 x = box.center + Vec3(uniformIn(rng, -2.5, 2.5), uniformIn(rng, -2.0, 2.0), uniformIn(rng, -2.2, 2.2));
      int active = 0;
      const double kink_distance = boxKinkDistance(box, x, &active);
      if (kink_distance < band.lo || kink_distance >= band.hi || regions[active] >= kColliderPoints / 2) continue;
      ++regions[active];
      test::FiniteDifferenceErrors errors;
      options.check_hessian = active >= 2;  // edge and corner regions; elsewhere the Hessian is 0
      EXPECT_TRUE(test::derivativesMatchFiniteDifferences(phiFunction(box), x, options, &errors))
          << band.name << ", active axes " << active;
      worst.add(errors);
      if (active < 2) {
        Vec3 g;
        Mat3 H;
        signedDistance(box, x, &g, &H);
        EXPECT_EQ(H.norm(), 0.0);
        for (int i = 0; i < 3; ++i) {  // the gradient is locally constant
          Vec3 gp, gm;
          signedDistance(box, x + step * Vec3::Unit(i), &gp);
          signedDistance(box, x - step * Vec3::Unit(i), &gm);
          EXPECT_EQ(gp, g);
          EXPECT_EQ(gm, g);
        }
      }
      expectClosestPointConsistent(box, x);
    }
    for (int r = 0; r < 4; ++r)
      EXPECT_GT(regions[r], 10) << band.name << ": region with " << r << " active axes undersampled";
    reportWorst(std::string("box ") + band.name, worst);
  }
}

// =====================================================================================
// Point-triangle closest point
// =====================================================================================

struct Triangle {
  Vec3 a, b, c, n;
};

Triangle randomlyPlacedTriangle(std::mt19937& rng) {
  const Mat3 R = randomRotation(rng);
  const Vec3 t = randomVec3(rng, 1.0);
  Triangle T;
  T.a = R * Vec3(0.0, 0.0, 0.0) + t;
  T.b = R * Vec3(2.0, 0.0, 0.0) + t;
  T.c = R * Vec3(0.5, 1.5, 0.0) + t;
  T.n = R.col(2);
  return T;
}

Vec3 atWeights(const Triangle& T, const Vec3& w) { return w(0) * T.a + w(1) * T.b + w(2) * T.c; }

TEST(PointTriangle, InteriorProjection) {
  std::mt19937 rng(41);
  for (int k = 0; k < kSamples; ++k) {
    const Triangle T = randomlyPlacedTriangle(rng);
    Vec3 w(uniformIn(rng, 0.05, 1.0), uniformIn(rng, 0.05, 1.0), uniformIn(rng, 0.05, 1.0));
    w /= w.sum();
    for (const double height : {0.7, -0.4, 0.0}) {
      const Vec3 p = atWeights(T, w) + height * T.n;
      const PointTriangleClosest r = pointTriangleClosest(p, T.a, T.b, T.c);
      EXPECT_EQ(r.region, TriangleRegion::kInterior);
      EXPECT_LT((r.weights - w).norm(), 1e-13);
      EXPECT_NEAR(r.distance, std::abs(height), 1e-13);
      EXPECT_LT((r.normal - T.n).norm(), 1e-13);
      EXPECT_FALSE(r.degenerate);
    }
  }
}

TEST(PointTriangle, EdgeRegions) {
  std::mt19937 rng(42);
  for (int k = 0; k < kSamples; ++k) {
    const Triangle T = randomlyPlacedTriangle(rng);
    const Vec3 vertices[3] = {T.a, T.b, T.c};
    const TriangleRegion regions[3] = {TriangleRegion::kEdgeAB, TriangleRegion::kEdgeBC, TriangleRegion::kEdgeCA};
    for (int edge = 0; edge < 3; ++edge) {
      const int i = edge, j = (edge + 1) % 3, opposite = (edge + 2) % 3;
      const double v = uniformIn(rng, 0.05, 0.95);
      Vec3 w = Vec3::Zero();
      w(i) = 1.0 - v;
      w(j) = v;
      const Vec3 outward = (vertices[j] - vertices[i]).cross(T.n).normalized();  // in-plane, away from the triangle
      for (const double height : {0.6, -0.3, 0.0}) {  // 0: p in the triangle's plane
        const double out = uniformIn(rng, 0.01, 1.0);
        const Vec3 p = atWeights(T, w) + out * outward + height * T.n;
        const PointTriangleClosest r = pointTriangleClosest(p, T.a, T.b, T.c);
        EXPECT_EQ(r.region, regions[edge]);
        EXPECT_EQ(r.weights(opposite), 0.0);
        EXPECT_LT((r.weights - w).norm(), 1e-13);
        EXPECT_NEAR(r.distance, std::hypot(out, height), 1e-13);
      }
    }
  }
}

TEST(PointTriangle, VertexRegions) {
  std::mt19937 rng(43);
  for (int k = 0; k < kSamples; ++k) {
    const Triangle T = randomlyPlacedTriangle(rng);
    const Vec3 vertices[3] = {T.a, T.b, T.c};
    const TriangleRegion regions[3] = {TriangleRegion::kVertexA, TriangleRegion::kVertexB, TriangleRegion::kVertexC};
    for (int v = 0; v < 3; ++v) {
      const Vec3 to_next = (vertices[(v + 1) % 3] - vertices[v]).normalized();
      const Vec3 to_previous = (vertices[(v + 2) % 3] - vertices[v]).normalized();
      // Inside the vertex's normal cone: d . (each edge from v) < 0.
      const Vec3 outward = -(to_next + to_previous).normalized();
      for (const double height : {0.5, -0.8, 0.0}) {
        const double out = uniformIn(rng, 0.01, 1.0);
        const Vec3 p = vertices[v] + out * outward + height * T.n;
        const PointTriangleClosest r = pointTriangleClosest(p, T.a, T.b, T.c);
        EXPECT_EQ(r.region, regions[v]);
        EXPECT_EQ(r.weights, Vec3::Unit(v));  // exactly
        EXPECT_NEAR(r.distance, std::hypot(out, height), 1e-13);
      }
    }
  }
}

// Random points, in and off the plane: the closest point q is optimal over the (convex)
// triangle exactly when (p - q) . (v - q) <= 0 for its three vertices v; no sampled point of
// the triangle is closer; the weights are a convex combination whose zero pattern is the
// region's.
TEST(PointTriangle, RandomPointsAreOptimal) {
  std::mt19937 rng(44);
  int in_plane = 0;
  for (int k = 0; k < 8 * kSamples; ++k) {
    const Triangle T = randomlyPlacedTriangle(rng);
    Vec3 p = T.a + randomVec3(rng, 3.0);
    if (k % 4 == 0) {
      p -= (p - T.a).dot(T.n) * T.n;  // in the plane
      ++in_plane;
    }
    const PointTriangleClosest r = pointTriangleClosest(p, T.a, T.b, T.c);
    EXPECT_GE(r.weights.minCoeff(), 0.0);
    EXPECT_NEAR(r.weights.sum(), 1.0, 1e-14);
    EXPECT_LT((r.closest - atWeights(T, r.weights)).norm(), 1e-14);
    for (const Vec3& v : {T.a, T.b, T.c}) EXPECT_LE((p - r.closest).dot(v - r.closest), 1e-12);
    double brute = std::numeric_limits<double>::infinity();
    constexpr int kGrid = 60;
    for (int i = 0; i <= kGrid; ++i)
      for (int j = 0; i + j <= kGrid; ++j)
        brute = std::min(brute, (p - atWeights(T, Vec3(kGrid - i - j, i, j) / kGrid)).norm());
    EXPECT_LE(r.distance, brute + 1e-14);
    const int zeros = static_cast<int>((r.weights.array() == 0.0).count());
    switch (r.region) {
      case TriangleRegion::kInterior: EXPECT_EQ(zeros, 0); break;
      case TriangleRegion::kEdgeAB: case TriangleRegion::kEdgeBC: case TriangleRegion::kEdgeCA: EXPECT_EQ(zeros, 1); break;
      default: EXPECT_EQ(zeros, 2); break;
    }
  }
  EXPECT_GT(in_plane, 0);
}

TEST(PointTriangle, DegenerateTriangleUsesItsEdges) {
  const Vec3 a(0.0, 0.0, 0.0), b(1.0, 0.0, 0.0), c(3.0, 0.0, 0.0);  // collinear
  const PointTriangleClosest r = pointTriangleClosest(Vec3(2.0, 0.5, 0.0), a, b, c);
  EXPECT_TRUE(r.degenerate);
  EXPECT_EQ(r.normal, Vec3::Zero());
  EXPECT_NEAR(r.distance, 0.5, 1e-15);
  EXPECT_LT((r.closest - Vec3(2.0, 0.0, 0.0)).norm(), 1e-15);
  const PointTriangleClosest point = pointTriangleClosest(Vec3(1.0, 1.0, 1.0), a, a, a);
  EXPECT_TRUE(point.degenerate);
  EXPECT_NEAR(point.distance, std::sqrt(3.0), 1e-15);
  EXPECT_TRUE(point.weights.allFinite());
}

}  // namespace
}  // namespace pbdlab
