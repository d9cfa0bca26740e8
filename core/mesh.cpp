#include "core/mesh.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <Eigen/Geometry>

#include "core/input_error.hpp"

namespace pbdlab {

Positions Mesh::restPositionsFlat() const {
  // MatX3 is row-major, so its storage already is [x0 y0 z0 x1 ...].
  return Eigen::Map<const Positions>(rest_positions.data(), 3 * rest_positions.rows());
}

double signedTetVolume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  return (b - a).dot((c - a).cross(d - a)) / 6.0;
}

namespace {

std::string elementField(int e) { return "element " + std::to_string(e); }

std::string formatNumber(double v) {
  std::ostringstream out;
  out.precision(6);
  out << v;
  return out.str();
}

// The one check behind validateMesh and restVolumes: returns the positive rest volume of
// every element, or throws InputError naming mesh.source and the first bad node/element.
std::vector<double> checkedRestVolumes(const Mesh& mesh, double rel_tol) {
  const int per_element = nodesPerElement(mesh.element_type);
  if (mesh.elements.rows() > 0 && mesh.elements.cols() != per_element) {
    throw InputError(mesh.source, "elements",
                     "an element of type " + elementTypeName(mesh.element_type) + " needs " +
                         std::to_string(per_element) + " nodes, the connectivity has " +
                         std::to_string(mesh.elements.cols()) + " columns");
  }
  const int n_nodes = mesh.numNodes();
  for (int i = 0; i < n_nodes; ++i) {
    if (!mesh.rest_positions.row(i).allFinite()) {
      throw InputError(mesh.source, "node " + std::to_string(i),
                       "non-finite rest coordinate (" + formatNumber(mesh.rest_positions(i, 0)) +
                           ", " + formatNumber(mesh.rest_positions(i, 1)) + ", " +
                           formatNumber(mesh.rest_positions(i, 2)) + ")");
    }
  }
  const int n_elements = mesh.numElements();
  std::vector<double> volumes(static_cast<std::size_t>(n_elements));
  for (int e = 0; e < n_elements; ++e) {
    for (int k = 0; k < per_element; ++k) {
      const int node = mesh.elements(e, k);
      if (node < 0 || node >= n_nodes) {
        throw InputError(mesh.source, elementField(e),
                         "node index " + std::to_string(node) + " out of range [0, " +
                             std::to_string(n_nodes) + ")");
      }
    }
    const Vec3 p[4] = {mesh.restPosition(mesh.elements(e, 0)), mesh.restPosition(mesh.elements(e, 1)),
                       mesh.restPosition(mesh.elements(e, 2)), mesh.restPosition(mesh.elements(e, 3))};
    const double volume = signedTetVolume(p[0], p[1], p[2], p[3]);
    double longest_edge = 0.0;
    for (int a = 0; a < 4; ++a) {
      for (int b = a + 1; b < 4; ++b) longest_edge = std::max(longest_edge, (p[a] - p[b]).norm());
    }
    if (volume < 0.0) {
      throw InputError(mesh.source, elementField(e),
                       "inverted rest element (signed volume " + formatNumber(volume) +
                           " < 0; swap two of its nodes)");
    }
    const double threshold = rel_tol * longest_edge * longest_edge * longest_edge;
    if (!(volume > threshold)) {
      throw InputError(mesh.source, elementField(e),
                       "degenerate rest element (volume " + formatNumber(volume) + " <= " +
                           formatNumber(rel_tol) + " * longest_edge^3 = " +
                           formatNumber(threshold) + ")");
    }
    volumes[static_cast<std::size_t>(e)] = volume;
  }
  return volumes;
}

}  // namespace

std::vector<double> restVolumes(const Mesh& mesh) { return checkedRestVolumes(mesh, 1e-10); }

void validateMesh(const Mesh& mesh, double rel_tol) { checkedRestVolumes(mesh, rel_tol); }

void addBoundingBoxNodeSets(Mesh& mesh, double tol) {
  static const char* const kAxis[3] = {"x", "y", "z"};
  const int n = mesh.numNodes();
  std::vector<int> lo[3], hi[3];
  if (n > 0) {
    const Vec3 bmin = mesh.rest_positions.colwise().minCoeff().transpose();
    const Vec3 bmax = mesh.rest_positions.colwise().maxCoeff().transpose();
    const double eps = tol * (bmax - bmin).norm();
    for (int i = 0; i < n; ++i) {
      for (int d = 0; d < 3; ++d) {
        const double v = mesh.rest_positions(i, d);
        if (v <= bmin[d] + eps) lo[d].push_back(i);
        if (v >= bmax[d] - eps) hi[d].push_back(i);
      }
    }
  }
  for (int d = 0; d < 3; ++d) {
    mesh.node_sets[std::string(kAxis[d]) + "-min"] = std::move(lo[d]);
    mesh.node_sets[std::string(kAxis[d]) + "-max"] = std::move(hi[d]);
  }
}

VecX lumpedNodeMasses(const Mesh& mesh, const std::vector<double>& element_densities) {
  if (static_cast<int>(element_densities.size()) != mesh.numElements()) {
    throw std::invalid_argument("lumpedNodeMasses: " + std::to_string(element_densities.size()) +
                                " densities for " + std::to_string(mesh.numElements()) +
                                " elements");
  }
  const std::vector<double> volumes = restVolumes(mesh);
  const int per_element = nodesPerElement(mesh.element_type);
  VecX masses = VecX::Zero(mesh.numNodes());
  for (int e = 0; e < mesh.numElements(); ++e) {
    const double share = element_densities[static_cast<std::size_t>(e)] *
                         volumes[static_cast<std::size_t>(e)] / per_element;
    for (int k = 0; k < per_element; ++k) masses[mesh.elements(e, k)] += share;
  }
  return masses;
}

MeshSummary summarize(const Mesh& mesh) {
  MeshSummary s;
  s.nodes = mesh.numNodes();
  s.elements = mesh.numElements();
  if (s.nodes > 0) {
    s.bbox_min = mesh.rest_positions.colwise().minCoeff().transpose();
    s.bbox_max = mesh.rest_positions.colwise().maxCoeff().transpose();
  }
  const std::vector<double> volumes = restVolumes(mesh);
  if (!volumes.empty()) {
    s.min_volume = *std::min_element(volumes.begin(), volumes.end());
    s.max_volume = *std::max_element(volumes.begin(), volumes.end());
    for (double v : volumes) s.total_volume += v;
  }
  return s;
}

}  // namespace pbdlab
