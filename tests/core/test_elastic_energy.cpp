// Element energy/gradient/Hessian against finite differences for every material, including
// inverted and near-degenerate elements, and the patch test on a five-tet box.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <random>

#include "core/fem/reference_element.hpp"
#include "core/terms/elastic_energy.hpp"
#include "meshes/box_mesh.hpp"
#include "tests/support/finite_difference.hpp"
#include "tests/support/mapped_positions.hpp"

namespace pbdlab {
namespace {

MaterialSpec energyMaterial(MaterialModel model) {
  MaterialSpec spec;
  spec.model = model;
  spec.youngs_modulus = 1e5;
  spec.poisson_ratio = 0.3;
  return spec;
}

std::vector<MaterialModel> allModels() {
  return {MaterialModel::kFixedCorotated, MaterialModel::kNeoHookean, MaterialModel::kStableNeoHookean,
          MaterialModel::kStVenantKirchhoff};
}

Mesh singleTet() {
  Mesh mesh;
  mesh.rest_positions.resize(4, 3);
  mesh.rest_positions << 0, 0, 0, 1, 0.1, 0, 0.2, 0.9, 0.1, 0.1, 0.2, 1.1;
  mesh.elements.resize(1, 4);
  mesh.elements << 0, 1, 2, 3;
  mesh.source = "single tet";
  return mesh;
}

class ElementDerivatives : public ::testing::TestWithParam<MaterialModel> {};

// The energy of element 0 as the shared finite-difference checker sees it.
test::EnergyFunction elementEnergy(const ElasticEnergy& energy) {
  return [&energy](const Eigen::VectorXd& x, double* value, Eigen::VectorXd* gradient, Eigen::MatrixXd* hessian) {
    energy.elementTerms(0, x, value, gradient, hessian);
  };
}

// Central differences with step h = 1e-6: truncation O(h^2 |third derivative|) ~ 1e-12
// relative, round-off ~ eps |E| / h ~ 1e-10 relative; a 1e-6 relative tolerance has margin on
// both sides and still catches any wrong term (those give O(1) relative errors).
TEST_P(ElementDerivatives, GradientAndHessianMatchFiniteDifferences) {
  const Mesh mesh = singleTet();
  const ElasticEnergy energy(mesh, makeMaterial(energyMaterial(GetParam())));
  std::mt19937 rng(7);
  // Families: stretched/sheared, inverted (det < 0), near-degenerate (one direction squashed
  // to 1e-2 of its length). For fixed corotated the derivative does not exist where two
  // singular values of F sum to zero; the inverted family's reflection is diag(1, 1, -0.8)
  // rotated, whose pair sum 1 - 0.8 = 0.2 stays away from that set.
  const Mat3 rotation = Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()).toRotationMatrix();
  const std::vector<std::pair<std::string, Mat3>> families = {
      {"stretched", rotation * Vec3(1.3, 0.8, 1.1).asDiagonal()},
      {"inverted", rotation * Vec3(1.0, 1.0, -0.8).asDiagonal()},
      {"near_degenerate", rotation * Vec3(1.2, 0.9, 1e-2).asDiagonal()},
  };
  for (const auto& [family, A] : families) {
    for (int sample = 0; sample < 5; ++sample) {
      SCOPED_TRACE(family + " sample " + std::to_string(sample));
      const Positions x = test::mappedPositions(mesh, A, rng, 0.02);
      double E;
      Vec12 g;
      Mat12 H;
      energy.elementTerms<4>(0, x, &E, &g, &H);
      test::FiniteDifferenceOptions options;
      options.tolerance = 1e-6;
      options.min_gradient_norm = 1e-3 * energy.material().modelParameters().mu * energy.restVolume(0);
      options.min_hessian_norm = options.min_gradient_norm;
      EXPECT_TRUE(test::derivativesMatchFiniteDifferences(elementEnergy(energy), x, options));
      // The fixed-size kernel agrees with the run-time one the checker called.
      VecX g_dynamic;
      energy.elementTerms(0, x, nullptr, &g_dynamic, nullptr);
      EXPECT_LT((g - g_dynamic).norm(), 1e-14 * g.norm());
      EXPECT_LT((H - H.transpose()).norm(), 1e-12 * H.norm());
    }
  }
}

TEST_P(ElementDerivatives, ProjectedHessianIsPositiveSemidefinite) {
  const Mesh mesh = singleTet();
  const ElasticEnergy energy(mesh, makeMaterial(energyMaterial(GetParam())));
  std::mt19937 rng(11);
  const Mat3 inverted = Vec3(1.0, 0.9, -0.6).asDiagonal();
  for (int sample = 0; sample < 10; ++sample) {
    const Positions x = test::mappedPositions(mesh, inverted, rng, 0.1);
    Mat12 H, H_true;
    energy.elementTerms<4>(0, x, nullptr, nullptr, &H, HessianKind::kProjected);
    energy.elementTerms<4>(0, x, nullptr, nullptr, &H_true, HessianKind::kTrue);
    const double min_eigenvalue = Eigen::SelfAdjointEigenSolver<Mat12>(H).eigenvalues().minCoeff();
    EXPECT_GT(min_eigenvalue, -1e-10 * H.norm());
    // Where the true Hessian is already definite the projection must not change it.
    if (Eigen::SelfAdjointEigenSolver<Mat9>(energy.material().firstPiolaDerivative(energy.deformationGradient(0, 0, x)))
            .eigenvalues()
            .minCoeff() > 0) {
      EXPECT_LT((H - H_true).norm(), 1e-10 * H.norm());
    }
  }
}

// Patch test: under an affine map x = A X + b every quadrature point has F = A, so the
// interior nodes' forces cancel (sum_e int P grad N_a = P times a closed surface integral);
// their residual must be at round-off relative to a boundary node's force.
void expectPatchTest(const Mesh& mesh, MaterialModel model) {
  const ElasticEnergy energy(mesh, makeMaterial(energyMaterial(model)));
  const std::vector<std::pair<std::string, Mat3>> maps = {
      {"stretch_shear", (Mat3() << 1.3, 0.2, 0.0, 0.1, 0.9, 0.05, -0.1, 0.0, 1.1).finished()},
      {"compress", Vec3(0.6, 0.7, 0.5).asDiagonal()},
      {"inverted", (Mat3() << 1.0, 0.1, 0.0, 0.0, 1.1, 0.2, 0.0, 0.0, -0.7).finished()},
  };
  std::vector<char> on_boundary(mesh.numNodes(), 0);
  for (const char* face : {"x-min", "x-max", "y-min", "y-max", "z-min", "z-max"})
    for (int node : mesh.node_sets.at(face)) on_boundary[node] = 1;
  for (const auto& [name, A] : maps) {
    SCOPED_TRACE(name);
    Positions x(3 * mesh.numNodes());
    for (int i = 0; i < mesh.numNodes(); ++i) x.segment<3>(3 * i) = A * mesh.restPosition(i) + Vec3(0.3, -0.2, 0.1);
    VecX g = VecX::Zero(x.size());
    energy.addGradient(x, g);
    double interior = 0.0, boundary = 0.0;
    int interior_nodes = 0;
    for (int i = 0; i < mesh.numNodes(); ++i) {
      const double f = g.segment<3>(3 * i).norm();
      if (on_boundary[i]) boundary = std::max(boundary, f);
      else { interior = std::max(interior, f); ++interior_nodes; }
    }
    ASSERT_GT(interior_nodes, 10);
    ASSERT_GT(boundary, 0.0) << "the affine map must stress the body";
    EXPECT_LT(interior, 1e-12 * boundary);
  }
}

BoxMeshRecipe patchBox(BoxFamily family, int order) {
  BoxMeshRecipe recipe;
  recipe.size = Vec3(2.0, 1.0, 1.5);
  recipe.cells = {6, 3, 4};
  recipe.family = family;
  recipe.order = order;
  recipe.target_size = 0.3;  // unstructured
  return recipe;
}

TEST_P(ElementDerivatives, PatchTestAffineMotionHasZeroInteriorResidual) {
  expectPatchTest(makeBoxMesh(patchBox(BoxFamily::kFiveTet, 1)), GetParam());
}

struct FamilyOrder {
  BoxFamily family;
  int order;
};

class PatchTestFamilies : public ::testing::TestWithParam<FamilyOrder> {};

TEST_P(PatchTestFamilies, AffineMotionHasZeroInteriorResidual) {
  const Mesh mesh = makeBoxMesh(patchBox(GetParam().family, GetParam().order));
  for (MaterialModel model : {MaterialModel::kStableNeoHookean, MaterialModel::kFixedCorotated}) {
    SCOPED_TRACE(materialModelName(model));
    expectPatchTest(mesh, model);
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryFamily, PatchTestFamilies,
    ::testing::Values(FamilyOrder{BoxFamily::kFiveTet, 1}, FamilyOrder{BoxFamily::kFiveTet, 2},
                      FamilyOrder{BoxFamily::kFiveTet, 3}, FamilyOrder{BoxFamily::kBiased, 1},
                      FamilyOrder{BoxFamily::kGmshSix, 1}, FamilyOrder{BoxFamily::kUnstructured, 1},
                      FamilyOrder{BoxFamily::kUnstructured, 2}, FamilyOrder{BoxFamily::kHex, 1},
                      FamilyOrder{BoxFamily::kPrism, 1}, FamilyOrder{BoxFamily::kPyramid, 1}),
    [](const auto& info) { return boxFamilyName(info.param.family) + "_order" + std::to_string(info.param.order); });

INSTANTIATE_TEST_SUITE_P(AllMaterials, ElementDerivatives, ::testing::ValuesIn(allModels()),
                         [](const auto& info) { return materialModelName(info.param); });

// One element of each solid type: its reference element mapped by a fixed affine map (so it
// is valid and not degenerate), then deformed. The element gradient and Hessian, summed over
// the quadrature points, must match central differences of the element energy, for stretched
// and inverted states (stable Neo-Hookean is defined for J < 0; the corotated rotation has
// no derivative where two singular values sum to zero, which these states avoid).
class ElementTypeDerivatives : public ::testing::TestWithParam<ElementType> {};

TEST_P(ElementTypeDerivatives, GradientAndHessianMatchFiniteDifferences) {
  const ElementType type = GetParam();
  const ReferenceElement& reference = ReferenceElement::of(type);
  const Mat3 shape = (Mat3() << 1.1, 0.2, 0.1, -0.1, 0.9, 0.2, 0.05, 0.1, 1.2).finished();
  Mesh mesh;
  mesh.element_type = type;
  mesh.rest_positions.resize(reference.numNodes(), 3);
  mesh.elements.resize(1, reference.numNodes());
  for (int a = 0; a < reference.numNodes(); ++a) {
    mesh.rest_positions.row(a) = (shape * reference.nodeCoordinates()[a]).transpose();
    mesh.elements(0, a) = a;
  }
  mesh.source = "single " + elementTypeName(type);
  for (MaterialModel model : {MaterialModel::kStableNeoHookean, MaterialModel::kFixedCorotated}) {
    const ElasticEnergy energy(mesh, makeMaterial(energyMaterial(model)));
    std::mt19937 rng(29);
    for (const auto& [state, A] : std::vector<std::pair<std::string, Mat3>>{
             {"stretched", Vec3(1.3, 0.85, 1.1).asDiagonal()}, {"inverted", Vec3(1.1, 0.9, -0.7).asDiagonal()}}) {
      SCOPED_TRACE(materialModelName(model) + " " + state);
      const Positions x = test::mappedPositions(mesh, A, rng, 0.01);
      double E;
      energy.elementTerms(0, x, &E, nullptr, nullptr);
      test::FiniteDifferenceOptions options;
      options.tolerance = 1e-6;
      options.min_gradient_norm = 1e-3 * energy.material().modelParameters().mu * energy.restVolume(0);
      options.min_hessian_norm = options.min_gradient_norm;
      EXPECT_TRUE(test::derivativesMatchFiniteDifferences(elementEnergy(energy), x, options));
      // The assembled sums agree with the element kernel.
      EXPECT_NEAR(energy.energy(x), E, 1e-12 * std::abs(E));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SolidTypes, ElementTypeDerivatives,
                         ::testing::Values(ElementType::kTet4, ElementType::kTet10, ElementType::kTet20,
                                           ElementType::kHex8, ElementType::kPrism6, ElementType::kPyramid5),
                         [](const auto& info) { return elementTypeName(info.param); });

TEST(ElasticEnergy, RejectsSurfacesButTakesPlaneTrianglesAsPlaneStrain) {
  Mesh mesh;
  mesh.element_type = ElementType::kTri3;
  mesh.rest_positions.resize(3, 3);
  mesh.rest_positions << 0, 0, 0, 1, 0, 0, 0, 1, 0.5;  // a triangle in 3D: the membrane term's
  mesh.elements.resize(1, 3);
  mesh.elements << 0, 1, 2;
  EXPECT_THROW(ElasticEnergy(mesh, makeMaterial(energyMaterial(MaterialModel::kStVenantKirchhoff))), std::invalid_argument);
  mesh.rest_positions(2, 2) = 0.0;  // in the plane z = 0: a 2D mesh, plane strain
  const ElasticEnergy plane(mesh, makeMaterial(energyMaterial(MaterialModel::kStVenantKirchhoff)));
  EXPECT_TRUE(plane.isPlaneStrain());
  EXPECT_DOUBLE_EQ(plane.restVolume(0), 0.5);  // area times unit thickness
}

TEST(ElasticEnergy, AssembledGradientMatchesFiniteDifferencesOfAssembledEnergy) {
  BoxMeshRecipe recipe;
  recipe.cells = {2, 2, 2};
  const Mesh mesh = makeBoxMesh(recipe);
  const ElasticEnergy energy(mesh, makeMaterial(energyMaterial(MaterialModel::kStableNeoHookean)));
  std::mt19937 rng(3);
  std::normal_distribution<double> normal(0.0, 0.05);
  Positions x = mesh.restPositionsFlat();
  for (int k = 0; k < x.size(); ++k) x[k] += normal(rng);
  VecX g = VecX::Zero(x.size());
  energy.addGradient(x, g);
  ASSERT_GT(g.norm(), 0.0);
  const double h = 1e-6;
  VecX g_fd(x.size());
  for (int k = 0; k < x.size(); ++k) {
    Positions xp = x, xm = x;
    xp[k] += h;
    xm[k] -= h;
    g_fd[k] = (energy.energy(xp) - energy.energy(xm)) / (2 * h);
  }
  EXPECT_LT((g - g_fd).norm(), 1e-6 * g.norm());
}

TEST(ElasticEnergy, ColoringIsValid) {
  const Mesh mesh = makeBoxMesh(resBox(6));
  const ElasticEnergy energy(mesh, makeMaterial(energyMaterial(MaterialModel::kFixedCorotated)));
  EXPECT_TRUE(isValidElementColoring(mesh, energy.elementColoring()));
  int total = 0;
  for (int size : energy.elementColoring().sizes()) total += size;
  EXPECT_EQ(total, mesh.numElements());
}

}  // namespace
}  // namespace pbdlab
