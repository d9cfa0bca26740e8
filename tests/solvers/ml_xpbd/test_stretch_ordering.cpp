// The "stretch" ordering of multi-layer XPBD (ours: layers.hpp orderByStretch,
// ml_xpbd_solver.hpp elementStretchEigenvalue): the per-element largest eigenvalue of
// M_e^-1/2 K_e M_e^-1/2 against a brute-force reference (K_e by central differences of the
// element gradient, the generalized problem K v = lambda M v solved by another Eigen solver)
// on a tri3 plane-strain and a tet4 element; the descending, stable sort; on a cantilever
// whose right half is stretched by 1.2 in x, every stretched element comes before its
// unstretched mirror image.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "solvers/ml_xpbd/layers.hpp"
#include "solvers/ml_xpbd/ml_xpbd_solver.hpp"
#include "tests/support/clamped_block.hpp"

namespace pbdlab {
namespace {

Problem stretchOrderingCantilever() {
  RectangleRecipe rectangle;
  rectangle.size = {4.0, 1.0};
  rectangle.cells = {16, 4};
  return test::clampedBlock(makeRectangleMesh(rectangle), MaterialModel::kStVenantKirchhoff,
                            Integrator::kBackwardEuler, 0.01, 1, "stretch-ordering cantilever");
}

Problem stretchOrderingBox() {
  BoxMeshRecipe box;
  box.size = Vec3(2.0, 1.0, 1.0);
  box.cells = {2, 1, 1};
  return test::clampedBlock(makeBoxMesh(box), MaterialModel::kStVenantKirchhoff, Integrator::kBackwardEuler, 0.01,
                            1, "stretch-ordering box");
}

// Rest positions moved by a smooth deformation and a little noise (a generic, stretched state).
Positions deformedPositionsForStretchTest(const Problem& problem, std::uint32_t seed) {
  Positions x(problem.numDofs());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(-0.05, 0.05);
  for (int node = 0; node < problem.numNodes(); ++node) {
    const Vec3 X = problem.mesh.restPosition(node);
    Vec3 p(1.3 * X.x() + 0.2 * X.y(), 0.9 * X.y() - 0.1 * X.x() * X.x(), X.z());
    if (problem.mesh.element_type == ElementType::kTet4) p.z() = 1.1 * X.z() + 0.1 * X.y();
    for (int k = 0; k < 3; ++k)
      if (k < 2 || problem.mesh.element_type == ElementType::kTet4) p[k] += noise(rng);
    x.segment<3>(3 * node) = p;
  }
  return x;
}

// The largest eigenvalue of K v = lambda M v with K from central differences of the element
// gradient over the DOFs `dofs` (local indices into the element's 3N).
double bruteForceStretchEigenvalue(const ElasticEnergy& energy, int e, const Positions& x, const VecX& node_masses,
                                   const std::vector<int>& dofs) {
  const int n = static_cast<int>(dofs.size());
  const int* nodes = energy.elementNodes(e);
  Eigen::MatrixXd stiffness(n, n);
  const double step = 1e-6;
  for (int j = 0; j < n; ++j) {
    const int global = 3 * nodes[dofs[j] / 3] + dofs[j] % 3;
    Positions plus = x, minus = x;
    plus[global] += step;
    minus[global] -= step;
    VecX g_plus, g_minus;
    energy.elementTerms(e, plus, nullptr, &g_plus, nullptr);
    energy.elementTerms(e, minus, nullptr, &g_minus, nullptr);
    for (int i = 0; i < n; ++i) stiffness(i, j) = (g_plus[dofs[i]] - g_minus[dofs[i]]) / (2.0 * step);
  }
  const Eigen::MatrixXd symmetric = 0.5 * (stiffness + stiffness.transpose());
  Eigen::MatrixXd mass = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i) mass(i, i) = node_masses[nodes[dofs[i] / 3]];
  const Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> solver(symmetric, mass, Eigen::EigenvaluesOnly);
  return solver.eigenvalues().maxCoeff();
}

TEST(MlXpbdStretchOrdering, ElementEigenvalueMatchesFiniteDifferenceReference) {
  const Problem cantilever = stretchOrderingCantilever();
  const Problem box = stretchOrderingBox();
  const std::vector<int> in_plane{0, 1, 3, 4, 6, 7};
  const std::vector<int> all_twelve{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  for (const Problem* problem : {&cantilever, &box}) {
    const bool plane_strain = problem == &cantilever;
    const ElasticEnergy& energy = problem->elasticEnergy();
    const Positions x = deformedPositionsForStretchTest(*problem, 5);
    const std::vector<double> all = ml_xpbd::elementStretchEigenvalues(energy, x, problem->nodeMasses());
    ASSERT_EQ(static_cast<int>(all.size()), energy.numElements());
    for (int e : {0, energy.numElements() / 2, energy.numElements() - 1}) {
      const double measured = ml_xpbd::elementStretchEigenvalue(energy, e, x, problem->nodeMasses());
      const double reference = bruteForceStretchEigenvalue(energy, e, x, problem->nodeMasses(),
                                                           plane_strain ? in_plane : all_twelve);
      std::printf("[ measured ] %s element %d: stretch eigenvalue %.9g, finite-difference reference %.9g\n",
                  plane_strain ? "tri3" : "tet4", e, measured, reference);
      EXPECT_GT(measured, 0.0);
      EXPECT_NEAR(measured, reference, 1e-6 * reference);
      EXPECT_EQ(all[e], measured);
    }
  }
}

TEST(MlXpbdStretchOrdering, MassNormalizedEigenvalueOfADiagonalPair) {
  // K = diag(k), M = diag(m): the eigenvalues are k_i / m_i; a coupled 2x2 block by hand.
  Eigen::Matrix<double, 6, 6> stiffness = Eigen::Matrix<double, 6, 6>::Zero();
  Eigen::Matrix<double, 6, 1> masses;
  stiffness.diagonal() << 4.0, 9.0, 1.0, 2.0, 3.0, 5.0;
  masses << 1.0, 3.0, 0.5, 0.1, 1.0, 2.0;
  EXPECT_NEAR(ml_xpbd::largestMassNormalizedEigenvalue(stiffness, masses), 20.0, 1e-12);
  // [[2, -2], [-2, 2]] with masses 1 and 4: M^-1/2 K M^-1/2 = [[2, -1], [-1, 0.5]], lambda = 2.5.
  stiffness.setZero();
  stiffness.topLeftCorner<2, 2>() << 2.0, -2.0, -2.0, 2.0;
  masses << 1.0, 4.0, 1.0, 1.0, 1.0, 1.0;
  EXPECT_NEAR(ml_xpbd::largestMassNormalizedEigenvalue(stiffness, masses), 2.5, 1e-12);
  masses[3] = 0.0;
  EXPECT_THROW(ml_xpbd::largestMassNormalizedEigenvalue(stiffness, masses), std::invalid_argument);
}

TEST(MlXpbdStretchOrdering, DescendingAndStable) {
  EXPECT_EQ(ml_xpbd::orderByStretch({1.0, 3.0, 2.0, 3.0, 0.5, 2.0}), (std::vector<int>{1, 3, 2, 5, 0, 4}));
  Connectivity elements(4, 3);
  elements << 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11;  // four separate triangles
  ml_xpbd::LayerRequest request;
  request.ordering = ml_xpbd::ElementOrdering::kStretch;
  request.stretch_eigenvalues = {4.0, 1.0, 3.0, 2.0};
  request.rigid_percentages = {50.0, 0.0};
  const ml_xpbd::LayerHierarchy hierarchy = ml_xpbd::buildLayers(elements, 12, request);
  EXPECT_EQ(hierarchy.order, (std::vector<int>{0, 2, 3, 1}));
  EXPECT_EQ(hierarchy.layers[0].element_body, (std::vector<int>{0, -1, 1, -1}));
  request.stretch_eigenvalues.pop_back();
  EXPECT_THROW(ml_xpbd::buildLayers(elements, 12, request), std::invalid_argument);
}

// The cantilever (4 x 1 m, 16 x 4 cells, alternate diagonals: symmetric about x = 2) with x of
// its right half scaled by 1.2 about x = 2. StVK stiffens in tension, so every stretched element
// comes before its mirror twin in the unstretched half (same node masses, same shape at rest).
// Not every stretched element comes before every unstretched one: the measure is mass-weighted,
// and the light nodes of the unstretched half's boundary give its border elements a larger
// eigenvalue than the stretched interior (measured below; docs/multi-layer-xpbd.md).
TEST(MlXpbdStretchOrdering, StretchedHalfOfACantileverComesBeforeItsMirrorImage) {
  const Problem problem = stretchOrderingCantilever();
  const ElasticEnergy& energy = problem.elasticEnergy();
  const int num_elements = energy.numElements();
  const VecX& masses = problem.nodeMasses();
  const Positions rest = problem.mesh.restPositionsFlat();
  Positions x = rest;
  for (int node = 0; node < problem.numNodes(); ++node)
    if (x[3 * node] > 2.0) x[3 * node] = 2.0 + 1.2 * (x[3 * node] - 2.0);
  const std::vector<Vec3> centroids = ml_xpbd::elementCentroids(problem.mesh.elements, rest);
  const std::vector<double> eigenvalues = ml_xpbd::elementStretchEigenvalues(energy, x, masses);
  const std::vector<int> order = ml_xpbd::orderByStretch(eigenvalues);
  std::vector<int> position(num_elements);
  for (int k = 0; k < num_elements; ++k) position[order[k]] = k;

  auto sortedNodeMasses = [&](int e) {
    std::vector<double> m;
    for (int a = 0; a < 3; ++a) m.push_back(masses[energy.elementNodes(e)[a]]);
    std::sort(m.begin(), m.end());
    return m;
  };
  int twins = 0, stretched_in_first_half = 0;
  for (int e = 0; e < num_elements; ++e) {
    if (centroids[e].x() > 2.0) {
      stretched_in_first_half += position[e] < num_elements / 2;
      continue;
    }
    const Vec3 mirror(4.0 - centroids[e].x(), centroids[e].y(), 0.0);
    int twin = -1;
    for (int f = 0; f < num_elements; ++f)
      if ((centroids[f] - mirror).norm() < 1e-9) twin = f;
    ASSERT_GE(twin, 0) << "no mirror image of element " << e;
    ASSERT_EQ(sortedNodeMasses(twin), sortedNodeMasses(e));
    ++twins;
    EXPECT_GT(eigenvalues[twin], eigenvalues[e]);
    EXPECT_LT(position[twin], position[e]) << "stretched element " << twin << " after its mirror image " << e;
  }
  EXPECT_EQ(twins, num_elements / 2);
  std::printf("[ measured ] %d of the %d stretched elements in the first half of the order\n", stretched_in_first_half,
              num_elements / 2);
}

}  // namespace
}  // namespace pbdlab
