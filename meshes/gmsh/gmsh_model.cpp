#include "meshes/gmsh/gmsh_model.hpp"

#include <gmsh.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <stdexcept>

namespace pbdlab::gmsh_model {

void call(const std::string& what, const std::string& step, void (*f)(void*), void* data) {
  const std::string prefix = what + ": Gmsh failed in " + step;
  try {
    f(data);
  } catch (const std::exception& e) {
    throw std::runtime_error(prefix + ": " + e.what());
  } catch (const std::string& e) {
    throw std::runtime_error(prefix + ": " + e);
  } catch (...) {
    std::string last;
    try {
      gmsh::logger::getLastError(last);
    } catch (...) {
    }
    throw std::runtime_error(prefix + (last.empty() ? std::string() : ": " + last));
  }
}

ScopedModel::ScopedModel(const std::string& name) { gmsh::model::add(name); }

ScopedModel::~ScopedModel() {
  try {
    gmsh::model::remove();
  } catch (...) {
    // Nothing sensible to do in a destructor; the session's finalize cleans up.
  }
}

void ScopedOptions::set(const std::string& name, double value) {
  double old = 0.0;
  gmsh::option::getNumber(name, old);
  saved_.emplace_back(name, old);
  gmsh::option::setNumber(name, value);
}

ScopedOptions::~ScopedOptions() {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    try {
      gmsh::option::setNumber(it->first, it->second);
    } catch (...) {
    }
  }
}

Mesh readElements(ElementType type, const std::string& source) {
  const int per_element = nodesPerElement(type);
  std::vector<std::size_t> element_tags, element_nodes;
  gmsh::model::mesh::getElementsByType(gmshElementType(type), element_tags, element_nodes);
  if (element_tags.empty()) {
    throw std::runtime_error(source + ": Gmsh produced no " + elementTypeName(type) + " elements");
  }
  std::vector<std::size_t> node_tags;
  std::vector<double> coords, parametric;
  gmsh::model::mesh::getNodes(node_tags, coords, parametric, -1, -1, false, false);

  // Dense tag -> position row; tags are small positive integers in practice.
  const std::size_t max_tag = node_tags.empty() ? 0 : *std::max_element(node_tags.begin(), node_tags.end());
  std::vector<std::ptrdiff_t> row_of_tag(max_tag + 1, -1);
  for (std::size_t i = 0; i < node_tags.size(); ++i) row_of_tag[node_tags[i]] = static_cast<std::ptrdiff_t>(i);
  std::vector<char> used(max_tag + 1, 0);
  for (std::size_t tag : element_nodes) {
    if (tag > max_tag || row_of_tag[tag] < 0) {
      throw std::runtime_error(source + ": a Gmsh element refers to unknown node tag " + std::to_string(tag));
    }
    used[tag] = 1;
  }
  Mesh mesh;
  mesh.source = source;
  mesh.element_type = type;
  std::vector<int> index_of_tag(max_tag + 1, -1);
  int n_used = 0;
  for (std::size_t tag = 0; tag <= max_tag; ++tag)
    if (used[tag]) index_of_tag[tag] = n_used++;
  mesh.rest_positions.resize(n_used, 3);
  for (std::size_t tag = 0; tag <= max_tag; ++tag) {
    if (!used[tag]) continue;
    const std::size_t row = static_cast<std::size_t>(row_of_tag[tag]);
    mesh.rest_positions.row(index_of_tag[tag]) << coords[3 * row], coords[3 * row + 1], coords[3 * row + 2];
  }
  const Eigen::Index n_elements = static_cast<Eigen::Index>(element_tags.size());
  mesh.elements.resize(n_elements, per_element);
  for (Eigen::Index e = 0; e < n_elements; ++e)
    for (int k = 0; k < per_element; ++k)
      mesh.elements(e, k) = index_of_tag[element_nodes[static_cast<std::size_t>(e) * per_element + k]];
  return mesh;
}

}  // namespace pbdlab::gmsh_model
