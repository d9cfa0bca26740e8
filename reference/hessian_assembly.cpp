#include "reference/hessian_assembly.hpp"

#include <algorithm>

namespace pbdlab {

namespace {
// Index of the pair (p, q), p >= q, among an element matrix's lower-triangle entries.
constexpr int lowerIndex(int p, int q) { return p * (p + 1) / 2 + q; }
}  // namespace

FreeDofHessian::FreeDofHessian(const Problem& problem) {
  const int num_dofs = problem.numDofs();
  free_of_dof_.assign(num_dofs, -1);
  free_dofs_ = problem.freeDofs();
  for (size_t k = 0; k < free_dofs_.size(); ++k) free_of_dof_[free_dofs_[k]] = static_cast<int>(k);
  num_fixed_ = num_dofs - static_cast<int>(free_dofs_.size());
  const int n_free = static_cast<int>(free_dofs_.size());

  const ElasticEnergy& elastic = problem.elasticEnergy();
  const int n_elements = elastic.numElements();
  const int element_dofs = 3 * elastic.nodesPerElement();
  lower_entries_ = element_dofs * (element_dofs + 1) / 2;
  auto globalFree = [&](int e, int p) { return free_of_dof_[3 * elastic.elementNodes(e)[p / 3] + p % 3]; };

  // Pattern: every (row >= col) pair of free DOFs that share an element, plus the diagonal.
  std::vector<Eigen::Triplet<double, int>> entries;
  entries.reserve(static_cast<size_t>(n_elements) * lower_entries_ + n_free);
  for (int i = 0; i < n_free; ++i) entries.emplace_back(i, i, 0.0);
  for (int e = 0; e < n_elements; ++e)
    for (int p = 0; p < element_dofs; ++p)
      for (int q = 0; q <= p; ++q) {
        const int gp = globalFree(e, p), gq = globalFree(e, q);
        if (gp >= 0 && gq >= 0) entries.emplace_back(std::max(gp, gq), std::min(gp, gq), 0.0);
      }
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
  element_slots_.resize(static_cast<size_t>(n_elements) * lower_entries_);
  for (int e = 0; e < n_elements; ++e)
    for (int p = 0; p < element_dofs; ++p)
      for (int q = 0; q <= p; ++q) {
        const int gp = globalFree(e, p), gq = globalFree(e, q);
        element_slots_[static_cast<size_t>(e) * lower_entries_ + lowerIndex(p, q)] =
            (gp >= 0 && gq >= 0) ? slotOf(std::max(gp, gq), std::min(gp, gq)) : -1;
      }
}

const SparseMatrix& FreeDofHessian::assemble(const StepObjective& objective, const Positions& x, HessianKind kind) {
  const ElasticEnergy& elastic = objective.problem().elasticEnergy();
  const double scale = objective.elasticScale();
  double* values = matrix_.valuePtr();
  std::fill(values, values + matrix_.nonZeros(), 0.0);
  if (objective.isDynamic()) {
    const VecX& mass = objective.problem().dofMasses();
    for (size_t k = 0; k < free_dofs_.size(); ++k) values[diagonal_slot_[k]] = mass[free_dofs_[k]];
  }
  withNodeCount(elastic.elementType(), [&](auto n) {
    constexpr int N = decltype(n)::value;
    for (const std::vector<int>& color : elastic.elementColoring().groups) {
      const int count = static_cast<int>(color.size());
#pragma omp parallel for schedule(static)
      for (int k = 0; k < count; ++k) {
        const int e = color[k];
        ElementMatrix<N> H;
        elastic.template elementTerms<N>(e, x, nullptr, nullptr, &H, kind);
        const int* slots = element_slots_.data() + static_cast<size_t>(e) * lower_entries_;
        for (int p = 0; p < 3 * N; ++p)
          for (int q = 0; q <= p; ++q) {
            const int slot = slots[lowerIndex(p, q)];
            if (slot >= 0) values[slot] += scale * H(p, q);
          }
      }
    }
  });
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
