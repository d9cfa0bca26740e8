#include "validation/measures.hpp"

#include <Eigen/Geometry>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

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

bool isSurfaceProblem(const Problem& problem) {
  return !problem.hasElasticEnergy() && !problem.hasMixedElementTypes() &&
         problem.mesh.element_type == ElementType::kTri3;
}

SurfaceMeasures surfaceMeasures(const Problem& problem, const Positions& x) {
  SurfaceMeasures measures;
  if (!isSurfaceProblem(problem)) return measures;
  const Mesh& mesh = problem.mesh;
  const auto at = [&](int node) -> Vec3 { return x.segment<3>(3 * node); };
  // Unique edges (a < b) of the triangles.
  std::vector<std::pair<int, int>> edges;
  edges.reserve(static_cast<std::size_t>(3 * mesh.numElements()));
  double area = 0.0, rest_area = 0.0;
  for (int e = 0; e < mesh.numElements(); ++e) {
    const int a = mesh.elements(e, 0), b = mesh.elements(e, 1), c = mesh.elements(e, 2);
    for (const auto& [i, j] : {std::pair{a, b}, std::pair{b, c}, std::pair{c, a}})
      edges.emplace_back(std::min(i, j), std::max(i, j));
    area += 0.5 * (at(b) - at(a)).cross(at(c) - at(a)).norm();
    rest_area += 0.5 * (mesh.restPosition(b) - mesh.restPosition(a)).cross(mesh.restPosition(c) - mesh.restPosition(a)).norm();
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  double sum = 0.0, largest = -std::numeric_limits<double>::infinity();
  for (const auto& [i, j] : edges) {
    const double stretch = (at(j) - at(i)).norm() / (mesh.restPosition(j) - mesh.restPosition(i)).norm() - 1.0;
    sum += stretch;
    largest = std::max(largest, stretch);  // a NaN stretch leaves largest as it was: the mean says NaN
  }
  measures.stretch_mean = sum / static_cast<double>(edges.size());
  measures.stretch_max = std::isfinite(measures.stretch_mean) ? largest : NAN;
  measures.area_ratio = area / rest_area;
  const Vec3 up = problem.gravity.squaredNorm() > 0.0 ? Vec3(-problem.gravity.normalized()) : Vec3::UnitY();
  double lowest = std::numeric_limits<double>::infinity();
  for (int i = 0; i < mesh.numNodes(); ++i) lowest = std::min(lowest, at(i).dot(up));
  measures.lowest_point = x.allFinite() ? lowest : NAN;
  return measures;
}

}  // namespace pbdlab
