#include "core/grid/background_grid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace pbdlab {

namespace {

std::string vectorText(const Vec3& v) {
  std::ostringstream out;
  out.precision(17);
  out << "(" << v[0] << ", " << v[1] << ", " << v[2] << ")";
  return out.str();
}

void checkSpacing(double spacing) {
  if (!std::isfinite(spacing) || !(spacing > 0.0)) {
    std::ostringstream out;
    out << "background grid: spacing h = " << spacing << " must be finite and > 0";
    throw std::invalid_argument(out.str());
  }
}

}  // namespace

BackgroundGrid::BackgroundGrid(const Vec3& origin, double spacing, const Eigen::Vector3i& node_counts)
    : origin_(origin), spacing_(spacing), counts_(node_counts) {
  checkSpacing(spacing);
  if (!origin.allFinite())
    throw std::invalid_argument("background grid: origin " + vectorText(origin) + " is not finite");
  for (int axis = 0; axis < 3; ++axis)
    if (node_counts[axis] < 2)
      throw std::invalid_argument("background grid: " + std::to_string(node_counts[axis]) + " nodes on axis " +
                                  std::to_string(axis) + ", at least 2 (one cell) are needed");
  const double total = static_cast<double>(node_counts[0]) * node_counts[1] * node_counts[2];
  if (total > std::numeric_limits<int>::max())
    throw std::invalid_argument("background grid: " + std::to_string(total) + " nodes are more than an int can number");
}

BackgroundGrid BackgroundGrid::covering(const Vec3& box_min, const Vec3& box_max, double spacing, int margin_cells) {
  checkSpacing(spacing);
  if (!box_min.allFinite() || !box_max.allFinite() || (box_min.array() > box_max.array()).any())
    throw std::invalid_argument("background grid: the box from " + vectorText(box_min) + " to " + vectorText(box_max) +
                                " is empty or not finite");
  if (margin_cells < 0)
    throw std::invalid_argument("background grid: margin of " + std::to_string(margin_cells) + " cells, must be >= 0");
  Eigen::Vector3i counts;
  for (int axis = 0; axis < 3; ++axis) {
    const double cells = std::max(1.0, std::ceil((box_max[axis] - box_min[axis]) / spacing)) + 2.0 * margin_cells;
    if (cells + 1 > std::numeric_limits<int>::max())
      throw std::invalid_argument("background grid: " + std::to_string(cells) + " cells on axis " +
                                  std::to_string(axis) + " are more than an int can number (spacing too small?)");
    counts[axis] = static_cast<int>(cells) + 1;
  }
  return BackgroundGrid(box_min - Vec3::Constant(margin_cells * spacing), spacing, counts);
}

Eigen::Vector3i BackgroundGrid::nodeCoordinates(int index) const {
  const int i = index % counts_[0];
  const int rest = index / counts_[0];
  return Eigen::Vector3i(i, rest % counts_[1], rest / counts_[1]);
}

Positions BackgroundGrid::nodePositions() const {
  Positions x(3 * static_cast<Eigen::Index>(numNodes()));
  for (int index = 0; index < numNodes(); ++index)
    x.segment<3>(3 * static_cast<Eigen::Index>(index)) = nodePosition(index);
  return x;
}

std::pair<Vec3, Vec3> boundingBox(const Positions& points) {
  if (points.size() == 0 || points.size() % 3 != 0)
    throw std::invalid_argument("bounding box: " + std::to_string(points.size()) +
                                " coordinates, need a positive multiple of 3 (no point, no box)");
  const auto rows = Eigen::Map<const MatX3>(points.data(), points.size() / 3, 3);
  return {rows.colwise().minCoeff().transpose(), rows.colwise().maxCoeff().transpose()};
}

}  // namespace pbdlab
