#include "core/fem/reference_element.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace pbdlab {

// ---------------------------------------------------------------------------------------
// One-dimensional Gauss rules
// ---------------------------------------------------------------------------------------

namespace {

// Monic Jacobi polynomials for the weight (1 - x)^alpha (beta = 0) on [-1, 1]:
//   p_{-1} = 0, p_0 = 1, p_{k+1}(x) = (x - a_k) p_k(x) - b_k p_{k-1}(x),
// with the classical recurrence coefficients of P_k^(alpha, beta) made monic:
//   a_k = (beta^2 - alpha^2) / ((2k + s)(2k + s + 2)),  s = alpha + beta  (a_0 = (beta - alpha) / (s + 2)),
//   b_k = 4 k (k + alpha)(k + beta)(k + s) / ((2k + s)^2 (2k + s + 1)(2k + s - 1)),  k >= 1.
// alpha = 0 gives the monic Legendre polynomials (a_k = 0, b_k = k^2 / (4k^2 - 1)).
struct JacobiRecurrence {
  double alpha;
  double a(int k) const {
    const double s = alpha;  // beta = 0
    if (k == 0) return -alpha / (s + 2.0);
    return -alpha * alpha / ((2.0 * k + s) * (2.0 * k + s + 2.0));
  }
  double b(int k) const {
    const double s = alpha;
    const double two_k_s = 2.0 * k + s;
    return 4.0 * k * (k + alpha) * k * (k + s) / (two_k_s * two_k_s * (two_k_s + 1.0) * (two_k_s - 1.0));
  }
  // p_n(x), p_n'(x) and p_{n-1}(x).
  void evaluate(int n, double x, double& p, double& dp, double& p_prev) const {
    double p0 = 0.0, p1 = 1.0, d0 = 0.0, d1 = 0.0;  // p_{k-1}, p_k and derivatives, k = 0
    for (int k = 0; k < n; ++k) {
      const double bk = (k == 0) ? 0.0 : b(k);
      const double p2 = (x - a(k)) * p1 - bk * p0;
      const double d2 = p1 + (x - a(k)) * d1 - bk * d0;
      p0 = p1;
      p1 = p2;
      d0 = d1;
      d1 = d2;
    }
    p = p1;
    dp = d1;
    p_prev = p0;
  }
};

}  // namespace

GaussRule1D gaussJacobi(int n, double alpha) {
  if (n < 1) throw std::invalid_argument("gaussJacobi: need n >= 1 points, got " + std::to_string(n));
  if (!(alpha >= 0.0)) throw std::invalid_argument("gaussJacobi: need alpha >= 0");
  const JacobiRecurrence rec{alpha};
  // The n roots of p_n, largest first, by Newton's method with deflation: after k roots are
  // known, Newton runs on p_n(x) / prod_j (x - x_j), whose step is
  //   dx = p / (p' - p sum_j 1 / (x - x_j)),
  // so it cannot converge to a root found before. The start is the asymptotic Legendre root
  // cos(pi (i + 3/4) / (n + 1/2)); for alpha > 0 the roots move towards -1, which the
  // deflation absorbs (checked for n <= 30, alpha <= 2 in test_reference_element).
  std::vector<double> roots;
  roots.reserve(static_cast<std::size_t>(n));
  const double pi = std::acos(-1.0);
  for (int i = 0; i < n; ++i) {
    double x = std::cos(pi * (i + 0.75) / (n + 0.5));
    if (!roots.empty()) x = std::min(x, roots.back() - 1e-12);  // below the previous root
    bool converged = false;
    for (int iteration = 0; iteration < 100; ++iteration) {
      double p, dp, p_prev;
      rec.evaluate(n, x, p, dp, p_prev);
      double deflation = 0.0;
      for (double r : roots) deflation += 1.0 / (x - r);
      const double step = p / (dp - p * deflation);
      x -= step;
      if (std::abs(step) <= 1e-15 * (1.0 + std::abs(x))) {
        converged = true;
        break;
      }
    }
    if (!converged || !(x > -1.0 && x < 1.0)) {
      throw std::logic_error("gaussJacobi: Newton did not find root " + std::to_string(i) + " of " +
                             std::to_string(n) + " (alpha " + std::to_string(alpha) + ")");
    }
    roots.push_back(x);
  }
  std::sort(roots.begin(), roots.end());
  // Weights from the Christoffel function, w_i = 1 / sum_{k<n} p_k(x_i)^2 / h_k with
  // h_k = ||p_k||^2 = mu_0 b_1 ... b_k and mu_0 = integral of (1 - x)^alpha over [-1, 1] =
  // 2^(alpha + 1) / (alpha + 1): a sum of positive terms, so the weights are positive and
  // accurate to a few ulps (the equivalent h_{n-1} / (p_{n-1} p_n') loses more to rounding).
  GaussRule1D rule;
  for (double x : roots) {
    double sum = 0.0, h = std::pow(2.0, alpha + 1.0) / (alpha + 1.0);
    double p_prev = 0.0, p = 1.0;
    for (int k = 0; k < n; ++k) {
      if (k > 0) h *= rec.b(k);
      sum += p * p / h;
      const double p_next = (x - rec.a(k)) * p - (k == 0 ? 0.0 : rec.b(k)) * p_prev;
      p_prev = p;
      p = p_next;
    }
    rule.points.push_back(x);
    rule.weights.push_back(1.0 / sum);
  }
  return rule;
}

namespace {

// Points per direction of a Gauss rule exact to degree `degree`: 2n - 1 >= degree.
int gaussPointsFor(int degree) { return (degree + 2) / 2; }

// The n-point Gauss-Jacobi rule for (1 - t)^alpha moved to t in [0, 1]: x = 2t - 1 gives
// (1 - x)^alpha dx = 2^(alpha + 1) (1 - t)^alpha dt.
GaussRule1D gaussJacobiOnUnitInterval(int n, double alpha) {
  GaussRule1D rule = gaussJacobi(n, alpha);
  const double scale = std::pow(2.0, -(alpha + 1.0));
  for (std::size_t i = 0; i < rule.points.size(); ++i) {
    rule.points[i] = 0.5 * (rule.points[i] + 1.0);
    rule.weights[i] *= scale;
  }
  return rule;
}

// The symmetric 14-point rule of degree 5 with positive weights and interior points
// (Walkington, "Quadrature on simplices of arbitrary dimension", 2000; also Jaskowiec and
// Sukumar 2020, degree 5). Three orbits of the tet's symmetry group in barycentric
// coordinates: two of 4 points, (a, a, a, 1 - 3a), and one of 6, (a, a, 1/2 - a, 1/2 - a).
// Its six parameters solve the six moment equations of the symmetric polynomials of degree
// <= 5 (1, e2, e3, e2^2, e4, e2 e3 of the barycentric coordinates, e1 = 1). It also serves
// degree 4: the symmetric 1 + 4 + 6 orbits admit only Keast's 11-point degree-4 rule, whose
// centroid weight is negative. tests/core/test_reference_element.cpp re-derives the six
// parameters by Newton's method from two-digit guesses and checks every monomial of degree
// <= 5 (and that every one of degree 6 is missed). Weights below are fractions of the volume.
QuadratureRule tetRule14() {
  const double a1 = 0.3108859192633006097973457, w1 = 0.1126879257180158507991857;
  const double a2 = 0.09273525031089122640232391, w2 = 0.07349304311636194954371021;
  const double a3 = 0.04550370412564964949188053, w3 = 0.04254602077708146643806943;
  QuadratureRule rule;
  // Reference coordinates (x, y, z) = (lambda_1, lambda_2, lambda_3).
  for (const auto& [a, w] : {std::pair{a1, w1}, std::pair{a2, w2}}) {
    const double b = 1.0 - 3.0 * a;
    for (const Vec3& r : {Vec3(a, a, a), Vec3(b, a, a), Vec3(a, b, a), Vec3(a, a, b)}) {
      rule.points.push_back(r);
      rule.weights.push_back(w / 6.0);
    }
  }
  // (a, a, c, c), c = 1/2 - a: the 6 ways to place the pair of a's among the 4 coordinates.
  const double c3 = 0.5 - a3;
  for (const Vec3& r : {Vec3(a3, c3, c3), Vec3(c3, a3, c3), Vec3(c3, c3, a3), Vec3(a3, a3, c3), Vec3(a3, c3, a3),
                        Vec3(c3, a3, a3)}) {
    rule.points.push_back(r);
    rule.weights.push_back(w3 / 6.0);
  }
  rule.degree = 5;
  return rule;
}

QuadratureRule tetRule(int degree) {
  QuadratureRule rule;
  if (degree <= 1) {
    // Centroid, weight = volume: exact for linear functions.
    rule.points = {Vec3(0.25, 0.25, 0.25)};
    rule.weights = {1.0 / 6.0};
    rule.degree = 1;
    return rule;
  }
  if (degree == 2) {
    // The symmetric 4-point rule (the high-order paper's P2 choice): barycentric coordinates
    // (b, a, a, a) and permutations with a = (5 - sqrt 5) / 20, b = 1 - 3a = (5 + 3 sqrt 5) / 20,
    // equal weights. a solves the degree-2 moment condition integral lambda_0^2 = 2 V / 20 =
    // V (b^2 + 3 a^2) / 4, i.e. b^2 + 3a^2 = 1/10 with b = 1 - 3a.
    const double a = (5.0 - std::sqrt(5.0)) / 20.0;
    const double b = 1.0 - 3.0 * a;
    rule.points = {Vec3(a, a, a), Vec3(b, a, a), Vec3(a, b, a), Vec3(a, a, b)};
    rule.weights = std::vector<double>(4, 1.0 / 24.0);
    rule.degree = 2;
    return rule;
  }
  if (degree == 4 || degree == 5) return tetRule14();
  // Collapsed (Duffy / Stroud conical product) rule: the cube (a, b, c) in [0, 1]^3 maps
  // onto the tet by z = c, y = b (1 - c), x = a (1 - b)(1 - c), dx dy dz = (1 - b)(1 - c)^2.
  // A monomial x^i y^j z^k of total degree d becomes a^i (1 - b)^i b^j (1 - c)^(i + j) c^k
  // times that Jacobian: degree <= d in each of a, b, c once the factors (1 - b) and
  // (1 - c)^2 are taken as Gauss-Jacobi weights. So n points per direction with
  // 2n - 1 >= degree are exact; all weights are positive products of Gauss weights.
  const int n = gaussPointsFor(degree);
  const GaussRule1D ga = gaussJacobiOnUnitInterval(n, 0.0);
  const GaussRule1D gb = gaussJacobiOnUnitInterval(n, 1.0);
  const GaussRule1D gc = gaussJacobiOnUnitInterval(n, 2.0);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double c = gc.points[k], b = gb.points[j], a = ga.points[i];
        rule.points.emplace_back(a * (1.0 - b) * (1.0 - c), b * (1.0 - c), c);
        rule.weights.push_back(ga.weights[i] * gb.weights[j] * gc.weights[k]);
      }
  rule.degree = 2 * n - 1;
  return rule;
}

QuadratureRule triRule(int degree) {
  QuadratureRule rule;
  if (degree <= 1) {
    rule.points = {Vec3(1.0 / 3.0, 1.0 / 3.0, 0.0)};
    rule.weights = {0.5};
    rule.degree = 1;
    return rule;
  }
  if (degree == 2) {
    // Barycentric (2/3, 1/6, 1/6) and permutations, weight area / 3: exact for degree 2
    // (integral lambda_0^2 = 2 A / 12 = A (4/9 + 2/36) / 3).
    rule.points = {Vec3(1.0 / 6.0, 1.0 / 6.0, 0.0), Vec3(2.0 / 3.0, 1.0 / 6.0, 0.0),
                   Vec3(1.0 / 6.0, 2.0 / 3.0, 0.0)};
    rule.weights = std::vector<double>(3, 1.0 / 6.0);
    rule.degree = 2;
    return rule;
  }
  // Collapsed: y = b, x = a (1 - b), dx dy = (1 - b) da db (as for the tet, one level less).
  const int n = gaussPointsFor(degree);
  const GaussRule1D ga = gaussJacobiOnUnitInterval(n, 0.0);
  const GaussRule1D gb = gaussJacobiOnUnitInterval(n, 1.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      rule.points.emplace_back(ga.points[i] * (1.0 - gb.points[j]), gb.points[j], 0.0);
      rule.weights.push_back(ga.weights[i] * gb.weights[j]);
    }
  rule.degree = 2 * n - 1;
  return rule;
}

QuadratureRule hexRule(int degree) {
  // Tensor Gauss-Legendre, n = ceil((degree + 1) / 2) points per axis: exact for every
  // polynomial of degree <= 2n - 1 in each variable (Q_{2n-1}), which contains the total
  // degree 2n - 1 polynomials.
  const int n = gaussPointsFor(degree);
  const GaussRule1D g = gaussJacobi(n, 0.0);
  QuadratureRule rule;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        rule.points.emplace_back(g.points[i], g.points[j], g.points[k]);
        rule.weights.push_back(g.weights[i] * g.weights[j] * g.weights[k]);
      }
  rule.degree = 2 * n - 1;
  return rule;
}

QuadratureRule prismRule(int degree) {
  // Triangle rule in (u, v) times Gauss-Legendre in w in [-1, 1]: exact for
  // P_degree(u, v) x P_{2n-1}(w), which contains P_degree(u, v, w).
  const QuadratureRule tri = triRule(degree);
  const int n = gaussPointsFor(degree);
  const GaussRule1D g = gaussJacobi(n, 0.0);
  QuadratureRule rule;
  for (int k = 0; k < n; ++k)
    for (int q = 0; q < tri.size(); ++q) {
      rule.points.emplace_back(tri.points[q].x(), tri.points[q].y(), g.points[k]);
      rule.weights.push_back(tri.weights[q] * g.weights[k]);
    }
  rule.degree = std::min(tri.degree, 2 * n - 1);
  return rule;
}

QuadratureRule pyramidRule(int degree) {
  // Collapsed: (u, v, w) = (a (1 - c), b (1 - c), c), a, b in [-1, 1], c in [0, 1],
  // du dv dw = (1 - c)^2 da db dc. Gauss-Legendre in a and b, Gauss-Jacobi with the weight
  // (1 - c)^2 in c, n points each: exact for g(a, b, c) of degree <= 2n - 1 in each variable.
  // A polynomial u^i v^j w^k is a^i b^j (1 - c)^(i + j) c^k: degree i + j + k in c, so the
  // total degree 2n - 1 polynomials are integrated exactly. The pyramid basis spans
  // {1, u, v, w, u v / (1 - w) = a b (1 - c)}: degree <= 1 in each of a, b, c; its
  // r-gradients ({1, b}, {1, a}, {1, a b}) are too. Products of up to 2n - 1 of them are
  // therefore integrated exactly: this is the sense of "exact" for the rational basis. The
  // apex (c = 1) is never a quadrature point.
  const int n = gaussPointsFor(degree);
  const GaussRule1D gab = gaussJacobi(n, 0.0);
  const GaussRule1D gc = gaussJacobiOnUnitInterval(n, 2.0);
  QuadratureRule rule;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double c = gc.points[k];
        rule.points.emplace_back(gab.points[i] * (1.0 - c), gab.points[j] * (1.0 - c), c);
        rule.weights.push_back(gab.weights[i] * gab.weights[j] * gc.weights[k]);
      }
  rule.degree = 2 * n - 1;
  return rule;
}

// ---------------------------------------------------------------------------------------
// Shape functions
// ---------------------------------------------------------------------------------------

// Silvester's one-dimensional factor of the simplex Lagrange basis of order p:
//   L_m(t) = prod_{j=0}^{m-1} (p t - j) / (j + 1),
// which is 1 at t = m / p and 0 at t = 0, 1/p, ..., (m - 1)/p. A node with lattice index
// (m_0, .., m_d), sum m_k = p, has N = prod_k L_{m_k}(lambda_k): 1 at its own point and 0 at
// every other lattice point (some lambda_k is smaller there, at one of L's roots).
double silvesterFactor(int m, int p, double t, double& derivative) {
  double value = 1.0;
  derivative = 0.0;
  for (int j = 0; j < m; ++j) {
    const double factor = (p * t - j) / (j + 1.0);
    derivative = derivative * factor + value * p / (j + 1.0);  // product rule
    value *= factor;
  }
  return value;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// ReferenceElement
// ---------------------------------------------------------------------------------------

const ReferenceElement& ReferenceElement::of(ElementType type) {
  // Function-local statics: built once, thread-safe initialization.
  static const ReferenceElement tet4(ElementType::kTet4), tet10(ElementType::kTet10),
      tet20(ElementType::kTet20), hex8(ElementType::kHex8), prism6(ElementType::kPrism6),
      pyramid5(ElementType::kPyramid5), tri3(ElementType::kTri3);
  switch (type) {
    case ElementType::kTet4: return tet4;
    case ElementType::kTet10: return tet10;
    case ElementType::kTet20: return tet20;
    case ElementType::kHex8: return hex8;
    case ElementType::kPrism6: return prism6;
    case ElementType::kPyramid5: return pyramid5;
    case ElementType::kTri3: return tri3;
  }
  throw std::invalid_argument("ReferenceElement::of: unknown element type");
}

ReferenceElement::ReferenceElement(ElementType type) : type_(type) {
  // Corners, edges (Gmsh's order and direction) and outward faces (Gmsh's order) of each shape.
  switch (type) {
    case ElementType::kTet4:
    case ElementType::kTet10:
    case ElementType::kTet20:
      nodes_ = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)};
      edges_ = {{0, 1}, {1, 2}, {2, 0}, {3, 0}, {3, 2}, {3, 1}};
      faces_ = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {3, 1, 2}};
      break;
    case ElementType::kHex8:
      nodes_ = {Vec3(-1, -1, -1), Vec3(1, -1, -1), Vec3(1, 1, -1), Vec3(-1, 1, -1),
                Vec3(-1, -1, 1),  Vec3(1, -1, 1),  Vec3(1, 1, 1),  Vec3(-1, 1, 1)};
      edges_ = {{0, 1}, {0, 3}, {0, 4}, {1, 2}, {1, 5}, {2, 3},
                {2, 6}, {3, 7}, {4, 5}, {4, 7}, {5, 6}, {6, 7}};
      faces_ = {{0, 3, 2, 1}, {0, 1, 5, 4}, {0, 4, 7, 3}, {1, 2, 6, 5}, {2, 3, 7, 6}, {4, 5, 6, 7}};
      break;
    case ElementType::kPrism6:
      nodes_ = {Vec3(0, 0, -1), Vec3(1, 0, -1), Vec3(0, 1, -1),
                Vec3(0, 0, 1),  Vec3(1, 0, 1),  Vec3(0, 1, 1)};
      edges_ = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 4}, {2, 5}, {3, 4}, {3, 5}, {4, 5}};
      faces_ = {{0, 2, 1}, {3, 4, 5}, {0, 1, 4, 3}, {0, 3, 5, 2}, {1, 2, 5, 4}};
      break;
    case ElementType::kPyramid5:
      nodes_ = {Vec3(-1, -1, 0), Vec3(1, -1, 0), Vec3(1, 1, 0), Vec3(-1, 1, 0), Vec3(0, 0, 1)};
      edges_ = {{0, 1}, {0, 3}, {0, 4}, {1, 2}, {1, 4}, {2, 3}, {2, 4}, {3, 4}};
      faces_ = {{0, 1, 4}, {0, 4, 3}, {1, 2, 4}, {2, 3, 4}, {0, 3, 2, 1}};
      break;
    case ElementType::kTri3:
      nodes_ = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)};
      edges_ = {{0, 1}, {1, 2}, {2, 0}};
      faces_ = {{0, 1, 2}};
      break;
  }
  // Higher-order tets: p - 1 nodes on every edge, from its first corner to its second, edge
  // by edge; then (tet20) one node at the centroid of every face, face by face. This is
  // Gmsh's numbering (tests/meshes/test_gmsh_basis.cpp compares it with
  // getElementProperties).
  const int p = elementOrder(type);
  if (dimension() == 3 && numCorners() == 4) {
    for (const auto& edge : edges_)
      for (int k = 1; k < p; ++k)
        nodes_.push_back(nodes_[static_cast<std::size_t>(edge[0])] +
                         (static_cast<double>(k) / p) * (nodes_[static_cast<std::size_t>(edge[1])] -
                                                         nodes_[static_cast<std::size_t>(edge[0])]));
    if (p == 3)
      for (const auto& face : faces_)
        nodes_.push_back((nodes_[static_cast<std::size_t>(face[0])] + nodes_[static_cast<std::size_t>(face[1])] +
                          nodes_[static_cast<std::size_t>(face[2])]) /
                         3.0);
  }
  if (static_cast<int>(nodes_.size()) != numNodes())
    throw std::logic_error("ReferenceElement: node table of " + elementTypeName(type) + " is incomplete");
  // Simplices: lattice index m_k = p lambda_k of every node (lambda_0 = 1 - sum r, lambda_k =
  // r_{k-1}); the basis is built from it, so the node table alone fixes the numbering.
  if (numCorners() == dimension() + 1) {
    for (const Vec3& r : nodes_) {
      const double lambda[4] = {1.0 - r.x() - r.y() - (dimension() == 3 ? r.z() : 0.0), r.x(), r.y(), r.z()};
      std::array<int, 4> m = {0, 0, 0, 0};
      for (int k = 0; k <= dimension(); ++k) m[static_cast<std::size_t>(k)] = static_cast<int>(std::lround(p * lambda[k]));
      lattice_.push_back(m);
    }
  }
}

double ReferenceElement::referenceMeasure() const {
  switch (type_) {
    case ElementType::kTet4:
    case ElementType::kTet10:
    case ElementType::kTet20: return 1.0 / 6.0;
    case ElementType::kHex8: return 8.0;
    case ElementType::kPrism6: return 1.0;          // triangle 1/2 times w-length 2
    case ElementType::kPyramid5: return 4.0 / 3.0;  // base 4 times height 1 / 3
    case ElementType::kTri3: return 0.5;
  }
  return 0.0;
}

Eigen::VectorXd ReferenceElement::shapeValues(const Vec3& r) const {
  const int n = numNodes();
  Eigen::VectorXd N(n);
  const double u = r.x(), v = r.y(), w = r.z();
  switch (type_) {
    case ElementType::kTet4:
    case ElementType::kTet10:
    case ElementType::kTet20:
    case ElementType::kTri3: {
      const int p = elementOrder(type_);
      const int d = dimension();
      const double lambda[4] = {1.0 - u - v - (d == 3 ? w : 0.0), u, v, w};
      for (int i = 0; i < n; ++i) {
        double value = 1.0, unused;
        for (int k = 0; k <= d; ++k)
          value *= silvesterFactor(lattice_[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)], p, lambda[k], unused);
        N[i] = value;
      }
      break;
    }
    case ElementType::kHex8:
      // N_i = (1 + u_i u)(1 + v_i v)(1 + w_i w) / 8 with (u_i, v_i, w_i) the corner.
      for (int i = 0; i < n; ++i) {
        const Vec3& c = nodes_[static_cast<std::size_t>(i)];
        N[i] = (1.0 + c.x() * u) * (1.0 + c.y() * v) * (1.0 + c.z() * w) / 8.0;
      }
      break;
    case ElementType::kPrism6: {
      // Linear triangle (lambda_0 = 1 - u - v, lambda_1 = u, lambda_2 = v) times (1 +- w) / 2.
      const double lambda[3] = {1.0 - u - v, u, v};
      for (int i = 0; i < n; ++i) N[i] = lambda[i % 3] * (1.0 + nodes_[static_cast<std::size_t>(i)].z() * w) / 2.0;
      break;
    }
    case ElementType::kPyramid5: {
      // Gmsh's (Bedrosian's) rational basis: for a base corner (u_i, v_i, 0),
      //   N_i = (1 - w + u_i u)(1 - w + v_i v) / (4 (1 - w))
      //       = (1 - w)/4 + (u_i u + v_i v)/4 + u_i v_i u v / (4 (1 - w)),
      // and N_4 = w. It is linear on the four triangular faces (so it conforms with tets) and
      // bilinear on the base (so it conforms with hexes). Inside the pyramid |u|, |v| <= 1 - w,
      // so |u v / (1 - w)| <= 1 - w -> 0 at the apex: the limit value is 0. At the apex itself
      // (1 - w == 0) the term is dropped, as Gmsh does.
      const double t = 1.0 - w;
      const double rational = (t != 0.0) ? u * v / t : 0.0;
      for (int i = 0; i < 4; ++i) {
        const Vec3& c = nodes_[static_cast<std::size_t>(i)];
        N[i] = 0.25 * (t + c.x() * u + c.y() * v + c.x() * c.y() * rational);
      }
      N[4] = w;
      break;
    }
  }
  return N;
}

Eigen::MatrixXd ReferenceElement::shapeGradients(const Vec3& r) const {
  const int n = numNodes();
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(n, 3);
  const double u = r.x(), v = r.y(), w = r.z();
  switch (type_) {
    case ElementType::kTet4:
    case ElementType::kTet10:
    case ElementType::kTet20:
    case ElementType::kTri3: {
      // dN/dr_j = sum_k dN/dlambda_k dlambda_k/dr_j, with dlambda_0/dr_j = -1 and
      // dlambda_{j+1}/dr_j = 1.
      const int p = elementOrder(type_);
      const int d = dimension();
      const double lambda[4] = {1.0 - u - v - (d == 3 ? w : 0.0), u, v, w};
      for (int i = 0; i < n; ++i) {
        double value[4], derivative[4];
        for (int k = 0; k <= d; ++k)
          value[k] = silvesterFactor(lattice_[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)], p, lambda[k],
                                     derivative[k]);
        double dN_dlambda[4];
        for (int k = 0; k <= d; ++k) {
          dN_dlambda[k] = derivative[k];
          for (int l = 0; l <= d; ++l)
            if (l != k) dN_dlambda[k] *= value[l];
        }
        for (int j = 0; j < d; ++j) G(i, j) = dN_dlambda[j + 1] - dN_dlambda[0];
      }
      break;
    }
    case ElementType::kHex8:
      for (int i = 0; i < n; ++i) {
        const Vec3& c = nodes_[static_cast<std::size_t>(i)];
        const double fu = 1.0 + c.x() * u, fv = 1.0 + c.y() * v, fw = 1.0 + c.z() * w;
        G(i, 0) = c.x() * fv * fw / 8.0;
        G(i, 1) = fu * c.y() * fw / 8.0;
        G(i, 2) = fu * fv * c.z() / 8.0;
      }
      break;
    case ElementType::kPrism6: {
      const double lambda[3] = {1.0 - u - v, u, v};
      const double dlambda[3][2] = {{-1.0, -1.0}, {1.0, 0.0}, {0.0, 1.0}};
      for (int i = 0; i < n; ++i) {
        const double s = nodes_[static_cast<std::size_t>(i)].z();
        const double fw = (1.0 + s * w) / 2.0;
        G(i, 0) = dlambda[i % 3][0] * fw;
        G(i, 1) = dlambda[i % 3][1] * fw;
        G(i, 2) = lambda[i % 3] * s / 2.0;
      }
      break;
    }
    case ElementType::kPyramid5: {
      // Derivatives of (1 - w)/4 + (u_i u + v_i v)/4 + u_i v_i u v / (4 (1 - w)):
      //   d/du = u_i/4 + u_i v_i v / (4 (1 - w)),  d/dv = v_i/4 + u_i v_i u / (4 (1 - w)),
      //   d/dw = -1/4 + u_i v_i u v / (4 (1 - w)^2).
      // Inside the pyramid v / (1 - w), u / (1 - w) and u v / (1 - w)^2 lie in [-1, 1] but have
      // no limit at the apex (they depend on the direction of approach): the gradient is
      // bounded and discontinuous there. At the apex itself the terms are dropped (the limit
      // along the axis u = v = 0), which is what Gmsh returns; quadrature points never sit
      // there.
      const double t = 1.0 - w;
      const double du = (t != 0.0) ? v / t : 0.0;
      const double dv = (t != 0.0) ? u / t : 0.0;
      const double dw = (t != 0.0) ? u * v / (t * t) : 0.0;
      for (int i = 0; i < 4; ++i) {
        const Vec3& c = nodes_[static_cast<std::size_t>(i)];
        const double sign = c.x() * c.y();
        G(i, 0) = 0.25 * (c.x() + sign * du);
        G(i, 1) = 0.25 * (c.y() + sign * dv);
        G(i, 2) = 0.25 * (-1.0 + sign * dw);
      }
      G(4, 2) = 1.0;
      break;
    }
  }
  return G;
}

QuadratureRule ReferenceElement::quadrature(int degree) const {
  if (degree < 1)
    throw std::invalid_argument("ReferenceElement::quadrature: degree must be >= 1, got " + std::to_string(degree));
  switch (type_) {
    case ElementType::kTet4:
    case ElementType::kTet10:
    case ElementType::kTet20: return tetRule(degree);
    case ElementType::kHex8: return hexRule(degree);
    case ElementType::kPrism6: return prismRule(degree);
    case ElementType::kPyramid5: return pyramidRule(degree);
    case ElementType::kTri3: return triRule(degree);
  }
  throw std::invalid_argument("ReferenceElement::quadrature: unknown element type");
}

int ReferenceElement::stiffnessQuadratureDegree() const {
  switch (type_) {
    // Simplices with an affine map: dN/dX = J^-T dN/dr has degree order - 1, the stiffness
    // integrand dN_i/dX . dN_j/dX degree 2 (order - 1): 0 for tet4 (one point is exact; the
    // rules start at degree 1), 2 for tet10 (4 points), 4 for tet20 (14 points, a degree-5 rule).
    case ElementType::kTet4:
    case ElementType::kTri3: return 1;
    case ElementType::kTet10: return 2;
    case ElementType::kTet20: return 4;
    // hex8: dN/du is constant in u and linear in v and w (and so on): the products are of
    // degree <= 2 in each variable (total degree 4). The tensor rule for degree 2 has n = 2
    // Gauss points per axis, exact to degree 3 per variable: 2 x 2 x 2 points are exact for a
    // parallelepiped.
    case ElementType::kHex8: return 2;
    // prism6: dN/du, dN/dv are constant in (u, v) and linear in w; dN/dw is linear in (u, v)
    // and constant in w. Products: degree <= 2 in (u, v) and <= 2 in w -> 3-point triangle
    // rule x 2-point Gauss-Legendre (6 points).
    case ElementType::kPrism6: return 2;
    // pyramid5: in collapsed coordinates the gradients lie in {1, b}, {1, a}, {1, a b}
    // (degree <= 1 in a and b, 0 in c); products have degree <= 2 in a and b -> n = 2
    // (8 points), see quadrature().
    case ElementType::kPyramid5: return 2;
  }
  return 1;
}

int ReferenceElement::massQuadratureDegree() const {
  switch (type_) {
    // Simplices, affine map (det J constant): N_i N_j has degree 2 * order.
    case ElementType::kTet4:
    case ElementType::kTri3: return 2;
    case ElementType::kTet10: return 4;
    case ElementType::kTet20: return 6;
    // hex8: N_i N_j has degree <= 2 in each variable, and so has det J of any trilinear map
    // (each column dx/dr_k is constant in r_k and linear in the other two). The integrand is
    // of degree <= 4 per variable: n = 3 points per axis (27) are exact for every hex8
    // geometry, not only parallelepipeds (which would need 2).
    case ElementType::kHex8: return 4;
    // prism6: N_i N_j has degree 2 in (u, v) and 2 in w; det J of a general 6-node prism has
    // degree 1 in (u, v) and 2 in w. Degree 4 (triangle rule of degree 4 x 3 Gauss points)
    // covers both.
    case ElementType::kPrism6: return 4;
    // pyramid5: N_i N_j has degree <= 2 in each of a, b, c; det J of a general 5-node
    // pyramid degree <= 2 in a and b and 0 in c. Degree 4 (n = 3, 27 points) covers it.
    case ElementType::kPyramid5: return 4;
  }
  return 2;
}

}  // namespace pbdlab
