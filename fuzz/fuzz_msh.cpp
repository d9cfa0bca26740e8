// Gmsh .msh files (meshes/msh_io.hpp): MSH 4.1 ASCII and binary, MSH 2.2 ASCII, parsed from
// memory by readMshText, the parser behind readMsh.
#include "fuzz/fuzz_common.hpp"
#include "meshes/msh_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = pbdlab::fuzz::bytes(data, size);
  pbdlab::fuzz::expectInputErrorOnly("fuzz_msh", [&] {
    const pbdlab::Mesh mesh = pbdlab::readMshText(text, "<fuzz>.msh");
    // A mesh that came out is valid: every index in range (ASan checks the reads).
    for (const auto& [name, nodes] : mesh.node_sets)
      for (int node : nodes)
        if (node < 0 || node >= mesh.numNodes()) std::abort();
    pbdlab::restVolumes(mesh);
  });
  return 0;
}
