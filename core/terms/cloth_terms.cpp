#include "core/terms/cloth_terms.hpp"

#include <stdexcept>
#include <string>

#include "core/terms/bending_kernel.hpp"

namespace pbdlab {

namespace {
template <int K>
Eigen::Matrix<double, 3 * K, 1> gather(const std::array<int, K>& nodes, const Positions& x) {
  Eigen::Matrix<double, 3 * K, 1> local;
  for (int a = 0; a < K; ++a) local.template segment<3>(3 * a) = x.segment<3>(3 * nodes[a]);
  return local;
}
}  // namespace

MembraneTerm::MembraneTerm(std::vector<std::array<int, 3>> triangles, const Positions& rest, double mu, double lambda)
    : triangles_(std::move(triangles)), mu_(mu), lambda_(lambda) {
  rest_.reserve(triangles_.size());
  for (size_t s = 0; s < triangles_.size(); ++s) {
    const auto& t = triangles_[s];
    try {
      rest_.push_back(membraneRest(rest.segment<3>(3 * t[0]), rest.segment<3>(3 * t[1]), rest.segment<3>(3 * t[2])));
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument("triangle " + std::to_string(s) + ": " + error.what());
    }
  }
}

void MembraneTerm::stencilTerms(int s, const Positions& x, double, double* value, VecX* gradient,
                                Eigen::MatrixXd* hessian, HessianKind kind) const {
  Vec9 g;
  Mat9 H;
  membraneTerms(rest_[s], mu_, lambda_, gather<3>(triangles_[s], x), value, gradient ? &g : nullptr,
                hessian ? &H : nullptr, kind);
  if (gradient) *gradient = g;
  if (hessian) *hessian = H;
}

BendingTerm::BendingTerm(std::vector<Hinge> hinges, double bending_stiffness)
    : hinges_(std::move(hinges)), k_b_(bending_stiffness) {
  if (!(k_b_ >= 0.0)) throw std::invalid_argument("bending stiffness must be >= 0");
}

void BendingTerm::stencilTerms(int s, const Positions& x, double, double* value, VecX* gradient,
                               Eigen::MatrixXd* hessian, HessianKind kind) const {
  Vec12 g;
  Mat12 H;
  hingeTerms(k_b_, gather<4>(hinges_[s].nodes, x), value, gradient ? &g : nullptr, hessian ? &H : nullptr, kind);
  if (gradient) *gradient = g;
  if (hessian) *hessian = H;
}

}  // namespace pbdlab
