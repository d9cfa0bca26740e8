#pragma once
// The fixed corotated stress for a given rotation (Stomakhin et al. 2012, PBNG eq. 7):
//   P = 2 mu (F - R) + lambda (J - 1) cof(F),  J = det F,
// with R = polarRotation(F) this is the model's first Piola-Kirchhoff stress. The material
// (fixed_corotated.cpp, through fixedCorotatedEvaluate) calls it with the SVD's R. PBNG's P1
// lanes (solvers/pbng/p1_visit.hpp) write it as a F + c (F - R) + b cof F beside Neo-Hookean's
// and stable Neo-Hookean's, with their warm-started R; their test compares every node step
// with the definition. cof(F) is the caller's (cofactor(F)).
#include <Eigen/LU>

#include "core/support/types.hpp"

namespace pbdlab {

// On 3x3 arrays in one storage order (P may be any of them), with J = det F given.
inline void fixedCorotatedStress(double mu, double lambda, const double* F, const double* R,
                                 const double* cofactor_of_F, double J, double* P) {
  const double volumetric = lambda * (J - 1.0);
  for (int k = 0; k < 9; ++k) P[k] = 2.0 * mu * (F[k] - R[k]) + volumetric * cofactor_of_F[k];
}

inline Mat3 fixedCorotatedStress(double mu, double lambda, const Mat3& F, const Mat3& R, const Mat3& cofactor_of_F) {
  Mat3 P;
  fixedCorotatedStress(mu, lambda, F.data(), R.data(), cofactor_of_F.data(), F.determinant(), P.data());
  return P;
}

}  // namespace pbdlab
