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

// Trilinear C_p of point p where one side of its cell has no mass along an axis (grid_velocity
// and grid_mass as gridToParticles'). On a grid plane the interpolant has two one-sided
// derivatives and the stencil (the cell above) reads the upper side, whose nodes the point gives
// no weight; within round-off of a plane (u = 2 - 1e-16) the nodes of the far side get a weight
// of ~1e-16, a mass below the grid step's floor (kGridMasslessFraction: they are held, with
// velocity 0). Either way the side without mass has no motion, only 0, and differencing against
// it gives C_p = -v/h. The column is then taken from the neighbouring cell on the side with
// mass (its nodes and theirs one layer further), or set to 0 where those have none. C_p D_p =
// B_p holds on the plane (D_p's row and column across it vanish) and to the far side's weight
// near it.
void oneSidedWhereASideHasNoMass(const GridWeights& weights, int p, const Positions& grid_velocity,
                                 const VecX& grid_mass, Mat3& C) {
  const BackgroundGrid& grid = weights.grid;
  const size_t first = weights.entry(p);
  const Eigen::Vector3i base = grid.nodeCoordinates(weights.node[first]);  // x fastest: node 0 is the lowest
  const double h = grid.spacing();
  for (int d = 0; d < 3; ++d) {
    bool lower_has_mass = false, upper_has_mass = false;
    for (int a = 0; a < weights.nodes_per_point; ++a) {
      const int i = weights.node[first + a];
      const bool lower = grid.nodeCoordinates(i)[d] == base[d];
      (lower ? lower_has_mass : upper_has_mass) |= grid_mass[i] > 0.0;
    }
    if (lower_has_mass == upper_has_mass) {
      if (!lower_has_mass) C.col(d).setZero();  // no mass around at all: no motion to read
      continue;
    }
    // The side with mass, and the direction of its neighbouring cell.
    const int layer = lower_has_mass ? base[d] : base[d] + 1;
    const int step = lower_has_mass ? -1 : 1;
    Vec3 column = Vec3::Zero();
    const bool inside = layer + step >= 0 && layer + step < grid.nodeCounts()[d];
    bool beyond_has_mass = false;
    for (int a = 0; a < weights.nodes_per_point && inside; ++a) {
      const int i = weights.node[first + a];
      Eigen::Vector3i beyond = grid.nodeCoordinates(i);
      if (beyond[d] != layer) continue;  // the side's nodes only (their weights sum to ~1 across)
      beyond[d] += step;
      const int j = grid.nodeIndex(beyond);
      beyond_has_mass |= grid_mass[j] > 0.0;
      // d v / d x_d by the one-sided difference, oriented along +x_d.
      column += weights.weight[first + a] * step * (grid_velocity.segment<3>(at(j)) - grid_velocity.segment<3>(at(i))) / h;
    }
    C.col(d) = beyond_has_mass ? column : Vec3::Zero();
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
      oneSidedWhereASideHasNoMass(weights, p, grid_velocity, grid_mass, C);
    out.velocity.segment<3>(at(p)) = v;
    out.affine[static_cast<size_t>(p)] = C;
  }
  return out;
}

}  // namespace pbdlab
