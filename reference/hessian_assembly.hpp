#pragma once
// Assembly of the step objective's Hessian over the free DOFs into a sparse matrix whose
// pattern (lower triangle, as CHOLMOD wants it) is built once per topology from the stencils
// of every energy term of the Problem (elements, weak constraints, ...). Each stencil's
// lower-triangle entries have a precomputed slot in the value array (HessianSlots,
// core/terms/hessian_slots.hpp), and stencils of one color share no node, so each term
// scatters in parallel without races or allocation.
//
// The pattern holds the pairs of each stencil's used nodes (EnergyTerm::usedNodes): every
// pair for the mesh terms, the touched block nodes for an embedded term of the grid-based
// scheme, whose fixed 3x3x3 (4x4x4) blocks are mostly zero (docs/grid.md, "Known issues" 3).
// A term that leaves nodes out gets HessianSlots' node lists (its used nodes with a free DOF),
// the others the whole-stencil layout.
#include <Eigen/SparseCore>
#include <vector>

#include "core/solver/yardstick.hpp"
#include "core/terms/elastic_energy.hpp"

namespace pbdlab {

using SparseMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

// Which node pairs of a stencil the pattern holds: those of its used nodes (the default), or
// every pair of its nodes (whole stencils: the pattern before 2026-12-02, with an embedded
// term's structural zeros; kept to compare, not a scene option).
enum class HessianPattern { kUsedNodes, kWholeStencils };

class FreeDofHessian {
 public:
  // The pattern of `objective`'s terms (the Problem's and the step's contacts).
  explicit FreeDofHessian(const StepObjective& objective, HessianPattern pattern = HessianPattern::kUsedNodes);
  // Whether `objective`'s terms have the stencils this pattern was built for (else build a
  // new one: contacts changed).
  bool matches(const StepObjective& objective) const;

  int numFree() const { return static_cast<int>(free_of_dof_.size()) - num_fixed_; }
  // Index of `dof` among the free DOFs, or -1 if it is prescribed.
  int freeIndex(int dof) const { return free_of_dof_[dof]; }
  // Lower triangle with the pattern of every step (values zero).
  const SparseMatrix& pattern() const { return matrix_; }

  // Hessian of objective.energy at x over the free DOFs (lower triangle):
  // backward Euler M + dt^2 K, quasistatic K, with every term's blocks of the given kind.
  const SparseMatrix& assemble(const StepObjective& objective, const Positions& x, HessianKind kind);
  const SparseMatrix& matrix() const { return matrix_; }

  // The slots of the objective's term k (in terms() order).
  const HessianSlots& slots(size_t k) const { return slots_[k]; }

  // Free-DOF part of a full-length vector, and back.
  VecX restrictToFree(const VecX& full) const;
  void addFromFree(const VecX& free_values, VecX& full) const;

 private:
  std::vector<int> free_of_dof_;
  int num_fixed_ = 0;
  std::vector<int> free_dofs_;
  SparseMatrix matrix_;
  std::vector<int> diagonal_slot_;   // per free DOF
  std::vector<HessianSlots> slots_;  // per energy term of the objective, in terms() order

  // The stencil nodes of the terms beyond the Problem's own (the step's contacts).
  std::vector<std::vector<int>> dynamic_stencils_;
};

}  // namespace pbdlab
