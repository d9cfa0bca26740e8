#include "core/elastic_energy.hpp"

#include <Eigen/LU>
#include <cmath>

#include "core/input_error.hpp"
#include "core/reference_element.hpp"
#include "core/tangent_projection.hpp"

namespace pbdlab {

ElasticEnergy::ElasticEnergy(const Mesh& mesh, std::shared_ptr<const Material> material, int quadrature_degree)
    : mesh_(std::make_shared<Mesh>(mesh)), material_(std::move(material)) {
  if (elementDimension(mesh.element_type) != 3)
    throw std::invalid_argument("ElasticEnergy: " + elementTypeName(mesh.element_type) +
                                " elements are not volumetric; solid elasticity needs tet, hex, prism or pyramid "
                                "elements (" + mesh.source + ")");
  validateMesh(mesh);  // throws InputError naming the inverted or degenerate element
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
      const Mat3 J = X * reference_gradients[q];  // J(X, r_q) = dX/dr (high-order eq. 9)
      const double det = J.determinant();
      if (!(det > 0.0))
        throw InputError(mesh.source, "element " + std::to_string(e),
                         "det J(X, r) = " + std::to_string(det) + " <= 0 at quadrature point " + std::to_string(q));
      const Eigen::MatrixXd G = reference_gradients[q] * J.inverse();  // dN/dX = dN/dr J^-1
      Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>>(
          gradients_.data() + pointIndex(e, q) * N * 3, N, 3) = G;
      point_volumes_[pointIndex(e, q)] = rule.weights[q] * det;
      volumes_[e] += rule.weights[q] * det;
    }
  }
  coloring_ = colorElements(mesh);
}

Mat3 ElasticEnergy::deformationGradient(int e, int q, const Positions& x) const {
  const int* nodes = elementNodes(e);
  const double* G = gradients_.data() + pointIndex(e, q) * nodes_per_element_ * 3;
  Mat3 F = Mat3::Zero();
  for (int a = 0; a < nodes_per_element_; ++a)
    F += x.segment<3>(3 * nodes[a]) * Eigen::Map<const Eigen::RowVector3d>(G + 3 * a);
  return F;
}

Mat9 ElasticEnergy::tangent(const Mat3& F, HessianKind kind) const {
  const Mat9 D = material_->firstPiolaDerivative(F);
  if (kind == HessianKind::kTrue) return D;
  return material_->isIsotropic() ? projectIsotropicTangentToPositiveSemidefinite(F, D)
                                  : projectToPositiveSemidefinite(D);
}

void ElasticEnergy::elementTerms(int e, const Positions& x, double* energy, VecX* gradient, Eigen::MatrixXd* hessian,
                                 HessianKind kind) const {
  withNodeCount(elementType(), [&](auto n) {
    constexpr int N = decltype(n)::value;
    ElementVector<N> g;
    // Large fixed-size matrices (up to 60x60) live on the heap here; this path is not hot.
    auto H = std::make_unique<ElementMatrix<N>>();
    this->template elementTerms<N>(e, x, energy, gradient ? &g : nullptr, hessian ? H.get() : nullptr, kind);
    if (gradient) *gradient = g;
    if (hessian) *hessian = *H;
  });
}

double ElasticEnergy::energy(const Positions& x) const {
  double total = 0.0;
#pragma omp parallel for reduction(+ : total) schedule(static)
  for (int e = 0; e < num_elements_; ++e)
    for (int q = 0; q < points_per_element_; ++q)
      total += quadratureVolume(e, q) * material_->energyDensity(deformationGradient(e, q, x));
  return total;
}

void ElasticEnergy::addGradient(const Positions& x, VecX& g) const {
  withNodeCount(elementType(), [&](auto n) {
    constexpr int N = decltype(n)::value;
    for (const std::vector<int>& color : coloring_.groups) {
      const int count = static_cast<int>(color.size());
#pragma omp parallel for schedule(static)
      for (int k = 0; k < count; ++k) {
        const int e = color[k];
        ElementVector<N> ge;
        this->template elementTerms<N>(e, x, nullptr, &ge, nullptr);
        const int* nodes = elementNodes(e);
        for (int a = 0; a < N; ++a) g.segment<3>(3 * nodes[a]) += ge.template segment<3>(3 * a);
      }
    }
  });
}

}  // namespace pbdlab
