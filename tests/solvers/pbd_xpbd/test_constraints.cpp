// Every XPBD constraint kind's C and grad C against finite differences (tests/support), on
// every element type the kernel serves (P1, P2 and P3 tets, the Q1 hex, the prism and the
// pyramid: one code path, the quadrature of core/reference_element), at random, inverted and near-singular states; the eps
// regularization at C = 0; the element coloring.
//
// Two checks per constraint (solvers/pbd_xpbd/element_constraint.hpp):
//  - the force-consistency identity, valid for either sign of Psi~: C grad C is the gradient
//    of S(x) = sum_q V_q Psi~(F_q) + V eps (the README's check for terms that can be negative);
//  - grad C itself against differences of C, where S > 0 (there C = sqrt(2 S) is smooth).
// Sets where a derivative does not exist, approached but not touched:
//  - C -> 0 with eps = 0 (F -> a rotation for the corotated stretch, J -> 1 for the volume):
//    C = |.| is a cone there; checked at a distance 1e-3 from it;
//  - sigma_2 + sigma_3 = 0 (the polar rotation R(F) of an inverted F jumps): checked at a
//    distance 0.05 from it.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <random>

#include "core/topology/coloring.hpp"
#include "meshes/box_mesh.hpp"
#include "solvers/pbd_xpbd/element_constraint.hpp"
#include "tests/support/finite_difference.hpp"
#include "tests/support/mapped_positions.hpp"
#include "tests/support/random_samples.hpp"

namespace pbdlab {
namespace {

struct Kind {
  const char* label;
  MaterialModel model;
  const char* split;
};

std::vector<Kind> allKinds() {
  return {{"corotated_C1_C2", MaterialModel::kFixedCorotated, "pxpbd"},
          {"neo_hookean_developed", MaterialModel::kNeoHookean, "developed"},
          {"neo_hookean_macklin_mueller", MaterialModel::kNeoHookean, "macklin_mueller"},
          {"neo_hookean_macklin_table2", MaterialModel::kNeoHookean, "macklin_table2"},
          {"stable_neo_hookean", MaterialModel::kStableNeoHookean, "lame"},
          {"stvk", MaterialModel::kStVenantKirchhoff, "lame"},
          {"muscle", MaterialModel::kMuscle, "pxpbd"},
          {"sqrt_psi_corotated", MaterialModel::kFixedCorotated, "sqrt_psi"},
          {"sqrt_psi_stvk", MaterialModel::kStVenantKirchhoff, "sqrt_psi"}};
}

std::shared_ptr<const Material> materialFor(MaterialModel model) {
  MaterialSpec spec;
  spec.model = model;
  spec.youngs_modulus = 1e3;
  spec.poisson_ratio = 0.3;
  spec.sigma_max = 300.0;
  return makeMaterial(spec);
}

Mesh oneCell(BoxFamily family, int order) {
  BoxMeshRecipe recipe;
  recipe.cells = {1, 1, 1};
  recipe.family = family;
  recipe.order = order;
  return makeBoxMesh(recipe);
}

using test::randomRotation;

struct DeformationSample {
  std::string name;
  Mat3 A;
  double noise;
  double eps;
};

// Random stretch/shear (stretched along the muscle's fibre x), inverted, near C = 0 (eps = 0,
// a rotation perturbed by 1e-3), near sigma_2 + sigma_3 = 0 (inverted, 0.05 away), dilated
// and compressed (rotated s I).
std::vector<DeformationSample> states(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-0.25, 0.25);
  Mat3 random_stretch = Mat3::Identity();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) random_stretch(i, j) += u(rng);
  random_stretch(0, 0) = 1.35;
  const Mat3 Q = randomRotation(rng), R = randomRotation(rng);
  return {{"random", random_stretch, 0.02, 1e-8},
          {"inverted", Q * Eigen::Vector3d(1.3, 1.0, -0.8).asDiagonal() * R, 0.02, 1e-8},
          {"near_C_zero_eps0", Q, 1e-3, 0.0},
          {"near_singular_value_sum_zero", Q * Eigen::Vector3d(1.2, 0.3, -0.25).asDiagonal() * R, 0.0, 1e-8},
          // Psi~ < 0 (the README's terms that can be negative): the developed and stable
          // Neo-Hookean shape terms under dilation, Macklin's (I2 - 3)/2 under compression.
          {"dilated", 1.6 * Q, 0.01, 1e-8},
          {"compressed", 0.8 * Q, 0.01, 1e-8}};
}

class ConstraintDerivatives : public ::testing::TestWithParam<std::tuple<Kind, int>> {};

TEST_P(ConstraintDerivatives, GradientMatchesFiniteDifferences) {
  const Kind kind = std::get<0>(GetParam());
  const int element_kind = std::get<1>(GetParam());  // P1, P2, P3, Q1, prism, pyramid
  const Mesh mesh = element_kind == 0   ? oneCell(BoxFamily::kFiveTet, 1)
                    : element_kind == 1 ? oneCell(BoxFamily::kFiveTet, 2)
                    : element_kind == 2 ? oneCell(BoxFamily::kFiveTet, 3)
                    : element_kind == 3 ? oneCell(BoxFamily::kHex, 1)
                    : element_kind == 4 ? oneCell(BoxFamily::kPrism, 1)
                                        : oneCell(BoxFamily::kPyramid, 1);
  const auto material = materialFor(kind.model);
  const ElasticEnergy energy(mesh, material);
  const MaterialSplit split = constraintSplit(*material, kind.split);
  // The five-tet split's central tet (every node moves); the first element of the others.
  const int e = element_kind <= 2 ? 4 : 0;
  std::mt19937 rng(11);
  int direct_checks = 0, negative_checks = 0;
  double worst_identity = 0.0, worst_direct = 0.0;
  test::FiniteDifferenceErrors measured;
  // The functions below take the element's own 3N coordinates (the kernel's gradient layout).
  const int n = mesh.elements.cols();
  auto global = [&](const Positions& all, const VecX& local) {
    Positions x = all;
    for (int a = 0; a < n; ++a) x.segment<3>(3 * mesh.elements(e, a)) = local.segment<3>(3 * a);
    return x;
  };
  for (const DeformationSample& state : states(rng)) {
    const Positions all = test::mappedPositions(mesh, state.A, rng, state.noise);
    VecX x0(3 * n);
    for (int a = 0; a < n; ++a) x0.segment<3>(3 * a) = all.segment<3>(3 * mesh.elements(e, a));
    for (int k = 0; k < split.numTerms(); ++k) {
      const MaterialTerm& term = split.terms[k];
      const std::string where = std::string(kind.label) + " term " + term.name + " at " + state.name;
      double S0 = 0.0;
      VecX g0;
      elementConstraintAt(energy, e, term, state.eps, all, 0.0, &g0, &S0);
      // A term constant near this state (the muscle fibre's flat parts, PXPBD eq. 7-8) has no
      // gradient to check.
      if (std::abs(S0) < 1e-12 || g0.norm() < 1e-12) continue;
      // Identity: C grad C = dS/dx (either sign of Psi~). Measured errors ~1e-9.
      test::FiniteDifferenceOptions options;
      options.check_hessian = false;
      options.step = 1e-7;
      options.tolerance = 1e-5;
      const test::EnergyFunction S = [&](const VecX& x, double* value, VecX* gradient, Eigen::MatrixXd*) {
        VecX g;
        double s = 0.0;
        const double C = elementConstraintAt(energy, e, term, state.eps, global(all, x), 0.0, &g, &s);
        if (value) *value = s;
        if (gradient) *gradient = C * g;
      };
      EXPECT_TRUE(test::derivativesMatchFiniteDifferences(S, x0, options, &measured)) << where << " (identity)";
      worst_identity = std::max(worst_identity, measured.gradient);
      if (S0 <= 0.0) {
        ++negative_checks;
        continue;
      }
      // grad C itself where S > 0.
      const test::EnergyFunction C = [&](const VecX& x, double* value, VecX* gradient, Eigen::MatrixXd*) {
        const double c = elementConstraintAt(energy, e, term, state.eps, global(all, x), 0.0, gradient);
        if (value) *value = c;
      };
      EXPECT_TRUE(test::derivativesMatchFiniteDifferences(C, x0, options, &measured)) << where << " (grad C)";
      worst_direct = std::max(worst_direct, measured.gradient);
      ++direct_checks;
    }
  }
  std::printf("[ measured ] %s: largest relative error, identity %.1e, grad C %.1e (%d direct checks, %d with "
              "Psi~ < 0)\n",
              kind.label, worst_identity, worst_direct, direct_checks, negative_checks);
  // The splits with a term that can be negative must have met it here.
  const std::string label = kind.label;
  if (label == "neo_hookean_developed" || label == "neo_hookean_macklin_table2" || label == "stable_neo_hookean") {
    EXPECT_GE(negative_checks, 1) << label;
  }
  EXPECT_GE(direct_checks, 2 * split.numTerms() - 1) << "too few states with S > 0 for " << kind.label;
}

std::string kindAndElementName(const ::testing::TestParamInfo<std::tuple<Kind, int>>& info) {
  static const char* const kElementNames[6] = {"P1", "P2", "P3", "Q1", "Prism6", "Pyramid5"};
  return std::string(std::get<0>(info.param).label) + "_" + kElementNames[std::get<1>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(EveryKindAndElement, ConstraintDerivatives,
                         ::testing::Combine(::testing::ValuesIn(allKinds()), ::testing::Values(0, 1, 2, 3, 4, 5)),
                         kindAndElementName);

// The split's terms sum to the material's energy: 1/2 sum_k k_k C_k^2 = V (Psi + c) + V eps sum_k k_k,
// so the constraints carry the same energy as the Newton reference (no second copy).
TEST(Constraints, HalfWeightedSquaresAreTheElementEnergy) {
  std::mt19937 rng(3);
  const Mesh mesh = oneCell(BoxFamily::kFiveTet, 2);
  for (const Kind& kind : allKinds()) {
    const auto material = materialFor(kind.model);
    const ElasticEnergy energy(mesh, material);
    const MaterialSplit split = constraintSplit(*material, kind.split);
    const Positions x = test::mappedPositions(mesh, states(rng)[0].A, rng, 0.02);
    double element_energy = 0.0;
    energy.elementTerms(0, x, &element_energy, static_cast<VecX*>(nullptr), nullptr);
    double from_constraints = 0.0;
    for (const MaterialTerm& term : split.terms) {
      double S = 0.0;
      elementConstraintAt(energy, 0, term, 0.0, x, 0.0, nullptr, &S);
      from_constraints += term.stiffness * S;
    }
    const double expected = element_energy + energy.restVolume(0) * split.constant;
    EXPECT_NEAR(from_constraints, expected, 1e-10 * std::abs(expected)) << kind.label;
    EXPECT_GT(std::abs(expected), 0.0);
  }
}

// eps at C's minimum: at a rotation, Psi~_mu = 0; with eps > 0, C = sqrt(2 V eps) and grad C = 0
// exactly (no 0/0); with eps = 0, C = 0 and the gradient is set to zero, never NaN.
TEST(Constraints, EpsRegularizesTheCorotatedStretchAtARotation) {
  std::mt19937 rng(5);
  const Mesh mesh = oneCell(BoxFamily::kFiveTet, 1);
  const auto material = materialFor(MaterialModel::kFixedCorotated);
  const ElasticEnergy energy(mesh, material);
  const MaterialTerm stretch = material->split("pxpbd").terms[0];
  const Positions x = test::mappedPositions(mesh, randomRotation(rng), rng, 0.0);
  VecX g;
  const double eps = 1e-8;
  const double C = elementConstraintAt(energy, 4, stretch, eps, x, 0.0, &g);
  EXPECT_NEAR(C, std::sqrt(2.0 * energy.restVolume(4) * eps), 1e-6 * C);
  EXPECT_TRUE(g.allFinite());
  EXPECT_LT(g.norm(), 1e-6);
  const double C0 = elementConstraintAt(energy, 4, stretch, 0.0, x, 0.0, &g);
  EXPECT_LT(C0, 1e-6);
  EXPECT_TRUE(g.allFinite());
}

// Macklin and Mueller 2021 (the split PXPBD §5.4 cites): C_D = sqrt(V tr F^T F) is sqrt(3 V) at
// rest with a finite gradient, and C_H = sqrt(V) (det F - gamma) is signed, smooth through
// det F = gamma. The high-order paper's Table 2 rendering, C = sqrt(V |I2 - 3|), is 0 at rest
// (a cone: no gradient there; |grad C| grows as C -> 0).
TEST(Constraints, MacklinMuellerConstraintsAreSmoothAtRestAndSigned) {
  std::mt19937 rng(7);
  const Mesh mesh = oneCell(BoxFamily::kFiveTet, 1);
  const auto material = materialFor(MaterialModel::kNeoHookean);
  const ElasticEnergy energy(mesh, material);
  const int e = 4;
  const double V = energy.restVolume(e);
  const MaterialSplit mm = material->split("macklin_mueller");
  const MaterialSplit table2 = material->split("macklin_table2");
  const LameParameters p = material->modelParameters();
  const double gamma = 1.0 + p.mu / p.lambda;
  const Mat3 Q = randomRotation(rng);
  VecX g;
  const Positions rest = test::mappedPositions(mesh, Q, rng, 0.0);
  const double C_D = elementConstraintAt(energy, e, mm.terms[0], 0.0, rest, 0.0, &g);
  EXPECT_NEAR(C_D, std::sqrt(3.0 * V), 1e-12 * C_D);
  EXPECT_TRUE(g.allFinite());
  EXPECT_GT(g.norm(), 0.1 * std::sqrt(V));
  const double C_H = elementConstraintAt(energy, e, mm.terms[1], 0.0, rest, 0.0, &g);
  EXPECT_NEAR(C_H, std::sqrt(V) * (1.0 - gamma), 1e-12 * std::sqrt(V));
  EXPECT_TRUE(g.allFinite());
  EXPECT_NEAR(elementConstraintAt(energy, e, table2.terms[0], 0.0, rest, 0.0, &g), 0.0, 1e-7);
  // Through det F = gamma: C_H changes sign and its gradient does not jump.
  const double s_gamma = std::cbrt(gamma);
  VecX below, above;
  const double C_below = elementConstraintAt(energy, e, mm.terms[1], 0.0,
                                             test::mappedPositions(mesh, (s_gamma - 1e-6) * Q, rng, 0.0), 0.0, &below);
  const double C_above = elementConstraintAt(energy, e, mm.terms[1], 0.0,
                                             test::mappedPositions(mesh, (s_gamma + 1e-6) * Q, rng, 0.0), 0.0, &above);
  EXPECT_LT(C_below, 0.0);
  EXPECT_GT(C_above, 0.0);
  EXPECT_LT((above - below).norm(), 1e-4 * above.norm());
  // Table 2's shape constraint near rest: C = sqrt(2 S) -> 0 with S = V (I2 - 3)/2, so
  // |grad C| = |grad S| / C grows as 1/sqrt(strain) (x10 from 1% to 0.01% stretch); Macklin and
  // Mueller's stays bounded (within 1%).
  for (const MaterialTerm* term : {&table2.terms[0], &mm.terms[0]}) {
    VecX near, far;
    elementConstraintAt(energy, e, *term, 0.0, test::mappedPositions(mesh, 1.0001 * Q, rng, 0.0), 0.0, &near);
    elementConstraintAt(energy, e, *term, 0.0, test::mappedPositions(mesh, 1.01 * Q, rng, 0.0), 0.0, &far);
    const double growth = near.norm() / far.norm();
    if (term == &table2.terms[0])
      EXPECT_NEAR(growth, 10.0, 0.2);
    else
      EXPECT_NEAR(growth, 1.0, 0.01);
  }
}

TEST(Constraints, SqrtPsiIsOneTermOfStiffnessOne) {
  const auto material = materialFor(MaterialModel::kStVenantKirchhoff);
  const MaterialSplit split = constraintSplit(*material, "sqrt_psi");
  ASSERT_EQ(split.numTerms(), 1);
  EXPECT_EQ(split.terms[0].stiffness, 1.0);
  EXPECT_THROW(constraintSplit(*material, "nonsense"), std::invalid_argument);
}

// PXPBD §4: no two elements of one color share a node (a Res 8 five-tet box and a P2 box).
TEST(Coloring, NoTwoElementsOfOneColorShareANode) {
  for (int order : {1, 2}) {
    BoxMeshRecipe recipe = resBox(8);
    recipe.order = order;
    const Mesh mesh = makeBoxMesh(recipe);
    const ElasticEnergy energy(mesh, materialFor(MaterialModel::kFixedCorotated));
    const Coloring& coloring = energy.elementColoring();
    EXPECT_TRUE(isValidElementColoring(mesh, coloring));
    size_t covered = 0;
    for (const auto& group : coloring.groups) covered += group.size();
    EXPECT_EQ(covered, static_cast<size_t>(mesh.numElements()));
    std::printf("[ measured ] Res 8 box order %d: %d elements, %d colors\n", order, mesh.numElements(),
                coloring.numColors());
  }
}

}  // namespace
}  // namespace pbdlab
