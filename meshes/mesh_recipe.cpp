#include "meshes/mesh_recipe.hpp"

#include <gmsh.h>

#include <Eigen/Geometry>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/support/input_error.hpp"
#include "core/support/json_reader.hpp"
#include "core/support/short_number.hpp"
#include "meshes/bunny.hpp"
#include "meshes/msh_io.hpp"
#include "meshes/node_sets.hpp"
#include "meshes/raise_order.hpp"

namespace pbdlab {

namespace {

using nlohmann::json;

// Bump when a generator's output changes for the same recipe: old cache entries then miss.
constexpr const char* kCacheKeyVersion = "pbdlab-mesh-recipe 1";
// Caps that keep indices far from int overflow and stop a typo (2000 for 20) from asking
// for billions of elements.
constexpr long long kMaxCells = 10'000'000;
constexpr double kMaxEstimatedElements = 5e7;

// Typed access to the recipe object at `at` through the shared reader (core/support/json_reader.hpp):
// every error names the source and the JSON pointer; `key`s are relative to the recipe.
class In {
 public:
  In(std::string source, std::string at) : reader_(std::move(source)), at_(std::move(at)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    reader_.fail(field(key), message);
  }
  std::string field(const std::string& key) const { return key.empty() ? at_ : jsonPointerChild(at_, key); }
  const JsonReader& reader() const { return reader_; }

  void onlyKeys(const json& object, const std::vector<std::string>& known, const std::string& kind) const {
    reader_.onlyKeys(object, at_, known, "for a mesh of type \"" + kind + "\"");
  }
  double real(const json& object, const std::string& key) const { return reader_.number(object.at(key), field(key)); }
  double positive(const json& object, const std::string& key) const {
    return reader_.positive(object.at(key), field(key));
  }
  int integer(const json& object, const std::string& key) const { return reader_.integer(object.at(key), field(key)); }
  std::string string(const json& object, const std::string& key) const {
    return reader_.string(object.at(key), field(key));
  }
  // One of `names` (a string): "unknown WHAT 'x' (known: ...)".
  std::string name(const json& object, const std::string& key, const std::vector<std::string>& names,
                   const std::string& what) const {
    return reader_.oneOf(object.at(key), field(key), names, what);
  }
  // An array of n finite numbers (each > 0 when `positive`).
  std::vector<double> reals(const json& object, const std::string& key, std::size_t n, bool positive) const {
    return reader_.numbers(object.at(key), field(key), n, positive);
  }
  // An array of n integers >= 1. The caller checks the memory estimate, then checkCellCap.
  std::vector<int> cells(const json& object, const std::string& key, std::size_t n) const {
    const json& v = object.at(key);
    if (!v.is_array() || v.size() != n)
      fail(key, "must be an array of " + std::to_string(n) + " integers, got " + describeJson(v));
    std::vector<int> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(reader_.integerAtLeast(v[i], jsonPointerChild(field(key), i), 1));
    return out;
  }
  // The product of the cells at most kMaxCells (indices far from int overflow).
  void checkCellCap(const std::string& key, const std::vector<int>& cells) const {
    double total = 1.0;
    for (int c : cells) total *= c;
    if (total > static_cast<double>(kMaxCells)) fail(key, "asks for more than " + std::to_string(kMaxCells) + " cells");
  }
  int order(const json& object) const {
    if (!object.contains("order")) return 1;
    const int o = integer(object, "order");
    if (o < 1 || o > 3) fail("order", "must be 1 (linear), 2 (tet10) or 3 (tet20), got " + std::to_string(o));
    return o;
  }
  // Resolves a file path against base_dir and checks that it can be read.
  std::string file(const json& object, const std::string& base_dir) const {
    const std::string name = reader_.nonEmptyString(reader_.required(object, "file", at_), field("file"));
    const std::filesystem::path p(name);
    const std::string resolved = p.is_absolute() || base_dir.empty() ? p.string() : (std::filesystem::path(base_dir) / p).string();
    std::error_code ec;
    if (std::filesystem::is_directory(resolved, ec)) fail("file", "'" + resolved + "' is a directory");
    std::ifstream probe(resolved, std::ios::binary);
    if (!probe) fail("file", "cannot open '" + resolved + "' (" + std::strerror(errno) + ")");
    return resolved;
  }

 private:
  JsonReader reader_;
  std::string at_;
};

json array(const Vec3& v) { return json::array({v[0], v[1], v[2]}); }

struct MeshSizeEstimate {
  double elements = 0.0, nodes = 0.0;
  int nodes_per_element = 4;
};

// Tets raised to order 2 or 3 (meshes/raise_order.hpp): the same elements with 10 or 20 nodes;
// nodes: a tet mesh has about 1.2 edges and 2 faces per node... per element about 1.2 edges
// and 2 faces, so order 2 adds ~1.2 nodes per element, order 3 ~2.4 + 2 (edges twice, faces).
MeshSizeEstimate raisedSize(double elements, double nodes, int order) {
  MeshSizeEstimate out{elements, nodes, order == 1 ? 4 : order == 2 ? 10 : 20};
  if (order == 2) out.nodes += 1.2 * elements;
  if (order == 3) out.nodes += 4.4 * elements;
  return out;
}

MeshSizeEstimate structuredSize(BoxFamily family, const std::vector<int>& cells, int order) {
  double n_cells = 1.0, n_nodes = 1.0;
  for (int c : cells) {
    n_cells *= c;
    n_nodes *= c + 1.0;
  }
  const int per_cell = std::max(1, elementsPerCell(family));
  if (family == BoxFamily::kPyramid) n_nodes += n_cells;  // a node at every cell's centre
  MeshSizeEstimate out = raisedSize(per_cell * n_cells, n_nodes, order);
  if (order == 1) out.nodes_per_element = nodesPerElement(boxFamilyElementType(family));
  return out;
}

void parseBox(const In& in, const json& m, MeshRecipe& r) {
  in.onlyKeys(m, {"type", "family", "split", "origin", "size", "cells", "target_size", "order"}, "box");
  BoxMeshRecipe& box = r.box;
  if (m.contains("family") && m.contains("split")) {
    in.fail("split", "give either \"family\" or the older \"split\", not both");
  }
  const std::string family_key = m.contains("split") ? "split" : "family";
  if (m.contains(family_key)) {
    const std::string name = in.string(m, family_key);
    try {
      box.family = parseBoxFamily(name);  // also the first format's "five"
    } catch (const std::invalid_argument&) {
      in.reader().failUnknownName(in.field(family_key), name, boxFamilyNames(), "family");
    }
  }
  if (m.contains("origin")) {
    const std::vector<double> o = in.reals(m, "origin", 3, false);
    box.origin = Vec3(o[0], o[1], o[2]);
  }
  if (m.contains("size")) {
    const std::vector<double> s = in.reals(m, "size", 3, true);
    box.size = Vec3(s[0], s[1], s[2]);
  }
  box.order = in.order(m);
  if (box.order != 1 && !isTetFamily(box.family)) {
    in.fail("order", "order " + std::to_string(box.order) + " applies to the tetrahedral families only (five_tet, "
                     "biased, gmsh_six, unstructured), not to \"" + boxFamilyName(box.family) + "\"");
  }
  json c = {{"type", "box"}, {"family", boxFamilyName(box.family)}, {"origin", array(box.origin)},
            {"size", array(box.size)}, {"order", box.order}};
  if (box.family == BoxFamily::kUnstructured) {
    if (m.contains("cells")) in.fail("cells", "the unstructured family takes \"target_size\", not \"cells\"");
    if (!m.contains("target_size")) in.fail("target_size", "is required for the unstructured family but missing");
    box.target_size = in.positive(m, "target_size");
    const double estimate = box.size.prod() / (std::pow(box.target_size, 3) / (6.0 * std::sqrt(2.0)));
    const MeshSizeEstimate size = raisedSize(estimate, estimate / 5.0, box.order);
    checkMeshFitsInMemory(size.elements, size.nodes, size.nodes_per_element, in.reader().source(), in.field("target_size"));
    if (estimate > kMaxEstimatedElements) {
      in.fail("target_size", "would make about " + shortNumber(estimate) + " tetrahedra (at most " + shortNumber(kMaxEstimatedElements) + ")");
    }
    c["target_size"] = box.target_size;
  } else {
    if (m.contains("target_size")) in.fail("target_size", "only the unstructured family takes a target size; use \"cells\"");
    if (!m.contains("cells")) in.fail("cells", "is required but missing");
    const std::vector<int> cells = in.cells(m, "cells", 3);
    const MeshSizeEstimate size = structuredSize(box.family, cells, box.order);
    checkMeshFitsInMemory(size.elements, size.nodes, size.nodes_per_element, in.reader().source(), in.field("cells"));
    in.checkCellCap("cells", cells);
    box.cells = {cells[0], cells[1], cells[2]};
    c["cells"] = json::array({cells[0], cells[1], cells[2]});
  }
  r.order = box.order;
  r.canonical = std::move(c);
}

void parseResBox(const In& in, const json& m, MeshRecipe& r) {
  in.onlyKeys(m, {"type", "nodes_per_side", "order"}, "res_box");
  const int n = in.reader().integerAtLeast(in.reader().required(m, "nodes_per_side", in.field("")),
                                           in.field("nodes_per_side"), 2);
  const int order = in.order(m);
  const MeshSizeEstimate size = structuredSize(BoxFamily::kFiveTet, {n - 1, n - 1, n - 1}, order);
  checkMeshFitsInMemory(size.elements, size.nodes, size.nodes_per_element, in.reader().source(), in.field("nodes_per_side"));
  if (std::pow(n - 1.0, 3) > static_cast<double>(kMaxCells)) {
    in.fail("nodes_per_side", "asks for more than " + std::to_string(kMaxCells) + " cells");
  }
  r.nodes_per_side = n;
  r.box = resBox(n);
  r.box.order = r.order = order;
  r.canonical = {{"type", "res_box"}, {"nodes_per_side", n}, {"order", r.order}};
}

void parseRectangle(const In& in, const json& m, MeshRecipe& r) {
  in.onlyKeys(m, {"type", "embedding", "origin", "size", "cells", "target_size", "diagonals", "plane"}, "rectangle");
  RectangleRecipe& rect = r.rectangle;
  const std::string embedding = m.contains("embedding") ? in.name(m, "embedding", {"2d", "3d_surface"}, "embedding") : "2d";
  rect.embedding = embedding == "2d" ? RectangleRecipe::Embedding::k2d : RectangleRecipe::Embedding::k3dSurface;
  const bool surface = rect.embedding == RectangleRecipe::Embedding::k3dSurface;
  json c = {{"type", "rectangle"}, {"embedding", embedding}};
  if (m.contains("plane")) {
    if (!surface) in.fail("plane", "only a \"3d_surface\" rectangle takes a plane (a 2d one is in z = 0)");
    rect.plane = in.name(m, "plane", {"xy", "xz", "yz"}, "plane");
  }
  if (surface) c["plane"] = rect.plane;
  if (m.contains("origin")) {
    const std::vector<double> o = in.reals(m, "origin", surface ? 3 : 2, false);
    rect.origin = Vec3(o[0], o[1], surface ? o[2] : 0.0);
  }
  c["origin"] = surface ? array(rect.origin) : json::array({rect.origin.x(), rect.origin.y()});
  if (m.contains("size")) {
    const std::vector<double> s = in.reals(m, "size", 2, true);
    rect.size = {s[0], s[1]};
  }
  c["size"] = json::array({rect.size[0], rect.size[1]});
  if (m.contains("target_size")) {
    if (m.contains("cells")) in.fail("cells", "give either \"cells\" (structured) or \"target_size\" (unstructured), not both");
    if (m.contains("diagonals")) in.fail("diagonals", "only a structured rectangle (\"cells\") takes diagonals");
    rect.target_size = in.positive(m, "target_size");
    const double estimate = rect.size[0] * rect.size[1] / (std::sqrt(3.0) / 4.0 * rect.target_size * rect.target_size);
    checkMeshFitsInMemory(estimate, estimate / 2.0, 3, in.reader().source(), in.field("target_size"));
    if (estimate > kMaxEstimatedElements) {
      in.fail("target_size", "would make about " + shortNumber(estimate) + " triangles (at most " + shortNumber(kMaxEstimatedElements) + ")");
    }
    c["target_size"] = rect.target_size;
  } else {
    if (!m.contains("cells")) in.fail("cells", "is required (or \"target_size\" for an unstructured mesh) but missing");
    const std::vector<int> cells = in.cells(m, "cells", 2);
    checkMeshFitsInMemory(2.0 * cells[0] * cells[1], (cells[0] + 1.0) * (cells[1] + 1.0), 3, in.reader().source(),
                          in.field("cells"));
    in.checkCellCap("cells", cells);
    rect.cells = {cells[0], cells[1]};
    c["cells"] = json::array({cells[0], cells[1]});
    if (m.contains("diagonals")) {
      rect.diagonals = parseDiagonals(in.name(m, "diagonals", {"left", "right", "alternate"}, "diagonals"));
    }
    c["diagonals"] = diagonalsName(rect.diagonals);
  }
  r.canonical = std::move(c);
}

void parseQuadrilateral(const In& in, const json& m, MeshRecipe& r) {
  in.onlyKeys(m, {"type", "corners", "cells", "diagonals"}, "quadrilateral");
  QuadrilateralRecipe& quad = r.quadrilateral;
  in.reader().required(m, "corners", in.field(""));
  const json& corners = in.reader().array(m.at("corners"), in.field("corners"));
  if (corners.size() != 4) in.fail("corners", "must list 4 corners [x, y], counter-clockwise, got " + std::to_string(corners.size()));
  json c = {{"type", "quadrilateral"}, {"corners", json::array()}};
  for (std::size_t k = 0; k < 4; ++k) {
    const std::vector<double> xy = in.reader().numbers(corners[k], jsonPointerChild(in.field("corners"), k), 2);
    quad.corners[k] = {xy[0], xy[1]};
    c["corners"].push_back(json::array({xy[0], xy[1]}));
  }
  in.reader().required(m, "cells", in.field(""));
  const std::vector<int> cells = in.cells(m, "cells", 2);
  checkMeshFitsInMemory(2.0 * cells[0] * cells[1], (cells[0] + 1.0) * (cells[1] + 1.0), 3, in.reader().source(),
                        in.field("cells"));
  in.checkCellCap("cells", cells);
  quad.cells = {cells[0], cells[1]};
  c["cells"] = json::array({cells[0], cells[1]});
  if (m.contains("diagonals"))
    quad.diagonals = parseDiagonals(in.name(m, "diagonals", {"left", "right", "alternate"}, "diagonals"));
  c["diagonals"] = diagonalsName(quad.diagonals);
  // Convex and counter-clockwise: checked here so the error names the field.
  try {
    Vec3 p[4];
    for (int k = 0; k < 4; ++k) p[k] = Vec3(quad.corners[k][0], quad.corners[k][1], 0.0);
    for (int k = 0; k < 4; ++k) {
      const Vec3 a = p[(k + 1) % 4] - p[k], b = p[(k + 2) % 4] - p[(k + 1) % 4];
      if (!(a.cross(b).z() > 0.0))
        throw std::invalid_argument("the corners must be counter-clockwise and the quadrilateral convex (no left turn at corner " +
                                    std::to_string((k + 1) % 4) + ")");
    }
  } catch (const std::invalid_argument& error) {
    in.fail("corners", error.what());
  }
  r.canonical = std::move(c);
}

// An array of at least 3 vertices [x, y].
std::vector<PolygonRecipe::Point> parseLoop(const In& in, const json& value, const std::string& at) {
  const json& vertices = in.reader().array(value, at);
  if (vertices.size() < 3) in.reader().fail(at, "must list at least 3 vertices [x, y], got " + std::to_string(vertices.size()));
  std::vector<PolygonRecipe::Point> loop;
  for (std::size_t k = 0; k < vertices.size(); ++k) {
    const std::vector<double> xy = in.reader().numbers(vertices[k], jsonPointerChild(at, k), 2);
    loop.push_back({xy[0], xy[1]});
  }
  return loop;
}

json loopJson(const std::vector<PolygonRecipe::Point>& loop) {
  json out = json::array();
  for (const PolygonRecipe::Point& p : loop) out.push_back(json::array({p[0], p[1]}));
  return out;
}

// The polygon's triangle count at target size h (its bounding box's area: an upper bound),
// then its geometry: errors name `key` (the outline, or the star's parameters) or "holes".
void checkPolygonRecipe(const In& in, const PolygonRecipe& polygon, const std::string& key) {
  double lo[2] = {polygon.outline[0][0], polygon.outline[0][1]}, hi[2] = {lo[0], lo[1]};
  for (const PolygonRecipe::Point& p : polygon.outline)
    for (int d = 0; d < 2; ++d) lo[d] = std::min(lo[d], p[d]), hi[d] = std::max(hi[d], p[d]);
  const double h = polygon.target_size;
  const double estimate = (hi[0] - lo[0]) * (hi[1] - lo[1]) / (std::sqrt(3.0) / 4.0 * h * h);
  checkMeshFitsInMemory(estimate, estimate / 2.0, 3, in.reader().source(), in.field("target_size"));
  if (estimate > kMaxEstimatedElements) {
    in.fail("target_size", "would make about " + shortNumber(estimate) + " triangles (at most " + shortNumber(kMaxEstimatedElements) + ")");
  }
  try {
    checkPolygon(polygon);
  } catch (const std::invalid_argument& error) {
    // Messages about a hole name it ("hole 2 ...").
    in.fail(std::string(error.what()).find("hole ") != std::string::npos ? "holes" : key, error.what());
  }
}

void parsePolygon(const In& in, const json& m, MeshRecipe& r) {
  in.onlyKeys(m, {"type", "points", "holes", "target_size"}, "polygon");
  PolygonRecipe& polygon = r.polygon;
  polygon.outline = parseLoop(in, in.reader().required(m, "points", in.field("")), in.field("points"));
  json holes = json::array();
  if (m.contains("holes")) {
    const json& list = in.reader().array(m.at("holes"), in.field("holes"));
    for (std::size_t k = 0; k < list.size(); ++k) {
      polygon.holes.push_back(parseLoop(in, list[k], jsonPointerChild(in.field("holes"), k)));
      holes.push_back(loopJson(polygon.holes.back()));
    }
  }
  in.reader().required(m, "target_size", in.field(""));
  polygon.target_size = in.positive(m, "target_size");
  checkPolygonRecipe(in, polygon, "points");
  r.canonical = {{"type", "polygon"}, {"points", loopJson(polygon.outline)}, {"holes", holes},
                 {"target_size", polygon.target_size}};
}

void parseStar(const In& in, const json& m, MeshRecipe& r) {
  in.onlyKeys(m, {"type", "center", "points", "outer_radius", "inner_radius", "target_size"}, "star");
  StarRecipe& star = r.star;
  if (m.contains("center")) {
    const std::vector<double> c = in.reals(m, "center", 2, false);
    star.center = {c[0], c[1]};
  }
  in.reader().required(m, "points", in.field(""));
  star.points = in.reader().integer(m.at("points"), in.field("points"), 2, 100000);
  in.reader().required(m, "outer_radius", in.field(""));
  star.outer_radius = in.positive(m, "outer_radius");
  in.reader().required(m, "inner_radius", in.field(""));
  star.inner_radius = in.positive(m, "inner_radius");
  if (star.inner_radius > star.outer_radius)
    in.fail("inner_radius", "must be at most outer_radius (" + shortNumber(star.outer_radius) + "), got " + shortNumber(star.inner_radius));
  in.reader().required(m, "target_size", in.field(""));
  star.target_size = in.positive(m, "target_size");
  r.polygon = star.polygon();
  checkPolygonRecipe(in, r.polygon, "points");
  r.canonical = {{"type", "star"},
                 {"center", json::array({star.center[0], star.center[1]})},
                 {"points", star.points},
                 {"outer_radius", star.outer_radius},
                 {"inner_radius", star.inner_radius},
                 {"target_size", star.target_size}};
}

void parseMsh(const In& in, const json& m, MeshRecipe& r, const std::string& base_dir) {
  in.onlyKeys(m, {"type", "file", "order"}, "msh");
  r.path = in.file(m, base_dir);
  r.file = in.string(m, "file");
  r.order = in.order(m);
  r.canonical = {{"type", "msh"}, {"file", r.file}, {"order", r.order}};
}

void parseStl(const In& in, const json& m, MeshRecipe& r, const std::string& base_dir) {
  in.onlyKeys(m, {"type", "file", "target_size", "feature_angle", "order"}, "stl");
  r.path = in.file(m, base_dir);
  r.file = in.string(m, "file");
  in.reader().required(m, "target_size", in.field(""));
  r.target_size = in.positive(m, "target_size");
  if (m.contains("feature_angle")) {
    r.feature_angle = in.real(m, "feature_angle");
    if (!(r.feature_angle > 0.0 && r.feature_angle <= 180.0))
      in.fail("feature_angle", "must lie in (0, 180] degrees, got " + shortNumber(r.feature_angle));
  }
  r.order = in.order(m);
  r.canonical = {{"type", "stl"},           {"file", r.file},       {"target_size", r.target_size},
                 {"feature_angle", r.feature_angle}, {"order", r.order}};
}

void parseBunnySurface(const In& in, const json& m, MeshRecipe& r) {
  in.onlyKeys(m, {"type", "subdivisions"}, "bunny_surface");
  if (m.contains("subdivisions")) {
    r.subdivisions = in.reader().integer(m.at("subdivisions"), in.field("subdivisions"), 0, 6);
  }
  r.canonical = {{"type", "bunny_surface"}, {"subdivisions", r.subdivisions}};
}

// The shapes' target size: positive, at most `largest` (the radius that bounds the curved surface:
// coarser, Gmsh's meshes lose most of the volume or fail), and a mesh that fits in memory.
void shapeTargetSize(const In& in, const json& m, double volume, double largest, const std::string& largest_name,
                     int order, double& target_size) {
  in.reader().required(m, "target_size", in.field(""));
  target_size = in.positive(m, "target_size");
  if (!(target_size <= largest))
    in.fail("target_size", "must be at most the " + largest_name + " (" + shortNumber(largest) + "), got " +
                               shortNumber(target_size) + ": coarser, the mesh of the curved surface loses most of "
                               "the volume (or Gmsh fails)");
  const double estimate = estimatedShapeTets(volume, target_size);
  const MeshSizeEstimate size = raisedSize(estimate, estimate / 5.0, order);
  checkMeshFitsInMemory(size.elements, size.nodes, size.nodes_per_element, in.reader().source(), in.field("target_size"));
  if (estimate > kMaxEstimatedElements)
    in.fail("target_size", "would make about " + shortNumber(estimate) + " tetrahedra (at most " + shortNumber(kMaxEstimatedElements) + ")");
}

void parseSphere(const In& in, const json& m, MeshRecipe& r) {
  in.onlyKeys(m, {"type", "center", "radius", "target_size", "order"}, "sphere");
  SphereRecipe& sphere = r.sphere;
  if (m.contains("center")) {
    const std::vector<double> c = in.reals(m, "center", 3, false);
    sphere.center = Vec3(c[0], c[1], c[2]);
  }
  in.reader().required(m, "radius", in.field(""));
  sphere.radius = in.positive(m, "radius");
  r.order = in.order(m);
  shapeTargetSize(in, m, sphereVolume(sphere.radius), sphere.radius, "radius", r.order, sphere.target_size);
  r.canonical = {{"type", "sphere"}, {"center", array(sphere.center)}, {"radius", sphere.radius},
                 {"target_size", sphere.target_size}, {"order", r.order}};
}

void parseTorus(const In& in, const json& m, MeshRecipe& r) {
  in.onlyKeys(m, {"type", "center", "major_radius", "minor_radius", "axis", "target_size", "order"}, "torus");
  TorusRecipe& torus = r.torus;
  if (m.contains("center")) {
    const std::vector<double> c = in.reals(m, "center", 3, false);
    torus.center = Vec3(c[0], c[1], c[2]);
  }
  in.reader().required(m, "major_radius", in.field(""));
  torus.major_radius = in.positive(m, "major_radius");
  in.reader().required(m, "minor_radius", in.field(""));
  torus.minor_radius = in.positive(m, "minor_radius");
  if (!(torus.minor_radius < torus.major_radius))
    in.fail("minor_radius", "must be less than major_radius (" + shortNumber(torus.major_radius) + "), got " +
                                shortNumber(torus.minor_radius) + ": the tube would cross the axis");
  static const std::vector<std::string> kAxes = {"x", "y", "z"};
  const std::string axis = m.contains("axis") ? in.name(m, "axis", kAxes, "axis") : "z";
  torus.axis = static_cast<int>(std::find(kAxes.begin(), kAxes.end(), axis) - kAxes.begin());
  r.order = in.order(m);
  shapeTargetSize(in, m, torusVolume(torus.major_radius, torus.minor_radius), torus.minor_radius, "minor_radius",
                  r.order, torus.target_size);
  r.canonical = {{"type", "torus"},
                 {"center", array(torus.center)},
                 {"major_radius", torus.major_radius},
                 {"minor_radius", torus.minor_radius},
                 {"axis", axis},
                 {"target_size", torus.target_size},
                 {"order", r.order}};
}

std::string orderSuffix(int order) { return order == 1 ? "" : ", order " + std::to_string(order); }

std::string fileHash(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(path, "(file)", std::string("cannot open (") + std::strerror(errno) + ")");
  std::stringstream text;
  text << file.rdbuf();
  const std::string bytes = text.str();
  return hex16(fnv1a64(bytes.data(), bytes.size()));
}

}  // namespace

std::string MeshRecipe::describe() const {
  switch (kind) {
    case Kind::kBox: return box.describe();
    case Kind::kResBox: return "Res " + std::to_string(nodes_per_side) + " box (" + box.describe() + ")";
    case Kind::kRectangle: return rectangle.describe();
    case Kind::kQuadrilateral: return quadrilateral.describe();
    case Kind::kPolygon: return polygon.describe();
    case Kind::kStar: return star.describe();
    case Kind::kMsh: return "mesh file '" + path + "'" + orderSuffix(order);
    case Kind::kStl:
      return "STL '" + path + "' tetrahedralized, target size " + shortNumber(target_size) + orderSuffix(order);
    case Kind::kBunnySurface: return "bunny surface (subdivisions " + std::to_string(subdivisions) + ")";
    case Kind::kSphere: return sphere.describe() + orderSuffix(order);
    case Kind::kTorus: return torus.describe() + orderSuffix(order);
  }
  return "mesh";
}

MeshRecipe parseMeshRecipe(const json& value, const std::string& source, const std::string& at, const std::string& base_dir) {
  const In in(source, at);
  if (!value.is_object()) in.fail("", "a mesh recipe must be a JSON object, got " + describeJson(value));
  in.reader().required(value, "type", in.field(""));
  const std::string type = in.string(value, "type");
  MeshRecipe r;
  if (type == "box") {
    r.kind = MeshRecipe::Kind::kBox;
    parseBox(in, value, r);
  } else if (type == "res_box") {
    r.kind = MeshRecipe::Kind::kResBox;
    parseResBox(in, value, r);
  } else if (type == "rectangle") {
    r.kind = MeshRecipe::Kind::kRectangle;
    parseRectangle(in, value, r);
  } else if (type == "quadrilateral") {
    r.kind = MeshRecipe::Kind::kQuadrilateral;
    parseQuadrilateral(in, value, r);
  } else if (type == "polygon") {
    r.kind = MeshRecipe::Kind::kPolygon;
    parsePolygon(in, value, r);
  } else if (type == "star") {
    r.kind = MeshRecipe::Kind::kStar;
    parseStar(in, value, r);
  } else if (type == "msh") {
    r.kind = MeshRecipe::Kind::kMsh;
    parseMsh(in, value, r, base_dir);
  } else if (type == "stl") {
    r.kind = MeshRecipe::Kind::kStl;
    parseStl(in, value, r, base_dir);
  } else if (type == "bunny_surface") {
    r.kind = MeshRecipe::Kind::kBunnySurface;
    parseBunnySurface(in, value, r);
  } else if (type == "sphere") {
    r.kind = MeshRecipe::Kind::kSphere;
    parseSphere(in, value, r);
  } else if (type == "torus") {
    r.kind = MeshRecipe::Kind::kTorus;
    parseTorus(in, value, r);
  } else {
    in.reader().failUnknownName(in.field("type"), type, {"box", "res_box", "rectangle", "quadrilateral", "polygon", "star", "msh", "stl", "bunny_surface", "sphere", "torus"},
                                "mesh type");
  }
  return r;
}

std::string gmshVersion() { return GMSH_API_VERSION; }

std::string meshRecipeKey(const MeshRecipe& recipe) {
  json key = recipe.canonical;
  if (recipe.kind == MeshRecipe::Kind::kMsh || recipe.kind == MeshRecipe::Kind::kStl) {
    key.erase("file");
    key["file_fnv1a64"] = fileHash(recipe.path);
  }
  return std::string(kCacheKeyVersion) + "; gmsh " + GMSH_API_VERSION + "; " + key.dump();
}

Mesh makeMesh(const MeshRecipe& recipe) {
  Mesh mesh;
  switch (recipe.kind) {
    case MeshRecipe::Kind::kBox:
    case MeshRecipe::Kind::kResBox:
      mesh = makeBoxMesh(recipe.box);
      break;
    case MeshRecipe::Kind::kRectangle:
      mesh = makeRectangleMesh(recipe.rectangle);
      break;
    case MeshRecipe::Kind::kQuadrilateral:
      mesh = makeQuadrilateralMesh(recipe.quadrilateral);
      break;
    case MeshRecipe::Kind::kPolygon:
    case MeshRecipe::Kind::kStar:
      mesh = makePolygonMesh(recipe.polygon);
      mesh.source = recipe.describe();
      break;
    case MeshRecipe::Kind::kMsh:
      mesh = readMsh(recipe.path);
      if (recipe.order > 1) {
        if (mesh.element_type != ElementType::kTet4) {
          throw InputError(recipe.path, "(elements)", "the file holds " + elementTypeName(mesh.element_type) +
                                                          " elements; the recipe's order " + std::to_string(recipe.order) +
                                                          " applies to tet4 meshes only");
        }
        const MeshSizeEstimate size = raisedSize(mesh.numElements(), mesh.numNodes(), recipe.order);
        checkMeshFitsInMemory(size.elements, size.nodes, size.nodes_per_element, recipe.path, "(order " + std::to_string(recipe.order) + ")");
        mesh = raiseOrder(mesh, recipe.order);
        validateMesh(mesh);
      }
      break;
    case MeshRecipe::Kind::kStl:
      try {
        mesh = tetrahedralizeStl(recipe.path, recipe.target_size, recipe.feature_angle, recipe.describe());
      } catch (const InputError&) {
        throw;  // pbdlab's own reading of the file: names the line or byte
      } catch (const std::runtime_error& e) {
        throw InputError(recipe.path, "(surface)", e.what());
      }
      if (recipe.order > 1) {
        const MeshSizeEstimate size = raisedSize(mesh.numElements(), mesh.numNodes(), recipe.order);
        checkMeshFitsInMemory(size.elements, size.nodes, size.nodes_per_element, recipe.path, "(order " + std::to_string(recipe.order) + ")");
        mesh = raiseOrder(mesh, recipe.order);
      }
      validateMesh(mesh);
      break;
    case MeshRecipe::Kind::kBunnySurface:
      mesh = makeBunnySurface(recipe.subdivisions);
      addFaceNodeSets(mesh);
      break;
    case MeshRecipe::Kind::kSphere:
    case MeshRecipe::Kind::kTorus:
      mesh = recipe.kind == MeshRecipe::Kind::kSphere ? makeSphereMesh(recipe.sphere) : makeTorusMesh(recipe.torus);
      if (recipe.order > 1) {
        mesh = raiseOrder(mesh, recipe.order);
        setSurfaceNodeSet(mesh);  // raiseOrder's rule would add the node of an interior edge between two surface nodes
      }
      validateMesh(mesh);
      break;
  }
  if (recipe.kind != MeshRecipe::Kind::kMsh) mesh.source = recipe.describe();
  return mesh;
}

std::string cacheOutcomeName(MeshLoad::Cache outcome) {
  switch (outcome) {
    case MeshLoad::Cache::kOff: return "off";
    case MeshLoad::Cache::kHit: return "hit";
    case MeshLoad::Cache::kStored: return "miss (stored)";
    case MeshLoad::Cache::kNotStored: return "miss (not stored)";
  }
  return "?";
}

MeshLoad loadOrMakeMesh(const MeshRecipe& recipe, const MeshCache& cache) {
  const auto start = std::chrono::steady_clock::now();
  MeshLoad out;
  std::string key;
  if (cache.enabled()) {
    key = meshRecipeKey(recipe);
    out.entry = cache.entryPath(key);
    if (cache.load(key, out.mesh)) {
      bool valid = true;
      try {
        validateMesh(out.mesh);
      } catch (const std::exception&) {
        valid = false;  // an entry that is not a valid mesh is a miss
      }
      if (valid) {
        out.cache = MeshLoad::Cache::kHit;
        out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return out;
      }
    }
  }
  out.mesh = makeMesh(recipe);
  if (cache.enabled()) out.cache = cache.store(key, out.mesh, &out.note) ? MeshLoad::Cache::kStored : MeshLoad::Cache::kNotStored;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace pbdlab
