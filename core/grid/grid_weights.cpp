#include "core/grid/grid_weights.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace pbdlab {

int gridStencilNodes(GridKernel kernel) { return kernel == GridKernel::kTrilinear ? 8 : 27; }

std::string gridKernelName(GridKernel kernel) {
  return kernel == GridKernel::kTrilinear ? "trilinear" : "quadratic B-spline";
}

namespace {

// The 1D weights on one axis: nodes base + a, a < width, with w[a] and dw[a] = dw/du (u in
// cells).
struct AxisWeights {
  int base = 0;
  double w[3] = {0.0, 0.0, 0.0};
  double dw[3] = {0.0, 0.0, 0.0};
};

[[noreturn]] void throwOutside(const Vec3& x, GridKernel kernel, int axis, double u, double lo, double hi) {
  std::ostringstream out;
  out.precision(17);
  out << "point (" << x[0] << ", " << x[1] << ", " << x[2] << ") is outside the background grid for the "
      << gridKernelName(kernel) << " kernel: on axis " << "xyz"[axis] << " its grid coordinate (x - origin) / h = "
      << u << " is not in [" << lo << ", " << hi << "] (grow the grid's margin)";
  throw std::invalid_argument(out.str());
}

AxisWeights axisWeights(GridKernel kernel, double u, int nodes, const Vec3& x, int axis) {
  AxisWeights a;
  if (kernel == GridKernel::kTrilinear) {
    // Closed interval [0, n - 1]: on the last node the cell below is used (its upper weight is 1).
    if (!(u >= 0.0 && u <= nodes - 1.0)) throwOutside(x, kernel, axis, u, 0.0, nodes - 1.0);
    a.base = std::min(static_cast<int>(std::floor(u)), nodes - 2);
    const double f = u - a.base;  // in [0, 1]
    a.w[0] = 1.0 - f;
    a.w[1] = f;
    a.dw[0] = -1.0;
    a.dw[1] = 1.0;
    return a;
  }
  // Quadratic B-spline N(t) = 3/4 - t^2 for |t| < 1/2, (3/2 - |t|)^2 / 2 for 1/2 <= |t| < 3/2:
  // the three nodes nearest u. At u = n - 3/2 the third node's weight is 0 and the stencil
  // shifts down so that it stays in the grid.
  if (!(u >= 0.5 && u <= nodes - 1.5)) throwOutside(x, kernel, axis, u, 0.5, nodes - 1.5);
  a.base = std::min(static_cast<int>(std::floor(u - 0.5)), nodes - 3);
  const double f = u - a.base;  // in [0.5, 1.5]
  a.w[0] = 0.5 * (1.5 - f) * (1.5 - f);
  a.w[1] = 0.75 - (f - 1.0) * (f - 1.0);
  a.w[2] = 0.5 * (f - 0.5) * (f - 0.5);
  a.dw[0] = f - 1.5;
  a.dw[1] = -2.0 * (f - 1.0);
  a.dw[2] = f - 0.5;
  return a;
}

}  // namespace

GridStencil gridStencil(const BackgroundGrid& grid, GridKernel kernel, const Vec3& x) {
  if (!x.allFinite()) {
    std::ostringstream out;
    out << "point (" << x[0] << ", " << x[1] << ", " << x[2] << ") has a non-finite coordinate";
    throw std::invalid_argument(out.str());
  }
  const int width = kernel == GridKernel::kTrilinear ? 2 : 3;
  const double h = grid.spacing();
  AxisWeights axes[3];
  for (int axis = 0; axis < 3; ++axis)
    axes[axis] = axisWeights(kernel, (x[axis] - grid.origin()[axis]) / h, grid.nodeCounts()[axis], x, axis);
  GridStencil stencil;
  stencil.count = width * width * width;
  int s = 0;
  for (int c = 0; c < width; ++c)
    for (int b = 0; b < width; ++b)
      for (int a = 0; a < width; ++a, ++s) {
        const double wx = axes[0].w[a], wy = axes[1].w[b], wz = axes[2].w[c];
        stencil.node[s] = grid.nodeIndex(axes[0].base + a, axes[1].base + b, axes[2].base + c);
        stencil.weight[s] = wx * wy * wz;
        stencil.gradient[s] = Vec3(axes[0].dw[a] * wy * wz, wx * axes[1].dw[b] * wz, wx * wy * axes[2].dw[c]) / h;
      }
  return stencil;
}

GridWeights computeGridWeights(const BackgroundGrid& grid, GridKernel kernel, const Positions& points) {
  if (points.size() % 3 != 0)
    throw std::invalid_argument("grid weights: " + std::to_string(points.size()) + " coordinates, not 3 per point");
  GridWeights weights{grid, kernel, gridStencilNodes(kernel), points, {}, {}, {}};
  const int n = weights.numPoints();
  const size_t entries = static_cast<size_t>(n) * weights.nodes_per_point;
  weights.node.resize(entries);
  weights.weight.resize(entries);
  weights.gradient.resize(entries);
  for (int p = 0; p < n; ++p) {
    GridStencil stencil;
    try {
      stencil = gridStencil(grid, kernel, weights.point(p));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("grid weights of point " + std::to_string(p) + ": " + e.what());
    }
    const size_t first = weights.entry(p);
    for (int a = 0; a < stencil.count; ++a) {
      weights.node[first + a] = stencil.node[a];
      weights.weight[first + a] = stencil.weight[a];
      weights.gradient[first + a] = stencil.gradient[a];
    }
  }
  return weights;
}

namespace {

void checkSize(const char* what, const Positions& values, int count, const char* per) {
  if (values.size() != 3 * static_cast<Eigen::Index>(count))
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(values.size()) + " values, expected 3 per " +
                                per + " (" + std::to_string(3 * static_cast<long long>(count)) + ")");
}

}  // namespace

Positions embed(const GridWeights& weights, const Positions& grid_values) {
  checkSize("embed", grid_values, weights.grid.numNodes(), "grid node");
  Positions out = Positions::Zero(3 * static_cast<Eigen::Index>(weights.numPoints()));
  for (int p = 0; p < weights.numPoints(); ++p) {
    const size_t first = weights.entry(p);
    Vec3 sum = Vec3::Zero();
    for (int a = 0; a < weights.nodes_per_point; ++a)
      sum += weights.weight[first + a] * grid_values.segment<3>(3 * static_cast<Eigen::Index>(weights.node[first + a]));
    out.segment<3>(3 * static_cast<Eigen::Index>(p)) = sum;
  }
  return out;
}

Positions embedTranspose(const GridWeights& weights, const Positions& point_values) {
  checkSize("embedTranspose", point_values, weights.numPoints(), "point");
  Positions out = Positions::Zero(3 * static_cast<Eigen::Index>(weights.grid.numNodes()));
  for (int p = 0; p < weights.numPoints(); ++p) {
    const size_t first = weights.entry(p);
    const Vec3 g = point_values.segment<3>(3 * static_cast<Eigen::Index>(p));
    for (int a = 0; a < weights.nodes_per_point; ++a)
      out.segment<3>(3 * static_cast<Eigen::Index>(weights.node[first + a])) += weights.weight[first + a] * g;
  }
  return out;
}

}  // namespace pbdlab
