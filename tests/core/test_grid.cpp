// The background grid of the grid-based scheme (PXPBD §5.5, after APIC, Jiang et al. 2015):
// indexing and covering, the interpolation weights (partition of unity, affine reproduction,
// gradients against central differences), APIC's transfers (what P2G and G2P conserve, the
// affine field they carry exactly), the embedding map's transpose and the grid coloring of
// PXPBD §4 / Fig. 6 with its warm-started recoloring. Both kernels throughout.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/grid/apic_transfer.hpp"
#include "core/grid/background_grid.hpp"
#include "core/grid/grid_coloring.hpp"
#include "core/grid/grid_weights.hpp"
#include "core/model/grid_step_problem.hpp"  // kGridMasslessFraction
#include "tests/support/random_samples.hpp"

namespace pbdlab {
namespace {

const GridKernel kGridTestKernels[] = {GridKernel::kTrilinear, GridKernel::kQuadraticBSpline};

// Spacing and origin are binary fractions, so node positions and grid coordinates of points
// on nodes and planes are exact.
BackgroundGrid gridTestGrid() { return BackgroundGrid(Vec3(-1.0, -0.5, 0.25), 0.25, Eigen::Vector3i(12, 11, 10)); }

// The grid-coordinate interval a kernel's stencil stays inside (grid_weights.hpp).
double gridTestLow(GridKernel kernel) { return kernel == GridKernel::kTrilinear ? 0.0 : 0.5; }
double gridTestHigh(GridKernel kernel, int nodes) { return nodes - 1.0 - gridTestLow(kernel); }

Vec3 gridTestPointAt(const BackgroundGrid& grid, const Vec3& u) { return grid.origin() + grid.spacing() * u; }

// A point uniform in the region where the kernel's stencil lies in the grid.
Vec3 gridTestRandomPoint(std::mt19937& rng, const BackgroundGrid& grid, GridKernel kernel) {
  Vec3 u;
  for (int axis = 0; axis < 3; ++axis)
    u[axis] = test::uniform(rng, gridTestLow(kernel), gridTestHigh(kernel, grid.nodeCounts()[axis]));
  return gridTestPointAt(grid, u);
}

// Points on grid nodes, on grid planes (one or two coordinates whole), on the quadratic
// kernel's half-integer breaks, and on the ends of each kernel's interval.
std::vector<Vec3> gridTestSpecialPoints(std::mt19937& rng, const BackgroundGrid& grid, GridKernel kernel) {
  std::vector<Vec3> points;
  const Eigen::Vector3i n = grid.nodeCounts();
  for (int k = 0; k < 20; ++k) {
    const Vec3 u(std::round(test::uniform(rng, 1, n[0] - 3)), std::round(test::uniform(rng, 1, n[1] - 3)),
                 std::round(test::uniform(rng, 1, n[2] - 3)));
    Vec3 on_plane = u, on_line = u, on_half = u;
    on_plane[(k + 1) % 3] += test::uniform(rng, 0.0, 1.0);
    on_plane[(k + 2) % 3] += test::uniform(rng, 0.0, 1.0);
    on_line[k % 3] += test::uniform(rng, 0.0, 1.0);
    on_half[k % 3] += 0.5;
    for (const Vec3& v : {u, on_plane, on_line, on_half}) points.push_back(gridTestPointAt(grid, v));
  }
  const double lo = gridTestLow(kernel);
  for (int axis = 0; axis < 3; ++axis) {
    Vec3 low = Vec3::Constant(3.0), high = Vec3::Constant(3.0);
    low[axis] = lo;
    high[axis] = gridTestHigh(kernel, n[axis]);
    points.push_back(gridTestPointAt(grid, low));
    points.push_back(gridTestPointAt(grid, high));
  }
  points.push_back(gridTestPointAt(grid, Vec3(lo, lo, lo)));
  points.push_back(gridTestPointAt(
      grid, Vec3(gridTestHigh(kernel, n[0]), gridTestHigh(kernel, n[1]), gridTestHigh(kernel, n[2]))));
  return points;
}

// Independent standard normal entries.
VecX gridTestNormals(std::mt19937& rng, Eigen::Index count) {
  std::normal_distribution<double> normal;
  VecX v(count);
  for (double& entry : v) entry = normal(rng);
  return v;
}
Mat3 gridTestNormalMatrix(std::mt19937& rng) { return Eigen::Map<const Mat3>(gridTestNormals(rng, 9).data()); }

// w_ip of one node at x (0 when the node is not in x's stencil).
double gridTestWeightOf(const BackgroundGrid& grid, GridKernel kernel, const Vec3& x, int node) {
  const GridStencil stencil = gridStencil(grid, kernel, x);
  for (int a = 0; a < stencil.count; ++a)
    if (stencil.node[a] == node) return stencil.weight[a];
  return 0.0;
}

std::string gridTestMessage(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::invalid_argument";
  return "";
}

void gridTestExpectMessage(const std::function<void()>& call, const std::vector<std::string>& words) {
  const std::string message = gridTestMessage(call);
  for (const std::string& word : words)
    EXPECT_NE(message.find(word), std::string::npos) << "'" << word << "' not in: " << message;
}

// D_p = sum_i w_ip (x_i - x_p)(x_i - x_p)^T from the weights themselves.
Mat3 gridTestInertia(const GridWeights& weights, int p) {
  Mat3 D = Mat3::Zero();
  for (int a = 0; a < weights.nodes_per_point; ++a) {
    const Vec3 d = weights.grid.nodePosition(weights.node[weights.entry(p) + a]) - weights.point(p);
    D += weights.weight[weights.entry(p) + a] * d * d.transpose();
  }
  return D;
}

// (eps : M^T)_a = eps_abc M_cb: the angular momentum of an affine velocity field.
Vec3 gridTestAxial(const Mat3& M) { return Vec3(M(2, 1) - M(1, 2), M(0, 2) - M(2, 0), M(1, 0) - M(0, 1)); }

struct GridTestMomenta {
  Vec3 linear = Vec3::Zero();
  Vec3 angular = Vec3::Zero();
  Vec3 affine_part = Vec3::Zero();  // the particles' eps : (C_p D_p)^T share of `angular`
  double scale = 0.0;               // sum of |terms|: the round-off yardstick
};

// APIC's particle momenta: sum_p m_p v_p and sum_p m_p (x_p x v_p + eps : (C_p D_p)^T).
GridTestMomenta gridTestParticleMomenta(const GridWeights& weights, const VecX& mass, const Positions& velocity,
                                        const std::vector<Mat3>& affine) {
  GridTestMomenta out;
  for (int p = 0; p < weights.numPoints(); ++p) {
    const Vec3 x = weights.point(p), v = velocity.segment<3>(3 * p);
    const Vec3 spin = mass[p] * gridTestAxial(affine[p] * gridTestInertia(weights, p));
    out.linear += mass[p] * v;
    out.angular += mass[p] * x.cross(v) + spin;
    out.affine_part += spin;
    out.scale += mass[p] * (x.norm() * v.norm() + v.norm()) + spin.norm();
  }
  return out;
}

// The grid's: sum_i m_i v_i and sum_i m_i x_i x v_i.
GridTestMomenta gridTestGridMomenta(const BackgroundGrid& grid, const VecX& mass, const Positions& velocity) {
  GridTestMomenta out;
  for (int i = 0; i < grid.numNodes(); ++i) {
    const Vec3 x = grid.nodePosition(i), v = velocity.segment<3>(3 * i);
    out.linear += mass[i] * v;
    out.angular += mass[i] * x.cross(v);
    out.scale += mass[i] * (x.norm() * v.norm() + v.norm());
  }
  return out;
}

struct GridTestParticles {
  Positions x;
  VecX mass;
  Positions velocity;
  std::vector<Mat3> affine;
};

// `count` random particles in [lo, hi] (grid coordinates) with random masses, velocities and
// affine velocities, the first `special` of them on grid nodes, lines and planes.
GridTestParticles gridTestRandomParticles(std::mt19937& rng, const BackgroundGrid& grid, int count, int special,
                                          double lo, double hi) {
  GridTestParticles out{Positions(3 * count), VecX(count), Positions(3 * count), {}};
  for (int p = 0; p < count; ++p) {
    Vec3 u(test::uniform(rng, lo, hi), test::uniform(rng, lo, hi), test::uniform(rng, lo, hi));
    if (p < special)
      for (int axis = 0; axis <= p % 3; ++axis) u[(p + axis) % 3] = std::round(u[(p + axis) % 3]);
    out.x.segment<3>(3 * p) = gridTestPointAt(grid, u);
    out.mass[p] = test::uniform(rng, 0.5, 2.0);
    out.velocity.segment<3>(3 * p) = gridTestNormals(rng, 3);
    out.affine.push_back(gridTestNormalMatrix(rng) / grid.spacing());
  }
  return out;
}

// Random particles in [1, 8]^3 (grid coordinates) of gridTestGrid, `special` of them on
// nodes, lines and planes, with their weights.
struct GridTestCloud {
  GridTestParticles particles;
  GridWeights W;
};
GridTestCloud gridTestCloud(std::mt19937& rng, GridKernel kernel, int count, int special) {
  GridTestParticles particles = gridTestRandomParticles(rng, gridTestGrid(), count, special, 1.0, 8.0);
  GridWeights W = computeGridWeights(gridTestGrid(), kernel, particles.x);
  return {std::move(particles), std::move(W)};
}

TEST(BackgroundGrid, IndexingAndCoveringABox) {
  const BackgroundGrid grid = gridTestGrid();
  EXPECT_EQ(grid.numNodes(), 12 * 11 * 10);
  for (int index : {0, 1, 11, 12, 131, 132, 517, grid.numNodes() - 1}) {
    const Eigen::Vector3i ijk = grid.nodeCoordinates(index);
    EXPECT_EQ(grid.nodeIndex(ijk), index);
    EXPECT_TRUE((ijk.array() >= 0).all() && (ijk.array() < grid.nodeCounts().array()).all());
  }
  EXPECT_EQ(grid.nodeIndex(1, 0, 0), 1);  // x fastest
  EXPECT_EQ(grid.nodeIndex(0, 1, 0), 12);
  EXPECT_EQ(grid.nodeIndex(0, 0, 1), 132);
  EXPECT_EQ((grid.nodePosition(grid.nodeIndex(3, 2, 1)) - Vec3(-0.25, 0.0, 0.5)).norm(), 0.0);
  const Positions all = grid.nodePositions();
  EXPECT_EQ((all.segment<3>(3 * 517) - grid.nodePosition(517)).norm(), 0.0);

  // Covering: the box plus `margin` cells on every side, at least one cell on a flat axis.
  const Vec3 lo(0.1, -0.3, 2.0), hi(1.05, 0.2, 2.0);
  for (int margin : {0, 1, 3}) {
    const BackgroundGrid covering = BackgroundGrid::covering(lo, hi, 0.1, margin);
    const Vec3 top = covering.nodePosition(covering.numNodes() - 1);
    for (int axis = 0; axis < 3; ++axis) {
      EXPECT_NEAR(covering.origin()[axis], lo[axis] - margin * 0.1, 1e-15);
      EXPECT_GE(top[axis], hi[axis] + margin * 0.1 - 1e-12);
      EXPECT_LT(top[axis], hi[axis] + margin * 0.1 + 0.1 + 1e-12);  // no more than one extra cell
    }
    EXPECT_EQ(covering.nodeCounts()[2], 2 + 2 * margin) << "a flat axis gets one cell";
    // Every point of the box has a stencil: trilinear for any margin, quadratic from 1.
    std::mt19937 rng(margin);
    for (int k = 0; k < 50; ++k) {
      const Vec3 x = lo + (hi - lo).cwiseProduct(Vec3(test::uniform(rng, 0, 1), test::uniform(rng, 0, 1),
                                                      test::uniform(rng, 0, 1)));
      EXPECT_NO_THROW(gridStencil(covering, GridKernel::kTrilinear, x));
      if (margin >= 1) {
        EXPECT_NO_THROW(gridStencil(covering, GridKernel::kQuadraticBSpline, x));
      }
    }
    EXPECT_NO_THROW(gridStencil(covering, GridKernel::kTrilinear, hi));
  }
  Positions points(6);
  points << 1.0, -2.0, 3.0, -1.0, 4.0, 0.5;
  const auto box = boundingBox(points);
  EXPECT_EQ(box.first, Vec3(-1.0, -2.0, 0.5));
  EXPECT_EQ(box.second, Vec3(1.0, 4.0, 3.0));
}

TEST(BackgroundGrid, ErrorsNameTheProblem) {
  const Vec3 o = Vec3::Zero();
  const double nan = std::nan("");
  gridTestExpectMessage([&] { BackgroundGrid(o, 0.0, Eigen::Vector3i(3, 3, 3)); }, {"spacing", "> 0"});
  gridTestExpectMessage([&] { BackgroundGrid(o, -0.5, Eigen::Vector3i(3, 3, 3)); }, {"spacing", "> 0"});
  gridTestExpectMessage([&] { BackgroundGrid(o, nan, Eigen::Vector3i(3, 3, 3)); }, {"spacing", "finite"});
  gridTestExpectMessage([&] { BackgroundGrid(Vec3(nan, 0, 0), 1.0, Eigen::Vector3i(3, 3, 3)); }, {"origin"});
  gridTestExpectMessage([&] { BackgroundGrid(o, 1.0, Eigen::Vector3i(3, 1, 3)); }, {"nodes on axis 1"});
  gridTestExpectMessage([&] { BackgroundGrid(o, 1.0, Eigen::Vector3i(5000, 5000, 5000)); }, {"int"});
  gridTestExpectMessage([&] { BackgroundGrid::covering(Vec3(0, 0, 0), Vec3(1, -1, 1), 0.1, 1); }, {"empty"});
  gridTestExpectMessage([&] { BackgroundGrid::covering(Vec3(0, 0, nan), Vec3(1, 1, 1), 0.1, 1); }, {"not finite"});
  gridTestExpectMessage([&] { BackgroundGrid::covering(o, Vec3::Ones(), 0.0, 1); }, {"spacing", "> 0"});
  gridTestExpectMessage([&] { BackgroundGrid::covering(o, Vec3::Ones(), 0.1, -1); }, {"margin"});
  gridTestExpectMessage([&] { boundingBox(Positions()); }, {"no point"});

  // A point whose stencil leaves the grid: the kernel, the axis and the interval are named.
  const BackgroundGrid grid = gridTestGrid();
  gridTestExpectMessage([&] { gridStencil(grid, GridKernel::kTrilinear, gridTestPointAt(grid, Vec3(2, 10.5, 2))); },
                        {"outside the background grid", "trilinear", "axis y", "10.5", "[0, 10]"});
  gridTestExpectMessage(
      [&] { gridStencil(grid, GridKernel::kQuadraticBSpline, gridTestPointAt(grid, Vec3(0.25, 2, 2))); },
      {"outside the background grid", "quadratic B-spline", "axis x", "0.25", "[0.5, 10.5]"});
  gridTestExpectMessage([&] { gridStencil(grid, GridKernel::kTrilinear, Vec3(0, nan, 0)); }, {"non-finite"});
  const Vec3 inside = gridTestPointAt(grid, Vec3(2, 2, 2));
  Positions points(9);
  points << inside, inside, gridTestPointAt(grid, Vec3(2, 2, 20));
  gridTestExpectMessage([&] { computeGridWeights(grid, GridKernel::kTrilinear, points); },
                        {"point 2", "outside", "axis z"});
  const GridWeights weights = computeGridWeights(grid, GridKernel::kTrilinear, points.head(6));
  gridTestExpectMessage([&] { embed(weights, Positions::Zero(6)); }, {"embed", "3 per grid node"});
  gridTestExpectMessage([&] { embedTranspose(weights, Positions::Zero(9)); }, {"3 per point"});
  gridTestExpectMessage([&] { particlesToGrid(weights, VecX::Ones(3), Positions::Zero(6), {}); }, {"masses"});
  gridTestExpectMessage([&] { gridToParticles(weights, Positions::Zero(3)); }, {"grid velocities"});
  Connectivity tet(1, 4);
  tet << 0, 1, 2, 1;
  gridTestExpectMessage([&] { colorElementsOnGrid(tet, weights); }, {"element 0", "vertex 2"});
}

TEST(GridWeights, PartitionOfUnityAndAffineReproduction) {
  const BackgroundGrid grid = gridTestGrid();
  std::mt19937 rng(3);
  const Mat3 A = gridTestNormalMatrix(rng);
  const Vec3 b = gridTestNormals(rng, 3);
  for (GridKernel kernel : kGridTestKernels) {
    std::vector<Vec3> points = gridTestSpecialPoints(rng, grid, kernel);
    const int special = static_cast<int>(points.size());
    for (int k = 0; k < 300; ++k) points.push_back(gridTestRandomPoint(rng, grid, kernel));
    double unity = 0.0, position = 0.0, affine = 0.0, gradient_sum = 0.0, gradient_moment = 0.0, min_weight = 1.0;
    for (const Vec3& x : points) {
      const GridStencil s = gridStencil(grid, kernel, x);
      ASSERT_EQ(s.count, gridStencilNodes(kernel));
      double sum = 0.0;
      Vec3 sum_x = Vec3::Zero(), sum_affine = Vec3::Zero(), sum_gradient = Vec3::Zero();
      Mat3 moment = Mat3::Zero();
      for (int a = 0; a < s.count; ++a) {
        ASSERT_TRUE(s.node[a] >= 0 && s.node[a] < grid.numNodes());
        const Vec3 xi = grid.nodePosition(s.node[a]);
        // The stencil's nodes are the ones around x (not a wrapped index's far neighbour).
        const double reach = (kernel == GridKernel::kTrilinear ? 1.0 : 1.5) * grid.spacing();
        EXPECT_LE((xi - x).cwiseAbs().maxCoeff(), reach + 1e-15);
        sum += s.weight[a];
        sum_x += s.weight[a] * xi;
        sum_affine += s.weight[a] * (A * xi + b);
        sum_gradient += s.gradient[a];
        moment += xi * s.gradient[a].transpose();  // d/dx of sum_i w_ip x_i = x: the identity
        min_weight = std::min(min_weight, s.weight[a]);
      }
      unity = std::max(unity, std::abs(sum - 1.0));
      position = std::max(position, (sum_x - x).norm());
      affine = std::max(affine, (sum_affine - (A * x + b)).norm());
      gradient_sum = std::max(gradient_sum, sum_gradient.norm() * grid.spacing());
      gradient_moment = std::max(gradient_moment, (moment - Mat3::Identity()).norm());
    }
    const std::string name = gridKernelName(kernel);
    EXPECT_LT(unity, 1e-15) << name;
    EXPECT_LT(position, 5e-15) << name;
    EXPECT_LT(affine, 1e-14) << name;
    EXPECT_LT(gradient_sum, 1e-14) << name;
    EXPECT_LT(gradient_moment, 1e-13) << name;
    EXPECT_GE(min_weight, 0.0) << name;
    std::printf("[ measured ] %s, %d special + 300 random points: max |sum w - 1| %.1e, |sum w x_i - x| %.1e m, "
                "|sum w (A x_i + b) - (A x + b)| %.1e, h |sum grad w| %.1e, |sum x_i grad w^T - I| %.1e\n",
                name.c_str(), special, unity, position, affine, gradient_sum, gradient_moment);
  }
}

TEST(GridWeights, GradientsMatchCentralDifferences) {
  const BackgroundGrid grid = gridTestGrid();
  const double h = grid.spacing(), step = 1e-6 * h;
  std::mt19937 rng(5);
  for (GridKernel kernel : kGridTestKernels) {
    // Each 1D weight is one polynomial of degree <= 2 between breaks (trilinear: whole grid
    // coordinates; quadratic: half-integer ones), where a central difference is exact up to
    // round-off; points within 10 steps of a break are skipped.
    const double offset = kernel == GridKernel::kTrilinear ? 0.0 : 0.5;
    double worst = 0.0, largest = 0.0;
    int points = 0;
    while (points < 100) {
      const Vec3 x = gridTestRandomPoint(rng, grid, kernel);
      const Vec3 u = (x - grid.origin()) / h;
      bool near_break = false;
      for (int axis = 0; axis < 3; ++axis) {
        const double t = u[axis] - offset;
        near_break = near_break || std::abs(t - std::round(t)) < 10 * step / h;
      }
      if (near_break) continue;
      ++points;
      const GridStencil s = gridStencil(grid, kernel, x);
      for (int a = 0; a < s.count; ++a) {
        Vec3 fd;
        for (int axis = 0; axis < 3; ++axis) {
          Vec3 e = Vec3::Zero();
          e[axis] = step;
          const double plus = gridTestWeightOf(grid, kernel, x + e, s.node[a]);
          fd[axis] = (plus - gridTestWeightOf(grid, kernel, x - e, s.node[a])) / (2 * step);
        }
        worst = std::max(worst, (fd - s.gradient[a]).norm() * h);
        largest = std::max(largest, s.gradient[a].norm() * h);
      }
    }
    EXPECT_LT(worst, 1e-8) << gridKernelName(kernel);
    EXPECT_GT(largest, 0.5) << gridKernelName(kernel) << ": the gradients must not be zero";
    std::printf("[ measured ] %s: max h |grad w - central difference (step 1e-6 h)| %.1e over 100 points "
                "(max h |grad w| %.2f)\n",
                gridKernelName(kernel).c_str(), worst, largest);
  }
}

// The facts the G2P choice of apic_transfer.hpp rests on: quadratic D_p = h^2/4 I anywhere;
// trilinear D_p = h^2 diag(f (1 - f)), with w_ip (x_i - x_p)^T D_p^-1 = grad w_ip^T off the
// grid planes and w_ip (x_i - x_p)^T = grad w_ip^T D_p everywhere (so C_p D_p = B_p on planes).
TEST(GridWeights, ApicInertiaPerKernel) {
  const BackgroundGrid grid = gridTestGrid();
  const double h = grid.spacing();
  std::mt19937 rng(8);
  double quadratic = 0.0, trilinear_diagonal = 0.0, trilinear_inverse = 0.0, trilinear_product = 0.0;
  for (int k = 0; k < 200; ++k) {
    const bool special = k < 80;
    const std::vector<Vec3> specials = gridTestSpecialPoints(rng, grid, GridKernel::kQuadraticBSpline);
    const Vec3 xq =
        special ? specials[k % specials.size()] : gridTestRandomPoint(rng, grid, GridKernel::kQuadraticBSpline);
    const GridWeights wq = computeGridWeights(grid, GridKernel::kQuadraticBSpline, xq);
    quadratic = std::max(quadratic, (gridTestInertia(wq, 0) - 0.25 * h * h * Mat3::Identity()).norm() / (h * h));

    const Vec3 x = special ? gridTestSpecialPoints(rng, grid, GridKernel::kTrilinear)[k % 20]
                           : gridTestRandomPoint(rng, grid, GridKernel::kTrilinear);
    const GridWeights w = computeGridWeights(grid, GridKernel::kTrilinear, x);
    const Mat3 D = gridTestInertia(w, 0);
    const Vec3 u = (x - grid.origin()) / h;
    Vec3 f;
    for (int axis = 0; axis < 3; ++axis) f[axis] = u[axis] - std::floor(u[axis]);
    trilinear_diagonal = std::max(trilinear_diagonal,
                                  (D - Mat3(h * h * f.cwiseProduct(Vec3::Ones() - f).asDiagonal())).norm() / (h * h));
    const bool on_plane = (f.array() == 0.0).any();
    for (int a = 0; a < w.nodes_per_point; ++a) {
      const Vec3 d = grid.nodePosition(w.node[a]) - x;
      const Vec3 g = w.gradient[a];
      trilinear_product = std::max(trilinear_product, (w.weight[a] * d - D * g).norm() / h);
      if (!on_plane) trilinear_inverse = std::max(trilinear_inverse, (D.inverse() * (w.weight[a] * d) - g).norm() * h);
    }
  }
  EXPECT_LT(quadratic, 1e-14);
  EXPECT_LT(trilinear_diagonal, 1e-14);
  EXPECT_LT(trilinear_product, 1e-14);
  EXPECT_LT(trilinear_inverse, 1e-8);  // D_p^-1 grows as f (1 - f) shrinks
  std::printf("[ measured ] quadratic |D_p - h^2/4 I| / h^2 %.1e; trilinear |D_p - h^2 diag f(1-f)| / h^2 %.1e, "
              "|w d - D grad w| / h %.1e, h |D^-1 w d - grad w| (off planes) %.1e\n",
              quadratic, trilinear_diagonal, trilinear_product, trilinear_inverse);
}

TEST(GridEmbedding, TransposeIsTheAdjointAndReproducesPositions) {
  const BackgroundGrid grid = gridTestGrid();
  std::mt19937 rng(11);
  for (GridKernel kernel : kGridTestKernels) {
    const auto [particles, W] = gridTestCloud(rng, kernel, 400, 60);
    // x = W q at the grid's own node positions gives back the points.
    EXPECT_LT((embed(W, grid.nodePositions()) - particles.x).cwiseAbs().maxCoeff(), 5e-15);
    double worst = 0.0;
    for (int trial = 0; trial < 5; ++trial) {
      const Positions g = gridTestNormals(rng, 3 * W.numPoints()), q = gridTestNormals(rng, 3 * grid.numNodes());
      const double left = embedTranspose(W, g).dot(q), right = g.dot(embed(W, q));
      worst = std::max(worst, std::abs(left - right) / (g.norm() * q.norm()));
      EXPECT_GT(std::abs(left), 1e-3 * g.norm() * q.norm() / std::sqrt(static_cast<double>(g.size())));
    }
    EXPECT_LT(worst, 1e-14) << gridKernelName(kernel);
    // W^T of (m_p, 0, 0) is P2G's grid mass on the x component.
    Positions mass_x = Positions::Zero(3 * W.numPoints());
    for (int p = 0; p < W.numPoints(); ++p) mass_x[3 * p] = particles.mass[p];
    const Positions scattered = embedTranspose(W, mass_x);
    const VecX grid_mass = particlesToGrid(W, particles.mass, particles.velocity, particles.affine).mass;
    for (int i = 0; i < grid.numNodes(); ++i) EXPECT_NEAR(scattered[3 * i], grid_mass[i], 1e-14);
    std::printf("[ measured ] %s: |<W^T g, q> - <g, W q>| / (|g| |q|) %.1e over 5 random pairs\n",
                gridKernelName(kernel).c_str(), worst);
  }
}

TEST(GridApic, ParticlesToGridConservesMassMomentumAndAngularMomentum) {
  const BackgroundGrid grid = gridTestGrid();
  std::mt19937 rng(13);
  for (GridKernel kernel : kGridTestKernels) {
    const auto [particles, W] = gridTestCloud(rng, kernel, 500, 90);
    const GridMomentum g = particlesToGrid(W, particles.mass, particles.velocity, particles.affine);
    const GridTestMomenta before = gridTestParticleMomenta(W, particles.mass, particles.velocity, particles.affine);
    const GridTestMomenta after = gridTestGridMomenta(grid, g.mass, g.velocity);
    const double mass_error = std::abs(g.mass.sum() - particles.mass.sum()) / particles.mass.sum();
    const double linear_error = (after.linear - before.linear).norm() / before.scale;
    const double angular_error = (after.angular - before.angular).norm() / before.scale;
    const std::string name = gridKernelName(kernel);
    EXPECT_LT(mass_error, 1e-14) << name;
    EXPECT_LT(linear_error, 1e-14) << name;
    EXPECT_LT(angular_error, 1e-14) << name;
    // The affine part carries angular momentum the grid receives: without it the sums differ.
    EXPECT_GT((after.angular - (before.angular - before.affine_part)).norm() / before.scale, 1e-4) << name;
    std::printf("[ measured ] %s P2G, 500 particles: relative change of mass %.1e, linear momentum %.1e, "
                "APIC angular momentum %.1e (its affine part %.2e of the scale)\n",
                name.c_str(), mass_error, linear_error, angular_error, before.affine_part.norm() / before.scale);
  }
}

TEST(GridApic, GridToParticlesConservesMomentumAndAngularMomentum) {
  const BackgroundGrid grid = gridTestGrid();
  std::mt19937 rng(17);
  for (GridKernel kernel : kGridTestKernels) {
    const auto [particles, W] = gridTestCloud(rng, kernel, 500, 90);
    const VecX grid_mass = particlesToGrid(W, particles.mass, particles.velocity, particles.affine).mass;
    // Any grid velocities (a step's result), massless nodes included: they must not matter.
    const Positions grid_velocity = gridTestNormals(rng, 3 * grid.numNodes());
    const ParticleVelocities back = gridToParticles(W, grid_velocity);
    const GridTestMomenta before = gridTestGridMomenta(grid, grid_mass, grid_velocity);
    const GridTestMomenta after = gridTestParticleMomenta(W, particles.mass, back.velocity, back.affine);
    const double linear_error = (after.linear - before.linear).norm() / before.scale;
    const double angular_error = (after.angular - before.angular).norm() / before.scale;
    const std::string name = gridKernelName(kernel);
    EXPECT_LT(linear_error, 1e-14) << name;
    EXPECT_LT(angular_error, 1e-14) << name;
    EXPECT_GT(after.affine_part.norm() / before.scale, 1e-4) << name << ": the affine part must take a share";
    std::printf("[ measured ] %s G2P, 500 particles: relative change of linear momentum %.1e, APIC angular "
                "momentum %.1e\n",
                name.c_str(), linear_error, angular_error);
  }
}

TEST(GridApic, AffineVelocityFieldSurvivesParticlesToGridToParticles) {
  const BackgroundGrid grid = gridTestGrid();
  const double h = grid.spacing();
  std::mt19937 rng(19);
  const Mat3 A = gridTestNormalMatrix(rng);
  const Vec3 b = gridTestNormals(rng, 3);
  for (GridKernel kernel : kGridTestKernels) {
    // Dense (about 20 a cell in [2, 8]^3), so every stencil node of the particles in [3, 7]^3,
    // the on-plane ones among them, has mass.
    GridTestParticles particles = gridTestRandomParticles(rng, grid, 4400, 0, 2.0, 8.0);
    const GridTestParticles special = gridTestRandomParticles(rng, grid, 90, 90, 3.0, 7.0);
    particles.x.conservativeResize(3 * 4490);
    particles.x.tail(3 * 90) = special.x;
    particles.mass.conservativeResize(4490);
    particles.mass.tail(90) = special.mass;
    particles.velocity.resize(3 * 4490);
    particles.affine.assign(4490, A);
    for (int p = 0; p < 4490; ++p) particles.velocity.segment<3>(3 * p) = A * particles.x.segment<3>(3 * p) + b;
    const GridWeights W = computeGridWeights(grid, kernel, particles.x);
    const GridMomentum g = particlesToGrid(W, particles.mass, particles.velocity, particles.affine);
    double node_error = 0.0;
    int massive = 0;
    for (int i = 0; i < grid.numNodes(); ++i) {
      if (g.mass[i] > 0.0) {
        ++massive;
        node_error = std::max(node_error, (g.velocity.segment<3>(3 * i) - (A * grid.nodePosition(i) + b)).norm());
      } else {
        EXPECT_EQ(g.velocity.segment<3>(3 * i).norm(), 0.0) << "a node without mass gets zero velocity";
      }
    }
    const ParticleVelocities back = gridToParticles(W, g.velocity);
    double velocity_error = 0.0, affine_error = 0.0;
    for (int p = 0; p < W.numPoints(); ++p) {
      const Vec3 v_p = back.velocity.segment<3>(3 * p);
      velocity_error = std::max(velocity_error, (v_p - particles.velocity.segment<3>(3 * p)).norm());
      affine_error = std::max(affine_error, (back.affine[p] - A).norm() * h);
    }
    const std::string name = gridKernelName(kernel);
    EXPECT_LT(node_error, 1e-13) << name;
    EXPECT_LT(velocity_error, 1e-13) << name;
    EXPECT_LT(affine_error, 1e-13) << name;

    // A lone particle: the quadratic kernel still gives C_p = A (its 27 weights are all > 0);
    // trilinear on a grid node reads 7 nodes of zero weight and zero mass, so C_p != A there
    // (apic_transfer.hpp), while v_p stays exact.
    const Vec3 on_node = gridTestPointAt(grid, Vec3(4, 5, 3));
    Positions lone_v(3);
    lone_v = A * on_node + b;
    const GridWeights lone = computeGridWeights(grid, kernel, on_node);
    const ParticleVelocities lone_back =
        gridToParticles(lone, particlesToGrid(lone, VecX::Ones(1), lone_v, {A}).velocity);
    EXPECT_LT((lone_back.velocity - lone_v).norm(), 1e-14) << name;
    const double lone_affine_error = (lone_back.affine[0] - A).norm() / A.norm();
    if (kernel == GridKernel::kQuadraticBSpline)
      EXPECT_LT(lone_affine_error, 1e-13);
    else
      EXPECT_GT(lone_affine_error, 0.1) << "trilinear on a node with massless neighbours does not recover A";
    std::printf("[ measured ] %s, 4490 particles (90 on grid nodes/planes), %d nodes with mass: "
                "max |v_i - (A x_i + b)| %.1e, |v_p - (A x_p + b)| %.1e, h |C_p - A| %.1e; "
                "a lone particle on a node: |C_p - A| / |A| %.2f\n",
                name.c_str(), massive, node_error, velocity_error, affine_error, lone_affine_error);
  }
}

// A body whose particles sit on grid nodes (a mesh aligned with the grid, the usual start): the
// particles of its upper faces lie on planes whose upper nodes have no mass. Given the grid
// masses, G2P takes the trilinear C_p's column across such a plane from the side below, so an
// affine field survives P2G -> G2P at every particle; without them those particles read the
// massless nodes' zero velocity (C_p's column -v/h: the helper's measured 8 /s on a box moving at
// 1 m/s). Quadratic B-splines never need it.
TEST(GridApic, TrilinearAffineVelocityOnABodyAlignedWithTheGrid) {
  const BackgroundGrid grid = gridTestGrid();
  std::vector<Vec3> points;
  for (int k = 2; k <= 5; ++k)
    for (int j = 2; j <= 6; ++j)
      for (int i = 2; i <= 7; ++i) points.push_back(gridTestPointAt(grid, Vec3(i, j, k)));
  Positions x(3 * static_cast<Eigen::Index>(points.size()));
  for (size_t p = 0; p < points.size(); ++p) x.segment<3>(3 * static_cast<Eigen::Index>(p)) = points[p];
  Mat3 A;
  A << 0.3, -1.2, 0.5, 0.8, 0.1, -0.7, -0.4, 0.9, 0.2;
  const Vec3 b(1.0, -2.0, 0.5);
  const int n = static_cast<int>(points.size());
  Positions v(3 * static_cast<Eigen::Index>(n));
  for (int p = 0; p < n; ++p) v.segment<3>(3 * p) = A * points[static_cast<size_t>(p)] + b;
  const GridWeights W = computeGridWeights(grid, GridKernel::kTrilinear, x);
  const GridMomentum g = particlesToGrid(W, VecX::Ones(n), v, std::vector<Mat3>(static_cast<size_t>(n), A));
  const ParticleVelocities with_masses = gridToParticles(W, g.velocity, g.mass);
  const ParticleVelocities without = gridToParticles(W, g.velocity);
  double error_with = 0.0, error_without = 0.0, velocity_error = 0.0;
  for (int p = 0; p < n; ++p) {
    error_with = std::max(error_with, (with_masses.affine[p] - A).norm() / A.norm());
    error_without = std::max(error_without, (without.affine[p] - A).norm() / A.norm());
    velocity_error = std::max(velocity_error, (with_masses.velocity.segment<3>(3 * p) - v.segment<3>(3 * p)).norm());
  }
  EXPECT_LT(error_with, 1e-13);
  EXPECT_LT(velocity_error, 1e-13);
  EXPECT_GT(error_without, 0.1) << "the upper faces' particles read massless nodes without the masses";
  // Momentum and angular momentum are kept either way (C_p D_p = B_p across a plane).
  const GridTestMomenta grid_momenta = gridTestGridMomenta(grid, g.mass, g.velocity);
  const GridTestMomenta back = gridTestParticleMomenta(W, VecX::Ones(n), with_masses.velocity, with_masses.affine);
  EXPECT_LT((back.linear - grid_momenta.linear).norm(), 1e-13 * grid_momenta.scale);
  EXPECT_LT((back.angular - grid_momenta.angular).norm(), 1e-13 * grid_momenta.scale);
  std::printf("[ measured ] trilinear, %d particles on grid nodes: max |C_p - A| / |A| %.1e with the grid "
              "masses, %.2f without\n", n, error_with, error_without);
}

// The same within round-off of the planes, on either side: a body translating and shearing whose
// particles sit one ulp below or above grid planes weights the far layer by ~1e-16; under the
// grid step's massless floor (kGridMasslessFraction) those nodes have no mass and are held with
// velocity 0, so without the one-sided columns C_p would read -v/h there.
TEST(GridApic, TrilinearAffineVelocityWithinRoundOffOfThePlanes) {
  const BackgroundGrid grid = gridTestGrid();
  Mat3 A;
  A << 0.3, -1.2, 0.5, 0.8, 0.1, -0.7, -0.4, 0.9, 0.2;
  const Vec3 b(1.0, -2.0, 0.5);
  for (const double direction : {-1.0, 1.0}) {
    std::vector<Vec3> points;
    for (int k = 2; k <= 5; ++k)
      for (int j = 2; j <= 6; ++j)
        for (int i = 2; i <= 7; ++i) {
          Vec3 x = gridTestPointAt(grid, Vec3(i, j, k));
          for (int d = 0; d < 3; ++d) x[d] = std::nextafter(x[d], direction * 1e300);
          points.push_back(x);
        }
    const int n = static_cast<int>(points.size());
    Positions x(3 * static_cast<Eigen::Index>(n)), v(3 * static_cast<Eigen::Index>(n));
    for (int p = 0; p < n; ++p) {
      x.segment<3>(3 * p) = points[static_cast<size_t>(p)];
      v.segment<3>(3 * p) = A * points[static_cast<size_t>(p)] + b;
    }
    const GridWeights W = computeGridWeights(grid, GridKernel::kTrilinear, x);
    const GridMomentum g = particlesToGrid(W, VecX::Ones(n), v, std::vector<Mat3>(static_cast<size_t>(n), A));
    // The floor the grid step applies, and the velocity 0 of the nodes it holds.
    VecX floored = g.mass;
    Positions velocity = g.velocity;
    int held = 0;
    for (int i = 0; i < grid.numNodes(); ++i)
      if (!(floored[i] > kGridMasslessFraction * g.mass.maxCoeff())) {
        held += floored[i] > 0.0 ? 1 : 0;
        floored[i] = 0.0;
        velocity.segment<3>(3 * i).setZero();
      }
    const ParticleVelocities out = gridToParticles(W, velocity, floored);
    const ParticleVelocities raw = gridToParticles(W, velocity, g.mass);
    double error = 0.0, error_raw = 0.0, velocity_error = 0.0;
    for (int p = 0; p < n; ++p) {
      error = std::max(error, (out.affine[p] - A).norm() / A.norm());
      error_raw = std::max(error_raw, (raw.affine[p] - A).norm() / A.norm());
      velocity_error = std::max(velocity_error, (out.velocity.segment<3>(3 * p) - v.segment<3>(3 * p)).norm());
    }
    std::printf("[ measured ] trilinear, %d particles one ulp %s grid planes, %d nodes under the floor: max |C_p - A| "
                "/ |A| %.1e with the floored masses, %.2f with the raw ones\n",
                n, direction < 0 ? "below" : "above", held, error, error_raw);
    EXPECT_GT(held, 0);
    EXPECT_LT(error, 1e-12);
    EXPECT_LT(velocity_error, 1e-12);
    EXPECT_GT(error_raw, 0.1);
  }
}

// A box of n[0] x n[1] x n[2] cubes of edge `edge`, each split into the 6 tets around its
// main diagonal.
struct GridTestTetBox {
  Positions x;
  Connectivity tets;
};
GridTestTetBox gridTestTetBox(const Eigen::Vector3i& n, double edge) {
  GridTestTetBox box;
  const auto vertex = [&n](int i, int j, int k) { return i + (n[0] + 1) * (j + (n[1] + 1) * k); };
  box.x.resize(3 * (n[0] + 1) * (n[1] + 1) * (n[2] + 1));
  for (int k = 0; k <= n[2]; ++k)
    for (int j = 0; j <= n[1]; ++j)
      for (int i = 0; i <= n[0]; ++i) box.x.segment<3>(3 * vertex(i, j, k)) = edge * Vec3(i, j, k);
  const int paths[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  box.tets.resize(6 * n.prod(), 4);
  int t = 0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i)
        for (const auto& path : paths) {
          Eigen::Vector3i c(i, j, k);
          box.tets(t, 0) = vertex(c[0], c[1], c[2]);
          for (int s = 0; s < 3; ++s) {
            ++c[path[s]];
            box.tets(t, s + 1) = vertex(c[0], c[1], c[2]);
          }
          ++t;
        }
  return box;
}

// Validity from the kernel's stencils directly (not through elementGridNodes): no grid node
// is reached by two elements of one color.
bool gridTestColoringIsValid(const GridTestTetBox& box, const BackgroundGrid& grid, GridKernel kernel,
                             const Coloring& coloring) {
  std::vector<int> owner(static_cast<size_t>(grid.numNodes()), -1), seen(static_cast<size_t>(box.tets.rows()), 0);
  for (int c = 0; c < coloring.numColors(); ++c) {
    std::fill(owner.begin(), owner.end(), -1);
    for (int e : coloring.groups[c]) {
      if (seen[e]++) return false;
      for (int k = 0; k < 4; ++k) {
        const GridStencil s = gridStencil(grid, kernel, box.x.segment<3>(3 * box.tets(e, k)));
        for (int a = 0; a < s.count; ++a) {
          if (owner[s.node[a]] >= 0 && owner[s.node[a]] != e) return false;
          owner[s.node[a]] = e;
        }
      }
    }
  }
  return std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; });
}

TEST(GridColoring, ValidFirstAndAfterWarmStartedRecoloring) {
  const GridTestTetBox rest = gridTestTetBox(Eigen::Vector3i(8, 6, 4), 0.1);
  const int count = static_cast<int>(rest.tets.rows());
  const auto box = boundingBox(rest.x);
  std::mt19937 rng(23);
  for (GridKernel kernel : kGridTestKernels) {
    const BackgroundGrid grid = BackgroundGrid::covering(box.first, box.second, 0.12, 3);
    const std::string name = gridKernelName(kernel);
    const GridWeights W = computeGridWeights(grid, kernel, rest.x);
    const auto start = std::chrono::steady_clock::now();
    Coloring coloring = colorElementsOnGrid(rest.tets, W);
    const double first_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(isValidGridColoring(rest.tets, W, coloring)) << name;
    EXPECT_TRUE(gridTestColoringIsValid(rest, grid, kernel, coloring)) << name;
    // Fig. 6's bound: a tet touches at most 4 stencils' worth of grid nodes.
    const ElementGridNodes incident = elementGridNodes(rest.tets, W);
    EXPECT_EQ(incident.nodes_per_element, 4 * gridStencilNodes(kernel));
    // The warm start from nothing (what colorElementsOnGrid runs) is colorStencils' greedy.
    const StencilSet set = incident.stencils();
    Coloring from_nothing;
    EXPECT_EQ(recolorStencils(from_nothing, set), count);
    EXPECT_EQ(from_nothing.groups, colorStencils(set.count, set.nodes_per_stencil, set.nodes).groups) << name;
    EXPECT_EQ(from_nothing.groups, coloring.groups) << name;
    // Unchanged weights: every color is kept.
    Coloring same = coloring;
    EXPECT_EQ(recolorElementsOnGrid(same, rest.tets, W), 0) << name;
    EXPECT_EQ(same.groups, coloring.groups) << name;

    // A step's motion: a drift of a third of a cell and some noise moves vertices across cells.
    GridTestTetBox moved = rest;
    for (int v = 0; v < moved.x.size() / 3; ++v)
      moved.x.segment<3>(3 * v) += Vec3(0.05, 0.03, -0.02) + 0.01 * Vec3(gridTestNormals(rng, 3));
    const GridWeights W_moved = computeGridWeights(grid, kernel, moved.x);
    EXPECT_FALSE(isValidGridColoring(moved.tets, W_moved, coloring)) << name << ": the old colors should conflict";
    EXPECT_FALSE(gridTestColoringIsValid(moved, grid, kernel, coloring)) << name;
    const std::vector<int> before = colorOfNode(count, coloring);
    const auto restart = std::chrono::steady_clock::now();
    const int changed = recolorElementsOnGrid(coloring, moved.tets, W_moved);
    const double warm_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - restart).count();
    EXPECT_TRUE(isValidGridColoring(moved.tets, W_moved, coloring)) << name;
    EXPECT_TRUE(gridTestColoringIsValid(moved, grid, kernel, coloring)) << name;
    const std::vector<int> after = colorOfNode(count, coloring);
    int differ = 0;
    for (int e = 0; e < count; ++e) differ += before[e] != after[e];
    EXPECT_EQ(differ, changed) << name;
    EXPECT_GT(changed, 0) << name;
    EXPECT_LT(changed, count / 2) << name << ": the warm start should keep most colors";
    const int fresh_colors = colorElementsOnGrid(moved.tets, W_moved).numColors();

    // A broken coloring is caught: an element moved into the color of one it shares a node with.
    const int e0 = coloring.groups[0][0];
    std::vector<char> near_e0(static_cast<size_t>(grid.numNodes()), 0);
    for (int k = 0; k < 4; ++k) {
      const GridStencil s = gridStencil(grid, kernel, moved.x.segment<3>(3 * moved.tets(e0, k)));
      for (int a = 0; a < s.count; ++a) near_e0[s.node[a]] = 1;
    }
    Coloring broken = coloring;
    for (int c = 1; c < broken.numColors() && broken.groups[0].size() == coloring.groups[0].size(); ++c)
      for (int e : broken.groups[c]) {
        const GridStencil s = gridStencil(grid, kernel, moved.x.segment<3>(3 * moved.tets(e, 0)));
        if (!std::any_of(s.node.begin(), s.node.begin() + s.count, [&](int node) { return near_e0[node] != 0; }))
          continue;
        broken.groups[c].erase(std::find(broken.groups[c].begin(), broken.groups[c].end(), e));
        broken.groups[0].push_back(e);
        break;
      }
    ASSERT_EQ(broken.groups[0].size(), coloring.groups[0].size() + 1);
    EXPECT_FALSE(gridTestColoringIsValid(moved, grid, kernel, broken)) << name;
    EXPECT_FALSE(isValidGridColoring(moved.tets, W_moved, broken)) << name;
    std::printf("[ measured ] %s, %d tets on a %dx%dx%d grid (h 0.12, tet edge 0.1): %d colors first (%.1f ms); after "
                "the move %d of %d elements changed color (warm start, %.1f ms), %d colors (%d from scratch)\n",
                name.c_str(), count, grid.nodeCounts()[0], grid.nodeCounts()[1], grid.nodeCounts()[2],
                static_cast<int>(from_nothing.numColors()), 1e3 * first_seconds, changed, count, 1e3 * warm_seconds,
                coloring.numColors(), fresh_colors);
  }
}

}  // namespace
}  // namespace pbdlab
