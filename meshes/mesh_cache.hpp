#pragma once
// The on-disk mesh cache: generated meshes stored under a hash of their recipe, so repeated
// runs do not re-mesh (docs/meshes.md, "Cache").
//
// Location: $PBDLAB_CACHE_DIR if set ("off" turns the cache off), else
// $XDG_CACHE_HOME/pbdlab, else $HOME/.cache/pbdlab; entries are
// <dir>/meshes/<16 hex digits>.pbdmesh. An entry holds its full key (the canonical recipe
// text) and a checksum; an entry whose key or checksum does not match is a miss and is
// overwritten. Entries are written atomically (temporary file + rename), so concurrent runs
// never read a half-written entry. Clearing: delete the folder <dir>/meshes.
#include <cstdint>
#include <string>

#include "core/fem/mesh.hpp"

namespace pbdlab {

// FNV-1a, 64 bit.
std::uint64_t fnv1a64(const void* data, std::size_t size, std::uint64_t seed = 14695981039346656037ull);
std::string hex16(std::uint64_t value);

// The cache folder from the environment as described above; "" when the cache is off or no
// folder can be determined.
std::string meshCacheDirFromEnvironment();

class MeshCache {
 public:
  MeshCache() = default;  // off
  explicit MeshCache(std::string dir) : dir_(std::move(dir)) {}
  static MeshCache fromEnvironment() { return MeshCache(meshCacheDirFromEnvironment()); }

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  // <dir>/meshes/<hex16(fnv1a64(key))>.pbdmesh
  std::string entryPath(const std::string& key) const;

  // Loads the entry of `key` into `mesh`; false (and `why` says why) on a miss.
  bool load(const std::string& key, Mesh& mesh, std::string* why = nullptr) const;
  // Stores the mesh under `key`; false (and `why`) if it cannot be written. Never throws for
  // I/O problems: a cache that cannot be written only costs time.
  bool store(const std::string& key, const Mesh& mesh, std::string* why = nullptr) const;

 private:
  std::string dir_;
};

// The entry format, exposed for tests: magic, version, key, mesh, FNV-1a checksum.
std::string serializeMesh(const Mesh& mesh, const std::string& key);
bool deserializeMesh(const std::string& bytes, const std::string& key, Mesh& mesh, std::string* why = nullptr);

}  // namespace pbdlab
