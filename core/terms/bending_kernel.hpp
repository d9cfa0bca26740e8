#pragma once
// Dihedral bending of a hinge of two triangles: PBNG (TOG) eq. 35 and 37 (after Baraff and
// Witkin 1998: no area weighting),
//
//   E(x) = k_b / 2 theta(x)^2.
//
// The hinge x = [x0; x1; x2; x3] (Vec12): the shared edge (x0, x1), x2 the opposite vertex of
// triangle 1 = (x0, x1, x2), x3 that of triangle 2 = (x1, x0, x3). Orientation: with
// e = x1 - x0, N1 = e x (x2 - x0) and N2 = (x0 - x1) x (x3 - x1) = (x3 - x1) x e, the unit
// normals n1 = N1/|N1| and n2 = N2/|N2| agree on a flat hinge whose x2 and x3 lie on opposite
// sides of the edge (the two triangles are then consistently oriented), and
//
//   theta = atan2((n1 x n2) . e_hat, n1 . n2)  in (-pi, pi],
//
// computed as atan2((N1 x N2) . e_hat, N1 . N2) (both arguments scaled by |N1||N2| > 0).
// theta = 0 on the flat hinge; theta > 0 when x3 lies on the -n1 side of triangle 1's plane,
// theta < 0 on the +n1 side: e.g. x0 = 0, x1 = e_x, x2 = (.5, 1, 0), x3 = (.5, -cos a, -sin a)
// gives theta = a. The paper writes atan of the quotient, theta in [0, pi]; the signed atan2
// form is the same angle with a sign, and smooth through theta = 0.
//
// Gradient (exact; Bridson et al. 2003, Tamstorf and Grinspun 2013): with w1 = |e| N1/|N1|^2
// (= n1 / h1, h1 the height of x2 over the edge), w2 = |e| N2/|N2|^2 and the edge coordinates
// of the feet of x2 and x3, alpha1 = (x2 - x0).e/|e|^2, alpha2 = (x3 - x0).e/|e|^2:
//   dtheta/dx0 = (1 - alpha1) w1 + (1 - alpha2) w2,  dtheta/dx1 = alpha1 w1 + alpha2 w2,
//   dtheta/dx2 = -w1,                                 dtheta/dx3 = -w2.
// The Hessian of theta is the derivative of these expressions (written out below), so
// E's Hessian is k_b (grad theta grad theta^T + theta Hess theta).
//
// Where no derivative exists: a triangle of zero area (|N1| = 0 or |N2| = 0: x2 or x3 on the
// edge's line, or |e| = 0), where the normal is undefined; and theta = +-pi (the hinge closed
// completely, x2 and x3 on the same side in one plane), the branch cut of atan2 where theta
// jumps from pi to -pi: E is continuous there but its gradient flips sign. Near a degenerate
// triangle the derivatives grow like 1/h1, 1/h2. At an exactly degenerate hinge (|e|, |N1| or
// |N2| exactly 0) the kernel returns theta = 0 (what atan2 gives for N1 = 0 or N2 = 0) and
// zero derivatives: finite, not a derivative.
//
// Hessian kinds (core/terms/energy_term.hpp):
//   kTrue:        k_b (grad theta grad theta^T + theta Hess theta), exact, indefinite in general.
//   kProjected:   the true 12x12 with its eigenvalues clamped at zero (a 12x12 eigen-solve).
//   kApproximate: PBNG eq. 37, k_b grad theta grad theta^T: rank one, PSD.
// Stateless, fixed-size, no heap allocation.
#include <Eigen/Core>

#include "core/support/types.hpp"
#include "core/terms/energy_term.hpp"  // HessianKind

namespace pbdlab {

// The signed dihedral angle theta of the hinge x (see above), its gradient (12) and Hessian
// (12x12); the outputs may be null.
double hingeAngle(const Vec12& x, Vec12* dtheta = nullptr, Mat12* d2theta = nullptr);

// The hinge's energy k_b/2 theta^2, its gradient (12) and Hessian (12x12, of the given kind);
// any output may be null.
void hingeTerms(double k_b, const Vec12& x, double* value, Vec12* gradient, Mat12* hessian,
                HessianKind kind = HessianKind::kTrue);

}  // namespace pbdlab
