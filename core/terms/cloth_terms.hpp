#pragma once
// The energy terms of a triangle surface in 3D (cloth, PBNG §8 eq. 35-37): a corotated
// membrane on each triangle's 3x2 deformation gradient, A Psi_cm(F) (eq. 36), and dihedral
// bending k_b/2 theta^2 on each hinge of two triangles (eq. 35; the exact Hessian for Newton,
// the rank-one eq. 37 as the approximate kind). The kernels are core/terms/membrane_kernel.hpp
// and core/terms/bending_kernel.hpp; these classes hold the stencils and the rest data.
#include <array>
#include <vector>

#include "core/terms/energy_term.hpp"
#include "core/terms/membrane_kernel.hpp"
#include "core/topology/topology.hpp"

namespace pbdlab {

class MembraneTerm final : public EnergyTerm {
 public:
  // Triangles in global node numbering, their rest positions from `rest` ([x0 y0 z0 ...]).
  // mu, lambda: the membrane's Lame parameters (per unit area). Throws std::invalid_argument
  // naming the triangle for a degenerate rest triangle.
  MembraneTerm(std::vector<std::array<int, 3>> triangles, const Positions& rest, double mu, double lambda);

  std::string name() const override { return "membrane"; }
  int numStencils() const override { return static_cast<int>(triangles_.size()); }
  int nodesPerStencil() const override { return 3; }
  const int* stencilNodes(int s) const override { return triangles_[s].data(); }
  void stencilTerms(int s, const Positions& x, double t, double* value, VecX* gradient, Eigen::MatrixXd* hessian,
                    HessianKind kind) const override;
  double restArea(int s) const { return rest_[s].area; }

 private:
  std::vector<std::array<int, 3>> triangles_;
  std::vector<MembraneRest> rest_;
  double mu_, lambda_;
};

class BendingTerm final : public EnergyTerm {
 public:
  BendingTerm(std::vector<Hinge> hinges, double bending_stiffness);

  std::string name() const override { return "bending"; }
  int numStencils() const override { return static_cast<int>(hinges_.size()); }
  int nodesPerStencil() const override { return 4; }
  const int* stencilNodes(int s) const override { return hinges_[s].nodes.data(); }
  void stencilTerms(int s, const Positions& x, double t, double* value, VecX* gradient, Eigen::MatrixXd* hessian,
                    HessianKind kind) const override;

 private:
  std::vector<Hinge> hinges_;
  double k_b_;
};

}  // namespace pbdlab
