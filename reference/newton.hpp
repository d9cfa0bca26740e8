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
#include <Eigen/CholmodSupport>
#include <memory>

#include "core/solver.hpp"
#include "reference/hessian_assembly.hpp"

namespace pbdlab {

struct NewtonOptions {
  bool line_search = true;
  int max_line_search_steps = 30;
  double armijo = 1e-4;
  // "auto": true Hessian, falling back to projected then shifted; "projected": projected
  // from the start (then shifted if needed); "true": true Hessian only (shift if needed).
  enum class Hessian { kAuto, kProjected, kTrue } hessian = Hessian::kAuto;
};

// "CHOLMOD x.y.z" and the BLAS library libblas.so.3 resolves to (reference BLAS is ~8x slower).
std::string cholmodVersion();
std::string blasLibrary();

class NewtonSolver : public Solver {
 public:
  explicit NewtonSolver(NewtonOptions options = {}) : options_(options) {}
  std::string name() const override { return "newton"; }
  // hessian: 0 true, 1 projected, 2 projected + shift; factor/assembly seconds of the iteration.
  std::vector<std::string> logColumns() const override {
    return {"line_search_steps", "step_length", "hessian", "shift", "assembly_seconds", "factor_seconds"};
  }
  void setup(const Problem& problem) override;
  void advance(const StepObjective& objective, State& state, StepMonitor& monitor) override;

  const NewtonOptions& options() const { return options_; }
  // How many times the Hessian pattern was built and CHOLMOD's symbolic analysis run: once
  // per problem, and again only at a step whose contacts changed the stencils.
  int symbolicAnalyses() const { return symbolic_analyses_; }

 private:
  // CHOLMOD factorizations of the assembled Hessian, as is or with a shifted diagonal.
  // Builds the Hessian pattern and CHOLMOD's symbolic analysis unless the last ones fit.
  void preparePattern(const StepObjective& objective);
  bool factorUnshifted();                       // true when the Hessian is positive definite
  double factorShifted(double first_shift);    // the shift that made it so (inf: none did)

  NewtonOptions options_;
  const Problem* problem_ = nullptr;
  std::unique_ptr<FreeDofHessian> hessian_;
  int symbolic_analyses_ = 0;
  Eigen::CholmodSupernodalLLT<SparseMatrix, Eigen::Lower> cholesky_;
  SparseMatrix shifted_;
};

}  // namespace pbdlab
