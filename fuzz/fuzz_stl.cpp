// STL files, ASCII and binary (meshes/gmsh_meshes.hpp parseStl): pbdlab's own reading of the
// bytes before Gmsh reads the file (the triangles, finite coordinates, the size of a binary
// file). Gmsh's STL reader and mesher are not run here (docs/fuzzing.md).
#include "fuzz/fuzz_common.hpp"
#include "meshes/gmsh_meshes.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = pbdlab::fuzz::bytes(data, size);
  pbdlab::fuzz::expectInputErrorOnly("fuzz_stl", [&] {
    const std::vector<pbdlab::StlTriangle> triangles = pbdlab::parseStl(bytes, "<fuzz>.stl");
    for (const pbdlab::StlTriangle& t : triangles)
      for (const pbdlab::Vec3& v : t)
        if (!v.allFinite()) std::abort();  // parseStl promises finite coordinates
  });
  return 0;
}
