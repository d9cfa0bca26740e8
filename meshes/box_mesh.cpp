#include "meshes/box_mesh.hpp"

#include <gmsh.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <exception>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "meshes/gmsh_session.hpp"

namespace pbdlab {

BoxTetSplit parseBoxTetSplit(const std::string& name) {
  if (name == "five") return BoxTetSplit::kFive;
  if (name == "gmsh_six") return BoxTetSplit::kGmshSix;
  throw std::invalid_argument("unknown box tet split '" + name + "' (expected \"five\" or \"gmsh_six\")");
}

std::string boxTetSplitName(BoxTetSplit split) {
  switch (split) {
    case BoxTetSplit::kFive:
      return "five";
    case BoxTetSplit::kGmshSix:
      return "gmsh_six";
  }
  throw std::invalid_argument("boxTetSplitName: unknown split");
}

std::string BoxMeshRecipe::describe() const {
  std::ostringstream out;
  out.precision(6);
  out << "box " << size.x() << "x" << size.y() << "x" << size.z() << " m";
  if (!origin.isZero(0.0)) {
    out << " at (" << origin.x() << ", " << origin.y() << ", " << origin.z() << ")";
  }
  out << ", " << cells[0] << "x" << cells[1] << "x" << cells[2] << " cells, "
      << (split == BoxTetSplit::kFive ? "five-tet split" : "gmsh_six split");
  return out.str();
}

BoxMeshRecipe resBox(int nodes_per_side) {
  if (nodes_per_side < 2) {
    throw std::invalid_argument("resBox: needs at least 2 nodes per side, got " +
                                std::to_string(nodes_per_side));
  }
  BoxMeshRecipe recipe;
  recipe.cells = {nodes_per_side - 1, nodes_per_side - 1, nodes_per_side - 1};
  recipe.split = BoxTetSplit::kFive;
  return recipe;
}

namespace {

void checkRecipe(const BoxMeshRecipe& recipe) {
  const std::string what = "makeBoxMesh (" + recipe.describe() + "): ";
  double nodes = 1.0, tets = 1.0;
  for (int d = 0; d < 3; ++d) {
    if (recipe.cells[d] < 1) {
      throw std::invalid_argument(what + "cells per axis must be >= 1, got " +
                                  std::to_string(recipe.cells[d]));
    }
    if (!std::isfinite(recipe.size[d]) || !(recipe.size[d] > 0.0)) {
      throw std::invalid_argument(what + "size must be positive and finite");
    }
    if (!std::isfinite(recipe.origin[d])) {
      throw std::invalid_argument(what + "origin must be finite");
    }
    nodes *= recipe.cells[d] + 1.0;
    tets *= recipe.cells[d];
  }
  tets *= 6.0;
  if (nodes > std::numeric_limits<int>::max() || tets > std::numeric_limits<int>::max()) {
    throw std::invalid_argument(what + "too many cells for int indices");
  }
}

// Runs a Gmsh call and turns whatever it throws (Gmsh 4.8 does not always throw a
// std::exception) into a std::runtime_error naming the recipe.
template <class F>
void gmshCall(const BoxMeshRecipe& recipe, const char* step, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    throw std::runtime_error("makeBoxMesh (" + recipe.describe() + "): Gmsh failed in " + step +
                             ": " + e.what());
  } catch (...) {
    throw std::runtime_error("makeBoxMesh (" + recipe.describe() + "): Gmsh failed in " + step);
  }
}

Vec3 pointCoordinates(int point_tag) {
  std::vector<double> xyz;
  gmsh::model::getValue(0, point_tag, {}, xyz);
  return Vec3(xyz.at(0), xyz.at(1), xyz.at(2));
}

// Builds the transfinite box in the current Gmsh model and meshes it: hexahedra when
// `recombine`, Gmsh's transfinite tetrahedra otherwise.
void generateTransfiniteBox(const BoxMeshRecipe& recipe, bool recombine) {
  gmsh::model::add("pbdlab_box");
  const int volume = gmsh::model::occ::addBox(recipe.origin.x(), recipe.origin.y(),
                                              recipe.origin.z(), recipe.size.x(),
                                              recipe.size.y(), recipe.size.z());
  gmsh::model::occ::synchronize();

  // Every curve of the box is parallel to one axis: find it from its end points.
  gmsh::vectorpair curves;
  gmsh::model::getEntities(curves, 1);
  for (const auto& curve : curves) {
    gmsh::vectorpair ends;
    gmsh::model::getBoundary({curve}, ends, false, false, false);
    if (ends.size() != 2) throw std::runtime_error("a box edge without two end points");
    const Vec3 extent =
        (pointCoordinates(ends[1].second) - pointCoordinates(ends[0].second)).cwiseAbs();
    int axis = 0;
    extent.maxCoeff(&axis);
    gmsh::model::mesh::setTransfiniteCurve(curve.second, recipe.cells[axis] + 1);
  }
  gmsh::vectorpair surfaces;
  gmsh::model::getEntities(surfaces, 2);
  for (const auto& surface : surfaces) {
    gmsh::model::mesh::setTransfiniteSurface(surface.second);
    // Per-surface recombination only: Mesh.Recombine3DAll stays off (TOOLCHAIN.md).
    if (recombine) gmsh::model::mesh::setRecombine(2, surface.second);
  }
  gmsh::model::mesh::setTransfiniteVolume(volume);
  gmsh::model::mesh::generate(3);
}

// Gmsh's nodes in tag order, and the map tag -> 0-based index (tags may have gaps).
void readNodes(Mesh& mesh, std::unordered_map<std::size_t, int>& index_of_tag) {
  std::vector<std::size_t> tags;
  std::vector<double> coords, parametric;
  gmsh::model::mesh::getNodes(tags, coords, parametric, -1, -1, false, false);
  std::vector<std::size_t> order(tags.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return tags[a] < tags[b]; });
  mesh.rest_positions.resize(static_cast<Eigen::Index>(tags.size()), 3);
  index_of_tag.clear();
  index_of_tag.reserve(tags.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::size_t k = order[i];
    if (!index_of_tag.emplace(tags[k], static_cast<int>(i)).second) {
      throw std::runtime_error("Gmsh returned node tag " + std::to_string(tags[k]) + " twice");
    }
    for (int d = 0; d < 3; ++d) mesh.rest_positions(static_cast<Eigen::Index>(i), d) = coords[3 * k + d];
  }
}

int indexOfTag(const std::unordered_map<std::size_t, int>& index_of_tag, std::size_t tag) {
  const auto it = index_of_tag.find(tag);
  if (it == index_of_tag.end()) {
    throw std::runtime_error("Gmsh element refers to unknown node tag " + std::to_string(tag));
  }
  return it->second;
}

void orientPositively(const Mesh& mesh, int* tet) {
  const double v = signedTetVolume(mesh.restPosition(tet[0]), mesh.restPosition(tet[1]),
                                   mesh.restPosition(tet[2]), mesh.restPosition(tet[3]));
  if (v < 0.0) std::swap(tet[2], tet[3]);
}

// Splits every hexahedron (Gmsh type 5) into five tetrahedra. The corner nodes are identified
// by their position relative to the hex centroid, not by Gmsh's node order. Corner (a, b, c) of
// cell (i, j, k) is grid node (i+a, j+b, k+c); the central tet joins the four corners whose
// grid parity (i+a + j+b + k+c) is even, so every face of every cell is cut along the diagonal
// between its two even corners, and the faces of neighbouring cells match.
std::vector<int> splitHexesIntoFive(const BoxMeshRecipe& recipe, const Mesh& mesh,
                                    const std::unordered_map<std::size_t, int>& index_of_tag) {
  std::vector<std::size_t> hex_tags, hex_nodes;
  gmsh::model::mesh::getElementsByType(5, hex_tags, hex_nodes);
  const std::size_t expected =
      static_cast<std::size_t>(recipe.cells[0]) * recipe.cells[1] * recipe.cells[2];
  if (hex_tags.size() != expected || hex_nodes.size() != 8 * expected) {
    throw std::runtime_error("Gmsh produced " + std::to_string(hex_tags.size()) +
                             " hexahedra, expected " + std::to_string(expected));
  }
  const Vec3 h = recipe.size.cwiseQuotient(
      Vec3(recipe.cells[0], recipe.cells[1], recipe.cells[2]));
  std::vector<int> tets;
  tets.reserve(20 * expected);
  for (std::size_t e = 0; e < expected; ++e) {
    int nodes[8];
    Vec3 centroid = Vec3::Zero();
    for (int k = 0; k < 8; ++k) {
      nodes[k] = indexOfTag(index_of_tag, hex_nodes[8 * e + k]);
      centroid += mesh.restPosition(nodes[k]);
    }
    centroid /= 8.0;
    int cell[3];
    for (int d = 0; d < 3; ++d) {
      const int c = static_cast<int>(std::floor((centroid[d] - recipe.origin[d]) / h[d]));
      cell[d] = std::clamp(c, 0, recipe.cells[d] - 1);
    }
    int corner[2][2][2];
    bool found[8] = {false, false, false, false, false, false, false, false};
    for (int k = 0; k < 8; ++k) {
      const Vec3 p = mesh.restPosition(nodes[k]);
      const int a = p.x() > centroid.x(), b = p.y() > centroid.y(), c = p.z() > centroid.z();
      const int slot = a + 2 * b + 4 * c;
      if (found[slot]) throw std::runtime_error("a Gmsh hexahedron is not an axis-aligned cell");
      found[slot] = true;
      corner[a][b][c] = nodes[k];
    }
    const int parity = (cell[0] + cell[1] + cell[2]) & 1;
    // Corners of even grid parity: (a + b + c + parity) even.
    std::vector<std::array<int, 3>> even, odd;
    for (int c = 0; c < 2; ++c) {
      for (int b = 0; b < 2; ++b) {
        for (int a = 0; a < 2; ++a) {
          (((a + b + c + parity) & 1) == 0 ? even : odd).push_back({a, b, c});
        }
      }
    }
    auto node = [&](const std::array<int, 3>& abc) { return corner[abc[0]][abc[1]][abc[2]]; };
    int tet[4] = {node(even[0]), node(even[1]), node(even[2]), node(even[3])};
    orientPositively(mesh, tet);
    tets.insert(tets.end(), tet, tet + 4);
    for (const auto& o : odd) {
      // An odd corner and its three neighbours along the edges (all even).
      int t[4] = {node(o), node({1 - o[0], o[1], o[2]}), node({o[0], 1 - o[1], o[2]}),
                  node({o[0], o[1], 1 - o[2]})};
      orientPositively(mesh, t);
      tets.insert(tets.end(), t, t + 4);
    }
  }
  return tets;
}

std::vector<int> readGmshTets(const BoxMeshRecipe& recipe, const Mesh& mesh,
                              const std::unordered_map<std::size_t, int>& index_of_tag) {
  std::vector<std::size_t> tet_tags, tet_nodes;
  gmsh::model::mesh::getElementsByType(4, tet_tags, tet_nodes);
  const std::size_t expected =
      6 * static_cast<std::size_t>(recipe.cells[0]) * recipe.cells[1] * recipe.cells[2];
  if (tet_tags.size() != expected || tet_nodes.size() != 4 * expected) {
    throw std::runtime_error("Gmsh produced " + std::to_string(tet_tags.size()) +
                             " tetrahedra, expected " + std::to_string(expected));
  }
  std::vector<int> tets(tet_nodes.size());
  for (std::size_t i = 0; i < tet_nodes.size(); ++i) tets[i] = indexOfTag(index_of_tag, tet_nodes[i]);
  for (std::size_t e = 0; e < expected; ++e) orientPositively(mesh, &tets[4 * e]);
  return tets;
}

}  // namespace

Mesh makeBoxMesh(const BoxMeshRecipe& recipe) {
  checkRecipe(recipe);
  Mesh mesh;
  mesh.source = recipe.describe();
  mesh.element_type = ElementType::kTet4;
  std::vector<int> tets;
  {
    GmshSession session;
    const bool hexes = recipe.split == BoxTetSplit::kFive;
    std::unordered_map<std::size_t, int> index_of_tag;
    try {
      gmshCall(recipe, "meshing the box", [&] { generateTransfiniteBox(recipe, hexes); });
      session.restoreThreadCount();
      gmshCall(recipe, "reading the mesh", [&] {
        readNodes(mesh, index_of_tag);
        tets = hexes ? splitHexesIntoFive(recipe, mesh, index_of_tag)
                     : readGmshTets(recipe, mesh, index_of_tag);
      });
    } catch (...) {
      try {
        gmsh::model::remove();
      } catch (...) {
      }
      throw;
    }
    gmshCall(recipe, "removing the model", [] { gmsh::model::remove(); });
  }
  const Eigen::Index n_tets = static_cast<Eigen::Index>(tets.size() / 4);
  mesh.elements = Eigen::Map<const Connectivity>(tets.data(), n_tets, 4);

  addBoundingBoxNodeSets(mesh);
  std::vector<int> all(static_cast<std::size_t>(mesh.numNodes()));
  std::iota(all.begin(), all.end(), 0);
  mesh.node_sets["all"] = std::move(all);
  validateMesh(mesh);
  return mesh;
}

}  // namespace pbdlab
