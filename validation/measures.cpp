#include "validation/measures.hpp"

#include <Eigen/Geometry>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>

namespace pbdlab {

double deformedVolume(const Problem& problem, const Positions& x) {
  if (!problem.hasElasticEnergy()) return NAN;
  double volume = 0.0;
  for (const auto& term : problem.elasticTerms()) {  // one per element type (mixed bodies: several)
    const ElasticEnergy& elastic = *term;
    for (int e = 0; e < elastic.numElements(); ++e)
      for (int q = 0; q < elastic.quadraturePointsPerElement(); ++q)
        volume += elastic.quadratureVolume(e, q) * elastic.deformationGradient(e, q, x).determinant();
  }
  return volume;
}

double volumeRatio(const Problem& problem, const Positions& x) {
  if (!problem.hasElasticEnergy()) return NAN;
  return deformedVolume(problem, x) / deformedVolume(problem, problem.mesh.restPositionsFlat());
}

double restShapeDistance(const Mesh& mesh, const Positions& x) {
  const int n = mesh.numNodes();
  const Eigen::Matrix3Xd deformed = Eigen::Map<const Eigen::Matrix3Xd>(x.data(), 3, n);
  const Eigen::Matrix3Xd rest = mesh.rest_positions.transpose();
  const Eigen::Matrix4d alignment = Eigen::umeyama(deformed, rest, false);  // maps deformed onto rest
  const Eigen::Matrix3Xd aligned = (alignment.topLeftCorner<3, 3>() * deformed).colwise() + alignment.topRightCorner<3, 1>();
  return std::sqrt((aligned - rest).colwise().squaredNorm().mean());
}

ElementQuality elementQuality(const Problem& problem, const Positions& x, double degenerate_below) {
  ElementQuality quality;
  quality.degenerate_below = degenerate_below;
  for (const auto& term : problem.elasticTerms()) {  // one per element type (mixed bodies: several)
    const ElasticEnergy& elastic = *term;
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
  }
  return quality;
}

}  // namespace pbdlab
