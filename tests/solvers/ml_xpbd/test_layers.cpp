// The rigid layers of multi-layer XPBD (solvers/ml_xpbd/layers.hpp): Algorithm 1's union-find
// against a brute-force breadth-first search over shared vertices on random element subsets of
// a tet box and a 2D triangle mesh; the merge the printed Algorithm 1 loses (an element touching
// two sets); layer counts with forced-elastic elements; the strain-rate, random and stripe
// orderings.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <deque>
#include <random>
#include <set>

#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "solvers/ml_xpbd/layers.hpp"

namespace pbdlab::ml_xpbd {
namespace {

Mesh smallTetBox() {
  BoxMeshRecipe recipe;
  recipe.size = Vec3(2.0, 1.0, 1.0);
  recipe.cells = {4, 2, 2};  // 80 tets
  recipe.family = BoxFamily::kFiveTet;
  return makeBoxMesh(recipe);
}

Mesh smallTriangleMesh() {
  RectangleRecipe recipe;
  recipe.embedding = RectangleRecipe::Embedding::k2d;
  recipe.origin = Vec3(-1.5, -2.5, 0.0);
  recipe.size = {3.0, 1.0};
  recipe.cells = {9, 3};  // 54 triangles
  return makeRectangleMesh(recipe);
}

// Component label (smallest element index of its component) of every element of `rigid`,
// found by breadth-first search through shared vertices; -1 for the others.
std::vector<int> componentsByBreadthFirstSearch(const Connectivity& elements, int num_nodes,
                                                const std::vector<char>& rigid) {
  std::vector<std::vector<int>> elements_of_node(num_nodes);
  for (int e = 0; e < elements.rows(); ++e)
    if (rigid[e])
      for (int a = 0; a < elements.cols(); ++a) elements_of_node[elements(e, a)].push_back(e);
  std::vector<int> label(elements.rows(), -1);
  for (int seed = 0; seed < elements.rows(); ++seed) {
    if (!rigid[seed] || label[seed] >= 0) continue;
    std::deque<int> queue{seed};
    label[seed] = seed;
    while (!queue.empty()) {
      const int e = queue.front();
      queue.pop_front();
      for (int a = 0; a < elements.cols(); ++a)
        for (int neighbour : elements_of_node[elements(e, a)])
          if (label[neighbour] < 0) {
            label[neighbour] = seed;
            queue.push_back(neighbour);
          }
    }
  }
  return label;
}

// The same labelling from a snapshot: smallest element of each body.
std::vector<int> componentsOfSnapshot(const LayerSnapshot& layer) {
  std::vector<int> label(layer.element_body.size(), -1);
  for (const RigidGroup& body : layer.bodies) {
    const int smallest = *std::min_element(body.elements.begin(), body.elements.end());
    for (int e : body.elements) label[e] = smallest;
  }
  return label;
}

void expectSnapshotMatchesBruteForce(const Mesh& mesh, const std::vector<int>& order,
                                     const std::vector<char>& forced_elastic, const LayerSnapshot& layer) {
  const int n = mesh.numElements();
  std::vector<char> rigid(n, 0);
  for (int k = 0; k < layer.slots; ++k)
    if (forced_elastic.empty() || !forced_elastic[order[k]]) rigid[order[k]] = 1;
  const std::vector<int> expected = componentsByBreadthFirstSearch(mesh.elements, mesh.numNodes(), rigid);
  EXPECT_EQ(componentsOfSnapshot(layer), expected) << "layer " << layer.rigid_percentage << "%";
  std::set<int> distinct(expected.begin(), expected.end());
  distinct.erase(-1);
  EXPECT_EQ(layer.bodies.size(), distinct.size());
  for (int e = 0; e < n; ++e) EXPECT_EQ(layer.element_body[e] >= 0, rigid[e] != 0);

  // Vertices: the union of the body's elements' nodes; boundary: those in an elastic element.
  std::vector<char> in_elastic(mesh.numNodes(), 0);
  for (int e = 0; e < n; ++e)
    if (!rigid[e])
      for (int a = 0; a < mesh.elements.cols(); ++a) in_elastic[mesh.elements(e, a)] = 1;
  for (const RigidGroup& body : layer.bodies) {
    std::set<int> nodes;
    for (int e : body.elements)
      for (int a = 0; a < mesh.elements.cols(); ++a) nodes.insert(mesh.elements(e, a));
    EXPECT_EQ(body.vertices, std::vector<int>(nodes.begin(), nodes.end()));
    std::vector<int> boundary;
    for (int i = 0; i < static_cast<int>(body.vertices.size()); ++i)
      if (in_elastic[body.vertices[i]]) boundary.push_back(i);
    EXPECT_EQ(body.boundary_vertices, boundary);
  }
}

class UnionFindAgainstBreadthFirstSearch : public ::testing::TestWithParam<int> {};

TEST_P(UnionFindAgainstBreadthFirstSearch, RandomSubsetsOfRealMeshes) {
  const Mesh mesh = GetParam() == 0 ? smallTetBox() : smallTriangleMesh();
  const std::vector<double> percentages{90.0, 70.0, 50.0, 35.0, 20.0, 10.0, 5.0, 0.0};
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    const std::vector<int> order = orderRandomly(mesh.numElements(), seed);
    const LayerHierarchy hierarchy = buildLayerHierarchy(mesh.elements, mesh.numNodes(), order, percentages, {});
    ASSERT_EQ(hierarchy.layers.size(), percentages.size());
    for (const LayerSnapshot& layer : hierarchy.layers) expectSnapshotMatchesBruteForce(mesh, order, {}, layer);
  }
}

TEST_P(UnionFindAgainstBreadthFirstSearch, WithForcedElasticElements) {
  const Mesh mesh = GetParam() == 0 ? smallTetBox() : smallTriangleMesh();
  const std::vector<char> forced = elementsTouchingNodes(mesh.elements, mesh.numNodes(), mesh.node_sets.at("x-min"));
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    const std::vector<int> order = orderRandomly(mesh.numElements(), seed);
    const LayerHierarchy hierarchy =
        buildLayerHierarchy(mesh.elements, mesh.numNodes(), order, {100.0, 60.0, 30.0, 0.0}, forced);
    for (const LayerSnapshot& layer : hierarchy.layers) expectSnapshotMatchesBruteForce(mesh, order, forced, layer);
  }
}

INSTANTIATE_TEST_SUITE_P(Meshes, UnionFindAgainstBreadthFirstSearch, ::testing::Values(0, 1),
                         [](const auto& info) { return info.param == 0 ? std::string("tet_box") : "triangles_2d"; });

// Three triangles A = (0 1 2), B = (3 4 5) and C = (2 3 6), inserted in that order: C touches
// the sets of A and B. Algorithm 1 line 10 as printed (u[C] <- s for each touched set) would
// leave C under B and A alone; the real union makes one body.
TEST(MultiLayerUnionFind, ElementTouchingTwoSetsMergesBoth) {
  Connectivity elements(3, 3);
  elements << 0, 1, 2, 3, 4, 5, 2, 3, 6;
  const std::vector<int> order{0, 1, 2};
  // 2 of 3 elements: 66.67 %; all: 100 %.
  const LayerHierarchy hierarchy = buildLayerHierarchy(elements, 7, order, {100.0, 200.0 / 3.0, 0.0}, {});
  ASSERT_EQ(hierarchy.layers.size(), 3u);
  EXPECT_EQ(hierarchy.layers[1].slots, 2);
  EXPECT_EQ(hierarchy.layers[1].bodies.size(), 2u);  // A and B apart
  ASSERT_EQ(hierarchy.layers[0].bodies.size(), 1u);  // C joins them
  EXPECT_EQ(hierarchy.layers[0].bodies[0].elements, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(hierarchy.layers[0].bodies[0].vertices, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(hierarchy.layers[0].bodies[0].boundary_vertices.empty());  // nothing elastic left
  EXPECT_TRUE(hierarchy.layers[2].bodies.empty());
  EXPECT_EQ(hierarchy.layers[2].element_body, (std::vector<int>{-1, -1, -1}));
  // A and B share no vertex with an elastic element but C's: vertices 2 and 3 are boundary.
  const RigidGroup& a = hierarchy.layers[1].bodies[0];
  EXPECT_EQ(a.vertices, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(a.boundary_vertices, (std::vector<int>{2}));
}

// One shared vertex is enough to merge (§3.3.2: no hinges in the layers).
TEST(MultiLayerUnionFind, OneSharedVertexMerges) {
  Connectivity elements(2, 3);
  elements << 0, 1, 2, 2, 3, 4;
  const LayerHierarchy hierarchy = buildLayerHierarchy(elements, 5, {0, 1}, {100.0}, {});
  EXPECT_EQ(hierarchy.layers[0].bodies.size(), 1u);
}

TEST(MultiLayerLayers, CountsWithForcedElasticElements) {
  const Mesh mesh = smallTriangleMesh();
  const int n = mesh.numElements();
  const std::vector<char> forced = elementsTouchingNodes(mesh.elements, mesh.numNodes(), mesh.node_sets.at("x-min"));
  const int forced_count = static_cast<int>(std::count(forced.begin(), forced.end(), 1));
  ASSERT_GT(forced_count, 0);
  // Index order: the x-min elements come wherever the mesher put them; count them per prefix.
  std::vector<int> order(n);
  for (int e = 0; e < n; ++e) order[e] = e;
  const std::vector<double> percentages{0.0, 25.0, 75.0, 50.0, 25.0, 100.0};  // unsorted, a duplicate
  const LayerHierarchy hierarchy = buildLayerHierarchy(mesh.elements, mesh.numNodes(), order, percentages, forced);
  ASSERT_EQ(hierarchy.layers.size(), 5u);
  const std::vector<double> expected_percentages{100.0, 75.0, 50.0, 25.0, 0.0};
  for (std::size_t l = 0; l < hierarchy.layers.size(); ++l) {
    const LayerSnapshot& layer = hierarchy.layers[l];
    EXPECT_EQ(layer.rigid_percentage, expected_percentages[l]);
    const int slots = static_cast<int>(expected_percentages[l] * n / 100.0);
    EXPECT_EQ(layer.slots, slots);
    int forced_in_slots = 0;
    for (int k = 0; k < slots; ++k) forced_in_slots += forced[order[k]];
    EXPECT_EQ(layer.rigid_elements, slots - forced_in_slots);
    int rigid = 0;
    for (int e = 0; e < n; ++e) {
      if (forced[e]) {
        EXPECT_EQ(layer.element_body[e], -1) << "forced-elastic element " << e << " made rigid";
      }
      rigid += layer.element_body[e] >= 0;
    }
    EXPECT_EQ(rigid, layer.rigid_elements);
    // Nested: every element rigid in a finer layer is rigid in the coarser one.
    if (l > 0)
      for (int e = 0; e < n; ++e)
        if (layer.element_body[e] >= 0) {
          EXPECT_GE(hierarchy.layers[l - 1].element_body[e], 0);
        }
  }
  EXPECT_EQ(hierarchy.layers[0].rigid_elements, n - forced_count);
  EXPECT_TRUE(hierarchy.layers.back().bodies.empty());
}

TEST(MultiLayerLayers, SlotsAndPercentages) {
  EXPECT_EQ(layerSlots(100.0 / 3.0, 3), 1);
  EXPECT_EQ(layerSlots(50.0, 7), 3);
  EXPECT_EQ(layerSlots(100.0, 7), 7);
  EXPECT_EQ(layerSlots(0.0, 7), 0);
  EXPECT_THROW(coarseToFinePercentages({}), std::invalid_argument);
  EXPECT_THROW(coarseToFinePercentages({101.0}), std::invalid_argument);
  EXPECT_THROW(coarseToFinePercentages({-1.0}), std::invalid_argument);
  EXPECT_EQ(coarseToFinePercentages({0.0, 40.0, 75.0, 40.0}), (std::vector<double>{75.0, 40.0, 0.0}));
}

TEST(MultiLayerOrdering, StrainRateAscendingAndStable) {
  const double h = 0.01;
  const Mat3 identity = Mat3::Identity();
  // Element e is stretched by s_e along x between the steps: E11 changes by about s_e.
  const std::vector<double> stretch{0.3, 0.0, 0.1, 0.0, 0.2, 0.1};
  std::vector<Mat3> previous(stretch.size(), identity), now(stretch.size(), identity);
  for (std::size_t e = 0; e < stretch.size(); ++e) now[e](0, 0) = 1.0 + stretch[e];
  const std::vector<double> rates = strainRatesFromDeformationGradients(now, previous, h);
  for (std::size_t e = 0; e < stretch.size(); ++e) {
    const double delta_e11 = 0.5 * ((1.0 + stretch[e]) * (1.0 + stretch[e]) - 1.0);
    EXPECT_NEAR(rates[e], delta_e11 * delta_e11 / (h * h), 1e-9 * (1.0 + rates[e]));
  }
  // Lowest first; equal rates keep index order (1 before 3, 2 before 5).
  EXPECT_EQ(orderByStrainRate(rates), (std::vector<int>{1, 3, 2, 5, 4, 0}));
  // First step: no previous strains, all rates 0, index order.
  const std::vector<double> first = strainRatesFromDeformationGradients(now, {}, h);
  EXPECT_EQ(first, std::vector<double>(stretch.size(), 0.0));
  EXPECT_EQ(orderByStrainRate(first), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  // A rigid rotation changes F but not E: rate 0.
  const Mat3 rotation = Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()).toRotationMatrix();
  EXPECT_NEAR(strainRate(greenStrain(rotation * now[0]), greenStrain(now[0]), h), 0.0, 1e-20);
  EXPECT_THROW(strainRatesFromGreenStrains(now, {identity}, h), std::invalid_argument);
}

TEST(MultiLayerOrdering, StrainRateLayersTakeTheSlowestElements) {
  Connectivity elements(4, 3);
  elements << 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11;  // four separate triangles
  LayerRequest request;
  request.ordering = ElementOrdering::kStrainRate;
  request.strain_rates = {4.0, 1.0, 3.0, 2.0};
  request.rigid_percentages = {50.0, 0.0};
  const LayerHierarchy hierarchy = buildLayers(elements, 12, request);
  EXPECT_EQ(hierarchy.order, (std::vector<int>{1, 3, 2, 0}));
  EXPECT_EQ(hierarchy.layers[0].element_body, (std::vector<int>{-1, 0, -1, 1}));
  EXPECT_GE(hierarchy.times.ordering_seconds, 0.0);
  EXPECT_GE(hierarchy.times.union_find_seconds, 0.0);
  request.strain_rates.pop_back();
  EXPECT_THROW(buildLayers(elements, 12, request), std::invalid_argument);
}

TEST(MultiLayerOrdering, RandomIsASeededPermutation) {
  const std::vector<int> a = orderRandomly(200, 7);
  const std::vector<int> b = orderRandomly(200, 7);
  const std::vector<int> c = orderRandomly(200, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::vector<int> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int e = 0; e < 200; ++e) EXPECT_EQ(sorted[e], e);
  std::vector<int> identity(200);
  for (int e = 0; e < 200; ++e) identity[e] = e;
  EXPECT_NE(a, identity);
}

TEST(MultiLayerOrdering, StripesByCentroid) {
  const Mesh mesh = smallTriangleMesh();  // x in [-1.5, 1.5], y in [-2.5, -1.5]
  const std::vector<Vec3> centroids = elementCentroids(mesh.elements, mesh.restPositionsFlat());
  for (const StripePattern& stripes : {verticalStripesOfTheCantilever(), horizontalStripesOfTheCantilever()}) {
    const std::vector<int> order = orderByStripes(centroids, stripes);
    const double fraction = stripeFraction(centroids, stripes);
    EXPECT_GT(fraction, 0.2);
    EXPECT_LT(fraction, 0.8);
    const int in_stripes = static_cast<int>(std::lround(fraction * mesh.numElements()));
    double lowest = 1e300;
    for (const Vec3& c : centroids) lowest = std::min(lowest, c[stripes.axis]);
    for (int k = 0; k < mesh.numElements(); ++k) {
      const double coordinate = centroids[order[k]][stripes.axis];
      const int band = static_cast<int>(std::floor((coordinate - lowest) / stripes.band_width));
      EXPECT_EQ(band % 2 == 0, k < in_stripes) << "element " << order[k] << " at " << coordinate;
      if (k > 0 && (k < in_stripes) == (k - 1 < in_stripes)) {
        EXPECT_LT(order[k - 1], order[k]);  // index order within each group
      }
    }
    // Layers [p, 0] with p = the stripes' share rigidify exactly the stripes.
    LayerRequest request;
    request.ordering = ElementOrdering::kStripes;
    request.centroids = centroids;
    request.stripes = stripes;
    request.rigid_percentages = {100.0 * fraction, 0.0};
    const LayerHierarchy hierarchy = buildLayers(mesh.elements, mesh.numNodes(), request);
    EXPECT_EQ(hierarchy.layers[0].rigid_elements, in_stripes);
  }
}

}  // namespace
}  // namespace pbdlab::ml_xpbd
