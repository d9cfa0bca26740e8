// Opens the Gmsh module (meshes/gmsh_module.hpp) the first time a generator needs it.
#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "meshes/gmsh_module.hpp"

namespace pbdlab {

namespace {

constexpr const char* kModuleFile = "libpbdlab_gmsh.so";

std::string cannotOpen(const std::string& name, const std::string& why) {
  return "pbdlab cannot use its Gmsh module '" + name + "', which makes the meshes Gmsh generates (box, " +
         "rectangle, quadrilateral, polygon, sphere, torus and STL recipes): " + why +
         ". A build tree has it in build/lib/pbdlab (cmake --build builds it), an installed pbdlab in "
         "PREFIX/lib/pbdlab; PBDLAB_GMSH_MODULE=/path/to/" + kModuleFile + " names another";
}

const GmshModule* openModule() {
  const char* override_path = std::getenv("PBDLAB_GMSH_MODULE");
  const std::string name = override_path != nullptr && *override_path != '\0' ? override_path : kModuleFile;
  // RTLD_NOW: a missing symbol fails here, not halfway through a mesh; RTLD_LOCAL: the module's
  // symbols (its own copy of pbdlab's mesh code) stay private to it.
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    throw GmshModuleError(cannotOpen(name, error != nullptr ? error : "dlopen failed"));
  }
  // Never closed: Gmsh's process-wide state lives in the module until the process ends.
  using Entry = const GmshModule* (*)();
  const auto entry = reinterpret_cast<Entry>(dlsym(handle, "pbdlab_gmsh_module"));
  if (entry == nullptr) throw GmshModuleError(cannotOpen(name, "it has no symbol pbdlab_gmsh_module"));
  const GmshModule* module = entry();
  if (module == nullptr || module->interface_version != kGmshModuleInterfaceVersion ||
      module->table_size != sizeof(GmshModule)) {
    throw GmshModuleError(cannotOpen(name, "it comes from another version of pbdlab (interface " +
                                                  std::to_string(module != nullptr ? module->interface_version : -1) +
                                                  ", this program expects " +
                                                  std::to_string(kGmshModuleInterfaceVersion) + ")"));
  }
  return module;
}

}  // namespace

const GmshModule& gmshModule() {
  // A function-local static: opened once, thread-safe; after a throw the next call tries again.
  static const GmshModule* const module = openModule();
  return *module;
}

}  // namespace pbdlab
