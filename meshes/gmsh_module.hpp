#pragma once
// The Gmsh module: every call into the Gmsh SDK lives in libpbdlab_gmsh.so (meshes/gmsh/),
// which pbdlab opens with dlopen the first time it asks Gmsh for a mesh. Linked directly,
// libgmsh made every start of every pbdlab program resolve the symbols of its ~100 libraries
// (OpenCASCADE, FLTK, X11, FreeImage, ...): about 0.3 s per start in the dynamic loader, also
// for a run whose mesh came from the cache (docs/meshes.md, "The Gmsh module").
//
// The functions below return Gmsh's meshes as Gmsh numbers them (its node order and
// orientation); the generators of meshes/ check recipes before and orient, place and name
// the node sets after.
#include <stdexcept>
#include <string>

#include "core/fem/mesh.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "meshes/polygon_mesh.hpp"
#include "meshes/quadrilateral_mesh.hpp"

namespace pbdlab {

// Raised whenever the table below changes: a module from another build is refused.
constexpr int kGmshModuleInterfaceVersion = 3;

struct GmshModule {
  int interface_version;
  unsigned long table_size;  // sizeof(GmshModule) in the module's build
  // One Gmsh session, nested sessions counted (GmshSession, meshes/gmsh_session.hpp).
  void (*begin_session)();
  void (*end_session)();
  int (*saved_thread_count)();
  void (*restore_thread_count)();
  // makeUnstructuredBox's tetrahedra.
  Mesh (*unstructured_box)(const Vec3& origin, const Vec3& size, double target_size, const std::string& source);
  // The transfinite box of recipe.cells: kHex8 recombined hexahedra, or kTet4 Gmsh's own
  // 6-tet split; the count is checked.
  Mesh (*transfinite_box)(const BoxMeshRecipe& recipe, ElementType type, const std::string& what);
  // Triangles of the rectangle [0, size[0]] x [0, size[1]] in z = 0.
  Mesh (*rectangle)(const RectangleRecipe& recipe, const std::string& source);
  // Triangles of the (checked) convex quadrilateral, z = 0.
  Mesh (*quadrilateral)(const QuadrilateralRecipe& recipe, const std::string& source);
  // Triangles of the (checked) polygon with its holes, z = 0.
  Mesh (*polygon)(const PolygonRecipe& recipe, const std::string& source);
  // Tetrahedra filling the closed surface of the STL file gmsh_input (`path` is the user's file,
  // named in errors).
  Mesh (*stl_volume)(const std::string& gmsh_input, const std::string& path, double target_size,
                     double feature_angle_deg, const std::string& source);
  // Tetrahedra of the OpenCASCADE ball of `radius` about the origin.
  Mesh (*sphere)(double radius, double target_size, const std::string& source);
  // Tetrahedra of the OpenCASCADE torus about the origin, axis z (Gmsh 4.8's only one).
  Mesh (*torus)(double major_radius, double minor_radius, double target_size, const std::string& source);
};

// The module could not be opened (missing, or from another build): an installation problem.
class GmshModuleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The module, opened on first use (thread-safe). Searched as libpbdlab_gmsh.so by the dynamic
// loader: the programs' run path names build/lib/pbdlab in a build tree and ../lib/pbdlab beside
// an installed bin/pbdlab; PBDLAB_GMSH_MODULE (a path) overrides. Throws
// GmshModuleError saying what failed if it cannot be opened or comes from another build.
const GmshModule& gmshModule();

}  // namespace pbdlab

// The module's one exported symbol.
extern "C" const pbdlab::GmshModule* pbdlab_gmsh_module();
