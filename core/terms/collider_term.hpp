#pragma once
// A kinematic collider (PBNG §7.2: plane, sphere, box; core/terms/collider_shapes.hpp) as
// the model sees it: a one-sided constraint phi(x_i) >= 0 on every node of the problem.
//
// The yardstick's definition (DESIGN.md "Energy terms"): at a node in contact
// (phi(x_i) <= contact tolerance) the part of the residual that the collider's normal force
// can balance is not a residual: r_i <- r_i - max(0, r_i . n) n with n the outward normal
// (the projected gradient of bound-constrained minimization; the force lambda n needs
// lambda >= 0, so a residual pulling the node away from the collider stays). The remaining
// penetration max(0, -min phi) is reported beside it.
//
// Solvers that cannot project (Newton) see the collider as a penalty term of the energy,
// k/2 min(0, phi)^2 (k = `stiffness`); a projecting solver (PBNG) keeps phi >= 0 and the
// penalty is then zero. Both are judged by the same projected residual.
#include <string>

#include "core/terms/collider_shapes.hpp"
#include "core/terms/energy_term.hpp"

namespace pbdlab {

struct Collider {
  std::string name;
  ColliderShape shape;
  double stiffness = 1e8;           // Newton's penalty (PBNG's collision stiffness k_n)
  double contact_tolerance = 1e-9;  // phi <= this counts as contact in the yardstick
};

class ColliderTerm final : public EnergyTerm {
 public:
  ColliderTerm(Collider collider, int num_nodes);

  std::string name() const override { return "collider " + collider_.name; }
  int numStencils() const override { return static_cast<int>(nodes_.size()); }
  int nodesPerStencil() const override { return 1; }
  const int* stencilNodes(int s) const override { return &nodes_[s]; }
  void stencilTerms(int s, const Positions& x, double t, double* value, VecX* gradient, Eigen::MatrixXd* hessian,
                    HessianKind kind) const override;

  const Collider& collider() const { return collider_; }
  // r_i <- r_i - max(0, r_i . n) n at every node in contact (see above).
  void projectResidual(const Positions& x, VecX& r) const;
  // max(0, -min_i phi(x_i)): the deepest penetration.
  double maxPenetration(const Positions& x) const;
  // The collider's force on the body, sum_i lambda_i n_i with lambda_i = max(0, g_i . n_i) at
  // the contact nodes, from the gradient g of the energy without this term.
  Vec3 reaction(const Positions& x, const VecX& gradient_without_collider) const;

 private:
  Collider collider_;
  std::vector<int> nodes_;
};

}  // namespace pbdlab
