#pragma once
// Meshes Gmsh makes from geometry: unstructured tetrahedra of a box, triangle meshes of a
// rectangle (2D, or a surface in 3D for cloth), and the tetrahedralization of a closed STL
// surface. All deterministic for the same input (Gmsh runs single-threaded).
#include <array>
#include <string>
#include <vector>

#include "core/fem/mesh.hpp"

namespace pbdlab {

// Gmsh's Delaunay mesher on the box [origin, origin + size] with maximum element size
// `target_size`. Tet4, positively oriented; no node sets. `source` names the mesh in errors.
// Throws std::invalid_argument if the estimated element count exceeds 50 million.
Mesh makeUnstructuredBox(const Vec3& origin, const Vec3& size, double target_size, const std::string& source);

struct RectangleRecipe {
  enum class Embedding {
    k2d,         // the plane z = 0 (a 2D mesh)
    k3dSurface,  // a flat surface in 3D (cloth), in the plane given by `plane`
  };
  enum class Diagonals { kLeft, kRight, kAlternate };  // Gmsh's transfinite arrangements

  Embedding embedding = Embedding::k2d;
  Vec3 origin = Vec3::Zero();          // k2d: z must be 0
  std::array<double, 2> size{1.0, 1.0};  // along the plane's two axes (m)
  std::array<int, 2> cells{1, 1};      // structured: cells per axis, 2 triangles per cell
  double target_size = 0.0;            // > 0: unstructured (Gmsh's 2D mesher), cells unused
  Diagonals diagonals = Diagonals::kAlternate;
  // k3dSurface: "xy", "xz" or "yz"; the first letter is the axis of size[0]. Triangles are
  // counter-clockwise in (axis 0, axis 1), so their normal is e_axis0 x e_axis1.
  std::string plane = "xy";
  std::string describe() const;
};

// Triangle (tri3) mesh of the rectangle with the node sets of the bounding box's faces (only
// of the axes the rectangle spans: "x-min", "x-max", "y-min", "y-max" for "xy") and "all".
// Throws std::invalid_argument for a bad recipe, std::runtime_error if Gmsh fails.
Mesh makeRectangleMesh(const RectangleRecipe& recipe);

// Swaps the last two nodes of every clockwise triangle (seen from +z): every 2D mesh of pbdlab
// is counter-clockwise.
void orientTrianglesCounterClockwise(Mesh& mesh);
// Swaps the last two nodes of every tet4 of negative signed volume.
void orientTetsPositively(Mesh& mesh);
std::string diagonalsName(RectangleRecipe::Diagonals diagonals);
RectangleRecipe::Diagonals parseDiagonals(const std::string& name);  // throws invalid_argument

// Tetrahedralizes the closed triangulated surface in the STL file `path` (ASCII or binary):
// Gmsh classifies the surface into patches (edges sharper than `feature_angle_deg` bound
// them), reparametrizes and remeshes them with element size `target_size`, and fills the
// volume (Delaunay). Tet4 with the bounding-box node sets and "all". Throws
// std::runtime_error naming the file if it is missing, not a closed surface, or Gmsh fails
// (Gmsh 4.8 cannot parametrize some patch layouts: "Wrong topology of boundary mesh for
// parametrization"; a larger feature angle usually helps).
//
// pbdlab reads the file itself first (parseStl): a bad file is an InputError naming the file
// and the line (ASCII) or byte (binary). A surface of fewer than 64 triangles is subdivided
// (each triangle into four, the geometry unchanged) before Gmsh reads it: Gmsh 4.8 loops
// forever splitting a closed surface of a handful of triangles (a 4-facet tetrahedron).
Mesh tetrahedralizeStl(const std::string& path, double target_size, double feature_angle_deg,
                       const std::string& source);

// Resource limits (issue 12): a recipe whose mesh would not fit in this machine's memory is
// refused before anything is allocated. The estimate counts what meshing holds at its peak,
// roughly: per node about 250 bytes (Gmsh's vertex with its maps, pbdlab's coordinates and
// node sets), per element about 100 bytes plus 8 per element node (Gmsh's element, pbdlab's
// connectivity and topology); running a scene on the mesh needs several times more.
double physicalMemoryBytes();  // sysconf(_SC_PHYS_PAGES) * page size
double estimatedMeshBytes(double elements, double nodes, int nodes_per_element);
// Throws InputError(source, field, "would need about N GiB for M elements (K nodes); this
// machine has P GiB ...") when the estimate exceeds physicalMemoryBytes().
void checkMeshFitsInMemory(double elements, double nodes, int nodes_per_element, const std::string& source,
                           const std::string& field);

// One STL triangle: three vertices.
using StlTriangle = std::array<Vec3, 3>;
// The triangles of an STL file's bytes, binary (84 + 50 * count bytes exactly) or ASCII
// ("solid", then "facet normal n n n / outer loop / vertex x y z (3x) / endloop / endfacet",
// "endsolid"; several solids allowed, a missing final "endsolid" accepted). Throws
// InputError(path, field, message): field "line N" (ASCII) or "byte N" (binary) for a
// malformed or truncated file or a non-finite vertex coordinate, "(file)" for an empty file
// or one that is neither format. Gmsh reads the file itself afterwards; this is pbdlab's check.
std::vector<StlTriangle> parseStl(const std::string& bytes, const std::string& path);
// parseStl of the file's bytes; InputError(path, "(file)", ...) if it cannot be read.
std::vector<StlTriangle> readStl(const std::string& path);

}  // namespace pbdlab
