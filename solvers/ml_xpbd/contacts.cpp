#include "solvers/ml_xpbd/contacts.hpp"

#include <algorithm>

#include "core/terms/collider_term.hpp"

namespace pbdlab::ml_xpbd {

std::vector<VertexContact> detectContacts(const Problem& problem, const Positions& x_start,
                                          const Positions& x_predicted, bool planar) {
  std::vector<VertexContact> contacts;
  if (problem.colliderTerms().empty()) return contacts;
  for (int node = 0; node < problem.numNodes(); ++node) {
    if (problem.isFixedDof(3 * node) && problem.isFixedDof(3 * node + 1) && problem.isFixedDof(3 * node + 2)) continue;
    const Vec3 predicted = x_predicted.segment<3>(3 * node);
    const Vec3 start = x_start.segment<3>(3 * node);
    double deepest = 0.0;
    const ColliderTerm* chosen = nullptr;
    for (const auto& term : problem.colliderTerms()) {
      const ColliderShape& shape = term->collider().shape;
      const double at_prediction = signedDistance(shape, predicted);
      if (!(at_prediction < 0.0 || signedDistance(shape, start) < 0.0)) continue;
      if (!chosen || at_prediction < deepest) {
        chosen = term.get();
        deepest = at_prediction;
      }
    }
    if (!chosen) continue;
    VertexContact contact;
    contact.node = node;
    contact.point = closestPoint(chosen->collider().shape, predicted, &contact.normal);
    if (planar) {
      contact.normal.z() = 0.0;
      if (contact.normal.squaredNorm() == 0.0) continue;  // a normal along z: no in-plane contact
      contact.normal.normalize();
    }
    contact.compliance = 1.0 / chosen->collider().stiffness;
    contact.approach_speed = contact.normal.dot(predicted - start) / problem.stepDt();
    contacts.push_back(contact);
  }
  return contacts;
}

void projectVertexContact(VertexContact& contact, double inverse_mass, double inv_h2, Positions& x) {
  const double separation = contact.normal.dot(x.segment<3>(3 * contact.node) - contact.point);
  const double constraint = std::min(separation, 0.0);
  // Inactive with no force left. A contact off the surface with lambda > 0 gives its force back
  // as projected Gauss-Seidel does (lambda down to 0 at most, the vertex back by w lambda at
  // most), as projectFixedPointContact does for a body vertex.
  if (constraint == 0.0 && contact.lambda == 0.0) return;
  const double compliance_tilde = contact.compliance * inv_h2;
  double delta = (-constraint - compliance_tilde * contact.lambda) / (inverse_mass + compliance_tilde);
  if (contact.lambda + delta < 0.0) delta = -contact.lambda;
  contact.lambda += delta;
  x.segment<3>(3 * contact.node) += inverse_mass * delta * contact.normal;
}

void applyRestitution(const std::vector<VertexContact>& contacts, double eps, double gravity, double h,
                      const VecX& movable, VecX& v) {
  for (const VertexContact& contact : contacts) {
    if (contact.lambda <= 0.0 || movable[contact.node] == 0.0 || contact.approach_speed >= 0.0) continue;
    const double target = -contact.approach_speed <= 2.0 * gravity * h ? 0.0 : -eps * contact.approach_speed;
    const double now = contact.normal.dot(v.segment<3>(3 * contact.node));
    v.segment<3>(3 * contact.node) += (target - now) * contact.normal;
  }
}

}  // namespace pbdlab::ml_xpbd
