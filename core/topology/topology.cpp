#include "core/topology/topology.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "core/fem/reference_element.hpp"

namespace pbdlab {

std::vector<std::array<int, 3>> surfaceTriangles(const Mesh& mesh) {
  const ReferenceElement& reference = ReferenceElement::of(mesh.element_type);
  std::vector<std::array<int, 3>> triangles;
  if (reference.dimension() == 2) {
    for (int e = 0; e < mesh.numElements(); ++e) triangles.push_back({mesh.elements(e, 0), mesh.elements(e, 1), mesh.elements(e, 2)});
    return triangles;
  }
  // A face is on the boundary when its sorted corner list occurs once. Faces of the reference
  // element are cycles oriented outwards (ReferenceElement::cornerFaces).
  std::map<std::vector<int>, std::pair<int, std::vector<int>>> faces;  // sorted -> (count, oriented)
  for (int e = 0; e < mesh.numElements(); ++e)
    for (const std::vector<int>& local : reference.cornerFaces()) {
      std::vector<int> face;
      for (int k : local) face.push_back(mesh.elements(e, k));
      std::vector<int> key = face;
      std::sort(key.begin(), key.end());
      auto [it, inserted] = faces.try_emplace(key, 0, face);
      ++it->second.first;
    }
  for (const auto& [key, entry] : faces) {
    if (entry.first != 1) continue;
    const std::vector<int>& f = entry.second;
    triangles.push_back({f[0], f[1], f[2]});
    if (f.size() == 4) triangles.push_back({f[0], f[2], f[3]});
  }
  return triangles;
}

std::vector<Hinge> surfaceHinges(const std::vector<std::array<int, 3>>& triangles) {
  // Directed edge (a, b) -> (triangle, opposite vertex).
  std::map<std::pair<int, int>, std::pair<int, int>> directed;
  std::map<std::pair<int, int>, int> uses;
  for (size_t t = 0; t < triangles.size(); ++t)
    for (int k = 0; k < 3; ++k) {
      const int a = triangles[t][k], b = triangles[t][(k + 1) % 3], c = triangles[t][(k + 2) % 3];
      if (!directed.emplace(std::make_pair(a, b), std::make_pair(static_cast<int>(t), c)).second)
        throw std::invalid_argument("surfaceHinges: edge (" + std::to_string(a) + ", " + std::to_string(b) +
                                    ") appears twice in one direction: triangles are not consistently oriented "
                                    "or the surface is not manifold");
      ++uses[{std::min(a, b), std::max(a, b)}];
    }
  std::vector<Hinge> hinges;
  for (const auto& [edge, count] : uses) {
    if (count > 2)
      throw std::invalid_argument("surfaceHinges: edge (" + std::to_string(edge.first) + ", " +
                                  std::to_string(edge.second) + ") belongs to " + std::to_string(count) + " triangles");
    if (count < 2) continue;
    const auto first = directed.find({edge.first, edge.second});
    const auto second = directed.find({edge.second, edge.first});
    if (first == directed.end() || second == directed.end())
      throw std::invalid_argument("surfaceHinges: triangles at edge (" + std::to_string(edge.first) + ", " +
                                  std::to_string(edge.second) + ") are not consistently oriented");
    hinges.push_back({{edge.first, edge.second, first->second.second, second->second.second}});
  }
  return hinges;
}

}  // namespace pbdlab
