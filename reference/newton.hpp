#pragma once
// The Newton/CHOLMOD reference: minimizes the step objective of the yardstick (quasistatic
// potential or backward Euler incremental potential) over the free DOFs.
//
// Per iteration: assemble the gradient and the Hessian (sparse, lower triangle, pattern
// fixed per topology) and factor it with CHOLMOD's supernodal Cholesky, reusing the symbolic
// analysis. The Hessian is the true one first — only it gives quadratic convergence near a
// solution; projected Newton alone converges linearly there. When CHOLMOD reports it not
// positive definite, or its step is not a descent direction, the per-element SPD-projected
// Hessian (dP/dF eigenvalues clamped at zero, so V B^T dP/dF B >= 0) is used, then a growing
// diagonal shift. A backtracking (Armijo) line search on the energy follows; it can be turned
// off, as in the papers' budgeted Newton comparisons (PBNG's tables run Newton without one).
//
// The budgeted baselines of the PBNG paper (§11) replace CHOLMOD by another linear solver
// (reference/linear_solvers.hpp): capped CG, linear Gauss-Seidel with SOR, BiCGSTAB, or an
// exact sparse LU of the true Hessian. These use the Hessian they are given (projected or
// true) with no fallback and no shift, and take the direction as the solver returns it, even
// when it is not a descent direction: with the line search on, such a direction is judged by
// the residual norm (the energy's Armijo test needs a descent direction) and a failed search
// stops the step as `stalled`; without it the full step is taken.
#include <Eigen/CholmodSupport>
#include <memory>

#include "core/solver/solver.hpp"
#include "reference/hessian_assembly.hpp"
#include "reference/linear_solvers.hpp"

namespace pbdlab {

struct NewtonOptions {
  bool line_search = true;
  int max_line_search_steps = 30;
  double armijo = 1e-4;
  // "auto": true Hessian, falling back to projected then shifted; "projected": projected
  // from the start (then shifted if needed); "true": true Hessian only (shift if needed).
  // With a linear solver other than CHOLMOD there is no fallback: kAuto stands for that
  // solver's default, defaultHessian() (the scene refuses "auto" there).
  enum class Hessian { kAuto, kProjected, kTrue } hessian = Hessian::kAuto;

  LinearSolverKind linear_solver = LinearSolverKind::kCholmod;
  // CG/BiCGSTAB: iterations, Gauss-Seidel: sweeps, per Newton iteration (iterative only).
  int linear_iterations = 1000;
  // Relative residual |H d + g| / |g| ending an iterative solve; 0: always linear_iterations.
  double linear_tolerance = 1e-10;
  double sor_omega = 1.0;           // Gauss-Seidel's relaxation, in (0, 2); the paper's is 1.3
  // The Hessian's pattern: the pairs of each stencil's used nodes (EnergyTerm::usedNodes), or
  // every pair of its nodes (kWholeStencils, the pattern before 2026-12-02: the same matrix
  // with the embedded terms' structural zeros stored; to compare, not a scene option).
  HessianPattern pattern = HessianPattern::kUsedNodes;
};

// The Hessian a linear solver uses by default: projected for CG and Gauss-Seidel (which need a
// positive definite, or positive-diagonal, matrix), true for BiCGSTAB and LU (the paper's
// exact-Hessian runs); kAuto (with fallbacks) for CHOLMOD.
NewtonOptions::Hessian defaultHessian(LinearSolverKind kind);

// "CHOLMOD x.y.z" and the BLAS library libblas.so.3 resolves to (reference BLAS is ~8x slower).
std::string cholmodVersion();
std::string blasLibrary();

class NewtonSolver : public Solver {
 public:
  explicit NewtonSolver(NewtonOptions options = {});
  std::string name() const override { return "newton"; }
  // hessian: 0 true, 1 projected, 2 projected + shift; assembly seconds (with the full matrix
  // of the iterative solvers and LU) and factor seconds (CHOLMOD's factorizations and solves,
  // LU's, or the iterative solve) of the iteration; linear_iterations: CG/BiCGSTAB iterations
  // or Gauss-Seidel sweeps (1 for a direct solve); linear_residual: |H d + g| / |g| of the
  // direction d with the assembled (unshifted) Hessian H.
  std::vector<std::string> logColumns() const override {
    return {"line_search_steps", "step_length",      "hessian",          "shift",
            "assembly_seconds",  "factor_seconds",   "linear_iterations", "linear_residual"};
  }
  void setup(const Problem& problem) override;
  void advance(const StepObjective& objective, State& state, StepMonitor& monitor) override;

  const NewtonOptions& options() const { return options_; }
  // How many times the Hessian pattern was built and CHOLMOD's symbolic analysis (or the
  // linear solver's pattern analysis) run: once per problem, and again only at a step whose
  // contacts changed the stencils.
  int symbolicAnalyses() const { return symbolic_analyses_; }

 private:
  // CHOLMOD factorizations of the assembled Hessian, as is or with a shifted diagonal.
  // Builds the Hessian pattern and CHOLMOD's symbolic analysis unless the last ones fit.
  void preparePattern(const StepObjective& objective);
  bool factorUnshifted();                       // true when the Hessian is positive definite
  double factorShifted(double first_shift);    // the shift that made it so (inf: none did)

  // The Newton direction d (H d = -g over the free DOFs) at x, and how it was found.
  struct Direction {
    VecX d;
    int hessian_used = 0;  // the log's "hessian" column
    double shift = 0.0;
    double assembly_seconds = 0.0, factor_seconds = 0.0;
    int linear_iterations = 1;
    double linear_residual = 0.0;
    std::string failure;  // non-empty: no finite direction, and why
  };
  Direction cholmodDirection(const StepObjective& objective, const Positions& x, const VecX& g_free);
  Direction linearSolverDirection(const StepObjective& objective, const Positions& x, const VecX& g_free);

  NewtonOptions options_;
  const Problem* problem_ = nullptr;
  std::unique_ptr<FreeDofHessian> hessian_;
  int symbolic_analyses_ = 0;
  Eigen::CholmodSupernodalLLT<SparseMatrix, Eigen::Lower> cholesky_;
  SparseMatrix shifted_;
  std::unique_ptr<SparseLinearSolver> linear_solver_;  // every linear solver but CHOLMOD
};

}  // namespace pbdlab
