#include "core/materials/polar_svd.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <Eigen/LU>
#include <Eigen/SVD>

namespace pbdlab {

namespace {

// ---- Jacobi SVD of a 3x3 matrix (3.5x faster than Eigen::JacobiSVD: bench_materials Svd). ----
//
// After McAdams, Selle, Tamstorf, Teran, Sifakis 2011, "Computing the Singular Value
// Decomposition of 3x3 matrices with minimal branching and elementary floating point
// operations" (Jacobi eigen-analysis of F^T F, then U from F V with the signs and rank
// deficiency handled), rewritten for double precision and 1e-15 accuracy:
//   1. two-sided Jacobi on the symmetric A = F^T F, always rotating the largest off-diagonal
//      entry (about 8 rotations for a random F, 9 with cyclic sweeps), with exact rotations
//      (McAdams' approximate quaternion ones target single precision and slow down when two
//      diagonal entries are close) until every |a_pq| <= kSymmetricTol trace A. The rotations
//      accumulate in V, so det V = +1;
//   2. one-sided (Hestenes) Jacobi on B = F V: rotations computed from the dot products of B's
//      columns, applied to B and V, until every pair of columns is orthogonal to
//      kOrthogonalityTol relative to the product of their norms. F^T F has lost the directions
//      of the small singular values (error eps sigma_1^2 / sigma_i^2); this phase works on F
//      itself and restores them. After phase 1 it usually only checks (9 products a pair);
//   3. sort the columns by norm (an odd permutation is paired with negating the last column of
//      B and V, so det V stays +1); U by Gram-Schmidt, u_3 = u_1 x u_2 so det U = +1, and
//      sigma_i = u_i . b_i: sigma_3 gets the sign of det B = det F. A negligible column
//      (rank <= 1) is replaced by a unit normal found with a cross product.
// Each loop has a fixed limit; if phase 2 does not converge (seen only for non-finite input)
// the caller falls back to Eigen::JacobiSVD.

// Relative orthogonality of B's columns at which phase 2 stops (~5 eps): |U^T U - I|,
// |V^T V - I| and the reconstruction error end at a few 1e-16.
constexpr double kOrthogonalityTol = 1e-15;
// A column with |b|^2 <= kNegligible^2 |F|^2 is rounding noise (rank deficiency): its
// direction and its products with the others carry no information, and orthogonalizing it
// against a much longer column can cycle (the rounding of c b_p - s b_q is again parallel to
// b_q). Phase 2 leaves it, phase 3 replaces it (reconstruction error <= kNegligible |F|).
constexpr double kNegligible = 4e-15;
// Phase 1 stops when |a_pq| <= kSymmetricTol trace A for every pair; phase 2 finishes.
constexpr double kSymmetricTol = 1e-15;
// |gamma| < kSmallAngle |d| takes the series for the rotation (see jacobiRotation).
constexpr double kSmallAngle = 1e-3;
// Phase 1 converges in about 8 rotations, phase 2 in one or two sweeps.
constexpr int kMaxSymmetricRotations = 18;
constexpr int kMaxOneSidedSweeps = 8;
// |F|_max outside [kScaleLow, kScaleHigh] is rescaled by a power of two first, so that the
// fourth powers formed below neither overflow nor underflow.
constexpr double kScaleLow = 1e-50;
constexpr double kScaleHigh = 1e50;

// The rotation J = [c s; -s c] with (J^T [alpha gamma; gamma beta] J)_12 = 0, the smaller of the
// two angles (|t| = |s / c| <= 1; Golub & Van Loan, Matrix Computations, sym.schur2), written
// with d = beta - alpha so that c and s need one division: t = 2 gamma sgn(d) / w,
// w = |d| + r, r = sqrt(d^2 + 4 gamma^2), and 1 + t^2 = 2 r w / w^2. gamma != 0.
struct Rotation {
  double c, s, t;
};
inline Rotation jacobiRotation(double alpha, double beta, double gamma) {
  const double d = beta - alpha;
  if (std::abs(gamma) < kSmallAngle * std::abs(d)) {
    // Late sweeps: x = gamma / d is small and t = x - x^3 + 2 x^5 + O(x^7),
    // 1 / sqrt(1 + t^2) = 1 - t^2 / 2 + 3 t^4 / 8 + O(t^6): both to below 1e-18 for
    // |x| < 1e-3, without square roots.
    const double x = gamma / d;
    const double x2 = x * x;
    const double t = x * (1.0 - x2 * (1.0 - 2.0 * x2));
    const double t2 = t * t;
    const double c = 1.0 - t2 * (0.5 - 0.375 * t2);
    return {c, t * c, t};
  }
  const double r = std::sqrt(d * d + 4.0 * gamma * gamma);
  const double w = std::abs(d) + r;
  const double g = d < 0.0 ? -2.0 * gamma : 2.0 * gamma;
  const double inv = 1.0 / std::sqrt(2.0 * r * w);
  return {w * inv, g * inv, g / w};
}

// x' = c x - s y, y' = s x + c y for two columns.
inline void rotateColumns(double* x, double* y, double c, double s) {
  for (int i = 0; i < 3; ++i) {
    const double xi = x[i], yi = y[i];
    x[i] = c * xi - s * yi;
    y[i] = s * xi + c * yi;
  }
}

// Rotates the pair (p, q) of the symmetric A: a_pp, a_qq, a_pq and the two entries a_op, a_oq
// of the third index o; V's columns p and q follow (V <- V J).
inline void symmetricRotation(double& app, double& aqq, double& apq, double& aop, double& aoq,
                              double* vp, double* vq) {
  const Rotation J = jacobiRotation(app, aqq, apq);
  app -= J.t * apq;
  aqq += J.t * apq;
  apq = 0.0;
  const double x = aop, y = aoq;
  aop = J.c * x - J.s * y;
  aoq = J.s * x + J.c * y;
  rotateColumns(vp, vq, J.c, J.s);
}

inline double dot3(const double* x, const double* y) { return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]; }

constexpr int kPairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};

// Phases 1-3 on F with max |F_ij| in [kScaleLow, kScaleHigh]. Returns false if phase 2 did not
// converge. kWithUV = false skips what only U and V need (sigma is the same to the bit).
template <bool kWithUV>
bool jacobiSvd(const Mat3& F, Mat3* U_out, Vec3& sigma, Mat3* V_out) {
  // Column-major 3x3 arrays: column j of F, B, V starts at 3 j.
  const double* f = F.data();
  double v[9] = {1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0};

  // Phase 1: A = F^T F (six numbers, in registers).
  double a00 = dot3(f, f), a11 = dot3(f + 3, f + 3), a22 = dot3(f + 6, f + 6);
  double a01 = dot3(f, f + 3), a02 = dot3(f, f + 6), a12 = dot3(f + 3, f + 6);
  const double norm2 = a00 + a11 + a22;  // |F|^2, invariant under the rotations
  const double symmetric_tol = kSymmetricTol * norm2;
  bool rotated_any = false;
  for (int it = 0; it < kMaxSymmetricRotations; ++it) {
    const double g01 = std::abs(a01), g02 = std::abs(a02), g12 = std::abs(a12);
    if (g01 >= g02 && g01 >= g12) {
      if (!(g01 > symmetric_tol)) break;
      symmetricRotation(a00, a11, a01, a02, a12, v, v + 3);
    } else if (g02 >= g12) {
      if (!(g02 > symmetric_tol)) break;
      symmetricRotation(a00, a22, a02, a01, a12, v, v + 6);
    } else {
      if (!(g12 > symmetric_tol)) break;
      symmetricRotation(a11, a22, a12, a01, a02, v + 3, v + 6);
    }
    rotated_any = true;
  }

  // Phase 2: B = F V, one-sided Jacobi (cyclic: it rarely rotates).
  double b[9];
  if (rotated_any) {
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i)
        b[3 * j + i] = f[i] * v[3 * j] + f[3 + i] * v[3 * j + 1] + f[6 + i] * v[3 * j + 2];
  } else {
    for (int k = 0; k < 9; ++k) b[k] = f[k];
  }
  constexpr double tol2 = kOrthogonalityTol * kOrthogonalityTol;
  const double negligible2 = (kNegligible * kNegligible) * norm2;
  bool converged = false;
  for (int sweep = 0; sweep < kMaxOneSidedSweeps; ++sweep) {
    bool rotated = false;
    for (const auto& pair : kPairs) {
      double* bp = b + 3 * pair[0];
      double* bq = b + 3 * pair[1];
      const double alpha = dot3(bp, bp), beta = dot3(bq, bq), gamma = dot3(bp, bq);
      if (gamma * gamma <= tol2 * alpha * beta || std::min(alpha, beta) <= negligible2) continue;
      rotated = true;
      const Rotation J = jacobiRotation(alpha, beta, gamma);
      rotateColumns(bp, bq, J.c, J.s);
      if (kWithUV) rotateColumns(v + 3 * pair[0], v + 3 * pair[1], J.c, J.s);
    }
    if (!rotated) {
      converged = true;
      break;
    }
  }
  if (!converged) return false;

  // Phase 3: sort the columns by decreasing norm (three compare-exchanges), tracking parity.
  double n2[3] = {dot3(b, b), dot3(b + 3, b + 3), dot3(b + 6, b + 6)};
  int order[3] = {0, 1, 2};
  bool odd = false;
  const auto exchange = [&](int i, int j) {
    if (n2[order[i]] < n2[order[j]]) {
      std::swap(order[i], order[j]);
      odd = !odd;
    }
  };
  exchange(0, 1);
  exchange(1, 2);
  exchange(0, 1);
  // A transposition of columns of B and V (F V = B stays true) flips det V; negating the last
  // column of both restores det V = +1 and keeps F V = B.
  const double last_sign = odd ? -1.0 : 1.0;
  const double* b0 = b + 3 * order[0];
  const double* b1 = b + 3 * order[1];
  double b2[3];
  for (int i = 0; i < 3; ++i) b2[i] = last_sign * b[3 * order[2] + i];

  const double s0 = std::sqrt(n2[order[0]]);
  if (s0 == 0.0) {  // F = 0 (the caller rescales, so no underflow here): U = V = I
    sigma.setZero();
    if (kWithUV) {
      U_out->setIdentity();
      V_out->setIdentity();
    }
    return true;
  }
  double u0[3], u1[3], u2[3];
  for (int i = 0; i < 3; ++i) u0[i] = b0[i] / s0;
  // u1: b1 without its component along u0, normalized. Phase 2 made b1 and b0 orthogonal to
  // kOrthogonalityTol unless b1 is negligible (rank <= 1): then any unit normal of u0 will do,
  // the one through the axis least aligned with u0, with the sign that makes sigma_2 >= 0.
  double s1;
  if (n2[order[1]] > negligible2) {
    const double proj = dot3(u0, b1);
    for (int i = 0; i < 3; ++i) u1[i] = b1[i] - proj * u0[i];
    s1 = std::sqrt(dot3(u1, u1));
    for (int i = 0; i < 3; ++i) u1[i] /= s1;
  } else {
    int k = std::abs(u0[0]) <= std::abs(u0[1]) ? 0 : 1;
    if (std::abs(u0[2]) < std::abs(u0[k])) k = 2;
    // u0 x e_k
    const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    u1[k] = 0.0;
    u1[k1] = u0[k2];
    u1[k2] = -u0[k1];
    const double n = std::sqrt(u0[k1] * u0[k1] + u0[k2] * u0[k2]);
    s1 = 0.0;
    for (int i = 0; i < 3; ++i) {
      u1[i] /= n;
      s1 += u1[i] * b1[i];
    }
    if (s1 < 0.0) {
      s1 = -s1;
      for (int i = 0; i < 3; ++i) u1[i] = -u1[i];
    }
  }
  u2[0] = u0[1] * u1[2] - u0[2] * u1[1];
  u2[1] = u0[2] * u1[0] - u0[0] * u1[2];
  u2[2] = u0[0] * u1[1] - u0[1] * u1[0];
  // Signed: det [u0 u1 u2] = +1, so sigma_2 < 0 exactly when det B = det F < 0.
  double s2 = dot3(u2, b2);
  // Rounding may order nearly equal values wrongly by an ulp or two.
  s1 = std::min(s1, s0);
  if (std::abs(s2) > s1) s2 = std::copysign(s1, s2);
  sigma = Vec3(s0, s1, s2);
  if (kWithUV) {
    for (int i = 0; i < 3; ++i) {
      (*U_out)(i, 0) = u0[i];
      (*U_out)(i, 1) = u1[i];
      (*U_out)(i, 2) = u2[i];
      (*V_out)(i, 0) = v[3 * order[0] + i];
      (*V_out)(i, 1) = v[3 * order[1] + i];
      (*V_out)(i, 2) = last_sign * v[3 * order[2] + i];
    }
  }
  return true;
}

// The previous implementation, kept for the rare inputs the Jacobi helper gives up on.
RotationVariantSvd eigenRotationVariantSvd(const Mat3& F) {
  // A square input never uses JacobiSVD's QR preconditioner, so skip constructing one.
  const Eigen::JacobiSVD<Mat3, Eigen::NoQRPreconditioner> svd(
      F, Eigen::ComputeFullU | Eigen::ComputeFullV);
  RotationVariantSvd out{svd.matrixU(), svd.singularValues(), svd.matrixV()};
  // Eigen gives sigma >= 0 in decreasing order and U, V possibly reflections. Negating the last
  // column of a reflection together with sigma_3 keeps F = U diag(sigma) V^T; afterwards
  // det F = sigma_1 sigma_2 sigma_3, so sigma_3 carries its sign.
  if (out.U.determinant() < 0.0) {
    out.U.col(2) = -out.U.col(2);
    out.sigma(2) = -out.sigma(2);
  }
  if (out.V.determinant() < 0.0) {
    out.V.col(2) = -out.V.col(2);
    out.sigma(2) = -out.sigma(2);
  }
  return out;
}

// Rescales F by a power of two when needed (exact), runs the helper, and falls back to
// JacobiSVD if it gives up. Returns the SVD of F.
template <bool kWithUV>
void rotationVariantSvdInto(const Mat3& F, Mat3* U, Vec3& sigma, Mat3* V) {
  const double m = F.cwiseAbs().maxCoeff();
  if (m >= kScaleLow && m <= kScaleHigh) {
    if (jacobiSvd<kWithUV>(F, U, sigma, V)) return;
  } else if (m == 0.0) {
    sigma.setZero();
    if (kWithUV) {
      U->setIdentity();
      V->setIdentity();
    }
    return;
  } else if (std::isfinite(m)) {
    const int e = std::ilogb(m);
    if (jacobiSvd<kWithUV>(Mat3(F * std::ldexp(1.0, -e)), U, sigma, V)) {
      sigma *= std::ldexp(1.0, e);
      return;
    }
  }
  const RotationVariantSvd svd = eigenRotationVariantSvd(F);
  sigma = svd.sigma;
  if (kWithUV) {
    *U = svd.U;
    *V = svd.V;
  }
}

}  // namespace

RotationVariantSvd rotationVariantSvd(const Mat3& F) {
  RotationVariantSvd out;
  rotationVariantSvdInto<true>(F, &out.U, out.sigma, &out.V);
  return out;
}

Vec3 rotationVariantSingularValues(const Mat3& F) {
  // The same arithmetic as rotationVariantSvd's sigma (identical to the bit) without U and V.
  Vec3 sigma;
  rotationVariantSvdInto<false>(F, nullptr, sigma, nullptr);
  return sigma;
}

Mat3 polarRotation(const Mat3& F) { return polarRotation(rotationVariantSvd(F)); }

Mat9 polarRotationDerivative(const RotationVariantSvd& svd) {
  constexpr int kPairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  // sigma_i + sigma_j >= 0 always (sigma_2 >= |sigma_3|); the floor only acts on the set
  // without a derivative (see the header).
  const double floor = kSigmaSumFloor * std::max(svd.sigma(0), 1.0);
  Mat9 dR = Mat9::Zero();
  for (const auto& pair : kPairs) {
    const int i = pair[0];
    const int j = pair[1];
    const Mat3 T = svd.U.col(i) * svd.V.col(j).transpose() - svd.U.col(j) * svd.V.col(i).transpose();
    const Vec9 t = flatten(T);
    dR.noalias() += (1.0 / std::max(svd.sigma(i) + svd.sigma(j), floor)) * (t * t.transpose());
  }
  return dR;
}

}  // namespace pbdlab
