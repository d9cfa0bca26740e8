#pragma once
// The linear solvers of the budgeted Newton baselines of the PBNG paper (Chen et al., TOG
// 2024, §11): Newton whose step H d = -g is solved by capped conjugate gradients (Table 2,
// "2 (7 CGs)"), by linear Gauss-Seidel with SOR (§11.1.3, Fig. 10, Table 4), or, with the
// exact (unprojected, possibly indefinite) Hessian, by BiCGSTAB, Gauss-Seidel or an exact
// direct solve (§11.1.4, Fig. 11; the paper's QR is stood in for by a sparse LU here).
// CHOLMOD, the reference's own solver, stays in reference/newton.cpp.
//
// Every solver takes the lower triangle that FreeDofHessian assembles. The iterative ones
// and LU work on the full symmetric matrix, whose pattern is built once per Hessian pattern
// (analyzePattern) and whose values are copied from the lower triangle per assembly
// (update): no search, no allocation. Iterative solves start from x = 0 (the paper's
// budgeted Newton does so) and stop at `max_iterations` or at the relative residual
// |A x - b| / |b| <= `tolerance`, whichever comes first.
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseLU>
#include <string>
#include <vector>

#include "reference/hessian_assembly.hpp"

namespace pbdlab {

using RowMajorSparseMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;

// The full symmetric matrix (row-major, sorted rows) of a lower triangle with a fixed pattern.
class SymmetricExpansion {
 public:
  // Builds the full pattern of `lower` (column-major, lower triangle, compressed) and the
  // lower-triangle slot each full entry copies.
  void analyzePattern(const SparseMatrix& lower);
  // The full matrix with `lower`'s current values (`lower` must have the analyzed pattern).
  const RowMajorSparseMatrix& update(const SparseMatrix& lower);
  const RowMajorSparseMatrix& matrix() const { return full_; }

 private:
  RowMajorSparseMatrix full_;
  std::vector<int> source_slot_;  // per full entry, its slot in the lower triangle's values
};

// Forward Gauss-Seidel sweeps with successive over-relaxation on a full row-major matrix A,
// rows in their natural order: per row i,
//   x_i <- x_i + omega ((b_i - sum_{j<i} a_ij x_j(new) - sum_{j>i} a_ij x_j(old)) / a_ii - x_i).
// Stops after `max_sweeps` sweeps or once |A x - b| / |b| <= tolerance (checked after every
// sweep, one matrix-vector product). Needs a non-zero diagonal; converges for symmetric
// positive definite A and 0 < omega < 2. `residual` is workspace (resized once).
struct GaussSeidelResult {
  int sweeps = 0;
  double relative_residual = 0.0;
};
GaussSeidelResult gaussSeidelSor(const RowMajorSparseMatrix& A, const VecX& b, double omega, int max_sweeps,
                                 double tolerance, VecX& x, VecX& residual);

// |A x - b| / |b| for a symmetric A given by its lower triangle (0 when b = 0).
double relativeResidualOfLower(const SparseMatrix& lower, const VecX& x, const VecX& b);

enum class LinearSolverKind { kCholmod, kConjugateGradient, kBiCgStab, kGaussSeidel, kLu };
// "cholmod", "cg", "bicgstab", "gauss_seidel", "lu" (the option values of `newton`).
std::string linearSolverName(LinearSolverKind kind);

struct LinearSolveResult {
  int iterations = 0;              // CG/BiCGSTAB iterations, Gauss-Seidel sweeps, 1 for LU
  double relative_residual = 0.0;  // |A x - b| / |b| reached
  bool success = true;             // false: LU found the matrix singular, BiCGSTAB broke down
};

// Solves A x = b for the symmetric A given by its lower triangle with every kind but
// kCholmod: x starts from zero (iterative kinds) and is returned as the solver leaves it.
class SparseLinearSolver {
 public:
  struct Options {
    LinearSolverKind kind = LinearSolverKind::kConjugateGradient;
    int max_iterations = 1000;  // CG/BiCGSTAB iterations, Gauss-Seidel sweeps
    double tolerance = 1e-10;   // relative residual at which an iterative solve stops
    double sor_omega = 1.0;     // Gauss-Seidel only
  };
  explicit SparseLinearSolver(Options options) : options_(options) {}

  // Once per Hessian pattern.
  void analyzePattern(const SparseMatrix& lower);
  // Per assembly: the full matrix's values (and LU's factorization). Call before solve().
  void setMatrix(const SparseMatrix& lower);
  LinearSolveResult solve(const VecX& b, VecX& x);

  const Options& options() const { return options_; }

 private:
  Options options_;
  SymmetricExpansion expansion_;
  const SparseMatrix* lower_ = nullptr;
  VecX residual_;  // Gauss-Seidel's workspace
  // Jacobi-preconditioned (Eigen's default) CG and BiCGSTAB on the full matrix.
  Eigen::ConjugateGradient<RowMajorSparseMatrix, Eigen::Lower | Eigen::Upper> cg_;
  Eigen::BiCGSTAB<RowMajorSparseMatrix> bicgstab_;
  SparseMatrix lu_matrix_;  // the full matrix, column-major as SparseLU wants it
  Eigen::SparseLU<SparseMatrix, Eigen::COLAMDOrdering<int>> lu_;
  bool lu_factored_ = false;
};

}  // namespace pbdlab
