#pragma once
// The closed forms of the split-term kinds (MaterialTermKind, material.hpp): Psi~ and
// P~ = dPsi~/dF on column-major 3x3 arrays, given F, its cofactor C = cof F, J = det F and,
// for the corotated stretch, the rotation R. Inline and without branches but the switch on
// the kind, which a caller with a constant kind folds away: the XPBD family's P1 lanes call
// it inside loops over elements that they vectorize (solvers/pbd_xpbd/p1_lanes.cpp).
// test_term_kinds compares every kind with the evaluate of the split terms that carry it.
#include <cmath>

#include "core/materials/material.hpp"

namespace pbdlab {

inline __attribute__((always_inline)) double closedFormTerm(MaterialTermKind kind, double shift, const double* F,
                                                            const double* C, double J, const double* R, double* P) {
  double I2 = 0.0;
  for (int k = 0; k < 9; ++k) I2 += F[k] * F[k];
  switch (kind) {
    case MaterialTermKind::kCorotatedStretch: {
      double psi = 0.0;
      for (int k = 0; k < 9; ++k) {
        const double d = F[k] - R[k];
        psi += d * d;
        P[k] = 2.0 * d;
      }
      return psi;
    }
    case MaterialTermKind::kVolume: {
      const double Js = J - shift;
      for (int k = 0; k < 9; ++k) P[k] = Js * C[k];
      return 0.5 * Js * Js;
    }
    case MaterialTermKind::kInvariantI2:
      for (int k = 0; k < 9; ++k) P[k] = F[k];
      return 0.5 * (I2 - shift);
    case MaterialTermKind::kNeoHookeanShape:
      for (int k = 0; k < 9; ++k) P[k] = F[k] - C[k];
      return 0.5 * (I2 - 2.0 * J - 1.0);
    case MaterialTermKind::kStableNeoHookeanShape: {
      const double a = 1.0 - 1.0 / (I2 + 1.0);
      for (int k = 0; k < 9; ++k) P[k] = a * F[k] - 0.75 * C[k];
      return 0.5 * (I2 - 3.0) - 0.75 * (J - 1.0) - 0.5 * std::log((I2 + 1.0) / 4.0);
    }
    case MaterialTermKind::kGeneric: break;
  }
  for (int k = 0; k < 9; ++k) P[k] = 0.0;
  return 0.0;
}

}  // namespace pbdlab
