#include "core/grid/apic_transfer.hpp"

#include <stdexcept>
#include <string>

namespace pbdlab {

namespace {

void checkCount(const char* what, Eigen::Index size, Eigen::Index expected) {
  if (size != expected)
    throw std::invalid_argument(std::string("APIC transfer: ") + what + " has " + std::to_string(size) +
                                " entries, expected " + std::to_string(expected));
}

Eigen::Index at(int index) { return 3 * static_cast<Eigen::Index>(index); }

}  // namespace

GridMomentum particlesToGrid(const GridWeights& weights, const VecX& mass, const Positions& velocity,
                             const std::vector<Mat3>& affine) {
  const int n = weights.numPoints();
  checkCount("the particle masses", mass.size(), n);
  checkCount("the particle velocities", velocity.size(), at(n));
  if (!affine.empty()) checkCount("the affine velocities", static_cast<Eigen::Index>(affine.size()), n);
  const BackgroundGrid& grid = weights.grid;
  GridMomentum out{VecX::Zero(grid.numNodes()), Positions::Zero(at(grid.numNodes()))};
  for (int p = 0; p < n; ++p) {
    const Vec3 x_p = weights.point(p);
    const Vec3 v_p = velocity.segment<3>(at(p));
    const size_t first = weights.entry(p);
    for (int a = 0; a < weights.nodes_per_point; ++a) {
      const int i = weights.node[first + a];
      const double wm = weights.weight[first + a] * mass[p];
      out.mass[i] += wm;
      Vec3 v = v_p;
      if (!affine.empty()) v += affine[p] * (grid.nodePosition(i) - x_p);
      out.velocity.segment<3>(at(i)) += wm * v;  // momentum until divided below
    }
  }
  for (int i = 0; i < grid.numNodes(); ++i) {
    if (out.mass[i] > 0.0)
      out.velocity.segment<3>(at(i)) /= out.mass[i];
    else
      out.velocity.segment<3>(at(i)).setZero();
  }
  return out;
}

ParticleVelocities gridToParticles(const GridWeights& weights, const Positions& grid_velocity) {
  const BackgroundGrid& grid = weights.grid;
  checkCount("the grid velocities", grid_velocity.size(), at(grid.numNodes()));
  const int n = weights.numPoints();
  const double inverse_d = 4.0 / (grid.spacing() * grid.spacing());  // quadratic: D_p^-1 = 4/h^2 I
  ParticleVelocities out{Positions::Zero(at(n)), std::vector<Mat3>(static_cast<size_t>(n), Mat3::Zero())};
  for (int p = 0; p < n; ++p) {
    const Vec3 x_p = weights.point(p);
    const size_t first = weights.entry(p);
    Vec3 v = Vec3::Zero();
    Mat3 C = Mat3::Zero();
    for (int a = 0; a < weights.nodes_per_point; ++a) {
      const int i = weights.node[first + a];
      const double w = weights.weight[first + a];
      const Vec3 v_i = grid_velocity.segment<3>(at(i));
      v += w * v_i;
      // The row w_ip (x_i - x_p)^T D_p^-1 of the header, per kernel.
      const Vec3 row = weights.kernel == GridKernel::kTrilinear ? Vec3(weights.gradient[first + a])
                                                                : Vec3(inverse_d * w * (grid.nodePosition(i) - x_p));
      C += v_i * row.transpose();
    }
    out.velocity.segment<3>(at(p)) = v;
    out.affine[static_cast<size_t>(p)] = C;
  }
  return out;
}

}  // namespace pbdlab
