#include "reference/linear_solvers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace pbdlab {

void SymmetricExpansion::analyzePattern(const SparseMatrix& lower) {
  // Lower entry (i, j), i >= j, is full entry (i, j) and, off the diagonal, (j, i). Visiting
  // the lower columns j in order, row r receives its columns c < r at the visits c < r (one
  // each) and its columns c >= r at the visit j = r (in order): rows come out sorted.
  const int n = static_cast<int>(lower.cols());
  const int* outer = lower.outerIndexPtr();
  const int* inner = lower.innerIndexPtr();
  std::vector<int> full_outer(n + 1, 0);
  for (int j = 0; j < n; ++j)
    for (int k = outer[j]; k < outer[j + 1]; ++k) {
      const int i = inner[k];
      ++full_outer[i + 1];
      if (i != j) ++full_outer[j + 1];
    }
  for (int r = 0; r < n; ++r) full_outer[r + 1] += full_outer[r];
  const int nonzeros = full_outer[n];
  std::vector<int> full_inner(nonzeros), next(full_outer.begin(), full_outer.end() - 1);
  source_slot_.assign(nonzeros, 0);
  for (int j = 0; j < n; ++j)
    for (int k = outer[j]; k < outer[j + 1]; ++k) {
      const int i = inner[k];
      full_inner[next[i]] = j;
      source_slot_[next[i]++] = k;
      if (i != j) {
        full_inner[next[j]] = i;
        source_slot_[next[j]++] = k;
      }
    }
  const std::vector<double> zeros(nonzeros, 0.0);
  full_ = Eigen::Map<const RowMajorSparseMatrix>(n, n, nonzeros, full_outer.data(), full_inner.data(), zeros.data());
}

const RowMajorSparseMatrix& SymmetricExpansion::update(const SparseMatrix& lower) {
  const double* from = lower.valuePtr();
  double* to = full_.valuePtr();
  const int nonzeros = static_cast<int>(source_slot_.size());
#pragma omp parallel for if (nonzeros >= 65536) schedule(static)
  for (int k = 0; k < nonzeros; ++k) to[k] = from[source_slot_[k]];
  return full_;
}

GaussSeidelResult gaussSeidelSor(const RowMajorSparseMatrix& A, const VecX& b, double omega, int max_sweeps,
                                 double tolerance, VecX& x, VecX& residual) {
  const int n = static_cast<int>(A.rows());
  const int* outer = A.outerIndexPtr();
  const int* inner = A.innerIndexPtr();
  const double* values = A.valuePtr();
  const double b_norm = b.norm();
  GaussSeidelResult result;
  if (b_norm == 0.0) {
    x.setZero();
    return result;
  }
  residual.resize(n);
  auto relativeResidual = [&]() {  // row by row: no temporary
    for (int i = 0; i < n; ++i) {
      double row = 0.0;
      for (int k = outer[i]; k < outer[i + 1]; ++k) row += values[k] * x[inner[k]];
      residual[i] = b[i] - row;
    }
    return residual.norm() / b_norm;
  };
  // tolerance 0: a fixed number of sweeps (the paper's budget), the residual evaluated once at
  // the end instead of after every sweep (a matrix-vector product that would double a sweep).
  const bool early_stop = tolerance > 0.0;
  result.relative_residual = early_stop ? relativeResidual() : NAN;
  while (result.sweeps < max_sweeps && !(result.relative_residual <= tolerance)) {
    for (int i = 0; i < n; ++i) {
      double off_diagonal = 0.0, diagonal = 0.0;
      for (int k = outer[i]; k < outer[i + 1]; ++k) {
        const int j = inner[k];
        if (j == i)
          diagonal = values[k];
        else
          off_diagonal += values[k] * x[j];  // x_j already updated for j < i
      }
      x[i] += omega * ((b[i] - off_diagonal) / diagonal - x[i]);
    }
    ++result.sweeps;
    if (early_stop) result.relative_residual = relativeResidual();
  }
  if (!early_stop) result.relative_residual = relativeResidual();
  return result;
}

double relativeResidualOfLower(const SparseMatrix& lower, const VecX& x, const VecX& b) {
  const double b_norm = b.norm();
  if (b_norm == 0.0) return 0.0;
  const VecX r = lower.selfadjointView<Eigen::Lower>() * x - b;
  return r.norm() / b_norm;
}

std::string linearSolverName(LinearSolverKind kind) {
  switch (kind) {
    case LinearSolverKind::kCholmod: return "cholmod";
    case LinearSolverKind::kConjugateGradient: return "cg";
    case LinearSolverKind::kBiCgStab: return "bicgstab";
    case LinearSolverKind::kGaussSeidel: return "gauss_seidel";
    case LinearSolverKind::kLu: return "lu";
  }
  return "unknown";
}

void SparseLinearSolver::analyzePattern(const SparseMatrix& lower) {
  if (options_.kind == LinearSolverKind::kCholmod)
    throw std::logic_error("SparseLinearSolver: CHOLMOD is NewtonSolver's own solver");
  expansion_.analyzePattern(lower);
  lower_ = nullptr;
  if (options_.kind == LinearSolverKind::kLu) {
    lu_matrix_ = expansion_.matrix();
    lu_.analyzePattern(lu_matrix_);
  }
}

void SparseLinearSolver::setMatrix(const SparseMatrix& lower) {
  lower_ = &lower;
  const RowMajorSparseMatrix& full = expansion_.update(lower);
  switch (options_.kind) {
    case LinearSolverKind::kConjugateGradient:
      cg_.setMaxIterations(options_.max_iterations);
      cg_.setTolerance(options_.tolerance);
      cg_.compute(full);
      break;
    case LinearSolverKind::kBiCgStab:
      bicgstab_.setMaxIterations(options_.max_iterations);
      bicgstab_.setTolerance(options_.tolerance);
      bicgstab_.compute(full);
      break;
    case LinearSolverKind::kLu:
      // A symmetric matrix's row-major arrays are its column-major ones: copy them as they are.
      std::copy(full.valuePtr(), full.valuePtr() + full.nonZeros(), lu_matrix_.valuePtr());
      lu_.factorize(lu_matrix_);
      lu_factored_ = lu_.info() == Eigen::Success;
      break;
    default: break;
  }
}

LinearSolveResult SparseLinearSolver::solve(const VecX& b, VecX& x) {
  if (!lower_) throw std::logic_error("SparseLinearSolver::solve before setMatrix");
  LinearSolveResult result;
  const RowMajorSparseMatrix& full = expansion_.matrix();
  switch (options_.kind) {
    case LinearSolverKind::kConjugateGradient:
      x = cg_.solve(b);  // from x = 0
      result.iterations = static_cast<int>(cg_.iterations());
      result.relative_residual = cg_.error();  // |b - A x| / |b| of CG's recurrence
      result.success = cg_.info() != Eigen::NumericalIssue;
      break;
    case LinearSolverKind::kBiCgStab:
      x = bicgstab_.solve(b);  // from x = 0
      result.iterations = static_cast<int>(bicgstab_.iterations());
      result.relative_residual = bicgstab_.error();
      result.success = bicgstab_.info() != Eigen::NumericalIssue;
      break;
    case LinearSolverKind::kGaussSeidel: {
      x = VecX::Zero(b.size());
      const GaussSeidelResult sweeps =
          gaussSeidelSor(full, b, options_.sor_omega, options_.max_iterations, options_.tolerance, x, residual_);
      result.iterations = sweeps.sweeps;
      result.relative_residual = sweeps.relative_residual;
      break;
    }
    case LinearSolverKind::kLu:
      result.iterations = 1;
      result.success = lu_factored_;
      if (lu_factored_) x = lu_.solve(b);
      else x = VecX::Constant(b.size(), std::numeric_limits<double>::quiet_NaN());
      result.relative_residual = relativeResidualOfLower(*lower_, x, b);
      break;
    case LinearSolverKind::kCholmod: break;
  }
  return result;
}

}  // namespace pbdlab
