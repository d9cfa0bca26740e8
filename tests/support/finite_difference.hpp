#pragma once
// The one finite-difference checker every energy goes through (STYLE.md 1: one energy, three
// answers, one test): a material density Psi(F), an element or stencil energy E(x), a weak
// constraint, a collider, a membrane or a hinge. Given a function that returns value,
// gradient and Hessian at a point, it compares the gradient with central differences of the
// value and the Hessian with central differences of the gradient, and refuses to pass
// vacuously: the analytic gradient (and Hessian, when checked) must be larger than a stated
// floor, so a term that returns zeros fails.
//
// Central differences with step h have error ~h^2 |third derivative| + ~eps |value| / h; with
// h = 1e-6 on O(1) coordinates that is ~1e-10 relative. Each test states its tolerance and
// the measured error it was chosen from.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>

namespace pbdlab::test {

// value, gradient and Hessian at x; any output pointer may be null.
using EnergyFunction =
    std::function<void(const Eigen::VectorXd& x, double* value, Eigen::VectorXd* gradient, Eigen::MatrixXd* hessian)>;

struct FiniteDifferenceOptions {
  double step = 1e-6;
  double tolerance = 1e-7;  // on |FD - analytic|_F / |analytic|_F
  bool check_hessian = true;
  // The analytic gradient's norm must exceed this (and the Hessian's, when checked), else the
  // check would pass for a term that returns zeros.
  double min_gradient_norm = 1e-12;
  double min_hessian_norm = 1e-12;
};

struct FiniteDifferenceErrors {
  double gradient = 0.0;  // relative Frobenius error of the gradient
  double hessian = 0.0;   // relative Frobenius error of the Hessian (0 if not checked)
  double gradient_norm = 0.0;
  double hessian_norm = 0.0;
};

inline FiniteDifferenceErrors finiteDifferenceErrors(const EnergyFunction& f, const Eigen::VectorXd& x,
                                                     const FiniteDifferenceOptions& options = {}) {
  const int n = static_cast<int>(x.size());
  Eigen::VectorXd g;
  Eigen::MatrixXd H;
  f(x, nullptr, &g, options.check_hessian ? &H : nullptr);
  Eigen::VectorXd g_fd(n);
  Eigen::MatrixXd H_fd(n, n);
  for (int k = 0; k < n; ++k) {
    Eigen::VectorXd xp = x, xm = x;
    xp[k] += options.step;
    xm[k] -= options.step;
    double ep = 0.0, em = 0.0;
    Eigen::VectorXd gp, gm;
    f(xp, &ep, options.check_hessian ? &gp : nullptr, nullptr);
    f(xm, &em, options.check_hessian ? &gm : nullptr, nullptr);
    g_fd[k] = (ep - em) / (2.0 * options.step);
    if (options.check_hessian) H_fd.col(k) = (gp - gm) / (2.0 * options.step);
  }
  FiniteDifferenceErrors errors;
  errors.gradient_norm = g.norm();
  errors.gradient = (g_fd - g).norm() / std::max(g.norm(), 1e-300);
  if (options.check_hessian) {
    errors.hessian_norm = H.norm();
    errors.hessian = (H_fd - H).norm() / std::max(H.norm(), 1e-300);
  }
  return errors;
}

// For EXPECT_TRUE / ASSERT_TRUE: names what failed and by how much.
inline ::testing::AssertionResult derivativesMatchFiniteDifferences(const EnergyFunction& f, const Eigen::VectorXd& x,
                                                                    const FiniteDifferenceOptions& options = {},
                                                                    FiniteDifferenceErrors* measured = nullptr) {
  const FiniteDifferenceErrors e = finiteDifferenceErrors(f, x, options);
  if (measured) *measured = e;
  std::ostringstream why;
  if (!(e.gradient_norm > options.min_gradient_norm))
    why << "analytic gradient norm " << e.gradient_norm << " <= " << options.min_gradient_norm
        << ": the check would pass vacuously. ";
  if (options.check_hessian && !(e.hessian_norm > options.min_hessian_norm))
    why << "analytic Hessian norm " << e.hessian_norm << " <= " << options.min_hessian_norm
        << ": the check would pass vacuously. ";
  if (!(e.gradient <= options.tolerance))
    why << "gradient relative error " << e.gradient << " > " << options.tolerance << ". ";
  if (options.check_hessian && !(e.hessian <= options.tolerance))
    why << "Hessian relative error " << e.hessian << " > " << options.tolerance << ". ";
  if (why.str().empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << why.str() << "(step " << options.step << ", at x = "
                                       << x.transpose().format(Eigen::IOFormat(6, 0, ", ", ", ")) << ")";
}

}  // namespace pbdlab::test
