// EmbeddedTerm (core/terms/embedded_term.hpp): a mesh's elastic energy in the grid unknowns q,
// E_q(q) = E_x(W q). Its derivatives against central differences in q, its sums against the
// mesh term's through W, the identity embedding, the Newton assembly through HessianSlots
// against a dense B^T H B, the refusal of elements larger than a cell, translation invariance
// through the partition of unity, the Gauss-Seidel node blocks, and the used (touched) nodes.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <random>
#include <sstream>

#include "core/grid/grid_weights.hpp"
#include "core/materials/polar_svd.hpp"
#include "core/model/problem.hpp"
#include "core/solver/yardstick.hpp"
#include "core/terms/elastic_energy.hpp"
#include "core/terms/embedded_term.hpp"
#include "meshes/box_mesh.hpp"
#include "reference/hessian_assembly.hpp"
#include "tests/support/finite_difference.hpp"

namespace pbdlab {
namespace {

const GridKernel kEmbeddedTestKernels[] = {GridKernel::kTrilinear, GridKernel::kQuadraticBSpline};

// A unit box of 2 x 2 x 2 cells, five tets each (40 P1 tets, edges 0.5 along the axes) in a
// Problem, so the mesh term is the Problem's own elastic term (the one Newton assembles).
Problem embeddedTestProblem(MaterialModel model, const BoxMeshRecipe& recipe) {
  Problem problem;
  problem.mesh = makeBoxMesh(recipe);
  problem.material.model = model;
  problem.material.youngs_modulus = 1e5;
  problem.material.poisson_ratio = 0.3;
  problem.finalize("embedded term test");
  return problem;
}

BoxMeshRecipe embeddedTestBoxRecipe() {
  BoxMeshRecipe recipe;
  recipe.cells = {2, 2, 2};
  return recipe;
}

// Spacing 0.6 (> the elements' 0.5 per axis), origin off the mesh's planes so that vertices
// sit inside cells; 6 nodes per axis hold the quadratic stencils of [0, 1]^3 (u in [1.2, 2.9]).
BackgroundGrid embeddedTestGrid() { return BackgroundGrid(Vec3(-0.71, -0.77, -0.68), 0.6, Eigen::Vector3i(6, 6, 6)); }

std::shared_ptr<const EmbeddedTerm> embeddedTestTerm(const Problem& problem, const BackgroundGrid& grid,
                                                     GridKernel kernel) {
  auto weights =
      std::make_shared<const GridWeights>(computeGridWeights(grid, kernel, problem.mesh.restPositionsFlat()));
  return std::make_shared<const EmbeddedTerm>(problem.terms()[0], std::move(weights));
}

// Grid positions: the grid's rest positions stretched, sheared and rotated ("deformed"), or
// with z flipped progressively along x, z' = 0.5 + (1 - 1.8 x)(z - 0.5), which inverts the
// elements beyond x ~ 0.55 ("partly inverted"); both plus noise so no state is special.
Positions embeddedTestGridPositions(const BackgroundGrid& grid, bool partly_inverted, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.02);
  const Mat3 rotation = Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()).toRotationMatrix();
  Mat3 stretch;
  stretch << 1.3, 0.2, 0.0, 0.0, 0.8, 0.1, 0.0, 0.0, 1.1;
  Positions q = grid.nodePositions();
  for (int i = 0; i < grid.numNodes(); ++i) {
    Vec3 X = q.segment<3>(3 * i);
    if (partly_inverted) {
      X.z() = 0.5 + (1.0 - 1.8 * X.x()) * (X.z() - 0.5);
      X = rotation * X;
    } else {
      X = rotation * stretch * X;
    }
    for (int k = 0; k < 3; ++k) X[k] += noise(rng);
    q.segment<3>(3 * i) = X;
  }
  return q;
}

// The smallest |sigma_i + sigma_j| of F's signed singular values: fixed corotated has no
// derivative where it is 0.
double embeddedTestPairSum(const Mat3& F) {
  const Vec3 s = rotationVariantSingularValues(F);
  return std::min({std::abs(s[0] + s[1]), std::abs(s[0] + s[2]), std::abs(s[1] + s[2])});
}

// Stencil s of the term as a function of its block's 3 * 64 (or 3 * 27) grid coordinates.
test::EnergyFunction embeddedTestStencilFunction(const EmbeddedTerm& term, int s, const Positions& q,
                                                 HessianKind kind) {
  return [&term, s, q, kind](const Eigen::VectorXd& local, double* value, Eigen::VectorXd* gradient,
                             Eigen::MatrixXd* hessian) {
    Positions y = q;
    const int* nodes = term.stencilNodes(s);
    for (int a = 0; a < term.nodesPerStencil(); ++a) y.segment<3>(3 * nodes[a]) = local.segment<3>(3 * a);
    term.stencilTerms(s, y, 0.0, value, gradient, hessian, kind);
  };
}

Eigen::VectorXd embeddedTestBlockCoordinates(const EmbeddedTerm& term, int s, const Positions& q) {
  Eigen::VectorXd local(3 * term.nodesPerStencil());
  for (int a = 0; a < term.nodesPerStencil(); ++a) local.segment<3>(3 * a) = q.segment<3>(3 * term.stencilNodes(s)[a]);
  return local;
}

// The slot rule of reference/hessian_assembly.cpp (FreeDofHessian) with every DOF free, into
// a dense column-major n x n matrix: stencil entry (p, q), p >= q, goes to the entry
// (max, min) of its global DOFs. (FreeDofHessian itself takes only a StepObjective's terms, and
// a Problem's DOFs are mesh nodes, so an EmbeddedTerm cannot be handed to it yet.)
Eigen::MatrixXd embeddedTestAssemble(const EnergyTerm& term, const Positions& x, HessianKind kind) {
  const int n = static_cast<int>(x.size());
  const int dofs = 3 * term.nodesPerStencil();
  HessianSlots slots;
  slots.entries_per_stencil = dofs * (dofs + 1) / 2;
  slots.slot.resize(static_cast<size_t>(term.numStencils()) * slots.entries_per_stencil);
  for (int s = 0; s < term.numStencils(); ++s) {
    const int* nodes = term.stencilNodes(s);
    for (int p = 0; p < dofs; ++p)
      for (int q = 0; q <= p; ++q) {
        const int gp = 3 * nodes[p / 3] + p % 3, gq = 3 * nodes[q / 3] + q % 3;
        slots.slot[static_cast<size_t>(s) * slots.entries_per_stencil + lowerTriangleIndex(p, q)] =
            std::max(gp, gq) + n * std::min(gp, gq);
      }
  }
  Eigen::MatrixXd lower = Eigen::MatrixXd::Zero(n, n);
  term.addHessian(x, 0.0, kind, 1.0, slots, lower.data());
  return lower.selfadjointView<Eigen::Lower>();
}

// Central differences in q with step 1e-6 on O(1) coordinates, for fixed corotated and
// Neo-Hookean, both kernels, a deformed and a partly inverted state (12 of the 40 tets
// inverted), every stencil away from corotated's non-differentiable set (all 40 here).
// Measured worst relative errors (Release, GCC 12): gradient 2.6e-8 (Neo-Hookean, quadratic,
// partly inverted), Hessian 1.7e-9; the tolerance 1e-6 keeps a 40x margin, and a wrong
// weight or block index gives O(1). Each case's worst is recorded (--gtest_output=xml).
TEST(EmbeddedTerm, DerivativesMatchFiniteDifferencesInQ) {
  const BackgroundGrid grid = embeddedTestGrid();
  for (MaterialModel model : {MaterialModel::kFixedCorotated, MaterialModel::kNeoHookean}) {
    const Problem problem = embeddedTestProblem(model, embeddedTestBoxRecipe());
    const ElasticEnergy& elastic = problem.elasticEnergy();
    for (GridKernel kernel : kEmbeddedTestKernels) {
      const auto term = embeddedTestTerm(problem, grid, kernel);
      ASSERT_EQ(term->nodesPerStencil(), kernel == GridKernel::kTrilinear ? 27 : 64);
      for (bool partly_inverted : {false, true}) {
        SCOPED_TRACE(materialModelName(model) + ", " + gridKernelName(kernel) +
                     (partly_inverted ? ", partly inverted" : ", deformed"));
        const Positions q = embeddedTestGridPositions(grid, partly_inverted, 11);
        const Positions x = embed(term->weights(), q);
        int inverted = 0, checked = 0, checked_inverted = 0;
        double worst_gradient = 0.0, worst_hessian = 0.0;
        for (int s = 0; s < term->numStencils(); ++s) {
          const Mat3 F = elastic.deformationGradient(s, 0, x);
          if (F.determinant() < 0.0) ++inverted;
          if (model == MaterialModel::kFixedCorotated && embeddedTestPairSum(F) < 0.05) continue;
          ++checked;
          if (F.determinant() < 0.0) ++checked_inverted;
          test::FiniteDifferenceOptions options;
          options.tolerance = 1e-6;
          options.min_gradient_norm = 1e-3 * elastic.material().modelParameters().mu * elastic.restVolume(s);
          options.min_hessian_norm = options.min_gradient_norm;
          test::FiniteDifferenceErrors errors;
          EXPECT_TRUE(test::derivativesMatchFiniteDifferences(
              embeddedTestStencilFunction(*term, s, q, HessianKind::kTrue), embeddedTestBlockCoordinates(*term, s, q),
              options, &errors))
              << "stencil " << s;
          worst_gradient = std::max(worst_gradient, errors.gradient);
          worst_hessian = std::max(worst_hessian, errors.hessian);
        }
        if (partly_inverted) {
          EXPECT_GT(inverted, 0);
          EXPECT_LT(inverted, term->numStencils());
          EXPECT_GT(checked_inverted, 0);
        } else {
          EXPECT_EQ(inverted, 0);
        }
        EXPECT_GE(checked, term->numStencils() / 2);
        const std::string key = materialModelName(model) + (kernel == GridKernel::kTrilinear ? "_trilinear" : "_quadratic") +
                                (partly_inverted ? "_partly_inverted" : "_deformed");
        std::ostringstream measured;
        measured << std::scientific << std::setprecision(1) << "gradient " << worst_gradient << ", Hessian "
                 << worst_hessian << ", " << checked << " stencils checked, " << inverted << " inverted";
        RecordProperty(key, measured.str());
      }
    }
  }
}

// E_q(q) = E_x(W q) and grad E_q = W^T grad E_x: the overrides (one embedding, the inner
// term's sums) and the base class's stencil-by-stencil sums (each stencil's block mapping)
// both agree with the mesh term through embed / embedTranspose, to round-off.
TEST(EmbeddedTerm, SumsEqualTheMeshTermThroughTheWeights) {
  const BackgroundGrid grid = embeddedTestGrid();
  const Problem problem = embeddedTestProblem(MaterialModel::kFixedCorotated, embeddedTestBoxRecipe());
  const EnergyTerm& mesh_term = *problem.terms()[0];
  for (GridKernel kernel : kEmbeddedTestKernels) {
    SCOPED_TRACE(gridKernelName(kernel));
    const auto term = embeddedTestTerm(problem, grid, kernel);
    const Positions q = embeddedTestGridPositions(grid, false, 5);
    const Positions x = embed(term->weights(), q);
    const double E_x = mesh_term.energy(x, 0.0);
    VecX g_x = VecX::Zero(x.size());
    mesh_term.addGradient(x, 0.0, 1.0, g_x);
    const VecX expected = embedTranspose(term->weights(), g_x);
    ASSERT_GT(std::abs(E_x), 0.0);
    ASSERT_GT(expected.norm(), 0.0);

    EXPECT_NEAR(term->energy(q, 0.0), E_x, 1e-13 * std::abs(E_x));
    EXPECT_NEAR(term->EnergyTerm::energy(q, 0.0), E_x, 1e-12 * std::abs(E_x));
    VecX g = VecX::Zero(q.size());
    term->addGradient(q, 0.0, 2.0, g);  // scale 2
    EXPECT_LE((g - 2.0 * expected).norm(), 1e-13 * expected.norm());
    VecX g_stencils = VecX::Zero(q.size());
    term->EnergyTerm::addGradient(q, 0.0, 1.0, g_stencils);
    EXPECT_LE((g_stencils - expected).norm(), 1e-12 * expected.norm());
  }
}

// A box whose vertices ARE grid nodes (spacing 0.25, the grid's origin and spacing): the
// trilinear W is the identity on them, so E_q, its gradient and its assembled Hessian equal
// the mesh term's at the same positions (the Hessian through Newton's own FreeDofHessian).
TEST(EmbeddedTerm, IdentityEmbeddingReproducesTheMeshTerm) {
  const double h = 0.25;
  BoxMeshRecipe recipe;
  recipe.size = Vec3(0.75, 0.5, 0.5);
  recipe.cells = {3, 2, 2};
  Problem problem;
  problem.mesh = makeBoxMesh(recipe);
  // Exact multiples of h (Gmsh's may be off by an ulp, which would put a vertex in the cell below).
  problem.mesh.rest_positions = ((problem.mesh.rest_positions / h).array().round() * h).matrix();
  problem.material.model = MaterialModel::kNeoHookean;
  problem.material.youngs_modulus = 1e5;
  problem.finalize("embedded identity test");
  const BackgroundGrid grid(Vec3::Zero(), h, Eigen::Vector3i(4, 3, 3));
  ASSERT_EQ(grid.numNodes(), problem.numNodes());
  const auto term = embeddedTestTerm(problem, grid, GridKernel::kTrilinear);

  // W: one weight 1 per vertex, at its own node; every grid node is some vertex's.
  std::vector<int> node_of(problem.numNodes(), -1);
  std::vector<int> vertex_of(grid.numNodes(), -1);
  const GridWeights& W = term->weights();
  for (int p = 0; p < problem.numNodes(); ++p) {
    const Eigen::Vector3i ijk = (problem.mesh.restPosition(p) / h).array().round().cast<int>();
    node_of[p] = grid.nodeIndex(ijk);
    vertex_of[node_of[p]] = p;
    for (int k = 0; k < W.nodes_per_point; ++k) {
      const size_t e = W.entry(p) + k;
      EXPECT_EQ(W.weight[e], W.node[e] == node_of[p] ? 1.0 : 0.0) << "vertex " << p << ", kernel node " << k;
    }
  }
  for (int i = 0; i < grid.numNodes(); ++i) ASSERT_GE(vertex_of[i], 0) << "grid node " << i << " is no vertex";

  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0.0, 0.03);
  Mat3 A;
  A << 1.2, 0.3, 0.0, -0.1, 0.9, 0.2, 0.1, 0.0, 1.1;
  Positions x(3 * problem.numNodes());
  for (int p = 0; p < problem.numNodes(); ++p)
    x.segment<3>(3 * p) = A * problem.mesh.restPosition(p) + Vec3(noise(rng), noise(rng), noise(rng));
  Positions q(3 * grid.numNodes());
  for (int p = 0; p < problem.numNodes(); ++p) q.segment<3>(3 * node_of[p]) = x.segment<3>(3 * p);

  const EnergyTerm& mesh_term = *problem.terms()[0];
  const double E_x = mesh_term.energy(x, 0.0);
  EXPECT_NEAR(term->energy(q, 0.0), E_x, 1e-14 * std::abs(E_x));
  EXPECT_NEAR(term->EnergyTerm::energy(q, 0.0), E_x, 1e-13 * std::abs(E_x));
  VecX g_x = VecX::Zero(x.size()), g_q = VecX::Zero(q.size()), g_stencils = VecX::Zero(q.size());
  mesh_term.addGradient(x, 0.0, 1.0, g_x);
  term->addGradient(q, 0.0, 1.0, g_q);
  term->EnergyTerm::addGradient(q, 0.0, 1.0, g_stencils);
  ASSERT_GT(g_x.norm(), 0.0);
  for (int p = 0; p < problem.numNodes(); ++p) {
    EXPECT_LE((g_q.segment<3>(3 * node_of[p]) - g_x.segment<3>(3 * p)).norm(), 1e-13 * g_x.norm()) << "vertex " << p;
    EXPECT_LE((g_stencils.segment<3>(3 * node_of[p]) - g_x.segment<3>(3 * p)).norm(), 1e-12 * g_x.norm())
        << "vertex " << p;
  }

  const StepObjective objective(problem, x, VecX::Zero(x.size()), 0);  // quasistatic: the Hessian is K
  FreeDofHessian assembler(objective);
  ASSERT_EQ(assembler.numFree(), problem.numDofs());
  const Eigen::MatrixXd lower = Eigen::MatrixXd(assembler.assemble(objective, x, HessianKind::kTrue));
  const Eigen::MatrixXd H_x = lower.selfadjointView<Eigen::Lower>();
  const Eigen::MatrixXd H_q = embeddedTestAssemble(*term, q, HessianKind::kTrue);
  ASSERT_GT(H_x.norm(), 0.0);
  double worst = 0.0;
  for (int p = 0; p < problem.numNodes(); ++p)
    for (int r = 0; r < problem.numNodes(); ++r)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          worst = std::max(worst, std::abs(H_q(3 * node_of[p] + i, 3 * node_of[r] + j) -
                                           H_x(assembler.freeIndex(3 * p + i), assembler.freeIndex(3 * r + j))));
  EXPECT_LE(worst, 1e-12 * H_x.norm());
}

// The Hessian assembled through HessianSlots by the slot rule of reference/hessian_assembly
// (checked against FreeDofHessian itself on the mesh term) equals W^T H_x W built densely from
// the inner stencils and the weights: a node repeated in a stencil, or a cross block dropped,
// would lose entries here. Projected kinds stay PSD under the congruence.
TEST(EmbeddedTerm, AssembledHessianEqualsDenseCongruence) {
  const BackgroundGrid grid = embeddedTestGrid();
  const Problem problem = embeddedTestProblem(MaterialModel::kFixedCorotated, embeddedTestBoxRecipe());
  const EnergyTerm& mesh_term = *problem.terms()[0];
  const int n_x = problem.numDofs(), n_q = 3 * grid.numNodes();
  for (GridKernel kernel : kEmbeddedTestKernels) {
    const auto term = embeddedTestTerm(problem, grid, kernel);
    const Positions q = embeddedTestGridPositions(grid, true, 17);
    const Positions x = embed(term->weights(), q);

    // The test's slot rule is FreeDofHessian's: same matrix on the mesh term.
    const StepObjective objective(problem, x, VecX::Zero(n_x), 0);
    FreeDofHessian assembler(objective);
    const Eigen::MatrixXd lower = Eigen::MatrixXd(assembler.assemble(objective, x, HessianKind::kTrue));
    const Eigen::MatrixXd reference = lower.selfadjointView<Eigen::Lower>();
    const Eigen::MatrixXd mine = embeddedTestAssemble(mesh_term, x, HessianKind::kTrue);
    ASSERT_GT(reference.norm(), 0.0);
    EXPECT_LE((mine - reference).norm(), 1e-14 * reference.norm());

    // Dense W (3 per point x 3 per grid node) from the weights.
    const GridWeights& weights = term->weights();
    Eigen::MatrixXd W = Eigen::MatrixXd::Zero(n_x, n_q);
    for (int p = 0; p < weights.numPoints(); ++p)
      for (int k = 0; k < weights.nodes_per_point; ++k)
        for (int d = 0; d < 3; ++d)
          W(3 * p + d, 3 * weights.node[weights.entry(p) + k] + d) += weights.weight[weights.entry(p) + k];
    for (HessianKind kind : {HessianKind::kTrue, HessianKind::kProjected}) {
      SCOPED_TRACE(gridKernelName(kernel) + ", " + hessianKindName(kind));
      Eigen::MatrixXd H_x = Eigen::MatrixXd::Zero(n_x, n_x);
      Eigen::MatrixXd H_s;
      for (int s = 0; s < mesh_term.numStencils(); ++s) {
        mesh_term.stencilTerms(s, x, 0.0, nullptr, nullptr, &H_s, kind);
        const int* nodes = mesh_term.stencilNodes(s);
        for (int a = 0; a < mesh_term.nodesPerStencil(); ++a)
          for (int b = 0; b < mesh_term.nodesPerStencil(); ++b)
            H_x.block<3, 3>(3 * nodes[a], 3 * nodes[b]) += H_s.block<3, 3>(3 * a, 3 * b);
      }
      const Eigen::MatrixXd expected = W.transpose() * H_x * W;
      const Eigen::MatrixXd assembled = embeddedTestAssemble(*term, q, kind);
      ASSERT_GT(expected.norm(), 0.0);
      EXPECT_LE((assembled - expected).norm(), 1e-13 * expected.norm());
      if (kind == HessianKind::kProjected) {
        const Eigen::VectorXd eigenvalues =
            Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(assembled, Eigen::EigenvaluesOnly).eigenvalues();
        EXPECT_GE(eigenvalues.minCoeff(), -1e-12 * eigenvalues.cwiseAbs().maxCoeff());
      }
    }
  }
}

// An element spanning more than one grid cell per axis is refused, naming the stencil, the axis
// and the span; so is a grid too small for one block.
TEST(EmbeddedTerm, RefusesElementsLargerThanACell) {
  BoxMeshRecipe recipe;  // one cell of 1 x 1 x 1: five tets of extent 1 per axis
  const Problem problem = embeddedTestProblem(MaterialModel::kFixedCorotated, recipe);
  const BackgroundGrid grid = BackgroundGrid::covering(Vec3::Zero(), Vec3::Ones(), 0.3, 1);
  for (GridKernel kernel : kEmbeddedTestKernels) {
    SCOPED_TRACE(gridKernelName(kernel));
    try {
      embeddedTestTerm(problem, grid, kernel);
      ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("stencil 0 touches grid nodes"), std::string::npos) << message;
      EXPECT_NE(message.find("on axis x"), std::string::npos) << message;
      EXPECT_NE(message.find("Refine the mesh or coarsen the grid"), std::string::npos) << message;
    }
  }
  // Two nodes on z: no room for a 3-node block.
  const BackgroundGrid flat(Vec3::Constant(-0.5), 2.0, Eigen::Vector3i(3, 3, 2));
  try {
    embeddedTestTerm(problem, flat, GridKernel::kTrilinear);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("2 nodes on axis z"), std::string::npos) << e.what();
  }
}

// Elements up to two cells across (0.5 on a grid of 0.3: a stretched element's vertices in
// cells two apart) widen the trilinear block to 4 x 4 x 4 for every stencil instead of being
// refused; the derivatives in q still match central differences (deformed and partly inverted
// grid states), the sums are the mesh term's through W, the assembled Hessian is W^T H W, and
// usedNodes names the touched nodes only. The quadratic kernel would need 5 per axis: refused.
TEST(EmbeddedTerm, StretchedElementsWidenTheTrilinearBlock) {
  const BackgroundGrid grid(Vec3(-0.71, -0.77, -0.68), 0.3, Eigen::Vector3i(10, 10, 10));
  const Problem problem = embeddedTestProblem(MaterialModel::kFixedCorotated, embeddedTestBoxRecipe());
  const EnergyTerm& mesh_term = *problem.terms()[0];
  const auto term = embeddedTestTerm(problem, grid, GridKernel::kTrilinear);
  EXPECT_EQ(term->blockWidth(), 4);
  EXPECT_EQ(term->nodesPerStencil(), 64);
  int used = 0, widest_used = 0;
  std::vector<int> local(64);
  for (int s = 0; s < term->numStencils(); ++s) {
    const int m = term->usedNodes(s, local.data());
    used += m;
    widest_used = std::max(widest_used, m);
  }
  EXPECT_GT(widest_used, 27);  // some element touches more nodes than a 3 x 3 x 3 block holds
  for (bool partly_inverted : {false, true}) {
    SCOPED_TRACE(partly_inverted ? "partly inverted" : "deformed");
    const Positions q = embeddedTestGridPositions(grid, partly_inverted, 23);
    const Positions x = embed(term->weights(), q);
    double worst_gradient = 0.0, worst_hessian = 0.0;
    for (int s = 0; s < term->numStencils(); ++s) {
      const Mat3 F = problem.elasticEnergy().deformationGradient(s, 0, x);
      if (embeddedTestPairSum(F) < 0.05) continue;  // away from the corotated rotation's kink
      test::FiniteDifferenceOptions options;
      options.tolerance = 1e-6;
      options.min_gradient_norm = 1e-3 * problem.elasticEnergy().material().modelParameters().mu *
                                  problem.elasticEnergy().restVolume(s);
      options.min_hessian_norm = options.min_gradient_norm;
      test::FiniteDifferenceErrors errors;
      EXPECT_TRUE(test::derivativesMatchFiniteDifferences(embeddedTestStencilFunction(*term, s, q, HessianKind::kTrue),
                                                          embeddedTestBlockCoordinates(*term, s, q), options, &errors))
          << "stencil " << s;
      worst_gradient = std::max(worst_gradient, errors.gradient);
      worst_hessian = std::max(worst_hessian, errors.hessian);
    }
    // The sums and the assembled Hessian through W.
    const double E_x = mesh_term.energy(x, 0.0);
    EXPECT_NEAR(term->energy(q, 0.0), E_x, 1e-13 * std::abs(E_x));
    VecX g_x = VecX::Zero(x.size());
    mesh_term.addGradient(x, 0.0, 1.0, g_x);
    const VecX expected = embedTranspose(term->weights(), g_x);
    VecX g = VecX::Zero(q.size());
    term->addGradient(q, 0.0, 1.0, g);
    EXPECT_LE((g - expected).norm(), 1e-13 * expected.norm());
    const GridWeights& weights = term->weights();
    Eigen::MatrixXd W = Eigen::MatrixXd::Zero(x.size(), q.size());
    for (int p = 0; p < weights.numPoints(); ++p)
      for (int k = 0; k < weights.nodes_per_point; ++k)
        for (int d = 0; d < 3; ++d)
          W(3 * p + d, 3 * weights.node[weights.entry(p) + k] + d) += weights.weight[weights.entry(p) + k];
    const Eigen::MatrixXd H_x = embeddedTestAssemble(mesh_term, x, HessianKind::kTrue);
    const Eigen::MatrixXd reference = W.transpose() * H_x * W;
    const Eigen::MatrixXd assembled = embeddedTestAssemble(*term, q, HessianKind::kTrue);
    EXPECT_LE((assembled - reference).norm(), 1e-13 * reference.norm());
    std::printf("[ measured ] 4-wide trilinear blocks (%s): %d used nodes a stencil on average, at most %d; finite "
                "differences: gradient %.1e, Hessian %.1e\n",
                partly_inverted ? "partly inverted" : "deformed", used / term->numStencils(), widest_used,
                worst_gradient, worst_hessian);
  }
  try {
    embeddedTestTerm(problem, grid, GridKernel::kQuadraticBSpline);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("a block holds at most 4 per axis"), std::string::npos) << e.what();
  }
}

// A rigid translation of the grid moves every vertex by the same vector (partition of unity),
// so E_q does not change and the gradient sums to zero over the grid nodes: through the
// overrides (embed, embedTranspose) and through the stencils' own weight entries.
TEST(EmbeddedTerm, TranslationInvariantThroughThePartitionOfUnity) {
  const BackgroundGrid grid = embeddedTestGrid();
  const Problem problem = embeddedTestProblem(MaterialModel::kNeoHookean, embeddedTestBoxRecipe());
  for (GridKernel kernel : kEmbeddedTestKernels) {
    SCOPED_TRACE(gridKernelName(kernel));
    const auto term = embeddedTestTerm(problem, grid, kernel);
    const Positions q = embeddedTestGridPositions(grid, false, 23);
    Positions moved = q;
    for (int i = 0; i < grid.numNodes(); ++i) moved.segment<3>(3 * i) += Vec3(0.31, -0.72, 1.13);
    const double E = term->energy(q, 0.0);
    ASSERT_GT(std::abs(E), 0.0);
    EXPECT_NEAR(term->energy(moved, 0.0), E, 1e-11 * std::abs(E));
    EXPECT_NEAR(term->EnergyTerm::energy(moved, 0.0), E, 1e-11 * std::abs(E));
    VecX g = VecX::Zero(q.size()), g_stencils = VecX::Zero(q.size());
    term->addGradient(q, 0.0, 1.0, g);
    term->EnergyTerm::addGradient(q, 0.0, 1.0, g_stencils);
    Vec3 sum = Vec3::Zero(), sum_stencils = Vec3::Zero();
    for (int i = 0; i < grid.numNodes(); ++i) {
      sum += g.segment<3>(3 * i);
      sum_stencils += g_stencils.segment<3>(3 * i);
    }
    ASSERT_GT(g.norm(), 0.0);
    EXPECT_LE(sum.norm(), 1e-12 * g.norm());
    EXPECT_LE(sum_stencils.norm(), 1e-12 * g.norm());
    // Each stencil's weights: one per vertex, summing to 1.
    for (int s = 0; s < term->numStencils(); ++s) {
      std::vector<double> total(term->inner().nodesPerStencil(), 0.0);
      for (const EmbeddedTerm::Entry& e : term->weightEntries(s)) total[e.vertex] += e.weight;
      for (double t : total) EXPECT_NEAR(t, 1.0, 1e-14) << "stencil " << s;
    }
  }
}

// Gauss-Seidel node blocks: addNodeBlock's gradient row and 3x3 diagonal block are the
// stencil's gradient segment and Hessian diagonal block, for every block node (untouched ones
// give zero).
TEST(EmbeddedTerm, NodeBlocksMatchTheStencilTerms) {
  const BackgroundGrid grid = embeddedTestGrid();
  const Problem problem = embeddedTestProblem(MaterialModel::kFixedCorotated, embeddedTestBoxRecipe());
  for (GridKernel kernel : kEmbeddedTestKernels) {
    SCOPED_TRACE(gridKernelName(kernel));
    const auto term = embeddedTestTerm(problem, grid, kernel);
    const Positions q = embeddedTestGridPositions(grid, false, 29);
    for (int s : {0, 13, 39}) {
      VecX g;
      Eigen::MatrixXd H;
      term->stencilTerms(s, q, 0.0, nullptr, &g, &H, HessianKind::kProjected);
      ASSERT_GT(H.norm(), 0.0);
      int touched = 0;
      for (int local = 0; local < term->nodesPerStencil(); ++local) {
        Vec3 g_node = Vec3::Zero();
        Mat3 block = Mat3::Zero();
        term->addNodeBlock(s, local, q, 0.0, HessianKind::kProjected, g_node, block);
        EXPECT_LE((g_node - g.segment<3>(3 * local)).norm(), 1e-13 * g.norm()) << "stencil " << s << " node " << local;
        EXPECT_LE((block - H.block<3, 3>(3 * local, 3 * local)).norm(), 1e-13 * H.norm())
            << "stencil " << s << " node " << local;
        if (block.norm() > 0.0) ++touched;
      }
      EXPECT_GT(touched, 0);
    }
  }
}

// usedNodes: per stencil, exactly the block nodes some vertex weights (the distinct locals of
// weightEntries), ascending; every other block node's gradient row and Hessian rows are zero
// (so the Hessian pattern and the Gauss-Seidel visits may leave it out), and
// usedNodeAdjacency lists a node's (stencil, local) pairs only where the node is used, in the
// order of nodeAdjacency. The inner mesh term uses all its nodes (the default).
TEST(EmbeddedTerm, UsedNodesAreTheTouchedBlockNodes) {
  const BackgroundGrid grid = embeddedTestGrid();
  const Problem problem = embeddedTestProblem(MaterialModel::kFixedCorotated, embeddedTestBoxRecipe());
  for (GridKernel kernel : kEmbeddedTestKernels) {
    SCOPED_TRACE(gridKernelName(kernel));
    const auto term = embeddedTestTerm(problem, grid, kernel);
    const Positions q = embeddedTestGridPositions(grid, false, 31);
    const int k = term->nodesPerStencil();
    std::vector<int> used(static_cast<size_t>(k));
    std::vector<std::vector<char>> is_used(static_cast<size_t>(term->numStencils()), std::vector<char>(k, 0));
    int fewest = k, most = 0;
    for (int s = 0; s < term->numStencils(); ++s) {
      std::vector<int> touched;
      for (const EmbeddedTerm::Entry& e : term->weightEntries(s)) touched.push_back(e.local);
      std::sort(touched.begin(), touched.end());
      touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
      const int m = term->usedNodes(s, used.data());
      EXPECT_EQ(std::vector<int>(used.begin(), used.begin() + m), touched) << "stencil " << s;
      fewest = std::min(fewest, m);
      most = std::max(most, m);
      for (int r = 0; r < m; ++r) is_used[s][used[r]] = 1;
      VecX g;
      Eigen::MatrixXd H;
      term->stencilTerms(s, q, 0.0, nullptr, &g, &H, HessianKind::kTrue);
      ASSERT_GT(H.norm(), 0.0);
      for (int local = 0; local < k; ++local) {
        if (is_used[s][local]) continue;
        EXPECT_EQ(g.segment<3>(3 * local).norm(), 0.0) << "stencil " << s << " node " << local;
        EXPECT_EQ(H.middleRows(3 * local, 3).norm(), 0.0) << "stencil " << s << " node " << local;
      }
    }
    std::printf("%s: %d to %d used nodes of %d a stencil\n", gridKernelName(kernel).c_str(), fewest, most, k);
    EXPECT_LT(fewest, k);

    const NodeAdjacency every =
        nodeAdjacency(grid.numNodes(), {term->numStencils(), k, [&term](int s) { return term->stencilNodes(s); }});
    const NodeAdjacency kept = usedNodeAdjacency(grid.numNodes(), *term);
    ASSERT_EQ(kept.numNodes(), grid.numNodes());
    for (int i = 0; i < grid.numNodes(); ++i) {
      std::vector<std::pair<int, int>> expected, got;
      for (int p = every.start[i]; p < every.start[i + 1]; ++p)
        if (is_used[every.stencil[p]][every.local[p]]) expected.push_back({every.stencil[p], every.local[p]});
      for (int p = kept.start[i]; p < kept.start[i + 1]; ++p) got.push_back({kept.stencil[p], kept.local[p]});
      EXPECT_EQ(got, expected) << "grid node " << i;
    }
  }
  const EnergyTerm& mesh_term = *problem.terms()[0];
  std::vector<int> used(static_cast<size_t>(mesh_term.nodesPerStencil()));
  EXPECT_EQ(mesh_term.usedNodes(7, used.data()), mesh_term.nodesPerStencil());
  EXPECT_EQ(used, (std::vector<int>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace pbdlab
