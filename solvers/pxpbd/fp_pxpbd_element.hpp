#pragma once
// FP-PXPBD's per-element data (solvers/pxpbd/fp_pxpbd.hpp), precomputed once per topology and
// dt and stored in sweep (color) order: what the element's local Newton solve (PXPBD eq. 29-35,
// 48-49) reads besides the positions. Shared by the generic element solve (fp_pxpbd.cpp) and
// the lane kernel (fp_pxpbd_lanes.cpp).
#include <Eigen/Core>

#include "core/support/types.hpp"

namespace pbdlab {

// How an element's eq. 34 is solved.
enum class FpPxpbdTangentKind : unsigned char {
  kCorotatedRankOne,    // eq. 48 + eq. 49
  kNeoHookeanRankOne,   // eq. 52 + eq. 49
  kProjectedIsotropic,  // dense 9x9, isotropic SPD projection (core/materials/tangent_projection.hpp)
  kProjectedGeneral,    // dense 9x9, eigenvalue clamping of the full 9x9 (the muscle)
};

struct FpPxpbdElement {
  Eigen::Matrix<double, 4, 3> shape_gradients;  // row a: (dN_a/dX)^T
  Eigen::Matrix<double, 3, 4> offsets;          // column a: X_a - X_com
  Eigen::Matrix<double, 4, 1> masses;           // lumped nodal masses m_a (whole node)
  // kRankOne: Z^ of eq. 49; kProjected: M^ of eq. 36.
  Mat3 affine_block;
  double total_mass = 0.0;      // m^e
  double volume = 0.0;          // V^e
  double rank_one_c = 0.0;      // c = lambda V dt^2 (eq. 49 corrected)
  double rank_one_scale = 0.0;  // s of s I + lambda w w^T (2 mu for eq. 48, mu for eq. 52)
  double lambda = 0.0;
  int nodes[4] = {0, 0, 0, 0};
  int element = 0;                // index in the mesh
  int material = 0;               // index into the solver's table of closed-form stresses
  unsigned short fixed_mask = 0;  // bit 3a + d: DOF d of node a is prescribed
  FpPxpbdTangentKind kind = FpPxpbdTangentKind::kProjectedGeneral;
  // F = x_e G at positions x (per DOF).
  Mat3 deformationGradient(const double* x) const {
    Eigen::Matrix<double, 3, 4> xe;
    for (int a = 0; a < 4; ++a) xe.col(a) = Eigen::Map<const Vec3>(x + 3 * nodes[a]);
    return xe * shape_gradients;
  }
  bool rankOne() const {
    return kind == FpPxpbdTangentKind::kCorotatedRankOne || kind == FpPxpbdTangentKind::kNeoHookeanRankOne;
  }
};

}  // namespace pbdlab
