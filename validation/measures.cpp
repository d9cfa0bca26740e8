#include "validation/measures.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>

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

ElementQuality elementQuality(const Problem& problem, const Positions& x, double degenerate_below) {
  ElementQuality quality;
  quality.degenerate_below = degenerate_below;
  if (!problem.hasElasticEnergy()) return quality;
  const ElasticEnergy& elastic = problem.elasticEnergy();
  for (int e = 0; e < elastic.numElements(); ++e) {
    double smallest = std::numeric_limits<double>::infinity();
    for (int q = 0; q < elastic.quadraturePointsPerElement(); ++q)
      smallest = std::min(smallest, elastic.deformationGradient(e, q, x).determinant());
    // NaN (a diverged state) counts as inverted: nothing can be said of such an element.
    if (!(smallest > 0.0))
      ++quality.inverted;
    else if (smallest < degenerate_below)
      ++quality.degenerate;
  }
  return quality;
}

}  // namespace pbdlab
