#include "meshes/node_sets.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/fem/reference_element.hpp"

namespace pbdlab {

void addFaceNodeSets(Mesh& mesh) {
  addBoundingBoxNodeSets(mesh);
  if (mesh.numNodes() > 0) {
    const Vec3 extent = (mesh.rest_positions.colwise().maxCoeff() - mesh.rest_positions.colwise().minCoeff()).transpose();
    static const char* const kAxis[3] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d) {
      if (extent[d] > 1e-12 * extent.norm()) continue;
      mesh.node_sets.erase(std::string(kAxis[d]) + "-min");
      mesh.node_sets.erase(std::string(kAxis[d]) + "-max");
    }
  }
  std::vector<int> all(static_cast<std::size_t>(mesh.numNodes()));
  std::iota(all.begin(), all.end(), 0);
  mesh.node_sets["all"] = std::move(all);
}

void setSurfaceNodeSet(Mesh& mesh) {
  const ElementType type = mesh.element_type;
  if (type != ElementType::kTet4 && type != ElementType::kTet10 && type != ElementType::kTet20)
    throw std::invalid_argument("setSurfaceNodeSet: tetrahedral meshes only, got " + elementTypeName(type));
  // For each corner k, the element nodes on the face opposite it: barycentric coordinate k is 0
  // (l_0 = 1 - r_0 - r_1 - r_2, l_k = r_{k-1}; the reference coordinates are multiples of 1/3).
  const std::vector<Vec3>& reference = ReferenceElement::of(type).nodeCoordinates();
  std::array<std::vector<int>, 4> on_face;
  for (int i = 0; i < static_cast<int>(reference.size()); ++i) {
    const Vec3& r = reference[static_cast<std::size_t>(i)];
    const double l[4] = {1.0 - r.sum(), r[0], r[1], r[2]};
    for (int k = 0; k < 4; ++k)
      if (std::abs(l[k]) < 1e-9) on_face[static_cast<std::size_t>(k)].push_back(i);
  }
  // Faces by their sorted corners: how many elements share each.
  std::map<std::array<int, 3>, int> count;
  const auto faceKey = [&](int e, int opposite) {
    std::array<int, 3> key{};
    int n = 0;
    for (int c = 0; c < 4; ++c)
      if (c != opposite) key[static_cast<std::size_t>(n++)] = mesh.elements(e, c);
    std::sort(key.begin(), key.end());
    return key;
  };
  for (int e = 0; e < mesh.numElements(); ++e)
    for (int k = 0; k < 4; ++k) ++count[faceKey(e, k)];
  std::vector<char> member(static_cast<std::size_t>(mesh.numNodes()), 0);
  for (int e = 0; e < mesh.numElements(); ++e)
    for (int k = 0; k < 4; ++k)
      if (count[faceKey(e, k)] == 1)
        for (int i : on_face[static_cast<std::size_t>(k)]) member[static_cast<std::size_t>(mesh.elements(e, i))] = 1;
  std::vector<int> surface;
  for (int n = 0; n < mesh.numNodes(); ++n)
    if (member[static_cast<std::size_t>(n)]) surface.push_back(n);
  mesh.node_sets["surface"] = std::move(surface);
}

}  // namespace pbdlab
