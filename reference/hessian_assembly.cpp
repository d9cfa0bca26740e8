#include "reference/hessian_assembly.hpp"

#include <algorithm>

namespace pbdlab {

namespace {
// The stencil nodes of every term after the Problem's own.
std::vector<std::vector<int>> dynamicStencils(const StepObjective& objective) {
  std::vector<std::vector<int>> stencils;
  const auto& terms = objective.terms();
  for (size_t k = objective.problem().terms().size(); k < terms.size(); ++k) {
    const EnergyTerm& term = *terms[k];
    std::vector<int>& nodes = stencils.emplace_back();
    for (int s = 0; s < term.numStencils(); ++s)
      nodes.insert(nodes.end(), term.stencilNodes(s), term.stencilNodes(s) + term.nodesPerStencil());
  }
  return stencils;
}
}  // namespace

bool FreeDofHessian::matches(const StepObjective& objective) const {
  return slots_.size() == objective.terms().size() && dynamic_stencils_ == dynamicStencils(objective);
}

FreeDofHessian::FreeDofHessian(const StepObjective& objective) {
  const Problem& problem = objective.problem();
  const auto& terms = objective.terms();
  dynamic_stencils_ = dynamicStencils(objective);
  const int num_dofs = problem.numDofs();
  free_of_dof_.assign(num_dofs, -1);
  free_dofs_ = problem.freeDofs();
  for (size_t k = 0; k < free_dofs_.size(); ++k) free_of_dof_[free_dofs_[k]] = static_cast<int>(k);
  num_fixed_ = num_dofs - static_cast<int>(free_dofs_.size());
  const int n_free = static_cast<int>(free_dofs_.size());

  // Pattern: every (row >= col) pair of free DOFs that share a stencil of any term, plus the
  // diagonal.
  std::vector<Eigen::Triplet<double, int>> entries;
  for (int i = 0; i < n_free; ++i) entries.emplace_back(i, i, 0.0);
  auto forEachLowerPair = [&](const EnergyTerm& term, auto&& f) {
    const int dofs = 3 * term.nodesPerStencil();
    for (int s = 0; s < term.numStencils(); ++s) {
      const int* nodes = term.stencilNodes(s);
      for (int p = 0; p < dofs; ++p)
        for (int q = 0; q <= p; ++q) f(s, p, q, free_of_dof_[3 * nodes[p / 3] + p % 3], free_of_dof_[3 * nodes[q / 3] + q % 3]);
    }
  };
  for (const auto& term : terms)
    forEachLowerPair(*term, [&](int, int, int, int gp, int gq) {
      if (gp >= 0 && gq >= 0) entries.emplace_back(std::max(gp, gq), std::min(gp, gq), 0.0);
    });
  matrix_.resize(n_free, n_free);
  matrix_.setFromTriplets(entries.begin(), entries.end());
  matrix_.makeCompressed();

  auto slotOf = [&](int row, int col) {
    const int* begin = matrix_.innerIndexPtr() + matrix_.outerIndexPtr()[col];
    const int* end = matrix_.innerIndexPtr() + matrix_.outerIndexPtr()[col + 1];
    return static_cast<int>(std::lower_bound(begin, end, row) - matrix_.innerIndexPtr());
  };
  diagonal_slot_.resize(n_free);
  for (int i = 0; i < n_free; ++i) diagonal_slot_[i] = slotOf(i, i);
  for (const auto& term : terms) {
    HessianSlots slots;
    const int dofs = 3 * term->nodesPerStencil();
    slots.entries_per_stencil = dofs * (dofs + 1) / 2;
    slots.slot.resize(static_cast<size_t>(term->numStencils()) * slots.entries_per_stencil);
    forEachLowerPair(*term, [&](int s, int p, int q, int gp, int gq) {
      slots.slot[static_cast<size_t>(s) * slots.entries_per_stencil + lowerTriangleIndex(p, q)] =
          (gp >= 0 && gq >= 0) ? slotOf(std::max(gp, gq), std::min(gp, gq)) : -1;
    });
    slots_.push_back(std::move(slots));
  }
}

const SparseMatrix& FreeDofHessian::assemble(const StepObjective& objective, const Positions& x, HessianKind kind) {
  const double scale = objective.elasticScale();
  double* values = matrix_.valuePtr();
  std::fill(values, values + matrix_.nonZeros(), 0.0);
  if (objective.isDynamic()) {
    const VecX& mass = objective.problem().dofMasses();
    for (size_t k = 0; k < free_dofs_.size(); ++k) values[diagonal_slot_[k]] = mass[free_dofs_[k]];
  }
  const auto& terms = objective.terms();
  for (size_t k = 0; k < terms.size(); ++k)
    terms[k]->addHessian(x, objective.timeNext(), kind, scale, slots_[k], values);
  return matrix_;
}

VecX FreeDofHessian::restrictToFree(const VecX& full) const {
  VecX out(free_dofs_.size());
  for (size_t k = 0; k < free_dofs_.size(); ++k) out[k] = full[free_dofs_[k]];
  return out;
}

void FreeDofHessian::addFromFree(const VecX& free_values, VecX& full) const {
  for (size_t k = 0; k < free_dofs_.size(); ++k) full[free_dofs_[k]] += free_values[k];
}

}  // namespace pbdlab
