#include "core/terms/collider_term.hpp"

#include <algorithm>
#include <stdexcept>

namespace pbdlab {

ColliderTerm::ColliderTerm(Collider collider, int num_nodes) : collider_(std::move(collider)) {
  if (!(collider_.stiffness > 0.0 && std::isfinite(collider_.stiffness)))
    throw std::invalid_argument("collider " + collider_.name + ": stiffness must be finite and > 0");
  if (!(collider_.contact_tolerance >= 0.0 && std::isfinite(collider_.contact_tolerance)))
    throw std::invalid_argument("collider " + collider_.name + ": contact tolerance must be finite and >= 0");
  nodes_.resize(num_nodes);
  for (int i = 0; i < num_nodes; ++i) nodes_[i] = i;
}

void ColliderTerm::stencilTerms(int s, const Positions& x, double, double* value, VecX* gradient,
                                Eigen::MatrixXd* hessian, HessianKind kind) const {
  Vec3 n;
  Mat3 curvature;
  const double phi = signedDistance(collider_.shape, x.segment<3>(3 * nodes_[s]), &n, &curvature);
  const double k = collider_.stiffness;
  const double depth = std::min(0.0, phi);  // penalty k/2 min(0, phi)^2
  if (value) *value = 0.5 * k * depth * depth;
  if (gradient) *gradient = k * depth * n;
  if (hessian) {
    *hessian = Mat3::Zero();
    // At phi = 0 exactly (a node resting on the surface) the penalty's second derivative is
    // one-sided; the inner one is taken, so a body at rest on a collider is not free to fall
    // through it in a Newton step.
    if (phi <= 0.0) {
      *hessian = k * n * n.transpose();
      // phi d2phi: phi < 0 times the shape's curvature; kept for the true Hessian only.
      if (kind == HessianKind::kTrue) *hessian += k * depth * curvature;
    }
  }
}

void ColliderTerm::projectResidual(const Positions& x, VecX& r) const {
  for (int node : nodes_) {
    Vec3 n;
    const double phi = signedDistance(collider_.shape, x.segment<3>(3 * node), &n);
    if (phi > collider_.contact_tolerance) continue;
    const double push = r.segment<3>(3 * node).dot(n);
    if (push > 0.0) r.segment<3>(3 * node) -= push * n;
  }
}

double ColliderTerm::maxPenetration(const Positions& x) const {
  double deepest = 0.0;
  for (int node : nodes_) deepest = std::max(deepest, -signedDistance(collider_.shape, x.segment<3>(3 * node)));
  return deepest;
}

Vec3 ColliderTerm::reaction(const Positions& x, const VecX& g) const {
  Vec3 total = Vec3::Zero();
  for (int node : nodes_) {
    Vec3 n;
    const double phi = signedDistance(collider_.shape, x.segment<3>(3 * node), &n);
    if (phi > collider_.contact_tolerance) continue;
    total += std::max(0.0, g.segment<3>(3 * node).dot(n)) * n;
  }
  return total;
}

}  // namespace pbdlab
