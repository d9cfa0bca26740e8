#pragma once
// The embedding of mesh vertices in the background grid (PXPBD §5.5): vertex p follows the
// grid nodes i around it, x_p = sum_i w_ip x_i, the weights taken at the vertices' positions
// at the start of each step. Both kernels are tensor products of 1D weights, form a partition
// of unity and reproduce affine fields (sum_i w_ip x_i = x_p), the two properties APIC's
// conservation rests on (core/grid/apic_transfer.hpp).
//  - trilinear: 8 nodes, the linear interpolation PXPBD's Fig. 6 draws; weights are C0, their
//    gradient jumps on grid planes (there the gradient of the cell above is taken);
//  - quadratic B-spline: 27 nodes, APIC's usual choice; C1 weights.
#include <array>
#include <string>
#include <vector>

#include "core/grid/background_grid.hpp"

namespace pbdlab {

enum class GridKernel { kTrilinear, kQuadraticBSpline };

constexpr int kMaxGridStencilNodes = 27;
int gridStencilNodes(GridKernel kernel);  // 8 or 27
std::string gridKernelName(GridKernel kernel);

// One point's stencil: node[a], w_ip = weight[a] and grad w_ip = gradient[a] for a < count,
// x fastest over the stencil's nodes. Fixed size: no allocation per point.
struct GridStencil {
  int count = 0;
  std::array<int, kMaxGridStencilNodes> node{};
  std::array<double, kMaxGridStencilNodes> weight{};
  std::array<Vec3, kMaxGridStencilNodes> gradient;
};

// The stencil of the point x. Throws std::invalid_argument when x is not finite or its
// stencil leaves the grid (trilinear: grid coordinate u = (x - origin) / h in [0, n - 1] on
// every axis; quadratic: in [0.5, n - 1.5]), naming the axis, u and the range.
GridStencil gridStencil(const BackgroundGrid& grid, GridKernel kernel, const Vec3& x);

// W of x = W q for every point at once, vertex-major: point p's stencil is entries
// [p * nodes_per_point, (p + 1) * nodes_per_point). `points` keeps the positions the weights
// were taken at (APIC's x_p).
struct GridWeights {
  BackgroundGrid grid;
  GridKernel kernel = GridKernel::kTrilinear;
  int nodes_per_point = 0;
  Positions points;
  std::vector<int> node;
  std::vector<double> weight;
  std::vector<Vec3> gradient;

  int numPoints() const { return static_cast<int>(points.size() / 3); }
  Vec3 point(int p) const { return points.segment<3>(3 * static_cast<Eigen::Index>(p)); }
  size_t entry(int p) const { return static_cast<size_t>(p) * static_cast<size_t>(nodes_per_point); }
};

// Throws std::invalid_argument as gridStencil does, naming the point's index.
GridWeights computeGridWeights(const BackgroundGrid& grid, GridKernel kernel, const Positions& points);

// The embedding map x = W q: every point's position (or any per-node vector) interpolated
// from the grid's, 3 per node -> 3 per point.
Positions embed(const GridWeights& weights, const Positions& grid_values);
// Its transpose W^T g: per-point vectors scattered to the grid. The gradient in the grid
// unknowns of any energy of the points' positions is W^T of its gradient in the points'.
Positions embedTranspose(const GridWeights& weights, const Positions& point_values);

}  // namespace pbdlab
