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
#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <cmath>

#include "core/support/types.hpp"
#include "core/terms/energy_term.hpp"  // HessianKind

namespace pbdlab {

namespace bending_detail {
// [v]x: [v]x w = v x w.
inline Mat3 crossMatrix(const Vec3& v) {
  Mat3 m;
  m << 0.0, -v(2), v(1), v(2), 0.0, -v(0), -v(1), v(0), 0.0;
  return m;
}
}  // namespace bending_detail

// The signed dihedral angle theta of the hinge x (see above), its gradient (12) and Hessian
// (12x12); the outputs may be null.
inline double hingeAngle(const Vec12& x, Vec12* dtheta = nullptr, Mat12* d2theta = nullptr) {
  using bending_detail::crossMatrix;
  const Vec3 x0 = x.segment<3>(0), x1 = x.segment<3>(3), x2 = x.segment<3>(6), x3 = x.segment<3>(9);
  const Vec3 e = x1 - x0;
  const Vec3 d1 = x2 - x0;  // triangle 1's second edge
  const Vec3 d2 = x3 - x1;  // triangle 2's edge from x1
  const Vec3 f2 = x3 - x0;
  const Vec3 N1 = e.cross(d1);
  const Vec3 N2 = d2.cross(e);
  const double L2 = e.squaredNorm();
  const double q1 = N1.squaredNorm();
  const double q2 = N2.squaredNorm();
  const bool degenerate = !(L2 > 0.0 && q1 > 0.0 && q2 > 0.0);
  const double L = std::sqrt(L2);
  const double theta = degenerate ? 0.0 : std::atan2(N1.cross(N2).dot(e) / L, N1.dot(N2));
  if (!dtheta && !d2theta) return theta;
  if (degenerate) {
    if (dtheta) dtheta->setZero();
    if (d2theta) d2theta->setZero();
    return theta;
  }

  const Vec3 w1 = (L / q1) * N1;
  const Vec3 w2 = (L / q2) * N2;
  const double alpha1 = d1.dot(e) / L2;
  const double alpha2 = f2.dot(e) / L2;
  if (dtheta) {
    dtheta->segment<3>(0) = (1.0 - alpha1) * w1 + (1.0 - alpha2) * w2;
    dtheta->segment<3>(3) = alpha1 * w1 + alpha2 * w2;
    dtheta->segment<3>(6) = -w1;
    dtheta->segment<3>(9) = -w2;
  }
  if (!d2theta) return theta;

  // d w_k / d x_b (3x3 each) and d alpha_k / d x_b (3 each), b = 0..3.
  const Vec3 e_hat = e / L;
  const Vec3 n1 = N1 / std::sqrt(q1), n2 = N2 / std::sqrt(q2);
  const Vec3 r1 = N1 / q1, r2 = N2 / q2;
  const Mat3 P1 = (L / q1) * (Mat3::Identity() - 2.0 * n1 * n1.transpose());  // d(L N1/q1)/dN1
  const Mat3 P2 = (L / q2) * (Mat3::Identity() - 2.0 * n2 * n2.transpose());
  const Mat3 r1e = r1 * e_hat.transpose();  // d(L)/de term
  const Mat3 r2e = r2 * e_hat.transpose();
  Mat3 Dw1[4], Dw2[4];
  Dw1[0] = -r1e + P1 * crossMatrix(x2 - x1);
  Dw1[1] = r1e - P1 * crossMatrix(d1);
  Dw1[2] = P1 * crossMatrix(e);
  Dw1[3].setZero();
  Dw2[0] = -r2e - P2 * crossMatrix(d2);
  Dw2[1] = r2e + P2 * crossMatrix(f2);
  Dw2[2].setZero();
  Dw2[3] = -P2 * crossMatrix(e);
  Vec3 Da1[4], Da2[4];
  Da1[0] = (-e - d1 + 2.0 * alpha1 * e) / L2;
  Da1[1] = (d1 - 2.0 * alpha1 * e) / L2;
  Da1[2] = e / L2;
  Da1[3].setZero();
  Da2[0] = (-e - f2 + 2.0 * alpha2 * e) / L2;
  Da2[1] = (f2 - 2.0 * alpha2 * e) / L2;
  Da2[2].setZero();
  Da2[3] = e / L2;
  for (int b = 0; b < 4; ++b) {
    const Mat3 alpha_terms = w1 * Da1[b].transpose() + w2 * Da2[b].transpose();
    d2theta->block<3, 3>(0, 3 * b) = (1.0 - alpha1) * Dw1[b] + (1.0 - alpha2) * Dw2[b] - alpha_terms;
    d2theta->block<3, 3>(3, 3 * b) = alpha1 * Dw1[b] + alpha2 * Dw2[b] + alpha_terms;
    d2theta->block<3, 3>(6, 3 * b) = -Dw1[b];
    d2theta->block<3, 3>(9, 3 * b) = -Dw2[b];
  }
  return theta;
}

// The hinge's energy k_b/2 theta^2, its gradient (12) and Hessian (12x12, of the given kind);
// any output may be null.
inline void hingeTerms(double k_b, const Vec12& x, double* value, Vec12* gradient, Mat12* hessian,
                       HessianKind kind = HessianKind::kTrue) {
  Vec12 dtheta;
  Mat12 d2theta;
  const bool need_second = hessian && kind != HessianKind::kApproximate;
  const double theta =
      hingeAngle(x, (gradient || hessian) ? &dtheta : nullptr, need_second ? &d2theta : nullptr);
  if (value) *value = 0.5 * k_b * theta * theta;
  if (gradient) *gradient = k_b * theta * dtheta;
  if (!hessian) return;
  *hessian = k_b * dtheta * dtheta.transpose();
  if (kind == HessianKind::kApproximate) return;
  *hessian += (k_b * theta) * d2theta;
  if (kind == HessianKind::kProjected) {
    const Mat12 symmetric = 0.5 * (*hessian + hessian->transpose());
    const Eigen::SelfAdjointEigenSolver<Mat12> eigen(symmetric);
    *hessian = eigen.eigenvectors() * eigen.eigenvalues().cwiseMax(0.0).asDiagonal() * eigen.eigenvectors().transpose();
  }
}

}  // namespace pbdlab
