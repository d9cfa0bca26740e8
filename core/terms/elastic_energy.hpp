#pragma once
// The elastic energy of the solid elements of a mesh: PE(x) = sum_e sum_q V_q Psi_e(F_q(x))
// (PBNG eq. 15 for P1; high-order paper eqs. 10-13 for any element), an EnergyTerm whose
// stencils are the elements. One stateless per-element kernel serves the assembled sums, the
// Newton reference and every position-based solver, so all of them evaluate literally the
// same energy (STYLE.md 2).
//
// Per element and quadrature point, dN/dX = dN/dr J(X, r)^-1 (an N x 3 matrix) and
// V_q = w_q |det J(X, r_q)| are precomputed (high-order paper Alg. 3); then
// F_q = sum_a x_a (dN_a/dX)^T. A P1 tetrahedron is the same path with one point.
//
// Materials are per element (a body of the Problem is a range of elements with one
// material), each element with its MaterialPointData (e.g. a muscle's fibre direction) and
// an activation that may change with time.
//
// Plane strain: a 2D triangle mesh (tri3, every z = 0) is a slab of unit thickness with
// F = [F_2d 0; 0 1]: z stays pinned (the Problem prescribes every z), the energy is per unit
// thickness, and the same 3D materials apply unchanged.
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/fem/mesh.hpp"
#include "core/materials/material.hpp"
#include "core/support/time_schedule.hpp"
#include "core/terms/energy_term.hpp"

namespace pbdlab {

// Fixed-size element vectors and matrices for an element of N nodes.
template <int N>
using ElementVector = Eigen::Matrix<double, 3 * N, 1>;
template <int N>
using ElementMatrix = Eigen::Matrix<double, 3 * N, 3 * N>;
template <int N>
using ShapeGradients = Eigen::Matrix<double, N, 3, Eigen::RowMajor>;  // row a = (dN_a/dX)^T

// Calls f(std::integral_constant<int, N>{}) with N = nodesPerElement(type), so kernels can be
// written once with fixed-size types.
template <class Function>
decltype(auto) withNodeCount(ElementType type, Function&& f) {
  switch (nodesPerElement(type)) {
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 6: return f(std::integral_constant<int, 6>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 10: return f(std::integral_constant<int, 10>{});
    case 20: return f(std::integral_constant<int, 20>{});
  }
  throw std::invalid_argument("withNodeCount: unsupported element type " + elementTypeName(type));
}

// A material activation as a function of time (e.g. a muscle contracting from t = 2 s).
using ActivationSchedule = TimeSchedule;

// Which material each element uses, with its per-element data.
struct ElementMaterials {
  std::vector<std::shared_ptr<const Material>> materials;
  std::vector<int> material_of_element;           // empty: every element uses materials[0]
  std::vector<MaterialPointData> element_data;    // empty: default data for every element
  std::vector<ActivationSchedule> activation;     // per material; empty or null: data.activation
};

class ElasticEnergy final : public EnergyTerm {
 public:
  // quadrature_degree <= 0: the element type's stiffness degree (ReferenceElement). Throws
  // InputError for an inverted or degenerate rest element, std::invalid_argument for a
  // surface mesh (tri3 in 3D: that is the membrane term's) or inconsistent materials. The
  // mesh is shared, never copied; it must have been validated (validateMesh) by the caller.
  ElasticEnergy(std::shared_ptr<const Mesh> mesh, ElementMaterials materials, int quadrature_degree = 0);
  // One material for every element (tests, tools): validates the mesh itself.
  ElasticEnergy(const Mesh& mesh, std::shared_ptr<const Material> material, int quadrature_degree = 0);

  std::string name() const override { return "elastic"; }
  int numStencils() const override { return num_elements_; }
  int nodesPerStencil() const override { return nodes_per_element_; }
  const int* stencilNodes(int e) const override { return elementNodes(e); }

  int numElements() const { return num_elements_; }
  int nodesPerElement() const { return nodes_per_element_; }
  int quadraturePointsPerElement() const { return points_per_element_; }
  int quadratureDegree() const { return quadrature_degree_; }
  ElementType elementType() const { return mesh_->element_type; }
  bool isPlaneStrain() const { return plane_strain_; }
  const Material& material(int e = 0) const { return *materials_.materials[materialIndex(e)]; }
  const Mesh& mesh() const { return *mesh_; }
  const Coloring& elementColoring() const { return stencilColoring(); }

  // The element's node indices (nodesPerElement() of them).
  const int* elementNodes(int e) const { return mesh_->elements.data() + static_cast<size_t>(e) * nodes_per_element_; }
  double restVolume(int e) const { return volumes_[e]; }
  // dN/dX at quadrature point q of element e (N x 3, row-major) and its weight V_q.
  template <int N>
  Eigen::Map<const ShapeGradients<N>> shapeGradients(int e, int q) const {
    return Eigen::Map<const ShapeGradients<N>>(gradients_.data() + pointIndex(e, q) * N * 3);
  }
  double quadratureVolume(int e, int q) const { return point_volumes_[pointIndex(e, q)]; }
  // The material data of element e at time t (the activation evaluated).
  MaterialPointData pointData(int e, double t) const {
    if (!has_point_data_) return MaterialPointData{};  // the common case: no fibres, no activation
    return pointDataOf(e, t);
  }

  Mat3 deformationGradient(int e, int q, const Positions& x) const;

  // The per-element kernel: energy sum_q V_q Psi, gradient (3N, nodal order
  // [x0 y0 z0 x1 ...]) and Hessian (3N x 3N). Any output pointer may be null.
  template <int N>
  void elementTerms(int e, const Positions& x, double* energy, ElementVector<N>* gradient,
                    ElementMatrix<N>* hessian, HessianKind kind = HessianKind::kTrue, double t = 0.0) const;
  // The same with run-time sizes (tests, set-up code; allocates).
  void elementTerms(int e, const Positions& x, double* energy, VecX* gradient, Eigen::MatrixXd* hessian,
                    HessianKind kind = HessianKind::kTrue, double t = 0.0) const;
  // The gradient row and 3x3 diagonal block of the element's node `local` only (a third of
  // the work of the full element Hessian's diagonal; PBNG eq. 28-34).
  template <int N>
  void nodeTerms(int e, int local, const Positions& x, double t, HessianKind kind, Vec3& gradient, Mat3& block) const;

  // --- EnergyTerm ---
  void stencilTerms(int e, const Positions& x, double t, double* value, VecX* gradient, Eigen::MatrixXd* hessian,
                    HessianKind kind) const override {
    elementTerms(e, x, value, gradient, hessian, kind, t);
  }
  // Element energies go to a per-element buffer in parallel, then are summed in element order
  // on one thread: the total is bit for bit the same for every thread count and every run (an
  // OpenMP `reduction(+)` adds the threads' partial sums in the order they finish, which with
  // 3 or more threads changes the last bits from run to run; docs/determinism.md). Not
  // reentrant (one buffer per term).
  double energy(const Positions& x, double t) const override;
  // Element gradients go to a per-element buffer in parallel, then every node gathers its
  // own (node -> element adjacency): no races, no barrier per color, and the sum order does
  // not depend on the thread count. Not reentrant (one buffer per term).
  void addGradient(const Positions& x, double t, double scale, VecX& g) const override;
  void addHessian(const Positions& x, double t, HessianKind kind, double scale, const HessianSlots& slots,
                  double* values) const override;
  // The HessianKind that evaluates eq. 32 with `which` parameters (kApproximate: the Lamé
  // parameters of (E, nu); kApproximateModelParameters: the model's own), and back.
  static HessianKind approximateHessianKind(TangentParameters which) {
    return which == TangentParameters::kModel ? HessianKind::kApproximateModelParameters : HessianKind::kApproximate;
  }
  static TangentParameters tangentParametersOf(HessianKind approximate_kind) {
    return approximate_kind == HessianKind::kApproximateModelParameters ? TangentParameters::kModel
                                                                        : TangentParameters::kYoungsPoisson;
  }
  void addNodeBlock(int e, int local, const Positions& x, double t, HessianKind kind, Vec3& gradient,
                    Mat3& block) const override;

  // Convenience for t = 0 (tests, tools).
  double energy(const Positions& x) const { return energy(x, 0.0); }
  void addGradient(const Positions& x, VecX& g) const { addGradient(x, 0.0, 1.0, g); }

 private:
  void precompute(int quadrature_degree);
  MaterialPointData pointDataOf(int e, double t) const;
  size_t pointIndex(int e, int q) const { return static_cast<size_t>(e) * points_per_element_ + q; }
  int materialIndex(int e) const {
    return materials_.material_of_element.empty() ? 0 : materials_.material_of_element[e];
  }
  // Psi, P and the tangent of `kind` at F (any output may be null).
  static void evaluateMaterial(const Material& material, const MaterialPointData& data, const Mat3& F,
                               HessianKind kind, double* psi, Mat3* P, Mat9* D);

  std::shared_ptr<const Mesh> mesh_;
  ElementMaterials materials_;
  bool plane_strain_ = false;
  bool has_point_data_ = false;  // per-element data or an activation schedule given
  int num_elements_ = 0;
  int nodes_per_element_ = 0;
  int points_per_element_ = 0;
  int quadrature_degree_ = 0;
  std::vector<double> gradients_;      // per (element, point): N x 3 row-major
  std::vector<double> point_volumes_;  // per (element, point): V_q
  std::vector<double> volumes_;        // per element: sum_q V_q
  NodeAdjacency node_elements_;        // node -> (element, local index)
  mutable std::vector<double> element_gradients_;  // per element: 3N (addGradient's buffer)
  mutable std::vector<double> element_energies_;   // per element (energy's buffer)
};

// ---------------------------------------------------------------------------------------

template <int N>
void ElasticEnergy::elementTerms(int e, const Positions& x, double* energy, ElementVector<N>* gradient,
                                 ElementMatrix<N>* hessian, HessianKind kind, double t) const {
  const int* nodes = elementNodes(e);
  Eigen::Matrix<double, 3, N> xe;
  for (int a = 0; a < N; ++a) xe.col(a) = x.segment<3>(3 * nodes[a]);
  const Material& m = material(e);
  const MaterialPointData data = pointData(e, t);
  if (energy) *energy = 0.0;
  if (gradient) gradient->setZero();
  if (hessian) hessian->setZero();
  for (int q = 0; q < points_per_element_; ++q) {
    const Eigen::Matrix<double, N, 3> G = shapeGradients<N>(e, q);  // a local copy: aligned, column-major
    const double V = quadratureVolume(e, q);
    Mat3 F = xe.lazyProduct(G);  // lazy: Eigen would call its GEMM for N = 20 (3 + 3 + 20 >= 20)
    if (plane_strain_) F(2, 2) = 1.0;
    double psi = 0.0;
    Mat3 P;
    Mat9 D;
    evaluateMaterial(m, data, F, kind, energy ? &psi : nullptr, gradient ? &P : nullptr, hessian ? &D : nullptr);
    if (energy) *energy += V * psi;
    if (gradient) {
      // dE/dx_a = V P dN_a/dX: the 3 x N matrix V P G^T, column-major = nodal order.
      const Eigen::Matrix<double, 3, N> g = (V * P).lazyProduct(G.transpose());
      *gradient += Eigen::Map<const ElementVector<N>>(g.data());
    }
    if (hessian) {
      // V B^T D B without forming B: with D_ik(j, l) = D(i + 3 j, k + 3 l), the entries are
      // H(i + 3 a, k + 3 b) = V G.row(a) D_ik G.row(b)^T (a third of the dense flops).
      for (int k = 0; k < 3; ++k)
        for (int i = 0; i < 3; ++i) {
          Mat3 D_ik;
          for (int l = 0; l < 3; ++l)
            for (int j = 0; j < 3; ++j) D_ik(j, l) = D(i + 3 * j, k + 3 * l);
          const Eigen::Matrix<double, N, 3> GD = G.lazyProduct(D_ik);
          const Eigen::Matrix<double, N, N> T = V * GD.lazyProduct(G.transpose());
          for (int b = 0; b < N; ++b)
            for (int a = 0; a < N; ++a) (*hessian)(i + 3 * a, k + 3 * b) += T(a, b);
        }
    }
  }
}

template <int N>
void ElasticEnergy::nodeTerms(int e, int local, const Positions& x, double t, HessianKind kind, Vec3& gradient,
                              Mat3& block) const {
  const int* nodes = elementNodes(e);
  Eigen::Matrix<double, 3, N> xe;
  for (int a = 0; a < N; ++a) xe.col(a) = x.segment<3>(3 * nodes[a]);
  const Material& m = material(e);
  const MaterialPointData data = pointData(e, t);
  for (int q = 0; q < points_per_element_; ++q) {
    const Eigen::Matrix<double, N, 3> G = shapeGradients<N>(e, q);
    const double V = quadratureVolume(e, q);
    Mat3 F = xe.lazyProduct(G);
    if (plane_strain_) F(2, 2) = 1.0;
    Mat3 P;
    Mat9 D;
    evaluateMaterial(m, data, F, kind, nullptr, &P, &D);
    const Vec3 Ga = G.row(local).transpose();
    gradient += V * P * Ga;
    // H_aa(i, k) = V sum_{j, l} Ga_j D(i + 3 j, k + 3 l) Ga_l
    for (int k = 0; k < 3; ++k)
      for (int i = 0; i < 3; ++i) {
        double sum = 0.0;
        for (int l = 0; l < 3; ++l)
          for (int j = 0; j < 3; ++j) sum += Ga[j] * D(i + 3 * j, k + 3 * l) * Ga[l];
        block(i, k) += V * sum;
      }
  }
}

}  // namespace pbdlab
