// The energy terms of the model (core/terms/energy_term.hpp): every term's stencil derivatives
// through the one finite-difference checker (elastic on every element type, plane strain,
// weak constraints isotropic and anisotropic), per-node blocks against the stencil Hessian,
// the assembled gradient (per-node gather) against the stencil sums, and the colorings.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <random>

#include "core/model/problem.hpp"
#include "core/terms/cloth_terms.hpp"
#include "core/terms/collider_term.hpp"
#include "core/terms/elastic_energy.hpp"
#include "core/terms/weak_constraint_term.hpp"
#include "core/topology/coloring.hpp"
#include "core/topology/topology.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "tests/support/finite_difference.hpp"
#include "tests/support/mapped_positions.hpp"

namespace pbdlab {
namespace {

std::shared_ptr<const Material> material(MaterialModel model = MaterialModel::kStableNeoHookean) {
  MaterialSpec spec;
  spec.model = model;
  spec.youngs_modulus = 1e5;
  spec.poisson_ratio = 0.4;
  return makeMaterial(spec);
}

// Rest positions mapped by A plus noise of `noise` (relative to the O(1) mesh size).
Positions deformedPositions(const Mesh& mesh, const Mat3& A, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  return test::mappedPositions(mesh, A, rng, noise);
}

// The stencil s of a term as a function of its own 3k coordinates (the rest of x fixed).
test::EnergyFunction stencilFunction(const EnergyTerm& term, int s, const Positions& x, HessianKind kind) {
  return [&term, s, x, kind](const Eigen::VectorXd& local, double* value, Eigen::VectorXd* gradient,
                             Eigen::MatrixXd* hessian) {
    Positions y = x;
    const int* nodes = term.stencilNodes(s);
    for (int a = 0; a < term.nodesPerStencil(); ++a) y.segment<3>(3 * nodes[a]) = local.segment<3>(3 * a);
    term.stencilTerms(s, y, 0.0, value, gradient, hessian, kind);
  };
}

Eigen::VectorXd stencilCoordinates(const EnergyTerm& term, int s, const Positions& x) {
  Eigen::VectorXd local(3 * term.nodesPerStencil());
  for (int a = 0; a < term.nodesPerStencil(); ++a) local.segment<3>(3 * a) = x.segment<3>(3 * term.stencilNodes(s)[a]);
  return local;
}

std::vector<Mesh> solidMeshes() {
  std::vector<Mesh> meshes;
  BoxMeshRecipe box;
  box.size = Vec3(1.0, 0.8, 0.9);
  for (BoxFamily family : {BoxFamily::kFiveTet, BoxFamily::kHex, BoxFamily::kPrism, BoxFamily::kPyramid}) {
    box.family = family;
    for (int order : family == BoxFamily::kFiveTet ? std::vector<int>{1, 2, 3} : std::vector<int>{1}) {
      box.order = order;
      meshes.push_back(makeBoxMesh(box));
    }
  }
  return meshes;
}

Mesh rectangle2d() {
  RectangleRecipe rectangle;
  rectangle.size = {1.0, 0.7};
  rectangle.cells = {2, 1};
  return makeRectangleMesh(rectangle);
}

// Central differences, step 1e-6 on O(1) coordinates. Measured worst relative errors over
// these states (Release, GCC 12): gradient 3e-9, Hessian 2e-8 (the P3 tet under the
// near-degenerate map). 1e-6 keeps 30x margin; a dropped or sign-flipped term gives O(1).
constexpr double kTolerance = 1e-6;

TEST(ElasticTerm, StencilDerivativesMatchFiniteDifferencesOnEveryElementType) {
  std::vector<Mesh> meshes = solidMeshes();
  meshes.push_back(rectangle2d());
  // Stretched/sheared, inverted (a reflection through z... in 2D through y), near-degenerate
  // (one direction squashed to 2e-2). No material here is evaluated on the corotated set
  // without derivative (that set is the materials' test).
  const Mat3 maps[] = {(Mat3() << 1.2, 0.1, 0.0, -0.05, 0.9, 0.1, 0.02, 0.0, 1.1).finished(),
                       (Mat3() << 1.0, 0.1, 0.0, 0.0, -0.8, 0.0, 0.0, 0.1, 1.0).finished(),
                       (Mat3() << 1.0, 0.0, 0.0, 0.0, 0.02, 0.0, 0.0, 0.0, 1.0).finished()};
  for (const Mesh& mesh : meshes) {
    const bool plane = isTwoDimensional(mesh);
    const ElasticEnergy term(mesh, material());
    EXPECT_EQ(term.isPlaneStrain(), plane);
    for (int m = 0; m < 3; ++m) {
      Mat3 A = maps[m];
      if (plane) A.row(2) = Vec3::UnitZ().transpose(), A.col(2) = Vec3::UnitZ();  // stay in the plane
      Positions x = deformedPositions(mesh, A, 0.01, 11 + m);
      if (plane)
        for (int i = 0; i < mesh.numNodes(); ++i) x[3 * i + 2] = 0.0;
      for (HessianKind kind : {HessianKind::kTrue}) {
        SCOPED_TRACE(mesh.source + " map " + std::to_string(m));
        test::FiniteDifferenceOptions options;
        options.tolerance = kTolerance;
        test::FiniteDifferenceErrors errors;
        EXPECT_TRUE(test::derivativesMatchFiniteDifferences(stencilFunction(term, 0, x, kind),
                                                            stencilCoordinates(term, 0, x), options, &errors));
      }
    }
  }
}

TEST(ElasticTerm, ApproximateAndProjectedHessiansArePositiveSemidefinite) {
  for (const Mesh& mesh : solidMeshes()) {
    const ElasticEnergy term(mesh, material(MaterialModel::kFixedCorotated));
    const Positions x =
        deformedPositions(mesh, (Mat3() << 1.0, 0.2, 0.0, 0.0, -0.7, 0.0, 0.0, 0.1, 1.1).finished(), 0.05, 3);
    for (HessianKind kind : {HessianKind::kProjected, HessianKind::kApproximate}) {
      Eigen::MatrixXd H;
      term.stencilTerms(0, x, 0.0, nullptr, nullptr, &H, kind);
      const double smallest = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(H).eigenvalues().minCoeff();
      EXPECT_GT(smallest, -1e-9 * H.norm()) << mesh.source << " " << hessianKindName(kind);
      EXPECT_GT(H.norm(), 0.0);
    }
  }
}

// The per-node block (gradient row and 3x3 diagonal block) a Gauss-Seidel solver reads is the
// stencil's gradient and Hessian restricted to that node, for every kind.
TEST(EnergyTerms, NodeBlocksAreTheStencilRowsAndDiagonalBlocks) {
  std::vector<Mesh> meshes = solidMeshes();
  meshes.push_back(rectangle2d());
  for (const Mesh& mesh : meshes) {
    const ElasticEnergy term(mesh, material(MaterialModel::kFixedCorotated));
    Positions x = deformedPositions(mesh, Mat3::Identity() * 1.1, 0.03, 5);
    if (term.isPlaneStrain())
      for (int i = 0; i < mesh.numNodes(); ++i) x[3 * i + 2] = 0.0;
    for (HessianKind kind : {HessianKind::kTrue, HessianKind::kProjected, HessianKind::kApproximate}) {
      Eigen::VectorXd g;
      Eigen::MatrixXd H;
      term.stencilTerms(0, x, 0.0, nullptr, &g, &H, kind);
      for (int a = 0; a < term.nodesPerStencil(); ++a) {
        Vec3 ga = Vec3::Zero();
        Mat3 Ha = Mat3::Zero();
        term.addNodeBlock(0, a, x, 0.0, kind, ga, Ha);
        EXPECT_LT((ga - g.segment<3>(3 * a)).norm(), 1e-12 * g.norm()) << mesh.source;
        EXPECT_LT((Ha - H.block<3, 3>(3 * a, 3 * a)).norm(), 1e-12 * H.norm()) << mesh.source;
      }
    }
  }
}

// The gathered gradient (element buffer, then per node over the node -> element adjacency)
// equals the plain scatter of the stencil gradients, and the FD derivative of the summed energy.
TEST(ElasticTerm, AssembledGradientEqualsScatteredStencilGradients) {
  BoxMeshRecipe box;
  box.cells = {3, 2, 2};
  box.order = 2;
  const Mesh mesh = makeBoxMesh(box);
  const ElasticEnergy term(mesh, material());
  const Positions x = deformedPositions(mesh, Mat3::Identity() * 0.9, 0.02, 8);
  VecX gathered = VecX::Zero(x.size());
  term.addGradient(x, 0.0, 2.0, gathered);
  VecX scattered = VecX::Zero(x.size());
  term.EnergyTerm::addGradient(x, 0.0, 2.0, scattered);  // the generic per-stencil path
  EXPECT_LT((gathered - scattered).norm(), 1e-12 * scattered.norm());
  EXPECT_GT(scattered.norm(), 0.0);
  // d/dx_k of the summed energy for a few DOFs.
  for (int dof : {0, 17, 3 * mesh.numNodes() - 1}) {
    Positions xp = x, xm = x;
    xp[dof] += 1e-6;
    xm[dof] -= 1e-6;
    const double fd = 2.0 * (term.energy(xp, 0.0) - term.energy(xm, 0.0)) / 2e-6;
    EXPECT_NEAR(fd, gathered[dof], 1e-6 * gathered.norm());
  }
}

WeakConstraint randomConstraint(std::mt19937& rng, int num_nodes, bool isotropic) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::uniform_int_distribution<int> node(0, num_nodes - 1);
  WeakConstraint c;
  for (int j = 0; j < 4; ++j) c.nodes_a.push_back(node(rng)), c.weights_a.push_back(uniform(rng));
  for (int j = 0; j < 3; ++j) c.nodes_b.push_back(node(rng)), c.weights_b.push_back(uniform(rng));
  c.k_n = 1e3 * (1.0 + uniform(rng));
  c.k_t = isotropic ? c.k_n : 1e2 * uniform(rng);
  c.normal = Vec3(uniform(rng) - 0.5, uniform(rng) - 0.5, uniform(rng) - 0.5);
  return c;
}

TEST(WeakConstraintTerm, DerivativesMatchFiniteDifferencesIsotropicAndAnisotropic) {
  std::mt19937 rng(4);
  for (bool isotropic : {true, false}) {
    // Distinct nodes per stencil so the stencil's coordinates are independent.
    WeakConstraint c;
    c.nodes_a = {0, 1, 2, 3};
    c.weights_a = {0.1, 0.2, 0.3, 0.4};
    c.nodes_b = {4, 5, 6};
    c.weights_b = {0.5, 0.25, 0.25};
    c.k_n = 1e4;
    c.k_t = isotropic ? 1e4 : 3e2;
    c.normal = Vec3(0.3, -1.0, 0.2);
    const WeakConstraintTerm term({c}, 7);
    Positions x = Positions::Random(21);
    for (HessianKind kind : {HessianKind::kTrue, HessianKind::kApproximate}) {
      test::FiniteDifferenceOptions options;
      options.tolerance = 1e-7;  // quadratic energy: FD is exact up to round-off (measured 2e-10)
      EXPECT_TRUE(test::derivativesMatchFiniteDifferences(stencilFunction(term, 0, x, kind),
                                                          stencilCoordinates(term, 0, x), options));
    }
    // Anisotropic with k_t = 0: a tangential offset costs nothing, a normal one k_n/2 d^2.
    WeakConstraint slide = c;
    slide.k_t = 0.0;
    slide.normal = Vec3::UnitY();
    const WeakConstraintTerm sliding({slide}, 7);
    Positions y = VecX::Zero(21);
    for (int j = 0; j < 4; ++j) y.segment<3>(3 * j) = Vec3(0.3, 0.0, -0.2);  // point a moved in x and z
    double value = 0.0;
    sliding.stencilTerms(0, y, 0.0, &value, nullptr, nullptr, HessianKind::kTrue);
    EXPECT_EQ(value, 0.0);
    for (int j = 0; j < 4; ++j) y.segment<3>(3 * j) = Vec3(0.0, 0.01, 0.0);
    sliding.stencilTerms(0, y, 0.0, &value, nullptr, nullptr, HessianKind::kTrue);
    EXPECT_NEAR(value, 0.5 * 1e4 * 1e-4, 1e-12);
  }
}

// The cloth terms wrap the kernels of core/terms/ (tested there in depth); here the wrapped
// stencils go through the same checker at a curved, stretched state.
TEST(ClothTerms, MembraneAndBendingStencilsMatchFiniteDifferences) {
  RectangleRecipe recipe;
  recipe.embedding = RectangleRecipe::Embedding::k3dSurface;
  recipe.cells = {2, 2};
  const Mesh cloth = makeRectangleMesh(recipe);
  std::vector<std::array<int, 3>> triangles;
  for (int e = 0; e < cloth.numElements(); ++e) triangles.push_back({cloth.elements(e, 0), cloth.elements(e, 1), cloth.elements(e, 2)});
  const Positions rest = cloth.restPositionsFlat();
  const MembraneTerm membrane(triangles, rest, 400.0, 600.0);
  const BendingTerm bending(surfaceHinges(triangles), 0.5);
  // Stretched and curved in both directions, with noise: no hinge stays flat (at theta = 0
  // the bending gradient vanishes and the checker would refuse it as vacuous).
  Positions x = rest;
  std::mt19937 rng(21);
  std::normal_distribution<double> noise(0.0, 0.05);
  for (int i = 0; i < cloth.numNodes(); ++i) {
    x[3 * i] *= 1.2;
    x[3 * i + 2] = 0.2 * std::sin(2.0 * rest[3 * i]) + 0.3 * rest[3 * i] * rest[3 * i + 1] + noise(rng);
  }
  test::FiniteDifferenceOptions options;
  options.tolerance = 1e-6;  // measured worst: membrane 4e-9, bending 2e-8
  for (const EnergyTerm* term : {static_cast<const EnergyTerm*>(&membrane), static_cast<const EnergyTerm*>(&bending)})
    for (int s = 0; s < term->numStencils(); s += 3)
      EXPECT_TRUE(test::derivativesMatchFiniteDifferences(stencilFunction(*term, s, x, HessianKind::kTrue),
                                                          stencilCoordinates(*term, s, x), options))
          << term->name() << " stencil " << s;
  EXPECT_EQ(bending.energy(rest, 0.0), 0.0);  // flat: no bending energy
  EXPECT_NEAR(membrane.energy(rest, 0.0), 0.0, 1e-14);
}

// The collider's penalty (Newton's view of a collider) at penetrating nodes: one-node stencils,
// checked for a sphere (curved: the true Hessian has k phi Hess(phi)) and a box face.
TEST(ColliderTerm, PenaltyDerivativesMatchFiniteDifferencesInsideTheShapes) {
  const Positions x = (VecX(6) << 0.3, 0.2, 0.3, 0.95, 0.1, 0.2).finished();
  for (const ColliderShape& shape :
       {ColliderShape(makeSphereCollider(Vec3(0.0, 0.0, 0.0), 1.0)), ColliderShape(makeBoxCollider(Vec3(0.5, 0.0, 0.0), Vec3(0.6, 0.5, 0.5)))}) {
    const ColliderTerm term({"shape", shape, 1e4, 1e-9}, 2);
    for (int s = 0; s < 2; ++s) {
      ASSERT_LT(signedDistance(shape, x.segment<3>(3 * s)), -1e-3);  // inside, away from phi = 0
      test::FiniteDifferenceOptions options;
      options.tolerance = 1e-7;  // measured 3e-10
      EXPECT_TRUE(test::derivativesMatchFiniteDifferences(stencilFunction(term, s, x, HessianKind::kTrue),
                                                          stencilCoordinates(term, s, x), options));
    }
  }
}

// A time-dependent activation reaches the kernel: the elastic term's energy at time t is
// the one of the material evaluated with a(t).
TEST(ElasticTerm, ActivationScheduleReachesTheKernel) {
  BoxMeshRecipe box;
  box.size = Vec3(2.0, 1.0, 1.0);
  box.cells = {2, 1, 1};
  auto mesh = std::make_shared<const Mesh>(makeBoxMesh(box));
  MaterialSpec spec;
  spec.model = MaterialModel::kMuscle;
  spec.youngs_modulus = 1e4;
  spec.poisson_ratio = 0.3;
  ElementMaterials materials;
  materials.materials = {makeMaterial(spec)};
  materials.element_data.assign(mesh->numElements(), MaterialPointData{});  // fibres along x
  materials.activation = {[](double t) { return std::min(1.0, t); }};
  const ElasticEnergy term(mesh, materials);
  Positions x = mesh->restPositionsFlat();
  for (int i = 0; i < mesh->numNodes(); ++i) x[3 * i] *= 1.1;  // fibres stretched 10%
  const Mat3 F = Vec3(1.1, 1.0, 1.0).asDiagonal();
  for (double t : {0.0, 0.5, 2.0}) {
    MaterialPointData data;
    data.activation = std::min(1.0, t);
    const double expected = materials.materials[0]->energyDensity(F, data) * 2.0;  // volume 2
    EXPECT_NEAR(term.energy(x, t), expected, 1e-10 * std::abs(expected)) << "t = " << t;
  }
  EXPECT_NE(term.energy(x, 0.0), term.energy(x, 1.0));
}

TEST(Colorings, NodeColoringOverElementsAndConstraintsAndIncrementalRecoloring) {
  BoxMeshRecipe box;
  box.cells = {4, 3, 3};
  const Mesh mesh = makeBoxMesh(box);
  const ElasticEnergy elastic(mesh, material());
  std::mt19937 rng(9);
  std::vector<WeakConstraint> constraints;
  for (int k = 0; k < 20; ++k) constraints.push_back(randomConstraint(rng, mesh.numNodes(), k % 2 == 0));
  const WeakConstraintTerm weak(constraints, mesh.numNodes());
  auto setOf = [](const EnergyTerm& term) {
    return StencilSet{term.numStencils(), term.nodesPerStencil(), [&term](int s) { return term.stencilNodes(s); }};
  };
  const StencilSet elements = setOf(elastic);
  Coloring nodes = colorNodes(mesh.numNodes(), {elements});
  EXPECT_TRUE(isValidNodeColoring(mesh.numNodes(), {elements}, nodes));
  EXPECT_FALSE(isValidNodeColoring(mesh.numNodes(), {elements, setOf(weak)}, nodes))
      << "random long-range constraints should conflict with the element-only coloring";
  // New stencils (contacts): only their nodes may change color, and the result is valid.
  std::vector<int> touched;
  for (int s = 0; s < weak.numStencils(); ++s)
    for (int a = 0; a < weak.nodesPerStencil(); ++a) touched.push_back(weak.stencilNodes(s)[a]);
  const std::vector<int> before = colorOfNode(mesh.numNodes(), nodes);
  const int changed = recolorNodes(nodes, {elements, setOf(weak)}, touched);
  EXPECT_GT(changed, 0);
  EXPECT_TRUE(isValidNodeColoring(mesh.numNodes(), {elements, setOf(weak)}, nodes));
  const std::vector<int> after = colorOfNode(mesh.numNodes(), nodes);
  int moved = 0;
  for (int i = 0; i < mesh.numNodes(); ++i)
    if (before[i] != after[i]) {
      ++moved;
      EXPECT_NE(std::find(touched.begin(), touched.end(), i), touched.end()) << "node " << i << " was not touched";
    }
  EXPECT_EQ(moved, changed);
  // Stencil colorings: valid for both terms.
  EXPECT_TRUE(isValidStencilColoring(elements, elastic.stencilColoring()));
  EXPECT_TRUE(isValidStencilColoring(setOf(weak), weak.stencilColoring()));
  // A broken coloring is caught.
  Coloring broken = elastic.stencilColoring();
  broken.groups[0].push_back(broken.groups[1][0]);
  broken.groups[1].erase(broken.groups[1].begin());
  EXPECT_FALSE(isValidStencilColoring(elements, broken));
  std::printf("[ measured ] %d elements: %d element colors; %d nodes: %d node colors; recolored %d nodes\n",
              elastic.numStencils(), elastic.stencilColoring().numColors(), mesh.numNodes(),
              colorNodes(mesh.numNodes(), {elements}).numColors(), changed);
}

}  // namespace
}  // namespace pbdlab
