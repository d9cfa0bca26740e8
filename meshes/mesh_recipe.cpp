#include "meshes/mesh_recipe.hpp"

#include <gmsh.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/input_error.hpp"
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

std::string describeValue(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case json::value_t::string: return "the string " + value.dump();
    case json::value_t::array: return "an array of " + std::to_string(value.size());
    case json::value_t::object: return "an object";
    case json::value_t::number_float: {
      const double d = value.get<double>();
      if (std::isnan(d)) return "NaN";
      if (std::isinf(d)) return d > 0 ? "infinity" : "-infinity";
      return value.dump();
    }
    default: return value.dump();
  }
}

std::size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string number(double v) {
  std::ostringstream out;
  out.precision(6);
  out << v;
  return out.str();
}

// Typed access to the recipe object; every error names the source and the JSON pointer.
class In {
 public:
  In(std::string source, std::string at) : source_(std::move(source)), at_(std::move(at)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError(source_, field(key), message);
  }
  std::string field(const std::string& key) const { return key.empty() ? at_ : at_ + "/" + key; }

  void onlyKeys(const json& object, const std::vector<std::string>& known, const std::string& kind) const {
    for (const auto& item : object.items()) {
      if (std::find(known.begin(), known.end(), item.key()) != known.end()) continue;
      std::string message = "unknown key '" + item.key() + "' for a mesh of type \"" + kind + "\"";
      std::string nearest;
      std::size_t best = std::numeric_limits<std::size_t>::max();
      for (const std::string& k : known) {
        const std::size_t d = editDistance(item.key(), k);
        if (d < best) best = d, nearest = k;
      }
      if (best <= std::max<std::size_t>(2, nearest.size() / 4)) message += " (did you mean '" + nearest + "'?)";
      fail(item.key(), message + "; known keys here: " + join(known));
    }
  }

  double real(const json& object, const std::string& key) const {
    const json& v = object.at(key);
    if (!v.is_number()) fail(key, "must be a number, got " + describeValue(v));
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(key, "must be a finite number, got " + describeValue(v));
    return d;
  }
  double positive(const json& object, const std::string& key) const {
    const double d = real(object, key);
    if (!(d > 0.0)) fail(key, "must be > 0, got " + number(d));
    return d;
  }
  int integer(const json& value, const std::string& key) const {
    if (!value.is_number_integer()) fail(key, "must be an integer, got " + describeValue(value));
    if (value.is_number_unsigned() ? value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int>::max())
                                   : (value.get<std::int64_t>() > std::numeric_limits<int>::max() ||
                                      value.get<std::int64_t>() < std::numeric_limits<int>::min())) {
      fail(key, "is out of range, got " + value.dump());
    }
    return value.get<int>();
  }
  std::string string(const json& object, const std::string& key) const {
    const json& v = object.at(key);
    if (!v.is_string()) fail(key, "must be a string, got " + describeValue(v));
    return v.get<std::string>();
  }
  // An array of n finite numbers (each > 0 when `positive`).
  std::vector<double> reals(const json& object, const std::string& key, std::size_t n, bool positive) const {
    const json& v = object.at(key);
    if (!v.is_array() || v.size() != n)
      fail(key, "must be an array of " + std::to_string(n) + " numbers, got " + describeValue(v));
    std::vector<double> out;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string item = key + "/" + std::to_string(i);
      if (!v[i].is_number()) fail(item, "must be a number, got " + describeValue(v[i]));
      const double d = v[i].get<double>();
      if (!std::isfinite(d)) fail(item, "must be a finite number, got " + describeValue(v[i]));
      if (positive && !(d > 0.0)) fail(item, "must be > 0, got " + number(d));
      out.push_back(d);
    }
    return out;
  }
  // An array of n integers >= 1 whose product is at most kMaxCells.
  std::vector<int> cells(const json& object, const std::string& key, std::size_t n) const {
    const json& v = object.at(key);
    if (!v.is_array() || v.size() != n)
      fail(key, "must be an array of " + std::to_string(n) + " integers, got " + describeValue(v));
    std::vector<int> out;
    long long total = 1;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string item = key + "/" + std::to_string(i);
      const int c = integer(v[i], item);
      if (c < 1) fail(item, "must be >= 1, got " + std::to_string(c));
      out.push_back(c);
      total *= c;
      if (total > kMaxCells) fail(key, "asks for more than " + std::to_string(kMaxCells) + " cells");
    }
    return out;
  }
  int order(const json& object) const {
    if (!object.contains("order")) return 1;
    const int o = integer(object.at("order"), "order");
    if (o < 1 || o > 3) fail("order", "must be 1 (linear), 2 (tet10) or 3 (tet20), got " + std::to_string(o));
    return o;
  }
  // Resolves a file path against base_dir and checks that it can be read.
  std::string file(const json& object, const std::string& base_dir) const {
    if (!object.contains("file")) fail("file", "is required but missing");
    const std::string name = string(object, "file");
    if (name.empty()) fail("file", "must not be empty");
    const std::filesystem::path p(name);
    const std::string resolved = p.is_absolute() || base_dir.empty() ? p.string() : (std::filesystem::path(base_dir) / p).string();
    std::error_code ec;
    if (std::filesystem::is_directory(resolved, ec)) fail("file", "'" + resolved + "' is a directory");
    std::ifstream probe(resolved, std::ios::binary);
    if (!probe) fail("file", "cannot open '" + resolved + "' (" + std::strerror(errno) + ")");
    return resolved;
  }

 private:
  std::string source_;
  std::string at_;
};

json array(const Vec3& v) { return json::array({v[0], v[1], v[2]}); }

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
      box.family = parseBoxFamily(name);
    } catch (const std::invalid_argument&) {
      in.fail(family_key, "unknown family '" + name + "' (known: " + join(boxFamilyNames()) + ")");
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
    if (estimate > kMaxEstimatedElements) {
      in.fail("target_size", "would make about " + number(estimate) + " tetrahedra (at most " + number(kMaxEstimatedElements) + ")");
    }
    c["target_size"] = box.target_size;
  } else {
    if (m.contains("target_size")) in.fail("target_size", "only the unstructured family takes a target size; use \"cells\"");
    if (!m.contains("cells")) in.fail("cells", "is required but missing");
    const std::vector<int> cells = in.cells(m, "cells", 3);
    box.cells = {cells[0], cells[1], cells[2]};
    c["cells"] = json::array({cells[0], cells[1], cells[2]});
  }
  r.order = box.order;
  r.canonical = std::move(c);
}

void parseResBox(const In& in, const json& m, MeshRecipe& r) {
  in.onlyKeys(m, {"type", "nodes_per_side", "order"}, "res_box");
  if (!m.contains("nodes_per_side")) in.fail("nodes_per_side", "is required but missing");
  const int n = in.integer(m.at("nodes_per_side"), "nodes_per_side");
  if (n < 2) in.fail("nodes_per_side", "must be >= 2, got " + std::to_string(n));
  if (std::pow(n - 1.0, 3) > static_cast<double>(kMaxCells)) {
    in.fail("nodes_per_side", "asks for more than " + std::to_string(kMaxCells) + " cells");
  }
  r.nodes_per_side = n;
  r.box = resBox(n);
  r.box.order = r.order = in.order(m);
  r.canonical = {{"type", "res_box"}, {"nodes_per_side", n}, {"order", r.order}};
}

void parseRectangle(const In& in, const json& m, MeshRecipe& r) {
  in.onlyKeys(m, {"type", "embedding", "origin", "size", "cells", "target_size", "diagonals", "plane"}, "rectangle");
  RectangleRecipe& rect = r.rectangle;
  const std::string embedding = m.contains("embedding") ? in.string(m, "embedding") : "2d";
  if (embedding == "2d") rect.embedding = RectangleRecipe::Embedding::k2d;
  else if (embedding == "3d_surface") rect.embedding = RectangleRecipe::Embedding::k3dSurface;
  else in.fail("embedding", "unknown embedding '" + embedding + "' (known: 2d, 3d_surface)");
  const bool surface = rect.embedding == RectangleRecipe::Embedding::k3dSurface;
  json c = {{"type", "rectangle"}, {"embedding", embedding}};
  if (m.contains("plane")) {
    if (!surface) in.fail("plane", "only a \"3d_surface\" rectangle takes a plane (a 2d one is in z = 0)");
    rect.plane = in.string(m, "plane");
    if (rect.plane != "xy" && rect.plane != "xz" && rect.plane != "yz")
      in.fail("plane", "unknown plane '" + rect.plane + "' (known: xy, xz, yz)");
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
    if (estimate > kMaxEstimatedElements) {
      in.fail("target_size", "would make about " + number(estimate) + " triangles (at most " + number(kMaxEstimatedElements) + ")");
    }
    c["target_size"] = rect.target_size;
  } else {
    if (!m.contains("cells")) in.fail("cells", "is required (or \"target_size\" for an unstructured mesh) but missing");
    const std::vector<int> cells = in.cells(m, "cells", 2);
    rect.cells = {cells[0], cells[1]};
    c["cells"] = json::array({cells[0], cells[1]});
    if (m.contains("diagonals")) {
      const std::string name = in.string(m, "diagonals");
      try {
        rect.diagonals = parseDiagonals(name);
      } catch (const std::invalid_argument&) {
        in.fail("diagonals", "unknown diagonals '" + name + "' (known: left, right, alternate)");
      }
    }
    c["diagonals"] = diagonalsName(rect.diagonals);
  }
  r.canonical = std::move(c);
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
  if (!m.contains("target_size")) in.fail("target_size", "is required but missing");
  r.target_size = in.positive(m, "target_size");
  if (m.contains("feature_angle")) {
    r.feature_angle = in.real(m, "feature_angle");
    if (!(r.feature_angle > 0.0 && r.feature_angle <= 180.0))
      in.fail("feature_angle", "must lie in (0, 180] degrees, got " + number(r.feature_angle));
  }
  r.order = in.order(m);
  r.canonical = {{"type", "stl"},           {"file", r.file},       {"target_size", r.target_size},
                 {"feature_angle", r.feature_angle}, {"order", r.order}};
}

void parseBunnySurface(const In& in, const json& m, MeshRecipe& r) {
  in.onlyKeys(m, {"type", "subdivisions"}, "bunny_surface");
  if (m.contains("subdivisions")) {
    r.subdivisions = in.integer(m.at("subdivisions"), "subdivisions");
    if (r.subdivisions < 0 || r.subdivisions > 6)
      in.fail("subdivisions", "must be in 0 .. 6, got " + std::to_string(r.subdivisions));
  }
  r.canonical = {{"type", "bunny_surface"}, {"subdivisions", r.subdivisions}};
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
    case Kind::kMsh: return "mesh file '" + path + "'" + orderSuffix(order);
    case Kind::kStl:
      return "STL '" + path + "' tetrahedralized, target size " + number(target_size) + orderSuffix(order);
    case Kind::kBunnySurface: return "bunny surface (subdivisions " + std::to_string(subdivisions) + ")";
  }
  return "mesh";
}

MeshRecipe parseMeshRecipe(const json& value, const std::string& source, const std::string& at, const std::string& base_dir) {
  const In in(source, at);
  if (!value.is_object()) in.fail("", "a mesh recipe must be a JSON object, got " + describeValue(value));
  if (!value.contains("type")) in.fail("type", "is required but missing");
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
  } else if (type == "msh") {
    r.kind = MeshRecipe::Kind::kMsh;
    parseMsh(in, value, r, base_dir);
  } else if (type == "stl") {
    r.kind = MeshRecipe::Kind::kStl;
    parseStl(in, value, r, base_dir);
  } else if (type == "bunny_surface") {
    r.kind = MeshRecipe::Kind::kBunnySurface;
    parseBunnySurface(in, value, r);
  } else {
    in.fail("type", "unknown mesh type '" + type + "' (known: box, res_box, rectangle, msh, stl, bunny_surface)");
  }
  return r;
}

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
    case MeshRecipe::Kind::kMsh:
      mesh = readMsh(recipe.path);
      if (recipe.order > 1) {
        if (mesh.element_type != ElementType::kTet4) {
          throw InputError(recipe.path, "(elements)", "the file holds " + elementTypeName(mesh.element_type) +
                                                          " elements; the recipe's order " + std::to_string(recipe.order) +
                                                          " applies to tet4 meshes only");
        }
        mesh = raiseOrder(mesh, recipe.order);
        validateMesh(mesh);
      }
      break;
    case MeshRecipe::Kind::kStl:
      try {
        mesh = tetrahedralizeStl(recipe.path, recipe.target_size, recipe.feature_angle, recipe.describe());
      } catch (const std::runtime_error& e) {
        throw InputError(recipe.path, "(surface)", e.what());
      }
      if (recipe.order > 1) mesh = raiseOrder(mesh, recipe.order);
      validateMesh(mesh);
      break;
    case MeshRecipe::Kind::kBunnySurface:
      mesh = makeBunnySurface(recipe.subdivisions);
      addFaceNodeSets(mesh);
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
