// The linear solvers of the budgeted Newton baselines (reference/linear_solvers.hpp): the full
// matrix from the lower triangle, Gauss-Seidel with SOR, CG, BiCGSTAB and LU on small
// symmetric systems, against a dense solve; caps respected and reported.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <Eigen/Eigenvalues>
#include <cstdio>
#include <vector>

#include "reference/linear_solvers.hpp"

namespace pbdlab {
namespace {

// The lower triangle (column-major, compressed, the layout FreeDofHessian assembles) of the
// 5-point Laplacian of a side x side grid plus shift * I: positive definite for shift > 0,
// indefinite for shifts between minus its largest and smallest eigenvalues.
SparseMatrix gridLaplacianLower(int side, double shift) {
  const int n = side * side;
  std::vector<Eigen::Triplet<double, int>> entries;
  for (int i = 0; i < side; ++i)
    for (int j = 0; j < side; ++j) {
      const int k = i * side + j;
      entries.emplace_back(k, k, 4.0 + shift);
      if (i > 0) entries.emplace_back(k, k - side, -1.0);
      if (j > 0) entries.emplace_back(k, k - 1, -1.0);
    }
  SparseMatrix lower(n, n);
  lower.setFromTriplets(entries.begin(), entries.end());
  lower.makeCompressed();
  return lower;
}

Eigen::MatrixXd denseSymmetric(const SparseMatrix& lower) {
  Eigen::MatrixXd full = Eigen::MatrixXd(lower).selfadjointView<Eigen::Lower>();
  return full;
}

VecX rightHandSide(int n) {
  VecX b(n);
  for (int i = 0; i < n; ++i) b[i] = std::sin(0.7 * i) + 0.3;
  return b;
}

double relativeResidual(const Eigen::MatrixXd& A, const VecX& x, const VecX& b) { return (A * x - b).norm() / b.norm(); }

TEST(LinearSolvers, SymmetricExpansionIsTheFullMatrixAndFollowsNewValues) {
  SparseMatrix lower = gridLaplacianLower(5, 0.5);
  SymmetricExpansion expansion;
  expansion.analyzePattern(lower);
  EXPECT_EQ(expansion.matrix().nonZeros(), 2 * lower.nonZeros() - lower.rows());
  EXPECT_EQ((Eigen::MatrixXd(expansion.update(lower)) - denseSymmetric(lower)).norm(), 0.0);
  // New values in the same pattern (an unsymmetric-looking fill of the lower triangle).
  for (int k = 0; k < lower.nonZeros(); ++k) lower.valuePtr()[k] = 1.0 + 0.01 * k;
  const RowMajorSparseMatrix& full = expansion.update(lower);
  EXPECT_EQ((Eigen::MatrixXd(full) - denseSymmetric(lower)).norm(), 0.0);
  for (int r = 0; r < full.rows(); ++r)  // rows sorted, as Gauss-Seidel and Eigen expect
    for (int k = full.outerIndexPtr()[r] + 1; k < full.outerIndexPtr()[r + 1]; ++k)
      EXPECT_LT(full.innerIndexPtr()[k - 1], full.innerIndexPtr()[k]);
}

TEST(LinearSolvers, GaussSeidelSorConvergesOnAPositiveDefiniteMatrix) {
  const SparseMatrix lower = gridLaplacianLower(8, 0.1);
  const Eigen::MatrixXd A = denseSymmetric(lower);
  const VecX b = rightHandSide(lower.rows());
  const VecX exact = A.ldlt().solve(b);
  SymmetricExpansion expansion;
  expansion.analyzePattern(lower);
  const RowMajorSparseMatrix& full = expansion.update(lower);
  std::vector<int> sweeps;
  for (double omega : {1.0, 1.3, 1.7}) {
    SCOPED_TRACE("omega " + std::to_string(omega));
    VecX x = VecX::Zero(b.size()), residual;
    const GaussSeidelResult result = gaussSeidelSor(full, b, omega, 10000, 1e-10, x, residual);
    std::printf("[ measured ] Gauss-Seidel, omega %.1f: %d sweeps to %.2e\n", omega, result.sweeps,
                result.relative_residual);
    EXPECT_LE(result.relative_residual, 1e-10);
    EXPECT_NEAR(result.relative_residual, relativeResidual(A, x, b), 1e-14);
    EXPECT_LT((x - exact).norm(), 1e-8 * exact.norm());
    sweeps.push_back(result.sweeps);
  }
  EXPECT_LT(sweeps[1], sweeps[0]);  // over-relaxation helps on this Laplacian (1.7 is past its best)
}

// One sweep by hand: x_i <- x_i + omega ((b_i - sum_{j != i} a_ij x_j) / a_ii - x_i), rows in
// order, new values as soon as they exist.
TEST(LinearSolvers, GaussSeidelSweepIsTheSorFormula) {
  const SparseMatrix lower = gridLaplacianLower(3, 0.3);
  const Eigen::MatrixXd A = denseSymmetric(lower);
  const VecX b = rightHandSide(9);
  const double omega = 1.3;
  VecX expected = VecX::Zero(9);
  for (int sweep = 0; sweep < 2; ++sweep)
    for (int i = 0; i < 9; ++i) {
      double sigma = 0.0;
      for (int j = 0; j < 9; ++j)
        if (j != i) sigma += A(i, j) * expected[j];
      expected[i] += omega * ((b[i] - sigma) / A(i, i) - expected[i]);
    }
  SymmetricExpansion expansion;
  expansion.analyzePattern(lower);
  VecX x = VecX::Zero(9), residual;
  const GaussSeidelResult result = gaussSeidelSor(expansion.update(lower), b, omega, 2, 1e-300, x, residual);
  EXPECT_EQ(result.sweeps, 2);
  EXPECT_LT((x - expected).norm(), 1e-15 * expected.norm());
  // Tolerance 0: the same sweeps (a fixed budget, no residual between them) and the residual
  // of the last iterate.
  VecX x_budget = VecX::Zero(9);
  const GaussSeidelResult budget = gaussSeidelSor(expansion.update(lower), b, omega, 2, 0.0, x_budget, residual);
  EXPECT_EQ(budget.sweeps, 2);
  EXPECT_EQ(x_budget, x);
  EXPECT_NEAR(budget.relative_residual, (b - A * x).norm() / b.norm(), 1e-14);
}

struct SolverCase {
  LinearSolverKind kind;
  double omega;
};

TEST(LinearSolvers, EachIterativeSolverSolvesAPositiveDefiniteSystemToItsTolerance) {
  const SparseMatrix lower = gridLaplacianLower(8, 0.1);
  const Eigen::MatrixXd A = denseSymmetric(lower);
  const VecX b = rightHandSide(lower.rows());
  const VecX exact = A.ldlt().solve(b);
  for (const SolverCase& c : {SolverCase{LinearSolverKind::kConjugateGradient, 1.0},
                              SolverCase{LinearSolverKind::kBiCgStab, 1.0},
                              SolverCase{LinearSolverKind::kGaussSeidel, 1.3}}) {
    SCOPED_TRACE(linearSolverName(c.kind));
    SparseLinearSolver solver({c.kind, 5000, 1e-11, c.omega});
    solver.analyzePattern(lower);
    solver.setMatrix(lower);
    VecX x = VecX::Constant(b.size(), 123.0);  // ignored: every solve starts from zero
    const LinearSolveResult result = solver.solve(b, x);
    std::printf("[ measured ] %s: %d iterations to %.2e\n", linearSolverName(c.kind).c_str(), result.iterations,
                result.relative_residual);
    EXPECT_TRUE(result.success);
    EXPECT_GT(result.iterations, 0);
    EXPECT_LT(result.iterations, 5000);
    EXPECT_LE(result.relative_residual, 1e-11);
    EXPECT_LE(relativeResidual(A, x, b), 1e-10);  // the recurrence's residual is the true one
    EXPECT_LT((x - exact).norm(), 1e-8 * exact.norm());
  }
}

// A cap below what the tolerance needs: exactly `cap` iterations, reported with the residual
// actually reached, and the same as a solve capped there from zero (no hidden warm start).
TEST(LinearSolvers, TheIterationCapIsRespectedAndReported) {
  const SparseMatrix lower = gridLaplacianLower(8, 0.1);
  const Eigen::MatrixXd A = denseSymmetric(lower);
  const VecX b = rightHandSide(lower.rows());
  for (const SolverCase& c : {SolverCase{LinearSolverKind::kConjugateGradient, 1.0},
                              SolverCase{LinearSolverKind::kBiCgStab, 1.0},
                              SolverCase{LinearSolverKind::kGaussSeidel, 1.3}}) {
    SCOPED_TRACE(linearSolverName(c.kind));
    for (int cap : {1, 3, 7}) {
      SCOPED_TRACE("cap " + std::to_string(cap));
      SparseLinearSolver solver({c.kind, cap, 1e-12, c.omega});
      solver.analyzePattern(lower);
      solver.setMatrix(lower);
      VecX x, again;
      const LinearSolveResult result = solver.solve(b, x);
      EXPECT_EQ(result.iterations, cap);
      EXPECT_GT(result.relative_residual, 1e-3);
      EXPECT_NEAR(result.relative_residual, relativeResidual(A, x, b), 1e-12);
      solver.solve(b, again);
      EXPECT_EQ((x - again).norm(), 0.0);
    }
  }
}

TEST(LinearSolvers, LuSolvesAnIndefiniteSymmetricSystem) {
  const SparseMatrix lower = gridLaplacianLower(8, -1.3);
  const Eigen::MatrixXd A = denseSymmetric(lower);
  const Eigen::VectorXd eigenvalues = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(A).eigenvalues();
  ASSERT_LT(eigenvalues.minCoeff(), -0.1);  // indefinite
  ASSERT_GT(eigenvalues.maxCoeff(), 0.1);
  ASSERT_GT(eigenvalues.cwiseAbs().minCoeff(), 1e-3);  // and far from singular
  const VecX b = rightHandSide(lower.rows());
  const VecX exact = A.lu().solve(b);
  SparseLinearSolver solver({LinearSolverKind::kLu, 1, 1e-10, 1.0});
  solver.analyzePattern(lower);
  // Twice: the second factorization reuses the first one's pattern analysis.
  for (int round = 0; round < 2; ++round) {
    solver.setMatrix(lower);
    VecX x;
    const LinearSolveResult result = solver.solve(b, x);
    EXPECT_TRUE(result.success);
    EXPECT_EQ(result.iterations, 1);
    EXPECT_LT(result.relative_residual, 1e-12);
    EXPECT_NEAR(result.relative_residual, relativeResidual(A, x, b), 1e-14);
    EXPECT_LT((x - exact).norm(), 1e-10 * exact.norm());
  }
}

TEST(LinearSolvers, LuReportsASingularMatrixAsANonFiniteSolution) {
  SparseMatrix lower = gridLaplacianLower(3, 0.0);
  // Zero the last row and column: singular.
  for (int j = 0; j < lower.outerSize(); ++j)
    for (SparseMatrix::InnerIterator it(lower, j); it; ++it)
      if (it.row() == 8 || it.col() == 8) it.valueRef() = 0.0;
  SparseLinearSolver solver({LinearSolverKind::kLu, 1, 1e-10, 1.0});
  solver.analyzePattern(lower);
  solver.setMatrix(lower);
  VecX x;
  const LinearSolveResult result = solver.solve(rightHandSide(9), x);
  EXPECT_FALSE(result.success);
  EXPECT_FALSE(x.allFinite());
}

}  // namespace
}  // namespace pbdlab
