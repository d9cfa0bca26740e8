#pragma once
// Weak constraints (PBNG eq. 18-19) as an energy term: stencil c holds the nodes of both
// interpolated points, C_c(x) = sum_j c_j x_j with coefficients c = (w_a, -w_b), and
// E_c = 1/2 C^T K_c C, K_c = k_n n n^T + k_t (I - n n^T). The energy is quadratic, so the
// true, projected and approximate Hessians coincide: H_(p,q) = c_p c_q K_c (PBNG eq. 31/34's
// (w_0 - w_1)^2 K_c is its diagonal block). The same term serves vertex-triangle collisions,
// whose weights and normal are frozen when the contact is created (PBNG §4.1).
#include <string>
#include <vector>

#include "core/support/types.hpp"
#include "core/terms/energy_term.hpp"

namespace pbdlab {

// A weak constraint (PBNG eq. 18-19): a spring between the point sum_j w_a[j] x(nodes_a[j])
// and the point sum_j w_b[j] x(nodes_b[j]) (global node indices; the points usually lie in
// elements of different bodies), energy 1/2 C^T K C with C the difference of the two points
// and K = k_n n n^T + k_t (I - n n^T) (isotropic when k_n = k_t).
struct WeakConstraint {
  std::vector<int> nodes_a;
  std::vector<double> weights_a;
  std::vector<int> nodes_b;
  std::vector<double> weights_b;
  double k_n = 0.0;
  double k_t = 0.0;
  Vec3 normal = Vec3::UnitX();
};

class WeakConstraintTerm final : public EnergyTerm {
 public:
  // Stencils are padded to the largest constraint with weight-0 copies of a node. Throws
  // std::invalid_argument for mismatched sizes, negative stiffness, a zero normal or a node
  // outside [0, num_nodes).
  WeakConstraintTerm(std::vector<WeakConstraint> constraints, int num_nodes, std::string name = "weak_constraints");

  std::string name() const override { return name_; }
  int numStencils() const override { return static_cast<int>(constraints_.size()); }
  int nodesPerStencil() const override { return stencil_size_; }
  const int* stencilNodes(int s) const override { return nodes_.data() + static_cast<size_t>(s) * stencil_size_; }
  void stencilTerms(int s, const Positions& x, double t, double* value, VecX* gradient, Eigen::MatrixXd* hessian,
                    HessianKind kind) const override;
  void addNodeBlock(int s, int local, const Positions& x, double t, HessianKind kind, Vec3& gradient,
                    Mat3& block) const override;

  // C_c(x): the difference of the two interpolated points.
  Vec3 constraint(int s, const Positions& x) const;
  // The constraint's unit normal n (of K = k_n n n^T + k_t (I - n n^T)).
  Vec3 normal(int s) const { return constraints_[s].normal.normalized(); }
  const Mat3& stiffness(int s) const { return stiffness_[s]; }
  double coefficient(int s, int local) const { return coefficients_[static_cast<size_t>(s) * stencil_size_ + local]; }

 private:
  std::string name_;
  std::vector<WeakConstraint> constraints_;
  int stencil_size_ = 0;
  std::vector<int> nodes_;            // per stencil: stencil_size_ nodes
  std::vector<double> coefficients_;  // per stencil: (w_a, -w_b), 0 for padding
  std::vector<Mat3> stiffness_;       // K_c
};

}  // namespace pbdlab
