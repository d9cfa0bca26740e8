#include "core/terms/elastic_energy.hpp"

#include <Eigen/LU>
#include <cmath>

#include "core/fem/reference_element.hpp"
#include "core/materials/tangent_projection.hpp"
#include "core/support/input_error.hpp"
#include "core/support/thread_settings.hpp"

namespace pbdlab {

ElasticEnergy::ElasticEnergy(std::shared_ptr<const Mesh> mesh, ElementMaterials materials, int quadrature_degree)
    : mesh_(std::move(mesh)), materials_(std::move(materials)) {
  const Mesh& m = *mesh_;
  if (elementDimension(m.element_type) != 3 && !isTwoDimensional(m))
    throw std::invalid_argument("ElasticEnergy: a " + elementTypeName(m.element_type) +
                                " surface in 3D is not a solid; solid elasticity needs tet, hex, prism or pyramid "
                                "elements, or a 2D triangle mesh (plane strain); a surface takes the membrane term (" +
                                m.source + ")");
  if (materials_.materials.empty()) throw std::invalid_argument("ElasticEnergy: no material");
  for (const auto& material : materials_.materials)
    if (!material) throw std::invalid_argument("ElasticEnergy: a material is null");
  const int n_materials = static_cast<int>(materials_.materials.size());
  if (!materials_.material_of_element.empty()) {
    if (static_cast<int>(materials_.material_of_element.size()) != m.numElements())
      throw std::invalid_argument("ElasticEnergy: material_of_element needs one entry per element");
    for (int index : materials_.material_of_element)
      if (index < 0 || index >= n_materials) throw std::invalid_argument("ElasticEnergy: material index out of range");
  }
  if (!materials_.element_data.empty() && static_cast<int>(materials_.element_data.size()) != m.numElements())
    throw std::invalid_argument("ElasticEnergy: element_data needs one entry per element");
  if (!materials_.activation.empty() && static_cast<int>(materials_.activation.size()) != n_materials)
    throw std::invalid_argument("ElasticEnergy: activation needs one schedule per material (or none)");
  precompute(quadrature_degree);
}

ElasticEnergy::ElasticEnergy(const Mesh& mesh, std::shared_ptr<const Material> material, int quadrature_degree)
    : mesh_(std::make_shared<const Mesh>(mesh)) {
  if (elementDimension(mesh.element_type) == 3 || isTwoDimensional(mesh)) validateMesh(mesh);
  *this = ElasticEnergy(mesh_, ElementMaterials{{std::move(material)}, {}, {}, {}}, quadrature_degree);
}

void ElasticEnergy::precompute(int quadrature_degree) {
  const Mesh& mesh = *mesh_;
  plane_strain_ = elementDimension(mesh.element_type) == 2;
  const ReferenceElement& reference = ReferenceElement::of(mesh.element_type);
  quadrature_degree_ = quadrature_degree > 0 ? quadrature_degree : reference.stiffnessQuadratureDegree();
  const QuadratureRule rule = reference.quadrature(quadrature_degree_);

  num_elements_ = mesh.numElements();
  nodes_per_element_ = reference.numNodes();
  points_per_element_ = rule.size();
  const int N = nodes_per_element_;
  std::vector<Eigen::MatrixXd> reference_gradients;  // dN/dr at each point, shared by all elements
  for (const Vec3& r : rule.points) reference_gradients.push_back(reference.shapeGradients(r));

  gradients_.resize(static_cast<size_t>(num_elements_) * points_per_element_ * N * 3);
  point_volumes_.resize(static_cast<size_t>(num_elements_) * points_per_element_);
  volumes_.assign(num_elements_, 0.0);
  for (int e = 0; e < num_elements_; ++e) {
    Eigen::MatrixXd X(3, N);  // rest positions of the element's nodes
    for (int a = 0; a < N; ++a) X.col(a) = mesh.restPosition(elementNodes(e)[a]);
    for (int q = 0; q < points_per_element_; ++q) {
      Eigen::MatrixXd G = Eigen::MatrixXd::Zero(N, 3);
      double det = 0.0;
      if (plane_strain_) {  // the 2x2 map of the plane; dN/dZ = 0
        const Eigen::Matrix2d J = X.topRows<2>() * reference_gradients[q].leftCols<2>();
        det = J.determinant();
        if (det > 0.0) G.leftCols<2>() = reference_gradients[q].leftCols<2>() * J.inverse();
      } else {
        const Mat3 J = X * reference_gradients[q];  // J(X, r_q) = dX/dr (high-order eq. 9)
        det = J.determinant();
        if (det > 0.0) G = reference_gradients[q] * J.inverse();  // dN/dX = dN/dr J^-1
      }
      if (!(det > 0.0))
        throw InputError(mesh.source, "element " + std::to_string(e),
                         "det J(X, r) = " + std::to_string(det) + " <= 0 at quadrature point " + std::to_string(q));
      Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>>(
          gradients_.data() + pointIndex(e, q) * N * 3, N, 3) = G;
      point_volumes_[pointIndex(e, q)] = rule.weights[q] * det;
      volumes_[e] += rule.weights[q] * det;
    }
  }
  has_point_data_ = !materials_.element_data.empty();
  for (const ActivationSchedule& schedule : materials_.activation) has_point_data_ |= static_cast<bool>(schedule);
  node_elements_ = nodeAdjacency(mesh.numNodes(), {num_elements_, N, [this](int e) { return elementNodes(e); }});
  element_gradients_.assign(static_cast<size_t>(num_elements_) * 3 * N, 0.0);
  element_energies_.assign(static_cast<size_t>(num_elements_), 0.0);
}

MaterialPointData ElasticEnergy::pointDataOf(int e, double t) const {
  MaterialPointData data = materials_.element_data.empty() ? MaterialPointData{} : materials_.element_data[e];
  if (!materials_.activation.empty()) {
    const ActivationSchedule& schedule = materials_.activation[materialIndex(e)];
    if (schedule) data.activation = schedule(t);
  }
  return data;
}

void ElasticEnergy::evaluateMaterial(const Material& m, const MaterialPointData& data, const Mat3& F,
                                     HessianKind kind, double* psi, Mat3* P, Mat9* D) {
  if (!D || kind == HessianKind::kTrue) {
    m.evaluate(F, data, psi, P, D);
    return;
  }
  if (isApproximate(kind)) {
    m.evaluate(F, data, psi, P, nullptr);
    *D = m.approximateTangent(F, data, tangentParametersOf(kind));
    return;
  }
  m.evaluate(F, data, psi, P, D);
  *D = m.isIsotropic() ? projectIsotropicTangentToPositiveSemidefinite(F, *D) : projectToPositiveSemidefinite(*D);
}

Mat3 ElasticEnergy::deformationGradient(int e, int q, const Positions& x) const {
  const int* nodes = elementNodes(e);
  const double* G = gradients_.data() + pointIndex(e, q) * nodes_per_element_ * 3;
  Mat3 F = Mat3::Zero();
  for (int a = 0; a < nodes_per_element_; ++a)
    F += x.segment<3>(3 * nodes[a]) * Eigen::Map<const Eigen::RowVector3d>(G + 3 * a);
  if (plane_strain_) F(2, 2) = 1.0;
  return F;
}

void ElasticEnergy::elementTerms(int e, const Positions& x, double* energy, VecX* gradient, Eigen::MatrixXd* hessian,
                                 HessianKind kind, double t) const {
  withNodeCount(elementType(), [&](auto n) {
    constexpr int N = decltype(n)::value;
    ElementVector<N> g;
    // Large fixed-size matrices (up to 60x60) live on the heap here; this path is not hot.
    auto H = std::make_unique<ElementMatrix<N>>();
    this->template elementTerms<N>(e, x, energy, gradient ? &g : nullptr, hessian ? H.get() : nullptr, kind, t);
    if (gradient) *gradient = g;
    if (hessian) *hessian = *H;
  });
}

double ElasticEnergy::energy(const Positions& x, double t) const {
  // The fixed-size element kernel (energy only): the run-time-size loop over an element's
  // nodes in deformationGradient() cost 6% at Res 32.
  // No `reduction(+)`: its combination order follows the threads' arrival (see the header).
  // The ordered sum below costs about 1 ns per element against 0.3-2 us for its kernel.
  double* buffer = element_energies_.data();
  withNodeCount(elementType(), [&](auto n) {
    constexpr int N = decltype(n)::value;
#pragma omp parallel for schedule(static) if (worthThreads(num_elements_))
    for (int e = 0; e < num_elements_; ++e) {
      double element_energy = 0.0;
      this->template elementTerms<N>(e, x, &element_energy, nullptr, nullptr, HessianKind::kTrue, t);
      buffer[e] = element_energy;
    }
  });
  double total = 0.0;
  for (int e = 0; e < num_elements_; ++e) total += buffer[e];  // element order: as on one thread
  return total;
}

void ElasticEnergy::addGradient(const Positions& x, double t, double scale, VecX& g) const {
  withNodeCount(elementType(), [&](auto n) {
    constexpr int N = decltype(n)::value;
    double* buffer = element_gradients_.data();
#pragma omp parallel for schedule(static) if (worthThreads(num_elements_))
    for (int e = 0; e < num_elements_; ++e) {
      ElementVector<N> ge;
      this->template elementTerms<N>(e, x, nullptr, &ge, nullptr, HessianKind::kTrue, t);
      Eigen::Map<ElementVector<N>>(buffer + static_cast<size_t>(e) * 3 * N) = ge;
    }
    const int n_nodes = node_elements_.numNodes();
#pragma omp parallel for schedule(static) if (worthThreads(n_nodes))
    for (int i = 0; i < n_nodes; ++i) {
      Vec3 sum = Vec3::Zero();
      for (int p = node_elements_.start[i]; p < node_elements_.start[i + 1]; ++p)
        sum += Eigen::Map<const Vec3>(buffer + static_cast<size_t>(node_elements_.stencil[p]) * 3 * N +
                                      3 * node_elements_.local[p]);
      g.segment<3>(3 * i) += scale * sum;
    }
  });
}

void ElasticEnergy::addHessian(const Positions& x, double t, HessianKind kind, double scale, const HessianSlots& slots,
                               double* values) const {
  withNodeCount(elementType(), [&](auto n) {
    constexpr int N = decltype(n)::value;
    for (const std::vector<int>& color : stencilColoring().groups) {
      const int count = static_cast<int>(color.size());
#pragma omp parallel for schedule(static) if (worthThreads(count))
      for (int k = 0; k < count; ++k) {
        const int e = color[k];
        if (slots.usesNodeLists() && slots.numUsedNodes(e) == 0) continue;  // nothing of it is stored
        ElementMatrix<N> H;
        this->template elementTerms<N>(e, x, nullptr, nullptr, &H, kind, t);
        scatterStencilHessian(slots, e, N, H, scale, values);
      }
    }
  });
}

void ElasticEnergy::addNodeBlock(int e, int local, const Positions& x, double t, HessianKind kind, Vec3& gradient,
                                 Mat3& block) const {
  withNodeCount(elementType(), [&](auto n) {
    constexpr int N = decltype(n)::value;
    this->template nodeTerms<N>(e, local, x, t, kind, gradient, block);
  });
}

}  // namespace pbdlab
