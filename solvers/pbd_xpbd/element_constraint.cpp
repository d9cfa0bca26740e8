#include "solvers/pbd_xpbd/element_constraint.hpp"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace pbdlab {

MaterialSplit sqrtPsiSplit(const Material& material) {
  const Material* model = &material;
  MaterialSplit split;
  split.name = "sqrt_psi";
  split.terms = {{"psi", 1.0, [model](const Mat3& F, const MaterialPointData& data, double* psi, Mat3* P,
                                      Mat9* dPdF) { model->evaluate(F, data, psi, P, dPdF); },
                  {}}};
  split.constant = 0.0;
  return split;
}

MaterialSplit constraintSplit(const Material& material, const std::string& name) {
  if (name == "sqrt_psi") return sqrtPsiSplit(material);
  try {
    return material.split(name);
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(std::string(error.what()) + " (or 'sqrt_psi', the whole energy as one constraint)");
  }
}

std::string splitRejection(const std::string& solver, const ElasticEnergy& energy, const std::string& name) {
  std::map<const Material*, bool> checked;
  for (int e = 0; e < energy.numElements(); ++e) {
    const Material* material = &energy.material(e);
    if (checked.count(material)) continue;
    checked[material] = true;
    try {
      const MaterialSplit split = constraintSplit(*material, name);
      for (const MaterialTerm& term : split.terms)
        if (!(term.stiffness >= 0.0))
          return solver + ": term '" + term.name + "' of split '" + split.name + "' has stiffness " +
                 std::to_string(term.stiffness) + " < 0 (a negative compliance has no XPBD meaning)";
    } catch (const std::invalid_argument& error) {
      return solver + ": " + error.what();
    }
  }
  return "";
}

double elementConstraintAt(const ElasticEnergy& energy, int e, const MaterialTerm& term, double eps,
                           const Positions& x, double t, VecX* gradient, double* signed_half_square) {
  return withNodeCount(energy.elementType(), [&](auto n) {
    constexpr int N = decltype(n)::value;
    const int Q = energy.quadraturePointsPerElement();
    std::vector<double> G(static_cast<size_t>(Q) * N * 3), V(Q);
    for (int q = 0; q < Q; ++q) {
      Eigen::Map<NodeColumns<N>>(G.data() + static_cast<size_t>(q) * N * 3) = energy.shapeGradients<N>(e, q);
      V[q] = energy.quadratureVolume(e, q);
    }
    const ElementQuadrature element{G.data(), V.data(), Q, energy.restVolume(e)};
    Eigen::Matrix<double, 3, N> xe;
    const int* nodes = energy.elementNodes(e);
    for (int a = 0; a < N; ++a) xe.col(a) = x.segment<3>(3 * nodes[a]);
    Eigen::Matrix<double, 3, N> g;
    const double C = elementConstraint<N>(element, xe, term, energy.pointData(e, t), eps, energy.isPlaneStrain(), g);
    if (gradient) *gradient = Eigen::Map<const VecX>(g.data(), 3 * N);
    if (signed_half_square) {
      double weighted_psi = 0.0;
      for (int q = 0; q < Q; ++q) {
        Mat3 F = xe.lazyProduct(Eigen::Map<const NodeColumns<N>>(G.data() + static_cast<size_t>(q) * N * 3));
        if (energy.isPlaneStrain()) F(2, 2) = 1.0;
        double psi = 0.0;
        term.evaluate(F, energy.pointData(e, t), &psi, nullptr, nullptr);
        weighted_psi += V[q] * psi;
      }
      *signed_half_square = weighted_psi + energy.restVolume(e) * eps;
    }
    return C;
  });
}

}  // namespace pbdlab
