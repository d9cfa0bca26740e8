#include "meshes/node_sets.hpp"

#include <numeric>
#include <string>
#include <vector>

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

}  // namespace pbdlab
