#pragma once
// The regular background grid of the grid-based scheme (PXPBD §5.5, after Jiang et al. 2015,
// "The Affine Particle-In-Cell Method"): the backward-Euler unknowns live on its nodes and the
// meshes are embedded in it (core/grid/grid_weights.hpp). Node (i, j, k) sits at
// origin + h (i, j, k); nodes are numbered x fastest: index = i + n_x (j + n_y k).
#include <Eigen/Core>
#include <utility>

#include "core/support/types.hpp"

namespace pbdlab {

class BackgroundGrid {
 public:
  // Throws std::invalid_argument for a non-finite origin, a spacing that is not a finite
  // h > 0, fewer than 2 nodes on an axis, or more nodes than an int can number.
  BackgroundGrid(const Vec3& origin, double spacing, const Eigen::Vector3i& node_counts);

  // The grid of spacing h over [box_min, box_max] with `margin_cells` whole cells beyond the
  // box on every side (at least one cell per axis, so a flat box gets a grid too). A point in
  // the box lies in the trilinear stencil region for any margin >= 0 and in the quadratic
  // B-spline one for margin >= 1. Throws std::invalid_argument for an empty box (min > max on
  // an axis, or a non-finite corner), h <= 0 or not finite, a negative margin.
  static BackgroundGrid covering(const Vec3& box_min, const Vec3& box_max, double spacing, int margin_cells);

  const Vec3& origin() const { return origin_; }
  double spacing() const { return spacing_; }
  const Eigen::Vector3i& nodeCounts() const { return counts_; }
  int numNodes() const { return counts_[0] * counts_[1] * counts_[2]; }

  int nodeIndex(int i, int j, int k) const { return i + counts_[0] * (j + counts_[1] * k); }
  int nodeIndex(const Eigen::Vector3i& ijk) const { return nodeIndex(ijk[0], ijk[1], ijk[2]); }
  Eigen::Vector3i nodeCoordinates(int index) const;
  Vec3 nodePosition(const Eigen::Vector3i& ijk) const { return origin_ + spacing_ * ijk.cast<double>(); }
  Vec3 nodePosition(int index) const { return nodePosition(nodeCoordinates(index)); }
  // Every node's position stacked [x0 y0 z0 x1 ...] (the grid's rest positions).
  Positions nodePositions() const;

 private:
  Vec3 origin_;
  double spacing_;
  Eigen::Vector3i counts_;
};

// The bounding box of stacked positions [x0 y0 z0 x1 ...]: {min, max}. Throws
// std::invalid_argument when there is no point (the box would be empty).
std::pair<Vec3, Vec3> boundingBox(const Positions& points);

}  // namespace pbdlab
