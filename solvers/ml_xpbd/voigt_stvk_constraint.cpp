#include "solvers/ml_xpbd/voigt_stvk_constraint.hpp"

namespace pbdlab {

std::string voigtMaterialProblem(const Material& material, int dimension) {
  if (material.name() != "stvk")
    return "its constraints are St. Venant-Kirchhoff in Voigt form (paper eq. 7); the material is '" +
           material.name() + "' (use model \"stvk\")";
  // pbdlab's StVK takes mu and lambda as they are (LameMapping raw == matched for StVK).
  const LameParameters lame = material.modelParameters();
  if (!(lame.mu > 0.0) || !(2.0 * lame.mu + dimension * lame.lambda > 0.0))
    return "the Voigt compliance (V K)^-1 of eq. 7 needs mu > 0 and 2 mu + " + std::to_string(dimension) +
           " lambda > 0; the material has mu " + std::to_string(lame.mu) + ", lambda " + std::to_string(lame.lambda);
  return "";
}

template <int D>
VoigtShapeGradients<D> voigtShapeGradients(const ElasticEnergy& energy, int e) {
  // P1: every quadrature point has the same dN/dX; point 0 stands for all.
  return energy.shapeGradients<VoigtDims<D>::kNodes>(e, 0).template leftCols<D>();
}

template VoigtShapeGradients<2> voigtShapeGradients<2>(const ElasticEnergy&, int);
template VoigtShapeGradients<3> voigtShapeGradients<3>(const ElasticEnergy&, int);

}  // namespace pbdlab
