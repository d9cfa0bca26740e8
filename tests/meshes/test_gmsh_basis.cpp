// pbdlab's reference elements against Gmsh itself (the API truth for node order): for every
// element type, Gmsh's local node coordinates (getElementProperties) equal
// ReferenceElement::nodeCoordinates() in order, and Gmsh's "Lagrange" / "GradLagrange" basis
// (getBasisFunctions) equals shapeValues / shapeGradients at the nodes, at quadrature points
// and at random points. Since a Lagrange basis is fixed by its nodes, equal values prove the
// node order; the pyramid check also proves that Gmsh's linear pyramid is the rational basis
// implemented here. The corner edges and faces are checked against the edge and face nodes
// of Gmsh's higher-order elements.
#include <gmsh.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/fem/reference_element.hpp"
#include "meshes/gmsh_session.hpp"

namespace pbdlab {
namespace {

int ompThreads() { return omp_get_max_threads(); }

// One Gmsh session per test suite, through pbdlab's guard (meshes/gmsh_session.hpp): the
// other mesh tests of this executable check what the outermost session does, so none may be
// open around them. gmsh::initialize resets the OpenMP thread count to General.NumThreads
// (TOOLCHAIN.md); the guard restores it, which the last test checks.
int g_threads_before_gmsh = 0;  // the count before gmsh::initialize, for the test below

std::optional<GmshSession>& suiteSession() {
  static std::optional<GmshSession> session;
  return session;
}

template <class Base>
class WithGmshSession : public Base {
 public:
  static void SetUpTestSuite() {
    g_threads_before_gmsh = ompThreads();
    suiteSession().emplace();
  }
  static void TearDownTestSuite() { suiteSession().reset(); }
};

struct GmshProperties {
  std::string name;
  int dim = 0, order = 0, num_nodes = 0, num_primary = 0;
  std::vector<Vec3> nodes;  // z = 0 for 2D elements
};

GmshProperties properties(int gmsh_type) {
  GmshProperties p;
  std::vector<double> coords;
  gmsh::model::mesh::getElementProperties(gmsh_type, p.name, p.dim, p.order, p.num_nodes, coords, p.num_primary);
  for (int i = 0; i < p.num_nodes; ++i) {
    Vec3 r = Vec3::Zero();
    for (int d = 0; d < p.dim; ++d) r[d] = coords[static_cast<std::size_t>(p.dim * i + d)];
    p.nodes.push_back(r);
  }
  return p;
}

class GmshBasis : public WithGmshSession<::testing::TestWithParam<ElementType>> {};

TEST_P(GmshBasis, LocalNodeCoordinatesMatchInOrder) {
  const ElementType type = GetParam();
  const ReferenceElement& ref = ReferenceElement::of(type);
  const GmshProperties p = properties(gmshElementType(type));
  EXPECT_EQ(p.dim, elementDimension(type));
  EXPECT_EQ(p.order, elementOrder(type));
  EXPECT_EQ(p.num_primary, cornerNodesPerElement(type));
  ASSERT_EQ(p.num_nodes, ref.numNodes()) << p.name;
  for (int i = 0; i < ref.numNodes(); ++i)
    EXPECT_LT((p.nodes[static_cast<std::size_t>(i)] - ref.nodeCoordinates()[static_cast<std::size_t>(i)]).norm(), 1e-12)
        << p.name << " node " << i << ": Gmsh " << p.nodes[static_cast<std::size_t>(i)].transpose() << ", pbdlab "
        << ref.nodeCoordinates()[static_cast<std::size_t>(i)].transpose();
}

// Evaluation points: every node (the pyramid's apex included, where both return the limit
// along the axis), the points of a degree-3 rule and random points inside.
std::vector<Vec3> evaluationPoints(const ReferenceElement& ref) {
  std::vector<Vec3> points = ref.nodeCoordinates();
  for (const Vec3& r : ref.quadrature(3).points) points.push_back(r);
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int k = 0; k < 10; ++k) {
    // A random convex combination of the corners lies inside every element shape.
    Eigen::VectorXd weights(ref.numCorners());
    for (int c = 0; c < ref.numCorners(); ++c) weights[c] = unit(rng) + 0.01;
    weights /= weights.sum();
    Vec3 r = Vec3::Zero();
    for (int c = 0; c < ref.numCorners(); ++c) r += weights[c] * ref.nodeCoordinates()[static_cast<std::size_t>(c)];
    points.push_back(r);
  }
  return points;
}

TEST_P(GmshBasis, LagrangeValuesAndGradientsMatch) {
  const ElementType type = GetParam();
  const ReferenceElement& ref = ReferenceElement::of(type);
  const std::vector<Vec3> points = evaluationPoints(ref);
  std::vector<double> local;
  for (const Vec3& r : points) local.insert(local.end(), {r.x(), r.y(), r.z()});
  const int n = ref.numNodes();

  int components = 0, orientations = 0;
  std::vector<double> values;
  gmsh::model::mesh::getBasisFunctions(gmshElementType(type), local, "Lagrange", components, values, orientations);
  ASSERT_EQ(components, 1);
  ASSERT_EQ(values.size(), points.size() * static_cast<std::size_t>(n));

  std::vector<double> gradients;
  gmsh::model::mesh::getBasisFunctions(gmshElementType(type), local, "GradLagrange", components, gradients,
                                       orientations);
  ASSERT_EQ(components, 3);
  ASSERT_EQ(gradients.size(), 3 * points.size() * static_cast<std::size_t>(n));

  for (std::size_t g = 0; g < points.size(); ++g) {
    const Eigen::VectorXd N = ref.shapeValues(points[g]);
    const Eigen::MatrixXd G = ref.shapeGradients(points[g]);
    for (int i = 0; i < n; ++i) {
      EXPECT_NEAR(N[i], values[g * n + i], 1e-12) << elementTypeName(type) << " N_" << i << " at " << points[g].transpose();
      for (int d = 0; d < 3; ++d)
        EXPECT_NEAR(G(i, d), gradients[3 * (g * n + i) + d], 1e-11)
            << elementTypeName(type) << " dN_" << i << "/dr_" << d << " at " << points[g].transpose();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GmshBasis, ::testing::ValuesIn(allElementTypes()),
                         [](const ::testing::TestParamInfo<ElementType>& info) { return elementTypeName(info.param); });

// Gmsh's higher-order elements of the same shape put their edge nodes on the edges in Gmsh's
// edge order: the second-order ones at the midpoints (edge order), the third-order ones at 1/3
// and 2/3 from the edge's first corner (edge direction; Gmsh 4.8 has no third-order prism in
// getElementProperties, so the prism's edge directions are not checked).
class GmshTopology : public WithGmshSession<::testing::Test> {};

TEST_F(GmshTopology, CornerEdgesFollowGmshEdgeNodes) {
  struct Case {
    ElementType type;
    int second_order;  // Gmsh type codes
    int third_order;   // 0: none
  };
  const Case cases[] = {{ElementType::kTet4, 11, 29},   {ElementType::kHex8, 17, 92}, {ElementType::kPrism6, 18, 0},
                        {ElementType::kPyramid5, 19, 118}, {ElementType::kTri3, 9, 21}};
  for (const Case& c : cases) {
    const ReferenceElement& ref = ReferenceElement::of(c.type);
    const auto& r = ref.nodeCoordinates();
    const auto& edges = ref.cornerEdges();
    const GmshProperties p2 = properties(c.second_order);
    ASSERT_GE(p2.num_nodes, ref.numCorners() + static_cast<int>(edges.size()));
    for (std::size_t k = 0; k < edges.size(); ++k) {
      const Vec3 mid = 0.5 * (r[edges[k][0]] + r[edges[k][1]]);
      EXPECT_LT((p2.nodes[ref.numCorners() + k] - mid).norm(), 1e-12) << p2.name << " edge " << k;
    }
    if (c.third_order == 0) continue;
    const GmshProperties p3 = properties(c.third_order);
    ASSERT_GE(p3.num_nodes, ref.numCorners() + 2 * static_cast<int>(edges.size()));
    for (std::size_t k = 0; k < edges.size(); ++k) {
      const Vec3& a = r[edges[k][0]];
      const Vec3& b = r[edges[k][1]];
      EXPECT_LT((p3.nodes[ref.numCorners() + 2 * k] - (2 * a + b) / 3).norm(), 1e-12) << p3.name << " edge " << k;
      EXPECT_LT((p3.nodes[ref.numCorners() + 2 * k + 1] - (a + 2 * b) / 3).norm(), 1e-12) << p3.name << " edge " << k;
    }
  }
}

// Face order: the face nodes of Gmsh's tet20 and hex27 (one per face), of the prism18 (one
// per quadrilateral face) and of the pyramid30 (one per triangular face, then the base's) lie
// at the centroids of cornerFaces() in order.
TEST_F(GmshTopology, CornerFacesFollowGmshFaceNodes) {
  auto centroid = [](const ReferenceElement& ref, const std::vector<int>& face) {
    Vec3 c = Vec3::Zero();
    for (int k : face) c += ref.nodeCoordinates()[static_cast<std::size_t>(k)];
    return Vec3(c / static_cast<double>(face.size()));
  };
  {
    const ReferenceElement& ref = ReferenceElement::of(ElementType::kTet20);
    const GmshProperties p = properties(29);
    for (std::size_t f = 0; f < 4; ++f) EXPECT_LT((p.nodes[16 + f] - centroid(ref, ref.cornerFaces()[f])).norm(), 1e-12);
  }
  {
    const ReferenceElement& ref = ReferenceElement::of(ElementType::kHex8);
    const GmshProperties p = properties(12);  // hex27: 8 corners, 12 edge, 6 face, 1 body node
    for (std::size_t f = 0; f < 6; ++f) EXPECT_LT((p.nodes[20 + f] - centroid(ref, ref.cornerFaces()[f])).norm(), 1e-12);
  }
  {
    const ReferenceElement& ref = ReferenceElement::of(ElementType::kPrism6);
    const GmshProperties p = properties(13);  // prism18: 6 corners, 9 edge, 3 quad-face nodes
    std::size_t quad = 0;
    for (const auto& face : ref.cornerFaces()) {
      if (face.size() != 4) continue;
      EXPECT_LT((p.nodes[15 + quad] - centroid(ref, face)).norm(), 1e-12) << "quad face " << quad;
      ++quad;
    }
    EXPECT_EQ(quad, 3u);
  }
  {
    const ReferenceElement& ref = ReferenceElement::of(ElementType::kPyramid5);
    const GmshProperties p = properties(118);  // pyramid30: 5 + 16 edge, 4 triangle-face, 4 base, 1 body
    for (std::size_t f = 0; f < 4; ++f) {
      ASSERT_EQ(ref.cornerFaces()[f].size(), 3u);
      EXPECT_LT((p.nodes[21 + f] - centroid(ref, ref.cornerFaces()[f])).norm(), 1e-12) << "face " << f;
    }
    Vec3 base = Vec3::Zero();
    for (std::size_t k = 25; k < 29; ++k) base += p.nodes[k] / 4.0;
    EXPECT_LT((base - centroid(ref, ref.cornerFaces()[4])).norm(), 1e-12);
  }
}

TEST_F(GmshTopology, TheSessionKeepsTheOpenMpThreadCount) {
  // gmsh::initialize set the count to General.NumThreads; the session guard put it back.
  EXPECT_EQ(ompThreads(), g_threads_before_gmsh);
  double terminal = -1;
  gmsh::option::getNumber("General.Terminal", terminal);  // the session is alive and quiet
  EXPECT_EQ(terminal, 0.0);
}

}  // namespace
}  // namespace pbdlab
