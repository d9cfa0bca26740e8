#include "core/terms/bending_kernel.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <cmath>

namespace pbdlab {
namespace {

// [v]x: [v]x w = v x w.
Mat3 crossMatrix(const Vec3& v) {
  Mat3 m;
  m << 0.0, -v(2), v(1), v(2), 0.0, -v(0), -v(1), v(0), 0.0;
  return m;
}

}  // namespace

double hingeAngle(const Vec12& x, Vec12* dtheta, Mat12* d2theta) {
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

void hingeTerms(double k_b, const Vec12& x, double* value, Vec12* gradient, Mat12* hessian,
                HessianKind kind) {
  Vec12 dtheta;
  Mat12 d2theta;
  const bool need_second = hessian && !isApproximate(kind);
  const double theta =
      hingeAngle(x, (gradient || hessian) ? &dtheta : nullptr, need_second ? &d2theta : nullptr);
  if (value) *value = 0.5 * k_b * theta * theta;
  if (gradient) *gradient = k_b * theta * dtheta;
  if (!hessian) return;
  *hessian = k_b * dtheta * dtheta.transpose();
  if (isApproximate(kind)) return;
  *hessian += (k_b * theta) * d2theta;
  if (kind == HessianKind::kProjected) {
    const Mat12 symmetric = 0.5 * (*hessian + hessian->transpose());
    const Eigen::SelfAdjointEigenSolver<Mat12> eigen(symmetric);
    *hessian = eigen.eigenvectors() * eigen.eigenvalues().cwiseMax(0.0).asDiagonal() * eigen.eigenvectors().transpose();
  }
}

}  // namespace pbdlab
