#include "solvers/ml_xpbd/layers.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

namespace pbdlab::ml_xpbd {

Mat3 greenStrain(const Mat3& deformation_gradient) {
  return 0.5 * (deformation_gradient.transpose() * deformation_gradient - Mat3::Identity());
}

double strainRate(const Mat3& green_strain_now, const Mat3& green_strain_previous, double h) {
  return (green_strain_now - green_strain_previous).squaredNorm() / (h * h);
}

std::vector<double> strainRatesFromGreenStrains(const std::vector<Mat3>& now, const std::vector<Mat3>& previous,
                                                double h) {
  std::vector<double> rates(now.size(), 0.0);
  if (previous.empty()) return rates;  // first step: no x^{t-1}
  if (previous.size() != now.size())
    throw std::invalid_argument("strainRates: " + std::to_string(now.size()) + " current and " +
                                std::to_string(previous.size()) + " previous strains");
  for (std::size_t e = 0; e < now.size(); ++e) rates[e] = strainRate(now[e], previous[e], h);
  return rates;
}

std::vector<double> strainRatesFromDeformationGradients(const std::vector<Mat3>& now,
                                                        const std::vector<Mat3>& previous, double h) {
  std::vector<Mat3> strains_now(now.size()), strains_previous(previous.size());
  for (std::size_t e = 0; e < now.size(); ++e) strains_now[e] = greenStrain(now[e]);
  for (std::size_t e = 0; e < previous.size(); ++e) strains_previous[e] = greenStrain(previous[e]);
  return strainRatesFromGreenStrains(strains_now, strains_previous, h);
}

namespace {
// The element indices sorted by `values` (descending or ascending), ties in index order.
std::vector<int> stableOrderBy(const std::vector<double>& values, bool descending) {
  std::vector<int> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return descending ? values[a] > values[b] : values[a] < values[b]; });
  return order;
}
}  // namespace

std::vector<int> orderByStrainRate(const std::vector<double>& strain_rates) {
  return stableOrderBy(strain_rates, false);
}

std::vector<int> orderRandomly(int num_elements, std::uint32_t seed) {
  std::vector<int> order(num_elements);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(seed);
  // Fisher-Yates with j = floor(u (i + 1) / 2^32): mt19937's stream is fixed by the standard,
  // the distributions' algorithms are not; the bias (i + 1) / 2^32 is negligible here.
  for (int i = num_elements - 1; i > 0; --i) {
    const auto j = static_cast<int>((static_cast<std::uint64_t>(rng()) * static_cast<std::uint64_t>(i + 1)) >> 32);
    std::swap(order[i], order[j]);
  }
  return order;
}

StripePattern verticalStripesOfTheCantilever() { return {1, 0.25}; }
StripePattern horizontalStripesOfTheCantilever() { return {0, 0.5}; }

bool isInStripe(const StripePattern& stripes, double coordinate, double min_coordinate) {
  const auto band = static_cast<long>(std::floor((coordinate - min_coordinate) / stripes.band_width));
  return band % 2 == 0;
}

namespace {
double minCoordinate(const std::vector<Vec3>& centroids, int axis) {
  double lowest = std::numeric_limits<double>::infinity();
  for (const Vec3& c : centroids) lowest = std::min(lowest, c[axis]);
  return lowest;
}

void checkStripes(const StripePattern& stripes) {
  if (stripes.axis < 0 || stripes.axis > 2 || !(stripes.band_width > 0.0))
    throw std::invalid_argument("stripes: axis must be 0, 1 or 2 and the band width positive");
}
}  // namespace

std::vector<int> orderByStripes(const std::vector<Vec3>& centroids, const StripePattern& stripes) {
  checkStripes(stripes);
  const double lowest = minCoordinate(centroids, stripes.axis);
  std::vector<int> order;
  order.reserve(centroids.size());
  for (int e = 0; e < static_cast<int>(centroids.size()); ++e)
    if (isInStripe(stripes, centroids[e][stripes.axis], lowest)) order.push_back(e);
  for (int e = 0; e < static_cast<int>(centroids.size()); ++e)
    if (!isInStripe(stripes, centroids[e][stripes.axis], lowest)) order.push_back(e);
  return order;
}

double stripeFraction(const std::vector<Vec3>& centroids, const StripePattern& stripes) {
  checkStripes(stripes);
  if (centroids.empty()) return 0.0;
  const double lowest = minCoordinate(centroids, stripes.axis);
  int in_stripes = 0;
  for (const Vec3& c : centroids) in_stripes += isInStripe(stripes, c[stripes.axis], lowest) ? 1 : 0;
  return static_cast<double>(in_stripes) / static_cast<double>(centroids.size());
}

namespace {
template <int n>
double largestEigenvalueOfMassNormalized(const Eigen::Matrix<double, n, n>& stiffness,
                                         const Eigen::Matrix<double, n, 1>& dof_masses) {
  if (!(dof_masses.minCoeff() > 0.0)) throw std::invalid_argument("stretch eigenvalue: masses must be positive");
  const Eigen::Matrix<double, n, 1> scale = dof_masses.cwiseSqrt().cwiseInverse();  // M^-1/2
  const Eigen::Matrix<double, n, n> normalized = scale.asDiagonal() * stiffness * scale.asDiagonal();
  // Only the lower triangle is read: symmetric by construction of a Hessian.
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, n, n>> solver(normalized, Eigen::EigenvaluesOnly);
  return solver.eigenvalues()[n - 1];  // ascending
}
}  // namespace

double largestMassNormalizedEigenvalue(const Eigen::Matrix<double, 6, 6>& stiffness,
                                       const Eigen::Matrix<double, 6, 1>& dof_masses) {
  return largestEigenvalueOfMassNormalized<6>(stiffness, dof_masses);
}

double largestMassNormalizedEigenvalue(const Mat12& stiffness, const Vec12& dof_masses) {
  return largestEigenvalueOfMassNormalized<12>(stiffness, dof_masses);
}

std::vector<int> orderByStretch(const std::vector<double>& stretch_eigenvalues) {
  return stableOrderBy(stretch_eigenvalues, true);
}

std::vector<Vec3> elementCentroids(const Connectivity& elements, const Positions& x) {
  std::vector<Vec3> centroids(elements.rows(), Vec3::Zero());
  for (int e = 0; e < elements.rows(); ++e) {
    for (int a = 0; a < elements.cols(); ++a) centroids[e] += x.segment<3>(3 * elements(e, a));
    centroids[e] /= static_cast<double>(elements.cols());
  }
  return centroids;
}

std::vector<char> elementsTouchingNodes(const Connectivity& elements, int num_nodes,
                                        const std::vector<int>& dirichlet_nodes) {
  std::vector<char> is_dirichlet(num_nodes, 0);
  for (int node : dirichlet_nodes) is_dirichlet.at(node) = 1;
  std::vector<char> touching(elements.rows(), 0);
  for (int e = 0; e < elements.rows(); ++e)
    for (int a = 0; a < elements.cols(); ++a)
      if (is_dirichlet[elements(e, a)]) touching[e] = 1;
  return touching;
}

std::vector<double> coarseToFinePercentages(const std::vector<double>& rigid_percentages) {
  if (rigid_percentages.empty()) throw std::invalid_argument("layers: no rigid percentage given");
  for (double p : rigid_percentages)
    if (!(p >= 0.0 && p <= 100.0))
      throw std::invalid_argument("layers: rigid percentage " + std::to_string(p) + " is not in [0, 100]");
  std::vector<double> sorted = rigid_percentages;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  return sorted;
}

int layerSlots(double rigid_percentage, int num_elements) {
  // A relative 1e-12 guards p = 100/3 against 0.999999... of an element.
  const double exact = rigid_percentage * num_elements / 100.0;
  return std::min(num_elements, static_cast<int>(std::floor(exact * (1.0 + 1e-12))));
}

namespace {

// Disjoint sets over elements: parent = -1 until inserted; union by size, path compression.
class ElementUnionFind {
 public:
  explicit ElementUnionFind(int num_elements) : parent_(num_elements, -1), size_(num_elements, 0) {}

  void insert(int e) {
    parent_[e] = e;
    size_[e] = 1;
  }
  // -1 for an element not inserted (Alg. 1 line 7: "find returns -1 when the input has no root").
  int find(int e) {
    if (e < 0 || parent_[e] < 0) return -1;
    int root = e;
    while (parent_[root] != root) root = parent_[root];
    while (parent_[e] != root) {  // path compression
      const int next = parent_[e];
      parent_[e] = root;
      e = next;
    }
    return root;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (size_[a] < size_[b]) std::swap(a, b);
    parent_[b] = a;
    size_[a] += size_[b];
  }

 private:
  std::vector<int> parent_;
  std::vector<int> size_;
};

}  // namespace

LayerHierarchy buildLayerHierarchy(const Connectivity& elements, int num_nodes, const std::vector<int>& order,
                                   const std::vector<double>& rigid_percentages,
                                   const std::vector<char>& forced_elastic) {
  const auto start = std::chrono::steady_clock::now();
  const int num_elements = static_cast<int>(elements.rows());
  if (static_cast<int>(order.size()) != num_elements)
    throw std::invalid_argument("layers: the order has " + std::to_string(order.size()) + " entries for " +
                                std::to_string(num_elements) + " elements");
  if (!forced_elastic.empty() && static_cast<int>(forced_elastic.size()) != num_elements)
    throw std::invalid_argument("layers: forced_elastic needs one flag per element");
  const std::vector<double> coarse_to_fine = coarseToFinePercentages(rigid_percentages);

  LayerHierarchy hierarchy;
  hierarchy.order = order;
  hierarchy.layers.resize(coarse_to_fine.size());

  ElementUnionFind sets(num_elements);
  std::vector<int> claimed_by(num_nodes, -1);  // Alg. 1 line 2: last element to claim each vertex
  std::vector<int> rigid_in_order;             // inserted elements, in insertion order
  rigid_in_order.reserve(num_elements);
  // Scratch for the snapshots: root -> body, vertex -> last body stamp, vertex -> elastic flag.
  std::vector<int> body_of_root(num_elements, -1);
  std::vector<int> vertex_stamp(num_nodes, -1);
  std::vector<char> vertex_in_elastic(num_nodes, 0);

  int inserted_up_to = 0;  // slots of the order consumed so far
  // Fine -> coarse: ascending percentages, each layer continues the same disjoint sets.
  for (int layer = static_cast<int>(coarse_to_fine.size()) - 1; layer >= 0; --layer) {
    LayerSnapshot& snapshot = hierarchy.layers[layer];
    snapshot.rigid_percentage = coarse_to_fine[layer];
    snapshot.slots = layerSlots(snapshot.rigid_percentage, num_elements);
    for (; inserted_up_to < snapshot.slots; ++inserted_up_to) {
      const int e = order[inserted_up_to];
      if (!forced_elastic.empty() && forced_elastic[e]) continue;  // keeps its slot, never rigid
      sets.insert(e);
      rigid_in_order.push_back(e);
      for (int a = 0; a < elements.cols(); ++a) {
        const int v = elements(e, a);
        // A real union with every set the element touches (Alg. 1 line 10 as printed keeps
        // only the last one).
        if (claimed_by[v] != -1) sets.unite(e, claimed_by[v]);
        claimed_by[v] = e;
      }
    }
    snapshot.rigid_elements = static_cast<int>(rigid_in_order.size());

    // Snapshot (Alg. 1 line 14): bodies numbered by first appearance in insertion order.
    snapshot.element_body.assign(num_elements, -1);
    for (int e : rigid_in_order) {
      const int root = sets.find(e);
      if (body_of_root[root] < 0) {
        body_of_root[root] = static_cast<int>(snapshot.bodies.size());
        snapshot.bodies.emplace_back();
      }
      snapshot.element_body[e] = body_of_root[root];
      snapshot.bodies[body_of_root[root]].elements.push_back(e);
    }
    for (int e : rigid_in_order) body_of_root[sets.find(e)] = -1;  // reset the scratch

    std::fill(vertex_in_elastic.begin(), vertex_in_elastic.end(), 0);
    for (int e = 0; e < num_elements; ++e)
      if (snapshot.element_body[e] < 0)
        for (int a = 0; a < elements.cols(); ++a) vertex_in_elastic[elements(e, a)] = 1;
    for (int b = 0; b < static_cast<int>(snapshot.bodies.size()); ++b) {
      RigidGroup& body = snapshot.bodies[b];
      for (int e : body.elements)
        for (int a = 0; a < elements.cols(); ++a) {
          const int v = elements(e, a);
          if (vertex_stamp[v] != b) {
            vertex_stamp[v] = b;
            body.vertices.push_back(v);
          }
        }
      std::sort(body.vertices.begin(), body.vertices.end());
      for (int i = 0; i < static_cast<int>(body.vertices.size()); ++i)
        if (vertex_in_elastic[body.vertices[i]]) body.boundary_vertices.push_back(i);
    }
    // Stamps are body indices, reused by the next layer: clear them.
    for (const RigidGroup& body : snapshot.bodies)
      for (int v : body.vertices) vertex_stamp[v] = -1;
  }
  hierarchy.times.union_find_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return hierarchy;
}

LayerHierarchy buildLayers(const Connectivity& elements, int num_nodes, const LayerRequest& request) {
  const int num_elements = static_cast<int>(elements.rows());
  const auto start = std::chrono::steady_clock::now();
  std::vector<int> order;
  switch (request.ordering) {
    case ElementOrdering::kStrainRate:
      if (static_cast<int>(request.strain_rates.size()) != num_elements)
        throw std::invalid_argument("layers: strain-rate ordering needs one rate per element");
      order = orderByStrainRate(request.strain_rates);
      break;
    case ElementOrdering::kRandom:
      order = orderRandomly(num_elements, request.seed);
      break;
    case ElementOrdering::kStripes:
      if (static_cast<int>(request.centroids.size()) != num_elements)
        throw std::invalid_argument("layers: stripe ordering needs one centroid per element");
      order = orderByStripes(request.centroids, request.stripes);
      break;
    case ElementOrdering::kStretch:
      if (static_cast<int>(request.stretch_eigenvalues.size()) != num_elements)
        throw std::invalid_argument("layers: stretch ordering needs one eigenvalue per element");
      order = orderByStretch(request.stretch_eigenvalues);
      break;
  }
  const double ordering_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  LayerHierarchy hierarchy =
      buildLayerHierarchy(elements, num_nodes, order, request.rigid_percentages, request.forced_elastic);
  hierarchy.times.ordering_seconds = ordering_seconds;
  return hierarchy;
}

}  // namespace pbdlab::ml_xpbd
