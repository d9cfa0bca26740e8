#pragma once
// Inversion-safe ("rotation-variant") SVD, the rotation R = U V^T with its derivative dR/dF
// (fixed corotated, Stomakhin et al. 2012; sign convention of Irving et al. 2004), and the
// derivatives of J = det F that every volumetric term uses. Fixed-size, no heap allocation.
#include <Eigen/Geometry>

#include "core/support/types.hpp"

namespace pbdlab {

// F = U diag(sigma) V^T with det U = det V = +1, sigma_1 >= sigma_2 >= |sigma_3| and
// sign(sigma_3) = sign(det F): an inversion is carried by the smallest singular value.
struct RotationVariantSvd {
  Mat3 U;
  Vec3 sigma;
  Mat3 V;
};

RotationVariantSvd rotationVariantSvd(const Mat3& F);
// sigma of rotationVariantSvd(F) without U and V (cheaper: energy-only evaluations).
Vec3 rotationVariantSingularValues(const Mat3& F);

// R = U V^T: F's polar rotation when det F > 0, and the rotation nearest to F in general.
inline Mat3 polarRotation(const RotationVariantSvd& svd) { return svd.U * svd.V.transpose(); }
Mat3 polarRotation(const Mat3& F);

// Warm-started polar rotation: one Newton step on R = R0 exp([w]) towards the maximizer of
// tr(R^T F) over rotations, from a previous rotation R0 (PBNG's per-element rotation,
// solvers/pbng). The maximizer is polarRotation(F) for every F off the jump set (see
// polarRotationDerivative): with the rotation-variant SVD, tr(R^T F) <= sigma_1 + sigma_2 +
// sigma_3 with equality at U V^T only (von Neumann's trace inequality with det R = +1), for
// det F < 0 too. Derivation, S = R0^T F, [w] the cross-product matrix of w:
//   tr((R0 exp[w])^T F) = tr(exp(-[w]) S) = tr S - tr([w] S) + tr([w]^2 S) / 2 + O(|w|^3),
//   -tr([w] S) = w . b with b = axial(S - S^T) = (S32 - S23, S13 - S31, S21 - S12), and
//   [w]^2 = w w^T - |w|^2 I gives tr([w]^2 S) = -w^T (tr(S) I - sym(S)) w.
// The quadratic model's maximizer (the Newton step for the stationarity condition
// skew(R^T F) = 0) solves
//   H w = b,  H = tr(S) I - sym(S).
// At the maximizer R* S = R*^T F = V diag(sigma) V^T and H has the eigenvalues
// sigma_2 + sigma_3, sigma_1 + sigma_3, sigma_1 + sigma_2 (> 0 off the jump set), so near R*
// the step converges quadratically, in fact cubically: the pulled-back function's third-order
// term, -|w|^2 (w . b) / 6, is proportional to b, which vanishes at the maximizer (measured
// e_1 <= 0.5 e_0^3 for sigma_2 + sigma_3 >= 0.3). R = R0 exp([w]) by Rodrigues' formula, then one Bjorck
// step R <- R (3 I - R^T R) / 2 so that R is orthonormal to round-off however many steps were
// chained (R0's own deviation delta becomes O(delta^2)).
// Returns false, R unspecified, when H is not positive definite (R0 far from the maximizer:
// e.g. rotated by 90 degrees or more from it, or F near the jump set or of rank <= 1), when
// |w| > kWarmStartMaxAngle (one step from that far is not trusted: from R0 = R* exp([v]) at
// F = I the step leaves |v| - tan|v| of error, 4% of |v| at 0.35 rad), or for non-finite
// input; the caller then takes polarRotation(F). Where it returns true, R is within
// O(|R0 - R*|^3) of polarRotation(F) near R* (tests/core/test_polar_svd.cpp: WarmStarted*).
// It agrees with polarRotation(F) on {sigma_2 + sigma_3 > 0} (every det F > 0, and inverted F
// off the jump set: the same rotation-variant R, the maximizer, not a reflection) when R0 is
// near enough; the basin shrinks with sigma_2 + sigma_3 (H's smallest eigenvalue there).
constexpr double kWarmStartMaxAngle = 0.5;
// The step on column-major 3x3 arrays (m[i + 3 j] = M(i, j)), without branches: it computes
// every quantity for every input and returns whether the step is trusted, so that a loop
// over many elements' F, R0 and R (PBNG's sweep, solvers/pbng/p1_visit.hpp) vectorizes
// across them. Where it returns false R is finite for finite input (the step is taken as
// w = 0) but is not the answer. Inline: PBNG calls it at every element visit.
inline __attribute__((always_inline)) bool warmStartedPolarStep(const double* F, const double* R0, double* R) {
  // The derivation is in the header: H w = b, H = tr(S) I - sym(S), b = axial(S - S^T).
  double S[9];
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) S[i + 3 * j] = R0[3 * i] * F[3 * j] + R0[3 * i + 1] * F[3 * j + 1] + R0[3 * i + 2] * F[3 * j + 2];
  const double t = S[0] + S[4] + S[8];
  const double h00 = t - S[0], h11 = t - S[4], h22 = t - S[8];
  const double h01 = -0.5 * (S[3] + S[1]), h02 = -0.5 * (S[6] + S[2]), h12 = -0.5 * (S[7] + S[5]);
  const double b0 = S[5] - S[7], b1 = S[6] - S[2], b2 = S[1] - S[3];
  // w = adj(H) b / det H (one division). H is positive definite exactly when its leading
  // minors h00, h00 h11 - h01^2 and det H are > 0 (Sylvester; written so that NaN fails).
  const double a00 = h11 * h22 - h12 * h12, a01 = h02 * h12 - h01 * h22, a02 = h01 * h12 - h02 * h11;
  const double a11 = h00 * h22 - h02 * h02, a12 = h01 * h02 - h00 * h12, a22 = h00 * h11 - h01 * h01;
  const double det = h00 * a00 + h01 * a01 + h02 * a02;
  const double v0 = a00 * b0 + a01 * b1 + a02 * b2;
  const double v1 = a01 * b0 + a11 * b1 + a12 * b2;
  const double v2 = a02 * b0 + a12 * b1 + a22 * b2;
  // |w| = |v| / det <= kWarmStartMaxAngle, compared before dividing.
  const double limit = kWarmStartMaxAngle * det;
  const bool trusted = (h00 > 0.0) & (a22 > 0.0) & (det > 0.0) & (v0 * v0 + v1 * v1 + v2 * v2 <= limit * limit);
  const double inv = trusted ? 1.0 / det : 0.0;
  const double w0 = v0 * inv, w1 = v1 * inv, w2 = v2 * inv;
  // Rodrigues: exp([w]) = I + a [w] + c [w]^2, a = sin(theta) / theta, c = (1 - cos(theta)) /
  // theta^2, by their Taylor series in x = theta^2 <= 0.25: the first omitted terms are
  // theta^14 / 15! < 1e-16 and theta^14 / 16! (no sin or cos calls, no cancellation at 0; the
  // coefficients are constants, so no division either).
  const double x = w0 * w0 + w1 * w1 + w2 * w2;
  constexpr double s1 = -1.0 / 6.0, s2 = 1.0 / 120.0, s3 = -1.0 / 5040.0, s4 = 1.0 / 362880.0,
                   s5 = -1.0 / 39916800.0, s6 = 1.0 / 6227020800.0;
  constexpr double c1 = -1.0 / 24.0, c2 = 1.0 / 720.0, c3 = -1.0 / 40320.0, c4 = 1.0 / 3628800.0,
                   c5 = -1.0 / 479001600.0, c6 = 1.0 / 87178291200.0;
  const double a = 1.0 + x * (s1 + x * (s2 + x * (s3 + x * (s4 + x * (s5 + x * s6)))));
  const double c = 0.5 + x * (c1 + x * (c2 + x * (c3 + x * (c4 + x * (c5 + x * c6)))));
  double E[9];
  E[0] = 1.0 - c * (w1 * w1 + w2 * w2);
  E[4] = 1.0 - c * (w0 * w0 + w2 * w2);
  E[8] = 1.0 - c * (w0 * w0 + w1 * w1);
  E[3] = c * w0 * w1 - a * w2;  // E(0, 1)
  E[1] = c * w0 * w1 + a * w2;  // E(1, 0)
  E[6] = c * w0 * w2 + a * w1;  // E(0, 2)
  E[2] = c * w0 * w2 - a * w1;  // E(2, 0)
  E[7] = c * w1 * w2 - a * w0;  // E(1, 2)
  E[5] = c * w1 * w2 + a * w0;  // E(2, 1)
  double Q[9];  // R0 E
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) Q[i + 3 * j] = R0[i] * E[3 * j] + R0[i + 3] * E[3 * j + 1] + R0[i + 6] * E[3 * j + 2];
  // One Bjorck step: R = Q (3 I - Q^T Q) / 2 = Q G, the symmetric Q^T Q by its six products.
  auto column_dot = [&Q](int p, int q) { return Q[3 * p] * Q[3 * q] + Q[3 * p + 1] * Q[3 * q + 1] + Q[3 * p + 2] * Q[3 * q + 2]; };
  double G[9];
  G[0] = 1.5 - 0.5 * column_dot(0, 0);
  G[4] = 1.5 - 0.5 * column_dot(1, 1);
  G[8] = 1.5 - 0.5 * column_dot(2, 2);
  G[1] = G[3] = -0.5 * column_dot(0, 1);
  G[2] = G[6] = -0.5 * column_dot(0, 2);
  G[5] = G[7] = -0.5 * column_dot(1, 2);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) R[i + 3 * j] = Q[i] * G[3 * j] + Q[i + 3] * G[3 * j + 1] + Q[i + 6] * G[3 * j + 2];
  return trusted;
}

inline bool warmStartedPolarRotation(const Mat3& F, const Mat3& R0, Mat3& R) {
  return warmStartedPolarStep(F.data(), R0.data(), R.data());
}

// dR/dF as a 9x9 in the vec ordering of types.hpp. With M = U^T dF V, dR = U W V^T where W is
// skew with W_ij = (M_ij - M_ji) / (sigma_i + sigma_j), hence (symmetric)
//   dR/dF = sum_{i<j} vec(T_ij) vec(T_ij)^T / (sigma_i + sigma_j),  T_ij = u_i v_j^T - u_j v_i^T.
// No derivative exists on the set {sigma_i + sigma_j = 0 for some pair}. With the ordering
// above that set is exactly {sigma_2 + sigma_3 = 0}: det F <= 0 with the two smallest
// singular values equal in magnitude (every F of rank <= 1 included). R jumps across it, e.g.
// from I at F = diag(2, 1 + d, -1) to diag(1, -1, -1) at F = diag(2, 1 - d, -1). There each
// denominator is floored at kSigmaSumFloor * max(sigma_1, 1): the result stays finite (a
// huge negative-curvature term that a PSD projection removes) but is not a derivative.
constexpr double kSigmaSumFloor = 1e-12;
Mat9 polarRotationDerivative(const RotationVariantSvd& svd);

// cof(F) = dJ/dF = [f1 x f2, f2 x f0, f0 x f1] for the columns f_k of F (= J F^-T).
inline Mat3 cofactor(const Mat3& F) {
  Mat3 C;
  C.col(0) = F.col(1).cross(F.col(2));
  C.col(1) = F.col(2).cross(F.col(0));
  C.col(2) = F.col(0).cross(F.col(1));
  return C;
}

// K += scale * d cof(F) / dF (= scale * d^2 J / dF^2): the block (a, b) is d(cof col a)/d f_b,
// -[f_c]x for cyclic (a, b, c) and +[f_c]x for anticyclic; diagonal blocks are zero.
inline void addScaledDeterminantHessian(double scale, const Mat3& F, Mat9& K) {
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3;
    const Vec3 f = scale * F.col((a + 2) % 3);
    Mat3 skew;
    skew << 0.0, -f(2), f(1), f(2), 0.0, -f(0), -f(1), f(0), 0.0;
    K.block<3, 3>(3 * a, 3 * b) -= skew;
    K.block<3, 3>(3 * b, 3 * a) += skew;
  }
}

}  // namespace pbdlab
