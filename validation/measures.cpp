#include "validation/measures.hpp"

#include <Eigen/LU>
#include <cmath>

namespace pbdlab {

double deformedVolume(const Problem& problem, const Positions& x) {
  if (!problem.hasElasticEnergy()) return NAN;
  const ElasticEnergy& elastic = problem.elasticEnergy();
  double volume = 0.0;
  for (int e = 0; e < elastic.numElements(); ++e)
    for (int q = 0; q < elastic.quadraturePointsPerElement(); ++q)
      volume += elastic.quadratureVolume(e, q) * elastic.deformationGradient(e, q, x).determinant();
  return volume;
}

double volumeRatio(const Problem& problem, const Positions& x) {
  if (!problem.hasElasticEnergy()) return NAN;
  return deformedVolume(problem, x) / deformedVolume(problem, problem.mesh.restPositionsFlat());
}

}  // namespace pbdlab
