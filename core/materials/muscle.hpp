#pragma once
// The fibre curves of the anisotropic muscle model (PXPBD eq. 6-8, after Blemker et al. 2005),
// exposed for tests. With t = l / lambda_ofl and l = |F v| the fibre stretch:
//
//   f_a(l) = lambda_ofl * integral_0^t f_active(s) ds,    the active force-length curve
//   f_active(t) = 9 (t - 0.4)^2 on (0.4, 0.6), 1 - 4 (t - 1)^2 on [0.6, 1.4],
//                 9 (t - 1.6)^2 on (1.4, 1.6], 0 elsewhere   (peak 1 at t = 1),
//   f_p(l) = lambda_ofl * integral_1^t f_passive(s) ds,   f_passive(t) = P1 (e^{P2 (t - 1)} - 1)
//            for t > 1, 0 otherwise, P1 = 0.05, P2 = 6.6.
//
// So df_a/dl = f_active(t) and df_p/dl = f_passive(t). Written out, f_a is eq. 8 with the exact
// constants that eq. 8 prints rounded (1.33 -> 4/3, 0.6612 -> 1.984/3, 0.6774 -> 2.032/3);
// with the printed ones f_a would jump by 8e-5 lambda_ofl at t = 0.6 and 2.8e-4 lambda_ofl at
// t = 1.4, and f_a' by 1.6e-3 at both. f_p is eq. 7 minus its value at t = 1+, P1/P2 lambda_ofl
// (printed 0.0076 lambda_ofl): eq. 7 jumps from 0 to that constant at l = lambda_ofl; subtracting
// it makes f_p continuous (derivative unchanged), and with P1/P2 exact f_p' is continuous too
// (with 0.0076 it would jump by 1.6e-4 at l = lambda_ofl, the rest length for lambda_ofl = 1).
//
// Both curves are C1 everywhere. Second derivatives jump at t = 0.6 and 1.4 (active) and t = 1
// (passive); at t = 0.4 and 1.6 f_a'' is continuous (zero), only f_a''' jumps. The branch at
// a breakpoint is the one on its left (t <= 0.4, t <= 1 for the passive zero, ...).
#include "core/support/types.hpp"

namespace pbdlab::muscle {

struct CurveValue {
  double value = 0.0;      // f(l)
  double slope = 0.0;      // df/dl
  double curvature = 0.0;  // d^2f/dl^2
};

constexpr double kPassiveP1 = 0.05;
constexpr double kPassiveP2 = 6.6;

// The breakpoints t = l / lambda_ofl where a curve changes formula (active: 0.4, 0.6, 1.4, 1.6;
// passive: 1).
constexpr double kBreakpoints[] = {0.4, 0.6, 1.0, 1.4, 1.6};

CurveValue activeCurve(double l, double lambda_ofl);   // f_a
CurveValue passiveCurve(double l, double lambda_ofl);  // f_p

// The fibre term's Psi~ = (alpha f_a(l) + f_p(l)) / lambda_ofl at l = |F v| (v normalized here;
// v = 0 gives 0), with P~ and dP~/dF; any output may be null. The model's energy adds
// sigma_max * Psi~. spd_hessian: the fibre Hessian with its negative curvature along the fibre
// removed (the term of approximateTangent, see muscle.cpp).
void evaluateFibreTerm(double lambda_ofl, const Mat3& F, const Vec3& fibre_direction, double activation,
                       double* psi, Mat3* P, Mat9* dPdF, bool spd_hessian = false);

}  // namespace pbdlab::muscle
