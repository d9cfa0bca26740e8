#include "core/terms/energy_term.hpp"

#include <stdexcept>

namespace pbdlab {

std::string hessianKindName(HessianKind kind) {
  switch (kind) {
    case HessianKind::kTrue: return "true";
    case HessianKind::kProjected: return "projected";
    case HessianKind::kApproximate: return "approximate";
    case HessianKind::kApproximateModelParameters: return "approximate_model_parameters";
  }
  throw std::invalid_argument("hessianKindName: invalid HessianKind value");
}

bool isApproximate(HessianKind kind) {
  return kind == HessianKind::kApproximate || kind == HessianKind::kApproximateModelParameters;
}

int EnergyTerm::usedNodes(int s, int* local) const {
  (void)s;
  const int k = nodesPerStencil();
  for (int a = 0; a < k; ++a) local[a] = a;
  return k;
}

NodeAdjacency usedNodeAdjacency(int num_nodes, const EnergyTerm& term) {
  const int k = term.nodesPerStencil();
  NodeAdjacency adjacency =
      nodeAdjacency(num_nodes, {term.numStencils(), k, [&term](int s) { return term.stencilNodes(s); }});
  // Keep the (stencil, local) pairs whose local node is used, in the same order.
  std::vector<int> used(static_cast<size_t>(k));
  std::vector<unsigned char> is_used(static_cast<size_t>(term.numStencils()) * static_cast<size_t>(k), 0);
  bool all_used = true;
  for (int s = 0; s < term.numStencils(); ++s) {
    const int m = term.usedNodes(s, used.data());
    all_used = all_used && m == k;
    for (int r = 0; r < m; ++r) is_used[static_cast<size_t>(s) * k + used[r]] = 1;
  }
  if (all_used) return adjacency;
  int kept = 0;
  for (int i = 0; i < num_nodes; ++i) {
    const int begin = adjacency.start[i], end = adjacency.start[i + 1];
    adjacency.start[i] = kept;
    for (int p = begin; p < end; ++p)
      if (is_used[static_cast<size_t>(adjacency.stencil[p]) * k + adjacency.local[p]]) {
        adjacency.stencil[kept] = adjacency.stencil[p];
        adjacency.local[kept] = adjacency.local[p];
        ++kept;
      }
  }
  adjacency.start[num_nodes] = kept;
  adjacency.stencil.resize(kept);
  adjacency.local.resize(kept);
  return adjacency;
}

const Coloring& EnergyTerm::stencilColoring() const {
  if (!coloring_) {
    const int k = nodesPerStencil();
    coloring_ = std::make_shared<const Coloring>(
        colorStencils(numStencils(), k, [this](int s) { return stencilNodes(s); }));
  }
  return *coloring_;
}

// The generic sums go through stencilTerms (dynamic sizes): correct for every term, fast
// enough for the small stencil sets of weak constraints and colliders. Element terms
// override them with fixed-size kernels.
double EnergyTerm::energy(const Positions& x, double t) const {
  double total = 0.0;
  for (int s = 0; s < numStencils(); ++s) {
    double value = 0.0;
    stencilTerms(s, x, t, &value, nullptr, nullptr);
    total += value;
  }
  return total;
}

void EnergyTerm::addGradient(const Positions& x, double t, double scale, VecX& g) const {
  const int k = nodesPerStencil();
  VecX gs;
  for (int s = 0; s < numStencils(); ++s) {
    stencilTerms(s, x, t, nullptr, &gs, nullptr);
    const int* nodes = stencilNodes(s);
    for (int a = 0; a < k; ++a) g.segment<3>(3 * nodes[a]) += scale * gs.segment<3>(3 * a);
  }
}

void EnergyTerm::addHessian(const Positions& x, double t, HessianKind kind, double scale, const HessianSlots& slots,
                            double* values) const {
  Eigen::MatrixXd H;
  for (int s = 0; s < numStencils(); ++s) {
    if (slots.usesNodeLists() && slots.numUsedNodes(s) == 0) continue;  // nothing of it is stored
    stencilTerms(s, x, t, nullptr, nullptr, &H, kind);
    scatterStencilHessian(slots, s, nodesPerStencil(), H, scale, values);
  }
}

void EnergyTerm::addNodeBlock(int s, int local, const Positions& x, double t, HessianKind kind, Vec3& gradient,
                              Mat3& block) const {
  VecX gs;
  Eigen::MatrixXd H;
  stencilTerms(s, x, t, nullptr, &gs, &H, kind);
  gradient += gs.segment<3>(3 * local);
  block += H.block<3, 3>(3 * local, 3 * local);
}

}  // namespace pbdlab
