#pragma once
// Corotated membrane of one triangle of a surface in 3D: PBNG (TOG) eq. 35-36 and §8.1.
//
//   E(x) = A Psi_cm(F),  Psi_cm(F) = mu |F - R(F)|_F^2 + lambda/2 (J - 1)^2,
//
// F = [x0 x1 x2] G (3x2) the deformation gradient over the triangle, G = dN/dX (3x2) in the
// triangle's own 2D rest frame, A the rest area, R(F) the 3x2 polar factor (orthonormal
// columns, F = R S with S symmetric 2x2), J = sqrt(det(F^T F)) = |f1 x f2| the area ratio.
// With the thin SVD F = U_2 diag(s1, s2) V^T (s1 >= s2 >= 0), Psi_cm is the function of the
// singular values
//
//   psi(s1, s2) = mu ((s1 - 1)^2 + (s2 - 1)^2) + lambda/2 (s1 s2 - 1)^2,
//
// and dPsi/dF = U_2 diag(psi_1, psi_2) V^T (psi_i = d psi / d s_i). Stateless, fixed-size,
// no heap allocation.
//
// Hessian of Psi in F (6x6, vec(F)[i + 3 c] = F(i, c), the ordering of core/support/types.hpp). In the
// orthonormal basis u_i v_j^T (U = [u1 u2 u3] the full 3x3 left factor) it is block diagonal
// (Lewis and Sendov's formula for rectangular matrices; Smith et al. 2019 for the square case):
//   {u1 v1^T, u2 v2^T}:      the 2x2 Hessian of psi in (s1, s2);
//   (u1 v2^T + u2 v1^T)/√2:  (psi_1 - psi_2)/(s1 - s2) = 2 mu - lambda (J - 1)  (closed form:
//                            no division, so s1 = s2 needs no special case);
//   (u1 v2^T - u2 v1^T)/√2:  (psi_1 + psi_2)/(s1 + s2) = 2 mu + lambda (J - 1) - 4 mu / (s1 + s2);
//   u3 v_j^T (out of plane): psi_j / s_j = (2 mu (s_j - 1) + lambda (J - 1) s_k) / s_j.
//
// Where no derivative exists. Psi_cm is smooth wherever F has full column rank, i.e. s2 > 0,
// i.e. J > 0 (R(F) = F (F^T F)^(-1/2) is analytic there, J = |f1 x f2| too). Equal singular
// values s1 = s2 (e.g. the rest state, any uniform scaling) are NOT singular: the SVD is not
// unique there but R, Psi and every formula above are (the only 1/(s1 - s2) is cancelled in
// closed form). The set without a derivative is {s2 = 0} = {J = 0}: the deformed triangle is
// degenerate (its nodes collinear or coincident). There |F - R|^2 = |F|^2 - 2 (s1 + s2) + 2 has
// the kink of the nuclear norm, J = |f1 x f2| the kink of a norm, and the out-of-plane
// curvature psi_2 / s2 ~ -(2 mu + lambda s1) / s2 diverges as the triangle collapses. The
// kernel stays finite there: s_j and s1 + s2 in the denominators are floored at
// kMembraneSigmaFloor * max(s1, 1) (the result is then one element of the subdifferential for
// the gradient, and not a derivative for the Hessian). Note that a membrane cannot invert:
// J >= 0 always, a triangle turned over is just rotated (Psi is invariant under reflections).
//
// Hessian kinds (core/terms/energy_term.hpp):
//   kTrue:        A B^T (d^2 Psi / dF^2) B, B (6x9) with vec(F) = B x; indefinite under
//                 compression (out-of-plane buckling directions).
//   kProjected:   the same with the eigenvalues of the 6x6 d^2 Psi / dF^2 clamped at zero.
//                 They are known in closed form in the basis above (one 2x2 eigen-solve), so
//                 the projection is exact and cheap; A B^T K+ B is then PSD. This is the
//                 project's "projection at the material level" (docs/ARCHITECTURE.md).
//   kApproximate: PBNG §8.1, d^2 Psi / dF^2 ~ 2 mu I + lambda/4 J^2 L (x) L with
//                 L = F (F^T F)^-T + F (F^T F)^-1 = 2 F (F^T F)^-1, i.e. 2 mu I + lambda
//                 dJ/dF (x) dJ/dF (dJ/dF = J F (F^T F)^-1 = s2 u1 v1^T + s1 u2 v2^T, which
//                 is how it is computed: defined at J = 0 too). SPD for mu > 0.
#include <Eigen/Core>

#include "core/support/types.hpp"
#include "core/terms/energy_term.hpp"  // HessianKind

namespace pbdlab {

using Mat32 = Eigen::Matrix<double, 3, 2>;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;

// Relative floor of the singular values (and of s1 + s2) that divide the Hessian; see above.
constexpr double kMembraneSigmaFloor = 1e-12;
// A rest triangle is degenerate when 2 A <= kMembraneDegenerateArea * (longest edge)^2.
constexpr double kMembraneDegenerateArea = 1e-12;

// Per-triangle rest data.
struct MembraneRest {
  Mat32 dN_dX;        // G: F = [x0 x1 x2] G, row a = node a; each column sums to zero
  double area = 0.0;  // rest area A
};

// Rest data from the rest positions. The 2D rest frame is t1 = (X1 - X0)/|X1 - X0|,
// t2 = n x t1 with n the unit normal of (X0, X1, X2); in it the edges are D = [[|e1|, e2.t1],
// [0, e2.t2]] and G = [[-1, -1], [1, 0], [0, 1]] D^-1. Throws std::invalid_argument on a
// degenerate triangle (see kMembraneDegenerateArea) or non-finite input.
MembraneRest membraneRest(const Vec3& X0, const Vec3& X1, const Vec3& X2);

// F = [x0 x1 x2] G for the stacked positions x = [x0; x1; x2].
Mat32 membraneDeformationGradient(const MembraneRest& rest, const Vec9& x);

// The density Psi_cm(F), dPsi/dF (3x2) and d^2 Psi/dF^2 (6x6, of the given kind) in the
// ordering vec(F)[i + 3 c]; any output may be null.
void membraneDensity(double mu, double lambda, const Mat32& F, double* psi, Mat32* P, Mat6* dPdF,
                     HessianKind kind = HessianKind::kTrue);

// The triangle's energy A Psi_cm(F(x)), its gradient (9) and Hessian (9x9, of the given kind)
// in the stacked positions x = [x0; x1; x2]; any output may be null.
void membraneTerms(const MembraneRest& rest, double mu, double lambda, const Vec9& x, double* value,
                   Vec9* gradient, Mat9* hessian, HessianKind kind = HessianKind::kTrue);

}  // namespace pbdlab
