#pragma once
// The 9x9 distortional Newton system of FP-PXPBD (PXPBD paper eq. 34),
//   (M~ + dt^2 V d2Psi/dF2) dF = -G,
// and its two ways of solving it. M~ (eq. 36) is block diagonal: M~ dF = dF M^ with the 3x3
// affine inertia M^ = sum_i m_i (X_i - X_com)(X_i - X_com)^T, so in the column-major vec
// ordering of core/support/types.hpp M~ = M^ (x) I_3.
//  - Rank-one Hessians (eq. 48 corotated: 2 mu I + lambda w w^T; eq. 52 Neo-Hookean:
//    mu I + lambda w w^T; w = vec(cof F) = d det F / dF): Sherman-Morrison, eq. 49 with the scale
//    the paper drops (papers/README.md): with c = lambda V dt^2 and Z = (M~ + s V dt^2 I)^-1,
//      (Z^-1 + c w w^T)^-1 = Z - c Z w w^T Z / (1 + c w^T Z w).
//    Z X = X Z^ with the 3x3 Z^ = (M^ + s V dt^2 I)^-1 precomputed per element (eq. 52 uses M~,
//    not M^e as printed).
//  - Any tangent (the muscle, StVK, stable Neo-Hookean, or "projected"): a dense 9x9 Cholesky
//    of M~ + dt^2 V D with D the SPD-projected dP/dF.
// Fixed-size, no allocation: these run once per element per local Newton iteration.
#include <Eigen/Cholesky>

#include "core/materials/polar_svd.hpp"
#include "core/support/types.hpp"

namespace pbdlab {

// The approximate Hessians of eq. 48 and eq. 52: identity_scale I_9 + lambda vec(cof F)
// vec(cof F)^T (identity_scale = 2 mu for eq. 48, mu for eq. 52).
inline Mat9 rankOneTangent(double identity_scale, double lambda, const Mat3& F) {
  const Vec9 w = flatten(cofactor(F));
  return identity_scale * Mat9::Identity() + lambda * w * w.transpose();
}

// Z^ = (M^ + identity_scale V dt^2 I_3)^-1 (the 3x3 block of eq. 49's Z).
inline Mat3 shermanMorrisonBlock(const Mat3& affine_inertia, double identity_scale_times_V_dt2) {
  return (affine_inertia + identity_scale_times_V_dt2 * Mat3::Identity()).inverse();
}

// dF = -(Z - c Z w w^T Z / (1 + c w^T Z w)) G, eq. 49 corrected; W = cof F.
inline Mat3 shermanMorrisonStep(const Mat3& Z_block, double c, const Mat3& W, const Mat3& G) {
  const Mat3 ZG = G * Z_block;  // Z acting on G: row by row, Z^ symmetric
  const Mat3 ZW = W * Z_block;
  const double wZG = W.cwiseProduct(ZG).sum();
  const double wZw = W.cwiseProduct(ZW).sum();
  return -(ZG - (c * wZG / (1.0 + c * wZw)) * ZW);
}

// M~ + dt2_V D as a 9x9 (vec ordering of core/support/types.hpp: M~(i + 3j, k + 3l) = delta_ik M^(j, l)).
inline Mat9 distortionalMatrix(const Mat3& affine_inertia, double dt2_V, const Mat9& tangent) {
  Mat9 A = dt2_V * tangent;
  for (int l = 0; l < 3; ++l)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) A(i + 3 * j, i + 3 * l) += affine_inertia(j, l);
  return A;
}

// dF solving eq. 34 with a dense 9x9 factorization (Cholesky; LDL^T if round-off makes the
// SPD matrix look indefinite).
inline Mat3 denseDistortionalStep(const Mat3& affine_inertia, double dt2_V, const Mat9& tangent, const Mat3& G) {
  const Mat9 A = distortionalMatrix(affine_inertia, dt2_V, tangent);
  const Vec9 rhs = -flatten(G);
  Eigen::LLT<Mat9> llt(A);
  if (llt.info() == Eigen::Success) return unflatten(llt.solve(rhs));
  return unflatten(Eigen::LDLT<Mat9>(A).solve(rhs));
}

}  // namespace pbdlab
