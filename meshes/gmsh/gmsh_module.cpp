// The Gmsh module's table (meshes/gmsh_module.hpp): the one symbol libpbdlab_gmsh.so exports.
#include "meshes/gmsh_module.hpp"

#include "meshes/gmsh/gmsh_generators.hpp"
#include "meshes/gmsh/gmsh_state.hpp"

extern "C" __attribute__((visibility("default"))) const pbdlab::GmshModule* pbdlab_gmsh_module() {
  using namespace pbdlab;
  static const GmshModule table{
      kGmshModuleInterfaceVersion,
      sizeof(GmshModule),
      &gmsh_state::beginSession,
      &gmsh_state::endSession,
      &gmsh_state::savedThreadCount,
      &gmsh_state::restoreThreadCount,
      &gmsh_generators::unstructuredBox,
      &gmsh_generators::transfiniteBox,
      &gmsh_generators::rectangle,
      &gmsh_generators::quadrilateral,
      &gmsh_generators::polygon,
      &gmsh_generators::stlVolume,
      &gmsh_generators::sphere,
      &gmsh_generators::torus,
  };
  return &table;
}
