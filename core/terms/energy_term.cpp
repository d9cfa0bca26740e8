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
  const int dofs = 3 * nodesPerStencil();
  Eigen::MatrixXd H;
  for (int s = 0; s < numStencils(); ++s) {
    stencilTerms(s, x, t, nullptr, nullptr, &H, kind);
    const int* slot = slots.slot.data() + static_cast<size_t>(s) * slots.entries_per_stencil;
    for (int p = 0; p < dofs; ++p)
      for (int q = 0; q <= p; ++q)
        if (slot[lowerTriangleIndex(p, q)] >= 0) values[slot[lowerTriangleIndex(p, q)]] += scale * H(p, q);
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
