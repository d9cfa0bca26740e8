// .pbdmesh cache entries (meshes/mesh_cache.hpp deserializeMesh): a corrupt or truncated entry
// must be a miss (rebuilt), never trusted. Entries carry an FNV-1a checksum; to get past it,
// when the first byte is odd the target rewrites the checksum of the rest of the input, so
// the fuzzer explores the parser behind the checksum too.
#include <cstring>

#include "fuzz/fuzz_common.hpp"
#include "meshes/mesh_cache.hpp"

namespace {
// The key every seed entry is stored under (fuzz/make_seeds.cpp).
const std::string kKey = "pbdlab-fuzz-key";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string entry = pbdlab::fuzz::bytes(data + 1, size - 1);
  if ((data[0] & 1) && entry.size() >= 8) {
    const std::uint64_t checksum = pbdlab::fnv1a64(entry.data(), entry.size() - 8);
    std::memcpy(entry.data() + entry.size() - 8, &checksum, 8);
  }
  pbdlab::Mesh mesh;
  std::string why;
  try {
    if (pbdlab::deserializeMesh(entry, kKey, mesh, &why)) {
      // A hit is a valid mesh: indices in range, finite coordinates, positive volumes.
      pbdlab::validateMesh(mesh);
      for (const auto& [name, nodes] : mesh.node_sets)
        for (int node : nodes)
          if (node < 0 || node >= mesh.numNodes()) std::abort();
    } else if (why.empty()) {
      std::abort();  // a miss says why
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fuzz_mesh_cache: deserializeMesh threw: %s\n", error.what());
    std::abort();  // a cache entry never throws: it is a hit or a miss
  }
  return 0;
}
