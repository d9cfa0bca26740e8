#include "meshes/box_mesh.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/support/short_number.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "meshes/gmsh_module.hpp"
#include "meshes/node_sets.hpp"
#include "meshes/raise_order.hpp"

namespace pbdlab {

namespace {

struct FamilyInfo {
  BoxFamily family;
  const char* name;
  const char* description;
  ElementType type;
  int per_cell;
};

constexpr FamilyInfo kFamilies[] = {
    {BoxFamily::kFiveTet, "five_tet", "five-tet split", ElementType::kTet4, 5},
    {BoxFamily::kBiased, "biased", "biased split (2 prisms x 3 tets)", ElementType::kTet4, 6},
    {BoxFamily::kGmshSix, "gmsh_six", "gmsh_six split", ElementType::kTet4, 6},
    {BoxFamily::kUnstructured, "unstructured", "unstructured tets", ElementType::kTet4, 0},
    {BoxFamily::kHex, "hex", "hexahedra", ElementType::kHex8, 1},
    {BoxFamily::kPrism, "prism", "prisms", ElementType::kPrism6, 2},
    {BoxFamily::kPyramid, "pyramid", "pyramids", ElementType::kPyramid5, 6},
};

const FamilyInfo& info(BoxFamily family) {
  for (const FamilyInfo& f : kFamilies)
    if (f.family == family) return f;
  throw std::invalid_argument("unknown box family");
}

}  // namespace

BoxFamily parseBoxFamily(const std::string& name) {
  if (name == "five") return BoxFamily::kFiveTet;  // the name of the first scene format
  for (const FamilyInfo& f : kFamilies)
    if (name == f.name) return f.family;
  std::string known;
  for (const std::string& n : boxFamilyNames()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown box family '" + name + "' (known: " + known + ")");
}

std::string boxFamilyName(BoxFamily family) { return info(family).name; }

std::vector<std::string> boxFamilyNames() {
  std::vector<std::string> names;
  for (const FamilyInfo& f : kFamilies) names.emplace_back(f.name);
  return names;
}

bool isTetFamily(BoxFamily family) { return info(family).type == ElementType::kTet4; }
ElementType boxFamilyElementType(BoxFamily family) { return info(family).type; }
int elementsPerCell(BoxFamily family) { return info(family).per_cell; }

std::string BoxMeshRecipe::describe() const {
  std::ostringstream out;
  out.precision(6);
  out << "box " << size.x() << "x" << size.y() << "x" << size.z() << " m";
  if (!origin.isZero(0.0)) {
    out << " at (" << origin.x() << ", " << origin.y() << ", " << origin.z() << ")";
  }
  if (family == BoxFamily::kUnstructured) {
    out << ", unstructured tets, target size " << target_size;
  } else {
    out << ", " << cells[0] << "x" << cells[1] << "x" << cells[2] << " cells, " << info(family).description;
  }
  if (order != 1) out << ", order " << order;
  return out.str();
}

BoxMeshRecipe resBox(int nodes_per_side) {
  if (nodes_per_side < 2) {
    throw std::invalid_argument("resBox: needs at least 2 nodes per side, got " +
                                std::to_string(nodes_per_side));
  }
  BoxMeshRecipe recipe;
  recipe.cells = {nodes_per_side - 1, nodes_per_side - 1, nodes_per_side - 1};
  recipe.family = BoxFamily::kFiveTet;
  return recipe;
}

namespace {

void checkRecipe(const BoxMeshRecipe& recipe) {
  const std::string what = "makeBoxMesh (" + recipe.describe() + "): ";
  for (int d = 0; d < 3; ++d) {
    if (!std::isfinite(recipe.size[d]) || !(recipe.size[d] > 0.0)) {
      throw std::invalid_argument(what + "size must be positive and finite");
    }
    if (!std::isfinite(recipe.origin[d])) throw std::invalid_argument(what + "origin must be finite");
  }
  if (recipe.order < 1 || recipe.order > 3) {
    throw std::invalid_argument(what + "order must be 1, 2 or 3, got " + std::to_string(recipe.order));
  }
  if (recipe.order != 1 && !isTetFamily(recipe.family)) {
    throw std::invalid_argument(what + "order " + std::to_string(recipe.order) +
                                " applies to the tetrahedral families only");
  }
  if (recipe.family == BoxFamily::kUnstructured) {
    if (!std::isfinite(recipe.target_size) || !(recipe.target_size > 0.0)) {
      throw std::invalid_argument(what + "target_size must be positive and finite, got " +
                                  shortNumber(recipe.target_size));
    }
    return;  // makeUnstructuredBox checks the element count estimate
  }
  double nodes = 1.0, cells = 1.0;
  for (int d = 0; d < 3; ++d) {
    if (recipe.cells[d] < 1) {
      throw std::invalid_argument(what + "cells per axis must be >= 1, got " + std::to_string(recipe.cells[d]));
    }
    nodes *= recipe.cells[d] + 1.0;
    cells *= recipe.cells[d];
  }
  // Raising the order multiplies the nodes by up to 27 (P3 on six tets per cell).
  const double order_factor = recipe.order == 1 ? 1.0 : recipe.order == 2 ? 8.0 : 27.0;
  if ((nodes + cells) * order_factor > std::numeric_limits<int>::max() ||
      6.0 * cells * nodesPerElement(ElementType::kTet20) > std::numeric_limits<int>::max()) {
    throw std::invalid_argument(what + "too many cells for int indices");
  }
}

// The structured grid: Gmsh's nodes (in tag order) and, per cell, its 8 corner nodes by
// position in the cell, corner[a + 2b + 4c] at (i + a, j + b, k + c), with the cell's (i, j, k).
struct Grid {
  Mesh nodes;  // rest_positions only
  std::vector<std::array<int, 8>> corners;
  std::vector<std::array<int, 3>> cell;
};

// Gmsh's transfinite hexahedra (their count checked by the module) sorted into cells.
Grid readGrid(const BoxMeshRecipe& recipe, Mesh hexes) {
  Grid grid;
  const std::size_t expected = static_cast<std::size_t>(hexes.numElements());
  const Vec3 h = recipe.size.cwiseQuotient(Vec3(recipe.cells[0], recipe.cells[1], recipe.cells[2]));
  grid.corners.resize(expected);
  grid.cell.resize(expected);
  for (std::size_t e = 0; e < expected; ++e) {
    Vec3 centroid = Vec3::Zero();
    for (int k = 0; k < 8; ++k) centroid += hexes.restPosition(hexes.elements(e, k));
    centroid /= 8.0;
    for (int d = 0; d < 3; ++d) {
      const int c = static_cast<int>(std::floor((centroid[d] - recipe.origin[d]) / h[d]));
      grid.cell[e][d] = std::clamp(c, 0, recipe.cells[d] - 1);
    }
    bool found[8] = {false, false, false, false, false, false, false, false};
    for (int k = 0; k < 8; ++k) {
      const int node = hexes.elements(e, k);
      const Vec3 p = hexes.restPosition(node);
      const int slot = (p.x() > centroid.x()) + 2 * (p.y() > centroid.y()) + 4 * (p.z() > centroid.z());
      if (found[slot]) throw std::runtime_error("a Gmsh hexahedron is not an axis-aligned cell");
      found[slot] = true;
      grid.corners[e][slot] = node;
    }
  }
  grid.nodes.rest_positions = std::move(hexes.rest_positions);
  return grid;
}

double signedVolume(const MatX3& x, int a, int b, int c, int d) {
  return signedTetVolume(x.row(a).transpose(), x.row(b).transpose(), x.row(c).transpose(), x.row(d).transpose());
}

void appendTet(const MatX3& x, std::array<int, 4> t, std::vector<int>& out) {
  if (signedVolume(x, t[0], t[1], t[2], t[3]) < 0.0) std::swap(t[2], t[3]);
  out.insert(out.end(), t.begin(), t.end());
}

// Five tets per cell. Corner (a, b, c) of cell (i, j, k) is grid node (i+a, j+b, k+c); the
// central tet joins the four corners whose grid parity (i+a + j+b + k+c) is even, so every
// face of every cell is cut along the diagonal between its two even corners, and the faces of
// neighbouring cells match.
void splitFive(const Grid& grid, std::vector<int>& tets) {
  const MatX3& x = grid.nodes.rest_positions;
  for (std::size_t e = 0; e < grid.corners.size(); ++e) {
    const auto& corner = grid.corners[e];
    const int parity = (grid.cell[e][0] + grid.cell[e][1] + grid.cell[e][2]) & 1;
    auto at = [&](int a, int b, int c) { return corner[a + 2 * b + 4 * c]; };
    std::vector<std::array<int, 3>> even, odd;
    for (int c = 0; c < 2; ++c)
      for (int b = 0; b < 2; ++b)
        for (int a = 0; a < 2; ++a) (((a + b + c + parity) & 1) == 0 ? even : odd).push_back({a, b, c});
    auto node = [&](const std::array<int, 3>& abc) { return at(abc[0], abc[1], abc[2]); };
    appendTet(x, {node(even[0]), node(even[1]), node(even[2]), node(even[3])}, tets);
    for (const auto& o : odd) {
      // An odd corner and its three neighbours along the edges (all even).
      appendTet(x, {node(o), node({1 - o[0], o[1], o[2]}), node({o[0], 1 - o[1], o[2]}), node({o[0], o[1], 1 - o[2]})},
                tets);
    }
  }
}

// The biased split, the same in every cell. The cell is cut by the plane through its edges
// (1,0,0)-(1,0,1) and (0,1,0)-(0,1,1) into two prisms along z, and each prism into three
// tets; every face of every cell gets the same diagonal (z faces (1,0)-(0,1), x faces
// y=1,z=0 to y=0,z=1, y faces x=1,z=0 to x=0,z=1), so neighbouring cells match. These are the
// tets Gmsh's transfinite volume mesher makes (docs/meshes.md; checked by test_mesh_families).
constexpr int kBiasedTets[6][4] = {
    // prism A: (0,0,z) (1,0,z) (0,1,z)
    {4, 0, 2, 1}, {2, 4, 1, 5}, {2, 4, 5, 6},
    // prism B: (1,0,z) (1,1,z) (0,1,z)
    {5, 1, 2, 3}, {3, 2, 5, 6}, {3, 5, 7, 6}};

void splitBiased(const Grid& grid, std::vector<int>& tets) {
  const MatX3& x = grid.nodes.rest_positions;
  for (const auto& corner : grid.corners)
    for (const auto& t : kBiasedTets) appendTet(x, {corner[t[0]], corner[t[1]], corner[t[2]], corner[t[3]]}, tets);
}

// Gmsh's hexahedron order: (0,0,0) (1,0,0) (1,1,0) (0,1,0), then the same at z = 1.
constexpr int kHexOrder[8] = {0, 1, 3, 2, 4, 5, 7, 6};

void hexes(const Grid& grid, std::vector<int>& out) {
  for (const auto& corner : grid.corners)
    for (int k : kHexOrder) out.push_back(corner[k]);
}

// The two prisms of the biased split, in Gmsh's prism order (bottom triangle counter-
// clockwise seen from +z, then the top triangle).
constexpr int kPrisms[2][6] = {{0, 1, 2, 4, 5, 6}, {1, 3, 2, 5, 7, 6}};

void prisms(const Grid& grid, std::vector<int>& out) {
  for (const auto& corner : grid.corners)
    for (const auto& p : kPrisms)
      for (int k : p) out.push_back(corner[k]);
}

// Six pyramids per cell: each face of the cell is a base, the apex a new node at the cell
// centre (appended after the grid nodes, in cell order). Bases are ordered so their normal
// (right-hand rule) points to the apex, as in Gmsh's reference pyramid.
constexpr int kCellFaces[6][4] = {{0, 2, 6, 4}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 5, 7, 6}};

void pyramids(Grid& grid, std::vector<int>& out) {
  const int n_grid = static_cast<int>(grid.nodes.rest_positions.rows());
  const int n_cells = static_cast<int>(grid.corners.size());
  MatX3 x(n_grid + n_cells, 3);
  x.topRows(n_grid) = grid.nodes.rest_positions;
  for (int e = 0; e < n_cells; ++e) {
    Vec3 centre = Vec3::Zero();
    for (int k = 0; k < 8; ++k) centre += grid.nodes.rest_positions.row(grid.corners[e][k]).transpose();
    x.row(n_grid + e) = (centre / 8.0).transpose();
  }
  for (int e = 0; e < n_cells; ++e) {
    const auto& corner = grid.corners[e];
    const int apex = n_grid + e;
    for (const auto& f : kCellFaces) {
      std::array<int, 4> base = {corner[f[0]], corner[f[1]], corner[f[2]], corner[f[3]]};
      if (signedVolume(x, base[0], base[1], base[2], apex) < 0.0) std::swap(base[1], base[3]);
      out.insert(out.end(), base.begin(), base.end());
      out.push_back(apex);
    }
  }
  grid.nodes.rest_positions = std::move(x);
}

// Gmsh's transfinite tetrahedra, each oriented positively.
void orientPositively(Mesh& mesh) {
  for (int e = 0; e < mesh.numElements(); ++e) {
    if (signedVolume(mesh.rest_positions, mesh.elements(e, 0), mesh.elements(e, 1), mesh.elements(e, 2),
                     mesh.elements(e, 3)) < 0.0)
      std::swap(mesh.elements(e, 2), mesh.elements(e, 3));
  }
}

Mesh makeStructured(const BoxMeshRecipe& recipe) {
  const std::string what = "makeBoxMesh (" + recipe.describe() + ")";
  if (recipe.family == BoxFamily::kGmshSix) {
    Mesh mesh = gmshModule().transfinite_box(recipe, ElementType::kTet4, what);
    orientPositively(mesh);
    return mesh;
  }
  Mesh hexahedra = gmshModule().transfinite_box(recipe, ElementType::kHex8, what);
  Grid grid;
  try {
    grid = readGrid(recipe, std::move(hexahedra));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
  std::vector<int> connectivity;
  switch (recipe.family) {
    case BoxFamily::kFiveTet: splitFive(grid, connectivity); break;
    case BoxFamily::kBiased: splitBiased(grid, connectivity); break;
    case BoxFamily::kHex: hexes(grid, connectivity); break;
    case BoxFamily::kPrism: prisms(grid, connectivity); break;
    case BoxFamily::kPyramid: pyramids(grid, connectivity); break;
    default: throw std::logic_error("makeStructured: not a structured family");
  }
  Mesh mesh;
  mesh.element_type = boxFamilyElementType(recipe.family);
  mesh.rest_positions = std::move(grid.nodes.rest_positions);
  const int per = nodesPerElement(mesh.element_type);
  mesh.elements = Eigen::Map<const Connectivity>(connectivity.data(),
                                                 static_cast<Eigen::Index>(connectivity.size() / per), per);
  return mesh;
}

}  // namespace

Mesh makeBoxMesh(const BoxMeshRecipe& recipe) {
  checkRecipe(recipe);
  Mesh mesh = recipe.family == BoxFamily::kUnstructured
                  ? makeUnstructuredBox(recipe.origin, recipe.size, recipe.target_size, recipe.describe())
                  : makeStructured(recipe);
  mesh.source = recipe.describe();
  mesh.node_sets.clear();
  addFaceNodeSets(mesh);
  if (recipe.order > 1) mesh = raiseOrder(mesh, recipe.order);
  validateMesh(mesh);
  return mesh;
}

}  // namespace pbdlab
