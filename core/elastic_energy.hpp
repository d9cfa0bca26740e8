#pragma once
// The discrete elastic potential PE(x) = sum_e V_e Psi(F_e(x)) (PBNG eq. 15) with its
// gradient and Hessian. One stateless per-element kernel (elementTerms) serves the assembled
// sums here, the Newton reference and every position-based solver, so all of them evaluate
// literally the same energy (STYLE.md 2). P1 tetrahedra: F_e = sum_a x_a (dN_a/dX)^T, with
// dN/dX and V_e precomputed at construction.
#include <memory>
#include <vector>

#include "core/coloring.hpp"
#include "core/material.hpp"
#include "core/mesh.hpp"

namespace pbdlab {

enum class HessianKind {
  kTrue,       // dP/dF as it is (may be indefinite)
  kProjected,  // dP/dF with negative eigenvalues clamped to zero, so V B^T (dP/dF) B >= 0
               // (core/tangent_projection.hpp)
};

// B maps the element's nodal positions (vec of the 3x4 matrix [x_0 .. x_3]) to vec(F):
// vec(F) = B vec(x_e), B(i + 3 j, i + 3 a) = dN_a/dX_j.
using TetShapeGradients = Eigen::Matrix<double, 4, 3>;  // row a = (dN_a/dX)^T

class ElasticEnergy {
 public:
  ElasticEnergy(const Mesh& mesh, std::shared_ptr<const Material> material);

  int numElements() const { return static_cast<int>(volumes_.size()); }
  const Material& material() const { return *material_; }
  const Mesh& mesh() const { return *mesh_; }
  double restVolume(int e) const { return volumes_[e]; }
  const TetShapeGradients& shapeGradients(int e) const { return shape_gradients_[e]; }
  const Eigen::Matrix<int, 1, 4>& elementNodes(int e) const { return nodes_[e]; }
  const Coloring& elementColoring() const { return coloring_; }

  Mat3 deformationGradient(int e, const Positions& x) const;

  // Per-element kernel: energy V Psi, gradient (12, nodal order [x0 y0 z0 x1 ...]) and
  // Hessian (12x12). Any output pointer may be null.
  void elementTerms(int e, const Positions& x, double* energy, Vec12* gradient, Mat12* hessian,
                    HessianKind kind = HessianKind::kTrue) const;

  // Assembled sums over all elements (OpenMP over element colors).
  double energy(const Positions& x) const;
  // g += dPE/dx
  void addGradient(const Positions& x, VecX& g) const;

 private:
  std::shared_ptr<const Mesh> mesh_;
  std::shared_ptr<const Material> material_;
  std::vector<Eigen::Matrix<int, 1, 4>> nodes_;
  std::vector<TetShapeGradients> shape_gradients_;
  std::vector<double> volumes_;
  Coloring coloring_;
};

}  // namespace pbdlab
