#include "core/terms/weak_constraint_term.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace pbdlab {

WeakConstraintTerm::WeakConstraintTerm(std::vector<WeakConstraint> constraints, int num_nodes, std::string name)
    : name_(std::move(name)), constraints_(std::move(constraints)) {
  for (const WeakConstraint& c : constraints_)
    stencil_size_ = std::max(stencil_size_, static_cast<int>(c.nodes_a.size() + c.nodes_b.size()));
  for (size_t k = 0; k < constraints_.size(); ++k) {
    const WeakConstraint& c = constraints_[k];
    const std::string which = "weak constraint " + std::to_string(k) + ": ";
    if (c.nodes_a.empty() || c.nodes_b.empty() || c.nodes_a.size() != c.weights_a.size() ||
        c.nodes_b.size() != c.weights_b.size())
      throw std::invalid_argument(which + "each side needs nodes and as many weights");
    if (!(c.k_n >= 0.0 && c.k_t >= 0.0 && std::isfinite(c.k_n) && std::isfinite(c.k_t)))
      throw std::invalid_argument(which + "stiffnesses must be finite and >= 0");
    if (!(c.normal.allFinite() && c.normal.norm() > 0.0)) throw std::invalid_argument(which + "zero normal");
    const Vec3 n = c.normal.normalized();
    stiffness_.push_back(c.k_n * n * n.transpose() + c.k_t * (Mat3::Identity() - n * n.transpose()));
    auto add = [&](int node, double coefficient) {
      if (node < 0 || node >= num_nodes) throw std::invalid_argument(which + "node " + std::to_string(node) + " out of range");
      if (!std::isfinite(coefficient)) throw std::invalid_argument(which + "non-finite weight");
      nodes_.push_back(node);
      coefficients_.push_back(coefficient);
    };
    for (size_t j = 0; j < c.nodes_a.size(); ++j) add(c.nodes_a[j], c.weights_a[j]);
    for (size_t j = 0; j < c.nodes_b.size(); ++j) add(c.nodes_b[j], -c.weights_b[j]);
    for (int pad = static_cast<int>(c.nodes_a.size() + c.nodes_b.size()); pad < stencil_size_; ++pad)
      add(c.nodes_a[0], 0.0);
  }
}

Vec3 WeakConstraintTerm::constraint(int s, const Positions& x) const {
  Vec3 C = Vec3::Zero();
  for (int j = 0; j < stencil_size_; ++j) C += coefficient(s, j) * x.segment<3>(3 * stencilNodes(s)[j]);
  return C;
}

void WeakConstraintTerm::stencilTerms(int s, const Positions& x, double, double* value, VecX* gradient,
                                      Eigen::MatrixXd* hessian, HessianKind) const {
  const Vec3 C = constraint(s, x);
  const Mat3& K = stiffness_[s];
  if (value) *value = 0.5 * C.dot(K * C);
  if (gradient) {
    gradient->resize(3 * stencil_size_);
    const Vec3 KC = K * C;
    for (int j = 0; j < stencil_size_; ++j) gradient->segment<3>(3 * j) = coefficient(s, j) * KC;
  }
  if (hessian) {
    hessian->resize(3 * stencil_size_, 3 * stencil_size_);
    for (int p = 0; p < stencil_size_; ++p)
      for (int q = 0; q < stencil_size_; ++q)
        hessian->block<3, 3>(3 * p, 3 * q) = coefficient(s, p) * coefficient(s, q) * K;
  }
}

void WeakConstraintTerm::addNodeBlock(int s, int local, const Positions& x, double, HessianKind, Vec3& gradient,
                                      Mat3& block) const {
  const double c = coefficient(s, local);
  gradient += c * (stiffness_[s] * constraint(s, x));
  block += c * c * stiffness_[s];
}

}  // namespace pbdlab
