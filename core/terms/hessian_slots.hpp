#pragma once
// Where each stencil's lower-triangle Hessian entries go in a sparse matrix's value array
// (built once per topology by the Hessian assembly, reference/hessian_assembly.cpp; read by
// every EnergyTerm::addHessian). Two layouts:
//  - whole stencils (`used_start` empty): every node of every stencil, stencil entry (p, q),
//    p >= q local DOFs (3 * node + component), at slot[s * entries_per_stencil +
//    lowerTriangleIndex(p, q)];
//  - used nodes (`used_start` set), for a term whose EnergyTerm::usedNodes leaves nodes out
//    (an embedded term's block nodes that no vertex touches): stencil s keeps only its used
//    nodes with a free DOF, used_node[used_start[s] .. used_start[s + 1]) in ascending local
//    order, and the lower triangle over their 3 m DOFs (3 r + component, r the node's rank in
//    that list) at slot[slot_start[s] + lowerTriangleIndex(p, q)]. A node left out has no
//    entries: what a term computes for it is dropped, and a stencil with no node has none.
// Either way a slot is -1 where either DOF is prescribed, and a term's addHessian skips it.
#include <cstddef>
#include <vector>

namespace pbdlab {

// Index of the pair (p, q), p >= q, among a stencil matrix's lower-triangle entries.
constexpr int lowerTriangleIndex(int p, int q) { return p * (p + 1) / 2 + q; }

struct HessianSlots {
  int entries_per_stencil = 0;  // whole stencils: 3k (3k + 1) / 2
  std::vector<int> slot;
  std::vector<int> used_start;      // used nodes: per stencil, CSR into used_node (size stencils + 1)
  std::vector<int> used_node;       // used nodes: local node indices, ascending per stencil
  std::vector<size_t> slot_start;   // used nodes: per stencil, its first slot

  bool usesNodeLists() const { return !used_start.empty(); }
  const int* stencilSlots(int s) const {
    return slot.data() + (usesNodeLists() ? slot_start[static_cast<size_t>(s)]
                                          : static_cast<size_t>(s) * static_cast<size_t>(entries_per_stencil));
  }
  // Used nodes: how many stencil s keeps, and their local indices.
  int numUsedNodes(int s) const { return used_start[s + 1] - used_start[s]; }
  const int* usedNodes(int s) const { return used_node.data() + used_start[s]; }
};

// values[slot] += scale * H(p, q) for stencil s's lower-triangle entries in either layout, H the
// stencil's whole 3k x 3k Hessian (k = nodes_per_stencil).
template <typename Matrix>
void scatterStencilHessian(const HessianSlots& slots, int s, int nodes_per_stencil, const Matrix& H, double scale,
                           double* values) {
  const int* slot = slots.stencilSlots(s);
  if (!slots.usesNodeLists()) {
    const int dofs = 3 * nodes_per_stencil;
    for (int p = 0; p < dofs; ++p)
      for (int q = 0; q <= p; ++q) {
        const int target = slot[lowerTriangleIndex(p, q)];
        if (target >= 0) values[target] += scale * H(p, q);
      }
    return;
  }
  const int m = slots.numUsedNodes(s);
  const int* used = slots.usedNodes(s);
  for (int p = 0; p < 3 * m; ++p)
    for (int q = 0; q <= p; ++q) {
      const int target = slot[lowerTriangleIndex(p, q)];
      if (target >= 0) values[target] += scale * H(3 * used[p / 3] + p % 3, 3 * used[q / 3] + q % 3);
    }
}

}  // namespace pbdlab
