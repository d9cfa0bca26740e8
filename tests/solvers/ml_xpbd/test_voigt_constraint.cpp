// The Voigt StVK constraints of multi-layer XPBD (solvers/ml_xpbd/voigt_stvk_constraint.hpp):
// gradients against finite differences (tests/support/finite_difference.hpp) on well-
// conditioned, inverted and near-degenerate elements, and 1/2 C^T alpha^-1 C = V Psi of
// pbdlab's StVK material as the elastic energy kernel evaluates it, in 2D (tri3 plane strain)
// and 3D (tet4).
#include <gtest/gtest.h>

#include <random>

#include "core/terms/elastic_energy.hpp"
#include "solvers/ml_xpbd/voigt_stvk_constraint.hpp"
#include "tests/support/finite_difference.hpp"
#include "tests/support/random_samples.hpp"

namespace pbdlab {
namespace {

// One element: a unit right tetrahedron (3D) or triangle in z = 0 (2D), slightly skewed so
// that no shape gradient component is special.
template <int D>
Mesh oneElementMesh() {
  Mesh mesh;
  if (D == 3) {
    mesh.element_type = ElementType::kTet4;
    mesh.rest_positions.resize(4, 3);
    mesh.rest_positions << 0, 0, 0, 1.1, 0.1, 0, 0.2, 0.9, 0.1, 0.1, 0.2, 1.3;
    mesh.elements.resize(1, 4);
    mesh.elements << 0, 1, 2, 3;
  } else {
    mesh.element_type = ElementType::kTri3;
    mesh.rest_positions.resize(3, 3);
    mesh.rest_positions << 0, 0, 0, 1.1, 0.1, 0, 0.2, 0.9, 0;
    mesh.elements.resize(1, 3);
    mesh.elements << 0, 1, 2;
  }
  return mesh;
}

// A deformation gradient on the element's D axes: U diag(s) W^T with random rotations (about
// z in 2D), the singular values s given (a negative one inverts the element).
template <int D>
Mat3 deformation(std::mt19937& rng, const Vec3& singular_values) {
  Mat3 U = test::randomRotation(rng), W = test::randomRotation(rng);
  if (D == 2) {
    const double a = test::uniform(rng, 0.0, 6.28), b = test::uniform(rng, 0.0, 6.28);
    U = Eigen::AngleAxisd(a, Vec3::UnitZ()).toRotationMatrix();
    W = Eigen::AngleAxisd(b, Vec3::UnitZ()).toRotationMatrix();
  }
  Mat3 F = U * singular_values.asDiagonal() * W.transpose();
  if (D == 2) {
    F.row(2).setZero();
    F.col(2).setZero();
  }
  return F;
}

// Node positions x_a = F X_a + t of the element (z stays 0 in 2D).
template <int D>
VoigtNodes<D> deformedNodes(const Mesh& mesh, const Mat3& F, const Vec3& translation) {
  VoigtNodes<D> xe;
  for (int a = 0; a < VoigtDims<D>::kNodes; ++a) xe.col(a) = F * mesh.restPosition(a) + translation;
  return xe;
}

struct DeformedState {
  const char* name;
  Vec3 singular_values;
};

template <int D>
std::vector<DeformedState> states() {
  if (D == 2)
    return {{"well-conditioned", {1.1, 0.93, 1.0}}, {"inverted", {1.2, -0.7, 1.0}},
            {"near-degenerate", {1.3, 1e-4, 1.0}}};
  return {{"well-conditioned", {1.1, 0.93, 1.05}}, {"inverted", {1.2, 0.8, -0.6}},
          {"near-degenerate", {1.3, 0.9, 1e-4}}};
}

// Every C_k is a quadratic polynomial of x: central differences have no truncation error, so
// a large step keeps round-off small (|C| ~ 1, eps/step ~ 1e-13). Measured relative errors:
// at most 1.5e-13 over every state and component; gate 1e-7.
template <int D>
void checkGradients() {
  const Mesh mesh = oneElementMesh<D>();
  const ElasticEnergy energy(mesh, makeStVenantKirchhoff(1.0, 1.0));
  ASSERT_EQ(energy.isPlaneStrain(), D == 2);
  const VoigtShapeGradients<D> G = voigtShapeGradients<D>(energy, 0);
  std::mt19937 rng(26);
  for (const DeformedState& state : states<D>()) {
    const Mat3 F = deformation<D>(rng, state.singular_values);
    const VoigtNodes<D> xe = deformedNodes<D>(mesh, F, Vec3(0.3, -0.2, D == 3 ? 0.1 : 0.0));
    const Eigen::VectorXd x0 = Eigen::Map<const Eigen::VectorXd>(xe.data(), xe.size());
    for (int k = 0; k < VoigtDims<D>::kConstraints; ++k) {
      const test::EnergyFunction constraint = [&](const Eigen::VectorXd& x, double* value, Eigen::VectorXd* gradient,
                                                  Eigen::MatrixXd*) {
        const VoigtNodes<D> nodes = Eigen::Map<const VoigtNodes<D>>(x.data());
        VoigtVector<D> C;
        VoigtGradient<D> dC;
        voigtStrainConstraints<D>(G, nodes, C, &dC);
        if (value) *value = C[k];
        if (gradient) *gradient = dC.col(k);
      };
      test::FiniteDifferenceOptions options;
      options.step = 1e-3;
      options.check_hessian = false;
      test::FiniteDifferenceErrors measured;
      EXPECT_TRUE(test::derivativesMatchFiniteDifferences(constraint, x0, options, &measured))
          << D << "D " << state.name << ", constraint " << k;
      std::printf("[ measured ] %dD %s C_%d: gradient relative error %.2e (|grad| %.2e)\n", D, state.name, k,
                  measured.gradient, measured.gradient_norm);
    }
  }
}

TEST(VoigtConstraint, GradientsMatchFiniteDifferences2D) { checkGradients<2>(); }
TEST(VoigtConstraint, GradientsMatchFiniteDifferences3D) { checkGradients<3>(); }

// 1/2 C^T alpha^-1 C = V Psi_StVK (eq. 7 with 2E_ij shears), with V Psi from the elastic
// energy kernel of pbdlab's StVK material, on random F (inverted ones included). Measured
// relative error ~1e-16; gate 1e-12.
template <int D>
void checkEnergy() {
  const Mesh mesh = oneElementMesh<D>();
  std::mt19937 rng(7);
  for (int sample = 0; sample < 20; ++sample) {
    const double mu = test::uniform(rng, 0.5, 3.0), lambda = test::uniform(rng, -0.3, 5.0);
    const ElasticEnergy energy(mesh, makeStVenantKirchhoff(mu, lambda));
    const Vec3 s(test::uniform(rng, -1.5, 1.8), test::uniform(rng, 0.2, 1.8), D == 3 ? test::uniform(rng, 0.2, 1.8) : 1.0);
    const VoigtNodes<D> xe = deformedNodes<D>(mesh, deformation<D>(rng, s), Vec3::Zero());
    Positions x = Eigen::Map<const Eigen::VectorXd>(xe.data(), xe.size());
    double expected = 0.0;
    energy.elementTerms<VoigtDims<D>::kNodes>(0, x, &expected, nullptr, nullptr);

    VoigtVector<D> C;
    voigtStrainConstraints<D>(voigtShapeGradients<D>(energy, 0), xe, C, nullptr);
    const VoigtCompliance<D> alpha = voigtCompliance<D>(mu, lambda, energy.restVolume(0));
    const double voigt = 0.5 * C.dot(complianceMatrix<D>(alpha).inverse() * C);
    EXPECT_NEAR(voigt, expected, 1e-12 * std::abs(expected)) << D << "D sample " << sample;
    // alpha_e is (V K)^-1.
    using VoigtMatrix = Eigen::Matrix<double, VoigtDims<D>::kConstraints, VoigtDims<D>::kConstraints>;
    const VoigtMatrix product = complianceMatrix<D>(alpha) * (energy.restVolume(0) * voigtStiffness<D>(mu, lambda));
    EXPECT_LT((product - VoigtMatrix::Identity()).norm(), 1e-12);
  }
}

TEST(VoigtConstraint, HalfCAlphaInverseCIsVTimesStvkEnergy2D) { checkEnergy<2>(); }
TEST(VoigtConstraint, HalfCAlphaInverseCIsVTimesStvkEnergy3D) { checkEnergy<3>(); }

// At rest C = 0; a stretch along x gives E11 only (the 2D constraints are the in-plane
// entries, with plane strain's F33 = 1 leaving no E33).
TEST(VoigtConstraint, RestIsZeroAndUniaxialStretchIsE11) {
  const Mesh mesh = oneElementMesh<2>();
  const ElasticEnergy energy(mesh, makeStVenantKirchhoff(1.0, 1.0));
  VoigtVector<2> C;
  const VoigtShapeGradients<2> G = voigtShapeGradients<2>(energy, 0);
  voigtStrainConstraints<2>(G, deformedNodes<2>(mesh, Mat3::Identity(), Vec3::Zero()), C, nullptr);
  EXPECT_LT(C.norm(), 1e-15);
  Mat3 F = Mat3::Identity();
  F(0, 0) = 1.2;
  voigtStrainConstraints<2>(G, deformedNodes<2>(mesh, F, Vec3::Zero()), C, nullptr);
  EXPECT_NEAR(C[0], 0.5 * (1.44 - 1.0), 1e-14);
  EXPECT_NEAR(C[1], 0.0, 1e-14);
  EXPECT_NEAR(C[2], 0.0, 1e-14);
}

// Materials the Voigt constraints refuse: not StVK, or K not positive definite.
TEST(VoigtConstraint, RefusesOtherMaterialsAndIndefiniteK) {
  EXPECT_EQ(voigtMaterialProblem(*makeStVenantKirchhoff(1.0, 1.0), 3), "");
  EXPECT_NE(voigtMaterialProblem(*makeFixedCorotated(1.0, 1.0), 3).find("stvk"), std::string::npos);
  EXPECT_NE(voigtMaterialProblem(*makeStVenantKirchhoff(0.0, 1.0), 3), "");
  EXPECT_NE(voigtMaterialProblem(*makeStVenantKirchhoff(1.0, -0.7), 3), "");  // 2 + 3 (-0.7) < 0
  EXPECT_EQ(voigtMaterialProblem(*makeStVenantKirchhoff(1.0, -0.7), 2), "");  // 2 + 2 (-0.7) > 0
}

}  // namespace
}  // namespace pbdlab
