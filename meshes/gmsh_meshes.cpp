#include "meshes/gmsh_meshes.hpp"

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include <unistd.h>

#include <atomic>
#include <cctype>

#include "core/support/input_error.hpp"
#include "core/support/input_file.hpp"
#include "meshes/gmsh_module.hpp"
#include "meshes/node_sets.hpp"
#include "meshes/text_cursor.hpp"

namespace pbdlab {

namespace {

constexpr double kMaxEstimatedElements = 5e7;
// Fewer STL triangles than this are subdivided before Gmsh reads them (tetrahedralizeStl).
constexpr std::size_t kMinStlTriangles = 64;

std::string gib(double bytes) {
  std::ostringstream out;
  out.precision(bytes < 1024.0 * 1024 * 1024 * 10 ? 2 : 3);
  out << bytes / (1024.0 * 1024 * 1024);
  return out.str();
}

}  // namespace

void orientTetsPositively(Mesh& mesh) {
  for (int e = 0; e < mesh.numElements(); ++e) {
    const double v = signedTetVolume(mesh.restPosition(mesh.elements(e, 0)), mesh.restPosition(mesh.elements(e, 1)),
                                     mesh.restPosition(mesh.elements(e, 2)), mesh.restPosition(mesh.elements(e, 3)));
    if (v < 0.0) std::swap(mesh.elements(e, 2), mesh.elements(e, 3));
  }
}

void orientTrianglesCounterClockwise(Mesh& mesh) {
  for (int e = 0; e < mesh.numElements(); ++e) {
    const Vec3 a = mesh.restPosition(mesh.elements(e, 0)), b = mesh.restPosition(mesh.elements(e, 1)),
               c = mesh.restPosition(mesh.elements(e, 2));
    if ((b - a).cross(c - a).z() < 0.0) std::swap(mesh.elements(e, 1), mesh.elements(e, 2));
  }
}

double physicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 1e18;  // unknown: no limit
  return static_cast<double>(pages) * static_cast<double>(page);
}

double estimatedMeshBytes(double elements, double nodes, int nodes_per_element) {
  return 250.0 * nodes + (100.0 + 8.0 * nodes_per_element) * elements;
}

void checkMeshFitsInMemory(double elements, double nodes, int nodes_per_element, const std::string& source,
                           const std::string& field) {
  const double need = estimatedMeshBytes(elements, nodes, nodes_per_element);
  const double have = physicalMemoryBytes();
  if (!(need <= have)) {
    std::ostringstream message;
    message.precision(3);
    message << "would need about " << gib(need) << " GiB for " << elements << " elements (" << nodes
            << " nodes); this machine has " << gib(have) << " GiB of memory: use fewer cells, a larger target size "
            << "or a lower order";
    throw InputError(source, field, message.str());
  }
}

Mesh makeUnstructuredBox(const Vec3& origin, const Vec3& size, double target_size, const std::string& source) {
  if (!std::isfinite(target_size) || !(target_size > 0.0)) {
    throw std::invalid_argument(source + ": target_size must be positive and finite");
  }
  // A regular tet of edge h has volume h^3 / (6 sqrt 2); Delaunay meshes come out near that.
  const double estimate = size.prod() / (std::pow(target_size, 3) / (6.0 * std::sqrt(2.0)));
  if (estimate > kMaxEstimatedElements) {
    std::ostringstream message;
    message << source << ": target_size " << target_size << " would make about " << estimate
            << " tetrahedra (more than " << kMaxEstimatedElements << ")";
    throw std::invalid_argument(message.str());
  }
  Mesh mesh = gmshModule().unstructured_box(origin, size, target_size, source);
  mesh.source = source;
  orientTetsPositively(mesh);
  return mesh;
}

std::string diagonalsName(RectangleRecipe::Diagonals diagonals) {
  switch (diagonals) {
    case RectangleRecipe::Diagonals::kLeft: return "left";
    case RectangleRecipe::Diagonals::kRight: return "right";
    case RectangleRecipe::Diagonals::kAlternate: return "alternate";
  }
  throw std::invalid_argument("unknown diagonals");
}

RectangleRecipe::Diagonals parseDiagonals(const std::string& name) {
  if (name == "left") return RectangleRecipe::Diagonals::kLeft;
  if (name == "right") return RectangleRecipe::Diagonals::kRight;
  if (name == "alternate") return RectangleRecipe::Diagonals::kAlternate;
  throw std::invalid_argument("unknown diagonals '" + name + "' (known: left, right, alternate)");
}

std::string RectangleRecipe::describe() const {
  std::ostringstream out;
  out.precision(6);
  out << "rectangle " << size[0] << "x" << size[1] << " m";
  if (embedding == Embedding::k3dSurface) out << " (surface in the " << plane << " plane)";
  if (!origin.isZero(0.0)) out << " at (" << origin.x() << ", " << origin.y() << ", " << origin.z() << ")";
  if (target_size > 0.0) {
    out << ", unstructured triangles, target size " << target_size;
  } else {
    out << ", " << cells[0] << "x" << cells[1] << " cells, " << diagonalsName(diagonals) << " diagonals";
  }
  return out.str();
}

Mesh makeRectangleMesh(const RectangleRecipe& recipe) {
  const std::string source = recipe.describe();
  int axis[2] = {0, 1};
  if (recipe.embedding == RectangleRecipe::Embedding::k3dSurface) {
    if (recipe.plane == "xy") axis[0] = 0, axis[1] = 1;
    else if (recipe.plane == "xz") axis[0] = 0, axis[1] = 2;
    else if (recipe.plane == "yz") axis[0] = 1, axis[1] = 2;
    else throw std::invalid_argument(source + ": plane must be \"xy\", \"xz\" or \"yz\", got '" + recipe.plane + "'");
  } else if (recipe.origin.z() != 0.0) {
    throw std::invalid_argument(source + ": a 2D rectangle lies in z = 0");
  }
  for (int d = 0; d < 2; ++d) {
    if (!std::isfinite(recipe.size[static_cast<std::size_t>(d)]) || !(recipe.size[static_cast<std::size_t>(d)] > 0.0))
      throw std::invalid_argument(source + ": size must be positive and finite");
  }
  if (!recipe.origin.allFinite()) throw std::invalid_argument(source + ": origin must be finite");
  if (recipe.target_size > 0.0) {  // unstructured
    if (!std::isfinite(recipe.target_size)) throw std::invalid_argument(source + ": target_size must be finite");
    const double estimate = recipe.size[0] * recipe.size[1] / (std::sqrt(3.0) / 4.0 * recipe.target_size * recipe.target_size);
    if (estimate > kMaxEstimatedElements) throw std::invalid_argument(source + ": target_size is too small");
  } else {
    if (recipe.cells[0] < 1 || recipe.cells[1] < 1) throw std::invalid_argument(source + ": cells per axis must be >= 1");
    if (2.0 * recipe.cells[0] * recipe.cells[1] > kMaxEstimatedElements)
      throw std::invalid_argument(source + ": too many cells");
  }

  Mesh mesh = gmshModule().rectangle(recipe, source);
  // Counter-clockwise in (u, v), then placed in the plane.
  orientTrianglesCounterClockwise(mesh);
  MatX3 placed = MatX3::Zero(mesh.numNodes(), 3);
  for (int n = 0; n < mesh.numNodes(); ++n) {
    placed.row(n) = recipe.origin.transpose();
    placed(n, axis[0]) += mesh.rest_positions(n, 0);
    placed(n, axis[1]) += mesh.rest_positions(n, 1);
  }
  mesh.rest_positions = std::move(placed);
  mesh.source = source;
  addFaceNodeSets(mesh);
  return mesh;
}

namespace {

// Binary STL: 80-byte header, a 32-bit triangle count, 50 bytes a triangle (normal, three
// vertices, 2 attribute bytes). A file is binary when its size is exactly that.
constexpr std::size_t kStlHeader = 84, kStlTriangleBytes = 50;

bool isBinaryStl(const std::string& bytes) {
  if (bytes.size() < kStlHeader) return false;
  std::uint32_t count = 0;
  std::memcpy(&count, bytes.data() + 80, 4);
  return bytes.size() == kStlHeader + kStlTriangleBytes * static_cast<std::size_t>(count);
}

// "expected 'WORD', got 'X'" unless the next token is WORD.
void expectWord(TextCursor& in, const std::string& word) {
  const std::string got = in.token("'" + word + "'");
  if (got != word) in.fail("expected '" + word + "', got '" + got.substr(0, 64) + "'");
}

std::string formatCoordinate(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Midpoint subdivision: every triangle into four, the surface unchanged.
std::vector<StlTriangle> subdivide(const std::vector<StlTriangle>& triangles) {
  std::vector<StlTriangle> out;
  out.reserve(4 * triangles.size());
  for (const StlTriangle& t : triangles) {
    const Vec3 ab = 0.5 * (t[0] + t[1]), bc = 0.5 * (t[1] + t[2]), ca = 0.5 * (t[2] + t[0]);
    out.push_back({t[0], ab, ca});
    out.push_back({ab, t[1], bc});
    out.push_back({ca, bc, t[2]});
    out.push_back({ab, bc, ca});
  }
  return out;
}

std::string binaryStl(const std::vector<StlTriangle>& triangles) {
  std::string bytes(kStlHeader + kStlTriangleBytes * triangles.size(), '\0');
  const std::string header = "pbdlab: subdivided for Gmsh";
  std::memcpy(&bytes[0], header.data(), header.size());
  const std::uint32_t count = static_cast<std::uint32_t>(triangles.size());
  std::memcpy(&bytes[80], &count, 4);
  for (std::size_t t = 0; t < triangles.size(); ++t) {
    const Vec3 normal = (triangles[t][1] - triangles[t][0]).cross(triangles[t][2] - triangles[t][0]).normalized();
    for (int c = 0; c < 3; ++c) {
      const float n = static_cast<float>(normal[c]);
      std::memcpy(&bytes[kStlHeader + kStlTriangleBytes * t + 4 * c], &n, 4);
    }
    for (int v = 0; v < 3; ++v)
      for (int c = 0; c < 3; ++c) {
        const float x = static_cast<float>(triangles[t][static_cast<std::size_t>(v)][c]);
        std::memcpy(&bytes[kStlHeader + kStlTriangleBytes * t + 12 * (v + 1) + 4 * c], &x, 4);
      }
  }
  return bytes;
}

// Removes a temporary file when it goes out of scope.
struct TemporaryFile {
  std::string path;
  ~TemporaryFile() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove(path, ec);
  }
};

}  // namespace

std::vector<StlTriangle> parseStl(const std::string& bytes, const std::string& path) {
  std::vector<StlTriangle> triangles;
  const auto nonFinite = [&](const std::string& field, std::size_t triangle, int vertex, double value) {
    throw InputError(path, field,
                     "triangle " + std::to_string(triangle + 1) + ", vertex " + std::to_string(vertex + 1) +
                         " has a non-finite coordinate (" + formatCoordinate(value) + ")");
  };
  if (isBinaryStl(bytes)) {
    std::uint32_t count = 0;
    std::memcpy(&count, bytes.data() + 80, 4);
    triangles.resize(count);  // the size check above: count * 50 bytes are present
    for (std::size_t t = 0; t < count; ++t)
      for (int v = 0; v < 3; ++v)
        for (int c = 0; c < 3; ++c) {
          const std::size_t at = kStlHeader + kStlTriangleBytes * t + 12 * static_cast<std::size_t>(v + 1) + 4 * static_cast<std::size_t>(c);
          float value;
          std::memcpy(&value, bytes.data() + at, 4);
          if (!std::isfinite(value)) nonFinite("byte " + std::to_string(at), t, v, value);
          triangles[t][static_cast<std::size_t>(v)][c] = value;
        }
    return triangles;
  }
  TextCursor in(path, bytes);
  if (in.atEnd()) throw InputError(path, "(file)", "the file is empty, not an STL file");
  if (in.token("'solid'") != "solid") {
    std::string sizes = "its size is " + std::to_string(bytes.size()) + " bytes";
    if (bytes.size() >= kStlHeader) {
      std::uint32_t count = 0;
      std::memcpy(&count, bytes.data() + 80, 4);
      sizes += ", a binary STL of " + std::to_string(count) + " triangles would be " +
               std::to_string(kStlHeader + kStlTriangleBytes * static_cast<std::size_t>(count));
    }
    throw InputError(path, "(file)",
                     "neither an ASCII STL (it does not begin with 'solid') nor a binary one (" + sizes +
                         "): not an STL file, or a truncated binary one");
  }
  in.skipLine();  // the solid's name
  for (;;) {
    if (in.atEnd()) break;  // "endsolid" missing: accepted, as Gmsh does
    const std::string word = in.token("'facet' or 'endsolid'");
    if (word == "endsolid") {
      in.skipLine();
      if (in.atEnd()) break;
      expectWord(in, "solid");  // another solid follows
      in.skipLine();
      continue;
    }
    if (word != "facet") in.fail("expected 'facet' or 'endsolid', got '" + word + "'");
    expectWord(in, "normal");
    for (int c = 0; c < 3; ++c) in.number("a normal's component");
    expectWord(in, "outer");
    expectWord(in, "loop");
    StlTriangle triangle;
    const std::size_t t = triangles.size();
    for (int v = 0; v < 3; ++v) {
      expectWord(in, "vertex");
      for (int c = 0; c < 3; ++c) {
        const double value = in.number("a vertex coordinate");
        if (!std::isfinite(value)) nonFinite(in.where(), t, v, value);
        triangle[static_cast<std::size_t>(v)][c] = value;
      }
    }
    expectWord(in, "endloop");
    expectWord(in, "endfacet");
    triangles.push_back(triangle);
  }
  return triangles;
}

std::vector<StlTriangle> readStl(const std::string& path) { return parseStl(readInputFile(path), path); }

Mesh tetrahedralizeStl(const std::string& path, double target_size, double feature_angle_deg,
                       const std::string& source) {
  if (!std::isfinite(target_size) || !(target_size > 0.0)) {
    throw std::invalid_argument(source + ": target_size must be positive and finite");
  }
  if (!(feature_angle_deg > 0.0 && feature_angle_deg <= 180.0)) {
    throw std::invalid_argument(source + ": feature_angle must lie in (0, 180] degrees");
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw std::runtime_error(source + ": cannot open the STL file '" + path + "'");
  }
  // pbdlab reads the file first (every triangle, every coordinate finite: a NaN aborted Gmsh's
  // reader and an infinite one made it drop triangles silently); errors name the line or byte.
  std::vector<StlTriangle> triangles = readStl(path);
  if (triangles.empty()) throw InputError(path, "(file)", "the file holds no triangles");
  {
    // The volume Gmsh fills is at most the bounding box's: refuse a target size whose mesh
    // would not fit in memory (regular tets of edge target_size, as makeUnstructuredBox).
    Vec3 lo = triangles[0][0], hi = lo;
    for (const StlTriangle& t : triangles)
      for (const Vec3& v : t) {
        lo = lo.cwiseMin(v);
        hi = hi.cwiseMax(v);
      }
    const double estimate = (hi - lo).prod() / (std::pow(target_size, 3) / (6.0 * std::sqrt(2.0)));
    checkMeshFitsInMemory(estimate, estimate / 5.0, 4, path, "target_size");
  }
  // Gmsh 4.8 splits a closed surface into patches it can parametrize by partitioning its
  // triangles (METIS) in two, again and again; a surface of a handful of triangles (a
  // 4-facet tetrahedron) is never split, and Gmsh loops forever ("Level N partition with 4
  // triangles split in 2 parts because poincare characteristic 2 is not 0"). The same surface
  // subdivided (each triangle into four, the geometry unchanged) splits at once.
  TemporaryFile subdivided;
  std::string gmsh_input = path;
  if (triangles.size() < kMinStlTriangles) {
    while (triangles.size() < kMinStlTriangles) triangles = subdivide(triangles);
    static std::atomic<unsigned> counter{0};
    subdivided.path = (std::filesystem::temp_directory_path() /
                       ("pbdlab-stl-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".stl"))
                          .string();
    std::ofstream out(subdivided.path, std::ios::binary);
    out << binaryStl(triangles);
    out.close();
    if (!out) throw std::runtime_error(source + ": cannot write the temporary file '" + subdivided.path + "'");
    gmsh_input = subdivided.path;
  }
  Mesh mesh = gmshModule().stl_volume(gmsh_input, path, target_size, feature_angle_deg, source);
  mesh.source = source;
  orientTetsPositively(mesh);
  addFaceNodeSets(mesh);
  return mesh;
}

}  // namespace pbdlab
