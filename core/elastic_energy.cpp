#include "core/elastic_energy.hpp"

#include <Eigen/LU>

#include "core/tangent_projection.hpp"

namespace pbdlab {

namespace {

// V B^T D B without forming B (9x12 with 4 non-zeros a row): with D_ik(j, l) = D(i + 3 j,
// k + 3 l), the 3x3 block (a, b) of the element Hessian has entries
// H(i + 3 a, k + 3 b) = V G.row(a) D_ik G.row(b)^T. About a third of the dense product's flops.
void addElementHessian(const TetShapeGradients& G, const Mat9& D, double V, Mat12& H) {
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 3; ++i) {
      Mat3 D_ik;
      for (int l = 0; l < 3; ++l)
        for (int j = 0; j < 3; ++j) D_ik(j, l) = D(i + 3 * j, k + 3 * l);
      const Eigen::Matrix<double, 4, 4> T = V * (G * D_ik * G.transpose());
      for (int b = 0; b < 4; ++b)
        for (int a = 0; a < 4; ++a) H(i + 3 * a, k + 3 * b) = T(a, b);
    }
}

}  // namespace

ElasticEnergy::ElasticEnergy(const Mesh& mesh, std::shared_ptr<const Material> material)
    : mesh_(std::make_shared<Mesh>(mesh)), material_(std::move(material)) {
  const std::vector<double> volumes = restVolumes(mesh);  // throws on inverted/degenerate
  const int n = mesh.numElements();
  nodes_.resize(n);
  shape_gradients_.resize(n);
  volumes_ = volumes;
  for (int e = 0; e < n; ++e) {
    nodes_[e] = mesh.elements.row(e).head<4>();
    // Dm = [X1 - X0, X2 - X0, X3 - X0]; dN_{1..3}/dX = rows of Dm^{-1}, dN_0 = -their sum.
    Mat3 Dm;
    for (int k = 0; k < 3; ++k) Dm.col(k) = mesh.restPosition(nodes_[e][k + 1]) - mesh.restPosition(nodes_[e][0]);
    const Mat3 Dm_inv = Dm.inverse();
    shape_gradients_[e].row(0) = -Dm_inv.colwise().sum();
    shape_gradients_[e].bottomRows<3>() = Dm_inv;
  }
  coloring_ = colorElements(mesh);
}

Mat3 ElasticEnergy::deformationGradient(int e, const Positions& x) const {
  const auto& nodes = nodes_[e];
  const TetShapeGradients& G = shape_gradients_[e];
  Mat3 F = Mat3::Zero();
  for (int a = 0; a < 4; ++a) F += x.segment<3>(3 * nodes[a]) * G.row(a);
  return F;
}

void ElasticEnergy::elementTerms(int e, const Positions& x, double* energy, Vec12* gradient,
                                 Mat12* hessian, HessianKind kind) const {
  const Mat3 F = deformationGradient(e, x);
  const double V = volumes_[e];
  const TetShapeGradients& G = shape_gradients_[e];
  if (energy) *energy = V * material_->energyDensity(F);
  if (gradient) {
    // dE/dx_a = V P dN_a/dX  (3x4 column-major = nodal order)
    const Eigen::Matrix<double, 3, 4> g = V * material_->firstPiola(F) * G.transpose();
    *gradient = Eigen::Map<const Vec12>(g.data());
  }
  if (hessian) {
    Mat9 dPdF = material_->firstPiolaDerivative(F);
    if (kind == HessianKind::kProjected)
      dPdF = material_->isIsotropic() ? projectIsotropicTangentToPositiveSemidefinite(F, dPdF)
                                      : projectToPositiveSemidefinite(dPdF);
    addElementHessian(G, dPdF, V, *hessian);
  }
}

double ElasticEnergy::energy(const Positions& x) const {
  const int n = numElements();
  double total = 0.0;
#pragma omp parallel for reduction(+ : total) schedule(static)
  for (int e = 0; e < n; ++e) total += volumes_[e] * material_->energyDensity(deformationGradient(e, x));
  return total;
}

void ElasticEnergy::addGradient(const Positions& x, VecX& g) const {
  for (const std::vector<int>& color : coloring_.groups) {
    const int count = static_cast<int>(color.size());
#pragma omp parallel for schedule(static)
    for (int k = 0; k < count; ++k) {
      const int e = color[k];
      Vec12 ge;
      elementTerms(e, x, nullptr, &ge, nullptr);
      for (int a = 0; a < 4; ++a) g.segment<3>(3 * nodes_[e][a]) += ge.segment<3>(3 * a);
    }
  }
}

}  // namespace pbdlab
