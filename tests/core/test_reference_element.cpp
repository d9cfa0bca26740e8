// Shape functions and quadrature of every reference element (core/fem/reference_element.hpp):
// Kronecker property, partition of unity, polynomial reproduction, gradients against finite
// differences, exactness (and inexactness one degree higher) of every quadrature rule.
// The node order against Gmsh itself is tested in tests/meshes/test_gmsh_basis.cpp.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Geometry>
#include <Eigen/LU>

#include "core/fem/reference_element.hpp"

namespace pbdlab {
namespace {

double factorial(int n) {
  double f = 1.0;
  for (int k = 2; k <= n; ++k) f *= k;
  return f;
}

// integral_{-1}^{1} x^k dx
double lineMoment(int k) { return (k % 2 == 0) ? 2.0 / (k + 1) : 0.0; }

bool isSimplex(ElementType t) { return cornerNodesPerElement(t) == elementDimension(t) + 1; }

// A random point inside the reference element of `type` (strictly inside, away from the
// pyramid's apex where its gradients have no limit).
Vec3 randomInside(ElementType type, std::mt19937& rng) {
  std::uniform_real_distribution<double> unit(0.02, 0.98), sym(-0.98, 0.98);
  switch (type) {
    case ElementType::kTet4:
    case ElementType::kTet10:
    case ElementType::kTet20: {
      double l[4], s = 0;
      for (double& x : l) s += (x = unit(rng));
      return Vec3(l[1] / s, l[2] / s, l[3] / s);
    }
    case ElementType::kTri3: {
      double l[3], s = 0;
      for (double& x : l) s += (x = unit(rng));
      return Vec3(l[1] / s, l[2] / s, 0.0);
    }
    case ElementType::kHex8: return Vec3(sym(rng), sym(rng), sym(rng));
    case ElementType::kPrism6: {
      double l[3], s = 0;
      for (double& x : l) s += (x = unit(rng));
      return Vec3(l[1] / s, l[2] / s, sym(rng));
    }
    case ElementType::kPyramid5: {
      const double c = 0.95 * unit(rng);
      return Vec3(sym(rng) * (1 - c), sym(rng) * (1 - c), c);
    }
  }
  return Vec3::Zero();
}

// integral over the reference element of u^i v^j w^k (closed forms).
double exactMonomial(ElementType type, int i, int j, int k) {
  switch (type) {
    case ElementType::kTet4:
    case ElementType::kTet10:
    case ElementType::kTet20:
      return factorial(i) * factorial(j) * factorial(k) / factorial(i + j + k + 3);
    case ElementType::kTri3: return k == 0 ? factorial(i) * factorial(j) / factorial(i + j + 2) : 0.0;
    case ElementType::kHex8: return lineMoment(i) * lineMoment(j) * lineMoment(k);
    case ElementType::kPrism6: return factorial(i) * factorial(j) / factorial(i + j + 2) * lineMoment(k);
    case ElementType::kPyramid5: {
      // u = a (1 - w), v = b (1 - w): integral_0^1 w^k (1 - w)^(i + j + 2) dw * m_i m_j, and
      // integral_0^1 w^k (1 - w)^m dw = k! m! / (k + m + 1)!.
      const int m = i + j + 2;
      return lineMoment(i) * lineMoment(j) * factorial(k) * factorial(m) / factorial(k + m + 1);
    }
  }
  return 0.0;
}

double integrate(const QuadratureRule& rule, const std::function<double(const Vec3&)>& f) {
  double sum = 0.0;
  for (int q = 0; q < rule.size(); ++q) sum += rule.weights[static_cast<std::size_t>(q)] * f(rule.points[static_cast<std::size_t>(q)]);
  return sum;
}

double monomial(const Vec3& r, int i, int j, int k) { return std::pow(r.x(), i) * std::pow(r.y(), j) * std::pow(r.z(), k); }

class EveryType : public ::testing::TestWithParam<ElementType> {};

TEST_P(EveryType, NodeTableMatchesTheType) {
  const ReferenceElement& ref = ReferenceElement::of(GetParam());
  EXPECT_EQ(ref.type(), GetParam());
  EXPECT_EQ(&ref, &ReferenceElement::of(GetParam()));
  ASSERT_EQ(static_cast<int>(ref.nodeCoordinates().size()), nodesPerElement(GetParam()));
  EXPECT_EQ(ref.numCorners(), cornerNodesPerElement(GetParam()));
  // Distinct nodes.
  for (int a = 0; a < ref.numNodes(); ++a)
    for (int b = a + 1; b < ref.numNodes(); ++b)
      EXPECT_GT((ref.nodeCoordinates()[a] - ref.nodeCoordinates()[b]).norm(), 0.1) << a << " " << b;
}

TEST_P(EveryType, KroneckerPropertyAtTheNodes) {
  const ReferenceElement& ref = ReferenceElement::of(GetParam());
  for (int j = 0; j < ref.numNodes(); ++j) {
    const Eigen::VectorXd N = ref.shapeValues(ref.nodeCoordinates()[static_cast<std::size_t>(j)]);
    ASSERT_EQ(N.size(), ref.numNodes());
    for (int i = 0; i < ref.numNodes(); ++i) EXPECT_NEAR(N[i], i == j ? 1.0 : 0.0, 1e-13) << "N_" << i << " at node " << j;
  }
}

TEST_P(EveryType, PartitionOfUnityAndGradientsSumToZero) {
  const ReferenceElement& ref = ReferenceElement::of(GetParam());
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const Vec3 r = randomInside(GetParam(), rng);
    EXPECT_NEAR(ref.shapeValues(r).sum(), 1.0, 1e-13);
    const Eigen::MatrixXd G = ref.shapeGradients(r);
    ASSERT_EQ(G.rows(), ref.numNodes());
    ASSERT_EQ(G.cols(), 3);
    EXPECT_LT(G.colwise().sum().norm(), 1e-12);
    if (ref.dimension() == 2) {
      EXPECT_EQ(G.col(2).norm(), 0.0);
    }
  }
}

// sum_i N_i(r) f(r_i) = f(r) and sum_i dN_i/dr(r) f(r_i) = grad f(r) for every f of `fields`.
void expectReproduces(const ReferenceElement& ref, const std::vector<std::function<double(const Vec3&)>>& fields,
                      const std::string& what) {
  std::mt19937 rng(11);
  const double h = 1e-6;
  for (std::size_t f = 0; f < fields.size(); ++f) {
    Eigen::VectorXd nodal(ref.numNodes());
    for (int i = 0; i < ref.numNodes(); ++i) nodal[i] = fields[f](ref.nodeCoordinates()[static_cast<std::size_t>(i)]);
    for (int trial = 0; trial < 20; ++trial) {
      const Vec3 r = randomInside(ref.type(), rng);
      EXPECT_NEAR(ref.shapeValues(r).dot(nodal), fields[f](r), 1e-12) << what << " field " << f;
      const Vec3 grad = ref.shapeGradients(r).transpose() * nodal;
      for (int d = 0; d < ref.dimension(); ++d) {
        Vec3 step = Vec3::Zero();
        step[d] = h;
        const double fd = (fields[f](r + step) - fields[f](r - step)) / (2 * h);
        EXPECT_NEAR(grad[d], fd, 1e-7) << what << " field " << f << " d/dr_" << d;
      }
    }
  }
}

TEST_P(EveryType, ReproducesLinearFields) {
  const ReferenceElement& ref = ReferenceElement::of(GetParam());
  // x(r) = A r + b with a random A: both the values and the Jacobian are reproduced.
  const Eigen::Matrix3d A = (Eigen::Matrix3d() << 0.3, -1.2, 0.7, 2.0, 0.1, -0.4, 0.5, 0.9, 1.7).finished();
  const Vec3 b(0.2, -0.3, 1.1);
  std::vector<std::function<double(const Vec3&)>> fields;
  for (int row = 0; row < 3; ++row) fields.push_back([A, b, row](const Vec3& r) { return A.row(row).dot(r) + b[row]; });
  expectReproduces(ref, fields, elementTypeName(GetParam()) + " linear");

  // Jacobian form: sum_i x_i dN_i/dr^T = A (eq. 9).
  std::mt19937 rng(3);
  Eigen::MatrixXd X(ref.numNodes(), 3);
  for (int i = 0; i < ref.numNodes(); ++i) X.row(i) = (A * ref.nodeCoordinates()[static_cast<std::size_t>(i)] + b).transpose();
  for (int trial = 0; trial < 10; ++trial) {
    const Vec3 r = randomInside(GetParam(), rng);
    const Eigen::Matrix3d J = X.transpose() * ref.shapeGradients(r);
    const int d = ref.dimension();
    EXPECT_LT((J.leftCols(d) - A.leftCols(d)).norm(), 1e-12);
  }
}

TEST_P(EveryType, ReproducesItsWholeSpace) {
  // The element's full interpolation space, beyond the linear fields.
  const ElementType type = GetParam();
  std::vector<std::function<double(const Vec3&)>> fields;
  const int p = elementOrder(type);
  if (isSimplex(type)) {
    const int dim = elementDimension(type);
    for (int i = 0; i <= p; ++i)
      for (int j = 0; i + j <= p; ++j)
        for (int k = 0; i + j + k <= p; ++k) {
          if (dim == 2 && k > 0) continue;
          fields.push_back([i, j, k](const Vec3& r) { return monomial(r, i, j, k); });
        }
  } else if (type == ElementType::kHex8) {
    for (int m = 0; m < 8; ++m)
      fields.push_back([m](const Vec3& r) { return monomial(r, m & 1, (m >> 1) & 1, (m >> 2) & 1); });
  } else if (type == ElementType::kPrism6) {
    for (int k = 0; k < 2; ++k)
      for (int ij = 0; ij < 3; ++ij)
        fields.push_back([ij, k](const Vec3& r) { return monomial(r, ij == 1, ij == 2, k); });
  } else if (type == ElementType::kPyramid5) {
    fields.push_back([](const Vec3&) { return 1.0; });
    fields.push_back([](const Vec3& r) { return r.x(); });
    fields.push_back([](const Vec3& r) { return r.y(); });
    fields.push_back([](const Vec3& r) { return r.z(); });
    // u v / (1 - w), with its limit 0 at the apex (|u v| <= (1 - w)^2 inside).
    fields.push_back([](const Vec3& r) { return r.z() == 1.0 ? 0.0 : r.x() * r.y() / (1.0 - r.z()); });
  }
  ASSERT_EQ(static_cast<int>(fields.size()), nodesPerElement(type)) << "the space's dimension is the node count";
  expectReproduces(ReferenceElement::of(type), fields, elementTypeName(type));
}

TEST_P(EveryType, GradientsMatchFiniteDifferences) {
  const ReferenceElement& ref = ReferenceElement::of(GetParam());
  std::mt19937 rng(5);
  const double h = 1e-6;
  for (int trial = 0; trial < 30; ++trial) {
    const Vec3 r = randomInside(GetParam(), rng);
    const Eigen::MatrixXd G = ref.shapeGradients(r);
    for (int d = 0; d < ref.dimension(); ++d) {
      Vec3 step = Vec3::Zero();
      step[d] = h;
      const Eigen::VectorXd fd = (ref.shapeValues(r + step) - ref.shapeValues(r - step)) / (2 * h);
      EXPECT_LT((G.col(d) - fd).norm(), 1e-7) << "d/dr_" << d << " at " << r.transpose();
    }
  }
}

TEST_P(EveryType, FacesPointOutAndEveryEdgeBoundsTwoFaces) {
  const ReferenceElement& ref = ReferenceElement::of(GetParam());
  const auto& nodes = ref.nodeCoordinates();
  if (ref.dimension() == 2) {
    ASSERT_EQ(ref.cornerFaces().size(), 1u);
    EXPECT_EQ(ref.cornerEdges().size(), 3u);
    return;
  }
  Vec3 centroid = Vec3::Zero();
  for (int i = 0; i < ref.numCorners(); ++i) centroid += nodes[static_cast<std::size_t>(i)] / ref.numCorners();
  for (const auto& face : ref.cornerFaces()) {
    const Vec3 n = (nodes[face[1]] - nodes[face[0]]).cross(nodes[face[2]] - nodes[face[0]]);
    Vec3 face_centroid = Vec3::Zero();
    for (int k : face) face_centroid += nodes[static_cast<std::size_t>(k)] / static_cast<double>(face.size());
    EXPECT_GT(n.dot(face_centroid - centroid), 0.0);
  }
  // Euler: V - E + F = 2 for the closed polyhedron; each edge in exactly two faces.
  EXPECT_EQ(ref.numCorners() - static_cast<int>(ref.cornerEdges().size()) + static_cast<int>(ref.cornerFaces().size()), 2);
  for (const auto& edge : ref.cornerEdges()) {
    int count = 0;
    for (const auto& face : ref.cornerFaces())
      for (std::size_t k = 0; k < face.size(); ++k) {
        const int a = face[k], b = face[(k + 1) % face.size()];
        if ((a == edge[0] && b == edge[1]) || (a == edge[1] && b == edge[0])) ++count;
      }
    EXPECT_EQ(count, 2) << edge[0] << "-" << edge[1];
  }
}

// Every rule of degree 1 .. 9: positive weights summing to the measure, points inside the
// element, every monomial of total degree <= rule.degree exact, and some monomial of degree
// rule.degree + 1 not exact (so the exactness check can fail).
TEST_P(EveryType, QuadratureExactToItsDegreeAndNotBeyond) {
  const ElementType type = GetParam();
  const ReferenceElement& ref = ReferenceElement::of(type);
  const int dim = ref.dimension();
  for (int degree = 1; degree <= 9; ++degree) {
    const QuadratureRule rule = ref.quadrature(degree);
    SCOPED_TRACE(elementTypeName(type) + " degree " + std::to_string(degree) + ", " + std::to_string(rule.size()) +
                 " points, exact to " + std::to_string(rule.degree));
    EXPECT_GE(rule.degree, degree);
    ASSERT_EQ(rule.points.size(), rule.weights.size());
    double sum = 0;
    for (double w : rule.weights) {
      EXPECT_GT(w, 0.0);
      sum += w;
    }
    // Tolerance: a few ulps of the measure (8 for the hex).
    const double tol = 1e-14 * std::max(1.0, ref.referenceMeasure());
    EXPECT_NEAR(sum, ref.referenceMeasure(), tol);
    for (const Vec3& r : rule.points) {
      if (dim == 2) {
        EXPECT_EQ(r.z(), 0.0);
      }
      // Inside: every shape function of a P1 corner basis is >= 0 there.
      const Eigen::VectorXd N = ReferenceElement::of(isSimplex(type) ? (dim == 2 ? ElementType::kTri3 : ElementType::kTet4) : type)
                                    .shapeValues(r);
      EXPECT_GE(N.minCoeff(), -1e-14) << r.transpose();
    }
    int inexact = 0;
    for (int total = 0; total <= rule.degree + 1; ++total)
      for (int i = 0; i <= total; ++i)
        for (int j = 0; i + j <= total; ++j) {
          const int k = total - i - j;
          if (dim == 2 && k > 0) continue;
          const double exact = exactMonomial(type, i, j, k);
          const double approx = integrate(rule, [&](const Vec3& r) { return monomial(r, i, j, k); });
          if (total <= rule.degree) {
            EXPECT_NEAR(approx, exact, tol) << "u^" << i << " v^" << j << " w^" << k;
          } else if (std::abs(approx - exact) > 1e-10 * std::max(1e-3, std::abs(exact))) {
            ++inexact;
          }
        }
    EXPECT_GT(inexact, 0) << "every monomial of degree " << rule.degree + 1 << " came out exact";
  }
  EXPECT_THROW(ref.quadrature(0), std::invalid_argument);
}

// The rule sizes documented in reference_element.hpp.
TEST(Quadrature, PointCounts) {
  auto size = [](ElementType t, int degree) { return ReferenceElement::of(t).quadrature(degree).size(); };
  EXPECT_EQ(size(ElementType::kTet4, 1), 1);
  EXPECT_EQ(size(ElementType::kTet10, 2), 4);
  EXPECT_EQ(size(ElementType::kTet10, 3), 8);
  EXPECT_EQ(size(ElementType::kTet10, 4), 14);  // the symmetric 14-point rule of degree 5
  EXPECT_EQ(size(ElementType::kTet20, 3), 8);
  EXPECT_EQ(size(ElementType::kTet20, 4), 14);
  EXPECT_EQ(size(ElementType::kTet20, 5), 14);
  EXPECT_EQ(size(ElementType::kTet20, 6), 64);
  EXPECT_EQ(ReferenceElement::of(ElementType::kTet20).quadrature(ReferenceElement::of(ElementType::kTet20).stiffnessQuadratureDegree()).size(), 14);
  EXPECT_EQ(size(ElementType::kTri3, 1), 1);
  EXPECT_EQ(size(ElementType::kTri3, 2), 3);
  EXPECT_EQ(size(ElementType::kTri3, 3), 4);
  EXPECT_EQ(size(ElementType::kHex8, 1), 1);
  EXPECT_EQ(size(ElementType::kHex8, 2), 8);  // ceil((2 + 1) / 2) = 2 per axis
  EXPECT_EQ(size(ElementType::kHex8, 3), 8);
  EXPECT_EQ(size(ElementType::kHex8, 4), 27);
  EXPECT_EQ(size(ElementType::kPrism6, 2), 6);
  EXPECT_EQ(size(ElementType::kPrism6, 4), 27);
  EXPECT_EQ(size(ElementType::kPyramid5, 1), 1);
  EXPECT_EQ(size(ElementType::kPyramid5, 2), 8);
  EXPECT_EQ(size(ElementType::kPyramid5, 4), 27);
  // The one-point simplex rules sit at the centroid.
  EXPECT_TRUE(ReferenceElement::of(ElementType::kTet4).quadrature(1).points[0].isApprox(Vec3(0.25, 0.25, 0.25)));
  EXPECT_TRUE(ReferenceElement::of(ElementType::kPyramid5).quadrature(1).points[0].isApprox(Vec3(0, 0, 0.25)));
}

// The tet's 14-point rule (degree 4 and 5), derived here rather than trusted: its six
// parameters -- barycentric orbits (a1, a1, a1, 1 - 3 a1), (a2, a2, a2, 1 - 3 a2) of 4 points
// and (a3, a3, 1/2 - a3, 1/2 - a3) of 6, weights w1, w2, w3 as fractions of the volume -- solve
// the moment equations of 1, sum l_i^2, sum l_i^3, sum l_i^4, sum l_i^5 and sum_{i<j} l_i^2 l_j^2
// (integral of l_0^a l_1^b l_2^c l_3^d = 6 a! b! c! d! / (a + b + c + d + 3)! times the
// volume). Newton's method from two-digit guesses must land on the library's rule, which must
// integrate every x^i y^j z^k of degree <= 5 to 1e-14 and miss every one of degree 6.
std::vector<std::array<double, 4>> tetOrbit(int kind, double a) {
  if (kind == 31) {
    const double b = 1.0 - 3.0 * a;
    return {{b, a, a, a}, {a, b, a, a}, {a, a, b, a}, {a, a, a, b}};
  }
  const double c = 0.5 - a;
  return {{a, a, c, c}, {a, c, a, c}, {a, c, c, a}, {c, a, a, c}, {c, a, c, a}, {c, c, a, a}};
}

// p = (a1, a2, a3, w1, w2, w3) -> (points as barycentric coordinates, weights summing to 1).
void tet14FromParameters(const Eigen::Matrix<double, 6, 1>& p, std::vector<std::array<double, 4>>* points,
                         std::vector<double>* weights) {
  points->clear();
  weights->clear();
  const int kinds[3] = {31, 31, 22};
  for (int o = 0; o < 3; ++o)
    for (const auto& l : tetOrbit(kinds[o], p[o])) {
      points->push_back(l);
      weights->push_back(p[3 + o]);
    }
}

Eigen::Matrix<double, 6, 1> tet14MomentResiduals(const Eigen::Matrix<double, 6, 1>& p) {
  std::vector<std::array<double, 4>> points;
  std::vector<double> weights;
  tet14FromParameters(p, &points, &weights);
  // integral of l_i^a l_j^b (i != j) over the volume-1 tet
  auto moment = [](int a, int b) { return 6.0 * factorial(a) * factorial(b) / factorial(a + b + 3); };
  Eigen::Matrix<double, 6, 1> r = Eigen::Matrix<double, 6, 1>::Zero();
  for (std::size_t q = 0; q < points.size(); ++q) {
    const auto& l = points[q];
    double pairs = 0.0;
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j) pairs += l[i] * l[i] * l[j] * l[j];
    const double w = weights[q];
    r[0] += w;
    for (int k = 2; k <= 5; ++k) {
      double sum = 0.0;
      for (int i = 0; i < 4; ++i) sum += std::pow(l[i], k);
      r[k - 1] += w * sum;
    }
    r[5] += w * pairs;
  }
  r[0] -= 1.0;
  for (int k = 2; k <= 5; ++k) r[k - 1] -= 4.0 * moment(k, 0);
  r[5] -= 6.0 * moment(2, 2);
  return r;
}

TEST(Quadrature, TetFourteenPointRuleDerivedFromItsMomentEquations) {
  Eigen::Matrix<double, 6, 1> p;
  p << 0.31, 0.093, 0.046, 0.11, 0.073, 0.043;  // two digits of the published values
  for (int iteration = 0; iteration < 50; ++iteration) {
    const Eigen::Matrix<double, 6, 1> r = tet14MomentResiduals(p);
    if (r.norm() < 1e-16) break;
    Eigen::Matrix<double, 6, 6> J;
    for (int k = 0; k < 6; ++k) {
      Eigen::Matrix<double, 6, 1> plus = p, minus = p;
      const double h = 1e-6;
      plus[k] += h;
      minus[k] -= h;
      J.col(k) = (tet14MomentResiduals(plus) - tet14MomentResiduals(minus)) / (2 * h);
    }
    p -= J.partialPivLu().solve(r);
  }
  EXPECT_LT(tet14MomentResiduals(p).norm(), 1e-15);
  // Positive weights, points strictly inside.
  for (int o = 0; o < 3; ++o) EXPECT_GT(p[3 + o], 0.0);
  EXPECT_GT(p[0], 0.0);
  EXPECT_LT(p[0], 1.0 / 3.0);
  EXPECT_GT(p[1], 0.0);
  EXPECT_LT(p[1], 1.0 / 3.0);
  EXPECT_GT(p[2], 0.0);
  EXPECT_LT(p[2], 0.5);

  // The library's rule is this one (same points and weights, in any order). The moment
  // equations fix the parameters to about 1e-14 in double precision (the library's come from a
  // 40-digit solve), hence 1e-12 here; exactness is then checked on the library's rule itself.
  std::vector<std::array<double, 4>> points;
  std::vector<double> weights;
  tet14FromParameters(p, &points, &weights);
  for (int degree : {4, 5}) {
    const QuadratureRule rule = ReferenceElement::of(ElementType::kTet20).quadrature(degree);
    ASSERT_EQ(rule.size(), 14);
    EXPECT_EQ(rule.degree, 5);
    std::vector<bool> used(14, false);
    for (int q = 0; q < rule.size(); ++q) {
      const Vec3& r = rule.points[static_cast<std::size_t>(q)];
      int match = -1;
      for (int m = 0; m < 14; ++m)
        if (!used[m] && std::abs(points[m][1] - r.x()) < 1e-12 && std::abs(points[m][2] - r.y()) < 1e-12 &&
            std::abs(points[m][3] - r.z()) < 1e-12)
          match = m;
      ASSERT_GE(match, 0) << "library point " << q << " (" << r.transpose() << ") is not a derived point";
      used[match] = true;
      EXPECT_NEAR(rule.weights[static_cast<std::size_t>(q)], weights[match] / 6.0, 1e-13);
    }
    // Every monomial of degree <= 5 exact to 1e-14; every one of degree 6 off by more than 1e-8
    // (the smallest miss, x y z^4 and its permutations, is 7.2e-8 of an integral of 6.6e-5).
    for (int total = 0; total <= 6; ++total)
      for (int i = 0; i <= total; ++i)
        for (int j = 0; i + j <= total; ++j) {
          const int k = total - i - j;
          const double exact = exactMonomial(ElementType::kTet20, i, j, k);
          const double approx = integrate(rule, [&](const Vec3& r) { return monomial(r, i, j, k); });
          if (total <= 5) {
            EXPECT_NEAR(approx, exact, 1e-14) << "x^" << i << " y^" << j << " z^" << k;
          } else {
            EXPECT_GT(std::abs(approx - exact), 1e-8) << "x^" << i << " y^" << j << " z^" << k << " came out exact";
          }
        }
  }
}

// Pyramid: exact for the collapsed monomials a^i b^j c^k (a = u / (1 - w), b = v / (1 - w),
// c = w) of degree <= rule.degree in each variable; closed form m_i m_j integral_0^1 c^k (1 -
// c)^2 dc = m_i m_j 2 k! / (k + 3)!. These include the rational basis and its products.
TEST(Quadrature, PyramidExactForCollapsedMonomials) {
  const ReferenceElement& ref = ReferenceElement::of(ElementType::kPyramid5);
  for (int degree = 1; degree <= 7; ++degree) {
    const QuadratureRule rule = ref.quadrature(degree);
    for (int i = 0; i <= rule.degree; ++i)
      for (int j = 0; j <= rule.degree; ++j)
        for (int k = 0; k <= rule.degree; ++k) {
          const double exact = lineMoment(i) * lineMoment(j) * 2.0 * factorial(k) / factorial(k + 3);
          const double approx = integrate(rule, [&](const Vec3& r) {
            const double t = 1.0 - r.z();
            return std::pow(r.x() / t, i) * std::pow(r.y() / t, j) * std::pow(r.z(), k);
          });
          EXPECT_NEAR(approx, exact, 1e-14) << "degree " << degree << " a^" << i << " b^" << j << " c^" << k;
        }
  }
}

// The stiffness and mass degrees integrate what they claim exactly: on the reference element
// (affine) the stiffness dN_i . dN_j and mass N_i N_j, and for hex/prism/pyramid also the mass
// N_i N_j det J of a distorted (non-affine) element, compared with a degree-15 rule.
TEST_P(EveryType, StiffnessAndMassDegreesAreExact) {
  const ReferenceElement& ref = ReferenceElement::of(GetParam());
  const QuadratureRule stiffness = ref.quadrature(ref.stiffnessQuadratureDegree());
  const QuadratureRule mass = ref.quadrature(ref.massQuadratureDegree());
  const QuadratureRule fine = ref.quadrature(15);
  auto stiffnessMatrix = [&](const QuadratureRule& rule) {
    Eigen::MatrixXd K = Eigen::MatrixXd::Zero(ref.numNodes(), ref.numNodes());
    for (int q = 0; q < rule.size(); ++q) {
      const Eigen::MatrixXd G = ref.shapeGradients(rule.points[q]);
      K += rule.weights[q] * G * G.transpose();
    }
    return K;
  };
  // A distorted geometry: corners moved by up to 0.15 (every element stays valid).
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> jitter(-0.15, 0.15);
  Eigen::MatrixXd X(ref.numNodes(), 3);
  const bool affine_only = isSimplex(GetParam());  // curved simplices are not claimed exact
  for (int i = 0; i < ref.numNodes(); ++i) {
    X.row(i) = ref.nodeCoordinates()[static_cast<std::size_t>(i)].transpose();
    if (!affine_only)
      for (int d = 0; d < ref.dimension(); ++d) X(i, d) += jitter(rng);
  }
  auto massMatrix = [&](const QuadratureRule& rule) {
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(ref.numNodes(), ref.numNodes());
    for (int q = 0; q < rule.size(); ++q) {
      const Eigen::VectorXd N = ref.shapeValues(rule.points[q]);
      Eigen::Matrix3d J = X.transpose() * ref.shapeGradients(rule.points[q]);
      if (ref.dimension() == 2) J(2, 2) = 1.0;
      EXPECT_GT(J.determinant(), 0.0);
      M += rule.weights[q] * J.determinant() * N * N.transpose();
    }
    return M;
  };
  EXPECT_LT((stiffnessMatrix(stiffness) - stiffnessMatrix(fine)).norm(), 1e-13);
  EXPECT_LT((massMatrix(mass) - massMatrix(fine)).norm(), 1e-14);
  // One degree less is not enough for the mass (except where 2n - 1 overshoots).
  if (GetParam() == ElementType::kTet10) {
    EXPECT_GT((massMatrix(ref.quadrature(3)) - massMatrix(fine)).norm(), 1e-8);
  }
}

TEST(Pyramid, ApexValuesAndBoundedGradients) {
  const ReferenceElement& ref = ReferenceElement::of(ElementType::kPyramid5);
  const Eigen::VectorXd N = ref.shapeValues(Vec3(0, 0, 1));
  EXPECT_EQ(N[4], 1.0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(N[i], 0.0);
  // At the apex: the limit along the axis (Gmsh's values).
  const Eigen::MatrixXd G = ref.shapeGradients(Vec3(0, 0, 1));
  for (int i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(G(i, 0), 0.25 * ref.nodeCoordinates()[i].x());
    EXPECT_DOUBLE_EQ(G(i, 1), 0.25 * ref.nodeCoordinates()[i].y());
    EXPECT_DOUBLE_EQ(G(i, 2), -0.25);
  }
  // Approaching the apex from any direction inside: values -> 0/1, gradients bounded by 1/2.
  for (double t : {1e-3, 1e-8, 1e-13}) {
    const Vec3 r(0.7 * t, -0.9 * t, 1 - t);
    EXPECT_NEAR(ref.shapeValues(r)[4], 1.0, 2 * t);
    EXPECT_LE(ref.shapeGradients(r).topRows(4).cwiseAbs().maxCoeff(), 0.5 + 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, EveryType, ::testing::ValuesIn(allElementTypes()),
                         [](const ::testing::TestParamInfo<ElementType>& info) { return elementTypeName(info.param); });

// Gauss-Jacobi rules for (1 - x)^alpha, alpha = 0 (Legendre), 1, 2: exact moments
// integral (1 - x)^alpha x^k for k <= 2n - 1, positive weights, nodes ascending in (-1, 1).
TEST(GaussJacobi, ExactMomentsUpTo2nMinus1) {
  for (int alpha = 0; alpha <= 2; ++alpha)
    for (int n = 1; n <= 30; ++n) {
      const GaussRule1D g = gaussJacobi(n, alpha);
      ASSERT_EQ(static_cast<int>(g.points.size()), n);
      for (int i = 0; i < n; ++i) {
        EXPECT_GT(g.weights[i], 0.0);
        EXPECT_GT(g.points[i], -1.0);
        EXPECT_LT(g.points[i], 1.0);
        if (i > 0) {
          EXPECT_LT(g.points[i - 1], g.points[i]);
        }
      }
      for (int k = 0; k <= 2 * n; ++k) {
        // (1 - x)^alpha = sum_j C(alpha, j) (-x)^j
        const double binomial[3][3] = {{1, 0, 0}, {1, 1, 0}, {1, 2, 1}};
        double exact = 0.0;
        for (int j = 0; j <= alpha; ++j) exact += binomial[alpha][j] * ((j % 2) ? -1.0 : 1.0) * lineMoment(k + j);
        double approx = 0.0;
        for (int i = 0; i < n; ++i) approx += g.weights[i] * std::pow(g.points[i], k);  // the weight is built in
        if (k <= 2 * n - 1) {
          EXPECT_NEAR(approx, exact, 1e-13) << "alpha " << alpha << " n " << n << " k " << k;
        } else if (n <= 10) {  // the error ||p_n||^2 shrinks like 4^-n: visible for small n
          EXPECT_GT(std::abs(approx - exact), 1e-15) << "alpha " << alpha << " n " << n << " exact beyond 2n - 1";
        }
      }
    }
  // Known values: 2-point Gauss-Legendre at +-1/sqrt(3), weights 1.
  const GaussRule1D g2 = gaussJacobi(2, 0.0);
  EXPECT_NEAR(g2.points[1], 1.0 / std::sqrt(3.0), 1e-15);
  EXPECT_NEAR(g2.weights[0], 1.0, 1e-15);
  EXPECT_THROW(gaussJacobi(0, 0.0), std::invalid_argument);
}

}  // namespace
}  // namespace pbdlab
