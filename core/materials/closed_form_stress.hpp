#pragma once
// The first Piola stress of the isotropic models the P1 lane kernels evaluate in closed form,
// without a virtual call: PBNG's node visits (solvers/pbng/p1_visit.cpp) and FP-PXPBD's element
// solves (solvers/pxpbd/fp_pxpbd_lanes.cpp). Each is
//   P = a F + c (F - R) + b cof F,  b = b_J (J - 1) + b_0,  a = a_0 (1 - snh / (I_C + 1)):
//   fixed corotated (PBNG eq. 7)   a_0 = 0,  c = 2 mu, b_J = lambda,     b_0 = 0
//   Neo-Hookean (PBNG eq. 8)       a_0 = mu, c = 0,    b_J = lambda_hat, b_0 = -mu
//   stable Neo-Hookean (eq. 10)    a_0 = mu, c = 0,    b_J = lambda,     b_0 = -3 mu / 4, snh = 1
// with the model's own parameters (modelParameters(); fixed_corotated.hpp, neo_hookean.cpp,
// stable_neo_hookean.cpp write the same P, which test_closed_form_stress compares) and R the
// polar rotation of F (used by the corotated model only).
#include "core/materials/material.hpp"

namespace pbdlab {

enum class ClosedFormStressKind { kCorotated, kNeoHookean, kStableNeoHookean, kNone };

struct ClosedFormStress {
  ClosedFormStressKind kind = ClosedFormStressKind::kNone;  // kNone: the model has no closed form here
  double a0 = 0.0, c = 0.0, bJ = 0.0, b0 = 0.0, snh = 0.0;
  bool usesRotation() const { return kind == ClosedFormStressKind::kCorotated; }
};

// The closed form of `material`'s stress (kind kNone, coefficients 0, for a model without one:
// St. Venant-Kirchhoff, the muscle).
ClosedFormStress closedFormStressOf(const Material& material);

// P of one element on column-major 3x3 arrays from F, C = cof F, J = det F and (corotated) R.
// `uniform` is the kind every caller's element has (the formula without the other kinds'
// terms); kNone stands for elements of mixed kinds: the general form, each by its coefficients.
// Inline and branch-free: the lane kernels call it inside loops they vectorize.
template <ClosedFormStressKind uniform>
inline __attribute__((always_inline)) void closedFormStress(double a0, double c, double bJ, double b0, double snh,
                                                            const double* F, const double* C, double J,
                                                            const double* R, double* P) {
  const double b = bJ * (J - 1.0) + b0;
  if constexpr (uniform == ClosedFormStressKind::kCorotated) {
    for (int k = 0; k < 9; ++k) P[k] = c * (F[k] - R[k]) + b * C[k];
  } else if constexpr (uniform == ClosedFormStressKind::kNeoHookean) {
    for (int k = 0; k < 9; ++k) P[k] = a0 * F[k] + b * C[k];
  } else {
    double Ic = 0.0;
    for (int k = 0; k < 9; ++k) Ic += F[k] * F[k];
    const double a = a0 * (1.0 - snh / (Ic + 1.0));
    if constexpr (uniform == ClosedFormStressKind::kStableNeoHookean)
      for (int k = 0; k < 9; ++k) P[k] = a * F[k] + b * C[k];
    else
      for (int k = 0; k < 9; ++k) P[k] = a * F[k] + c * (F[k] - R[k]) + b * C[k];
  }
}

}  // namespace pbdlab
