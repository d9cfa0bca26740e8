#include "reference/hessian_assembly.hpp"

#include <algorithm>
#include <cstddef>

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

// The slots' layout of one term (hessian_slots.hpp): whole stencils when every stencil uses
// every node (or the whole-stencil pattern is asked for), else the node lists of its used nodes
// that have a free DOF. Sizes `slot`; the values are set once the pattern exists.
HessianSlots slotLayout(const EnergyTerm& term, HessianPattern pattern, const std::vector<int>& free_of_dof) {
  HessianSlots slots;
  const int k = term.nodesPerStencil();
  const int n_stencils = term.numStencils();
  bool every_node = true;
  if (pattern == HessianPattern::kUsedNodes) {
    std::vector<int> used(static_cast<size_t>(k));
    slots.used_start.assign(static_cast<size_t>(n_stencils) + 1, 0);
    for (int s = 0; s < n_stencils; ++s) {
      const int m = term.usedNodes(s, used.data());
      every_node = every_node && m == k;
      const int* nodes = term.stencilNodes(s);
      for (int r = 0; r < m; ++r) {
        const int dof = 3 * nodes[used[r]];
        if (free_of_dof[dof] >= 0 || free_of_dof[dof + 1] >= 0 || free_of_dof[dof + 2] >= 0)
          slots.used_node.push_back(used[r]);
      }
      slots.used_start[s + 1] = static_cast<int>(slots.used_node.size());
    }
  }
  if (every_node) {
    slots = HessianSlots();
    slots.entries_per_stencil = 3 * k * (3 * k + 1) / 2;
    slots.slot.assign(static_cast<size_t>(n_stencils) * static_cast<size_t>(slots.entries_per_stencil), -1);
    return slots;
  }
  slots.slot_start.assign(static_cast<size_t>(n_stencils) + 1, 0);
  for (int s = 0; s < n_stencils; ++s) {
    const size_t dofs = 3 * static_cast<size_t>(slots.numUsedNodes(s));
    slots.slot_start[s + 1] = slots.slot_start[s] + dofs * (dofs + 1) / 2;
  }
  slots.slot.assign(slots.slot_start.back(), -1);
  return slots;
}

// f(s, nodes, m): stencil s's stored nodes (global indices, m of them) in the order of its
// slots' DOFs (3 r + component).
template <typename F>
void forEachStoredStencil(const EnergyTerm& term, const HessianSlots& slots, F&& f) {
  const int k = term.nodesPerStencil();
  std::vector<int> global(static_cast<size_t>(k));
  for (int s = 0; s < term.numStencils(); ++s) {
    const int* nodes = term.stencilNodes(s);
    if (!slots.usesNodeLists()) {
      f(s, nodes, k);
      continue;
    }
    const int m = slots.numUsedNodes(s);
    const int* local = slots.usedNodes(s);
    for (int r = 0; r < m; ++r) global[r] = nodes[local[r]];
    f(s, global.data(), m);
  }
}

}  // namespace

bool FreeDofHessian::matches(const StepObjective& objective) const {
  return slots_.size() == objective.terms().size() && dynamic_stencils_ == dynamicStencils(objective);
}

FreeDofHessian::FreeDofHessian(const StepObjective& objective, HessianPattern pattern) {
  const Problem& problem = objective.problem();
  const auto& terms = objective.terms();
  dynamic_stencils_ = dynamicStencils(objective);
  const int num_dofs = problem.numDofs();
  free_of_dof_.assign(num_dofs, -1);
  free_dofs_ = problem.freeDofs();
  for (size_t k = 0; k < free_dofs_.size(); ++k) free_of_dof_[free_dofs_[k]] = static_cast<int>(k);
  num_fixed_ = num_dofs - static_cast<int>(free_dofs_.size());
  const int n_free = static_cast<int>(free_dofs_.size());
  for (const auto& term : terms) slots_.push_back(slotLayout(*term, pattern, free_of_dof_));

  // Pattern, built over nodes first (9x fewer pairs than DOFs): node column c holds the nodes
  // r >= c that share a stored stencil node list with c (c itself included), each with a free
  // DOF; count, fill (duplicates included), sort and merge each column. The DOF pattern is then
  // every pair of free DOFs of those node pairs, plus the diagonal of every free DOF. (The
  // DOF triplets and setFromTriplets took 28 bytes a stencil DOF pair at their peak.)
  const int num_nodes = num_dofs / 3;
  std::vector<int> node_free(static_cast<size_t>(num_nodes), 0);  // free DOFs of each node
  std::vector<int> rank(static_cast<size_t>(num_dofs), 0);        // a DOF's index among its node's free DOFs
  for (int i = 0; i < num_nodes; ++i)
    for (int d = 0; d < 3; ++d) {
      rank[3 * i + d] = node_free[i];
      if (free_of_dof_[3 * i + d] >= 0) ++node_free[i];
    }
  const auto forEachNodePair = [&](auto&& f) {  // f(row node, column node), row >= column
    for (size_t k = 0; k < terms.size(); ++k)
      forEachStoredStencil(*terms[k], slots_[k], [&](int, const int* nodes, int m) {
        for (int u = 0; u < m; ++u) {
          if (node_free[nodes[u]] == 0) continue;
          for (int v = 0; v <= u; ++v)
            if (node_free[nodes[v]] > 0) f(std::max(nodes[u], nodes[v]), std::min(nodes[u], nodes[v]));
        }
      });
  };
  std::vector<int> node_start(static_cast<size_t>(num_nodes) + 1, 0);
  forEachNodePair([&](int, int c) { ++node_start[c + 1]; });
  for (int i = 0; i < num_nodes; ++i) node_start[i + 1] += node_start[i];
  std::vector<int> node_rows(static_cast<size_t>(node_start[num_nodes]));
  {
    std::vector<int> next(node_start.begin(), node_start.end() - 1);
    forEachNodePair([&](int r, int c) { node_rows[next[c]++] = r; });
  }
  int merged = 0;
  for (int c = 0; c < num_nodes; ++c) {
    int* begin = node_rows.data() + node_start[c];
    int* end = node_rows.data() + node_start[c + 1];
    std::sort(begin, end);
    end = std::unique(begin, end);
    node_start[c] = merged;
    for (int* r = begin; r != end; ++r) node_rows[merged++] = *r;  // merged <= begin: in place
  }
  node_start[num_nodes] = merged;
  node_rows.resize(static_cast<size_t>(merged));
  // Per entry of node column c: the free DOFs of the column's nodes before it.
  std::vector<int> before(static_cast<size_t>(merged));
  for (int c = 0; c < num_nodes; ++c) {
    int sum = 0;
    for (int t = node_start[c]; t < node_start[c + 1]; ++t) {
      before[t] = sum;
      sum += node_free[node_rows[t]];
    }
  }

  // DOF column j = free(3c + d): the free DOFs of the column's nodes from DOF 3c + d on (the
  // diagonal first), or the diagonal alone for a node in no stencil.
  std::vector<int> outer(static_cast<size_t>(n_free) + 1, 0);
  for (int c = 0; c < num_nodes; ++c)
    for (int d = 0; d < 3; ++d) {
      const int j = free_of_dof_[3 * c + d];
      if (j < 0) continue;
      const int t_end = node_start[c + 1];
      outer[j + 1] = t_end == node_start[c] ? 1 : before[t_end - 1] + node_free[node_rows[t_end - 1]] - rank[3 * c + d];
    }
  for (int j = 0; j < n_free; ++j) outer[j + 1] += outer[j];
  const int nonzeros = outer[n_free];
  matrix_.resize(n_free, n_free);
  matrix_.resizeNonZeros(nonzeros);
  std::copy(outer.begin(), outer.end(), matrix_.outerIndexPtr());
  int* inner = matrix_.innerIndexPtr();
  for (int c = 0; c < num_nodes; ++c)
    for (int d = 0; d < 3; ++d) {
      const int j = free_of_dof_[3 * c + d];
      if (j < 0) continue;
      int p = outer[j];
      if (node_start[c + 1] == node_start[c]) inner[p++] = j;
      for (int t = node_start[c]; t < node_start[c + 1]; ++t) {
        const int r = node_rows[t];
        for (int e = r == c ? d : 0; e < 3; ++e)
          if (free_of_dof_[3 * r + e] >= 0) inner[p++] = free_of_dof_[3 * r + e];
      }
    }
  std::fill(matrix_.valuePtr(), matrix_.valuePtr() + nonzeros, 0.0);
  diagonal_slot_.resize(n_free);
  for (int i = 0; i < n_free; ++i) diagonal_slot_[i] = outer[i];

  // Slots: DOF (r, e) in column (c, d), r >= c (e >= d when r == c), is entry
  // before[t] + rank(3r + e) - rank(3c + d) of the column, t the place of r in node column c.
  std::vector<int> place;  // per pair of a stencil's stored nodes (u, v): t, or -1
  for (size_t k = 0; k < terms.size(); ++k) {
    HessianSlots& slots = slots_[k];
    forEachStoredStencil(*terms[k], slots, [&](int s, const int* nodes, int m) {
      place.assign(static_cast<size_t>(m) * static_cast<size_t>(m), -1);
      for (int u = 0; u < m; ++u)
        for (int v = 0; v <= u; ++v) {
          if (node_free[nodes[u]] == 0 || node_free[nodes[v]] == 0) continue;
          const int r = std::max(nodes[u], nodes[v]), c = std::min(nodes[u], nodes[v]);
          const int* begin = node_rows.data() + node_start[c];
          const int* end = node_rows.data() + node_start[c + 1];
          place[u * m + v] = static_cast<int>(std::lower_bound(begin, end, r) - node_rows.data());
        }
      int* slot = slots.slot.data() + (slots.stencilSlots(s) - slots.slot.data());
      for (int p = 0; p < 3 * m; ++p)
        for (int q = 0; q <= p; ++q) {
          const int u = p / 3, v = q / 3;
          const int dof_p = 3 * nodes[u] + p % 3, dof_q = 3 * nodes[v] + q % 3;
          if (free_of_dof_[dof_p] < 0 || free_of_dof_[dof_q] < 0) continue;
          const int row = std::max(dof_p, dof_q), col = std::min(dof_p, dof_q);
          slot[lowerTriangleIndex(p, q)] =
              outer[free_of_dof_[col]] + before[place[u * m + v]] + rank[row] - rank[col];
        }
    });
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
