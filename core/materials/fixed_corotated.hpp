#pragma once
// The fixed corotated stress for a given rotation (Stomakhin et al. 2012, PBNG eq. 7):
//   P = 2 mu (F - R) + lambda (J - 1) cof(F),  J = det F,
// with R = polarRotation(F) this is the model's first Piola-Kirchhoff stress. The one place
// the formula is written: the material (fixed_corotated.cpp, through fixedCorotatedEvaluate)
// calls it with the SVD's R, PBNG's P1 fast path (solvers/pbng) with its per-element
// warm-started R (warmStartedPolarRotation, polar_svd.hpp). cof(F) is the caller's
// (cofactor(F)), which both callers need again.
#include <Eigen/LU>

#include "core/types.hpp"

namespace pbdlab {

inline Mat3 fixedCorotatedStress(double mu, double lambda, const Mat3& F, const Mat3& R, const Mat3& cofactor_of_F) {
  return 2.0 * mu * (F - R) + (lambda * (F.determinant() - 1.0)) * cofactor_of_F;
}

}  // namespace pbdlab
