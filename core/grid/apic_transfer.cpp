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

// Trilinear C_p of point p on a grid plane (grid_velocity and grid_mass as gridToParticles'):
// across the plane the interpolant has two one-sided derivatives and the stencil (the cell
// above) reads the upper side, whose nodes the point gives no weight. Where none of them has
// mass (their velocity is no motion, only 0: a body's upper face on the plane), the column is
// taken from the side below, whose nodes have mass, or set to 0 where neither side has.
// C_p D_p = B_p holds either way (D_p's row and column across the plane vanish there).
void oneSidedAcrossPlanes(const GridWeights& weights, int p, const Positions& grid_velocity, const VecX& grid_mass,
                          Mat3& C) {
  const BackgroundGrid& grid = weights.grid;
  const size_t first = weights.entry(p);
  const Eigen::Vector3i base = grid.nodeCoordinates(weights.node[first]);  // x fastest: node 0 is the lowest
  const Vec3 u = (weights.point(p) - grid.origin()) / grid.spacing();
  const double h = grid.spacing();
  for (int d = 0; d < 3; ++d) {
    if (u[d] != static_cast<double>(base[d])) continue;  // inside the cell on this axis
    bool upper_has_mass = false;
    for (int a = 0; a < weights.nodes_per_point; ++a) {
      const int i = weights.node[first + a];
      if (grid.nodeCoordinates(i)[d] == base[d] + 1 && grid_mass[i] > 0.0) upper_has_mass = true;
    }
    if (upper_has_mass) continue;
    Vec3 column = Vec3::Zero();
    bool lower_has_mass = false;
    if (base[d] > 0) {
      for (int a = 0; a < weights.nodes_per_point; ++a) {
        const int i = weights.node[first + a];
        Eigen::Vector3i below = grid.nodeCoordinates(i);
        if (below[d] != base[d]) continue;  // the plane's nodes only (weight 1 across it)
        below[d] -= 1;
        const int j = grid.nodeIndex(below);
        lower_has_mass |= grid_mass[j] > 0.0;
        column += weights.weight[first + a] * (grid_velocity.segment<3>(at(i)) - grid_velocity.segment<3>(at(j))) / h;
      }
    }
    C.col(d) = lower_has_mass ? column : Vec3::Zero();
  }
}

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

ParticleVelocities gridToParticles(const GridWeights& weights, const Positions& grid_velocity, const VecX& grid_mass) {
  const BackgroundGrid& grid = weights.grid;
  checkCount("the grid velocities", grid_velocity.size(), at(grid.numNodes()));
  if (grid_mass.size() > 0) checkCount("the grid masses", grid_mass.size(), grid.numNodes());
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
    if (weights.kernel == GridKernel::kTrilinear && grid_mass.size() > 0)
      oneSidedAcrossPlanes(weights, p, grid_velocity, grid_mass, C);
    out.velocity.segment<3>(at(p)) = v;
    out.affine[static_cast<size_t>(p)] = C;
  }
  return out;
}

}  // namespace pbdlab
