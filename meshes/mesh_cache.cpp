#include "meshes/mesh_cache.hpp"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/support/atomic_file.hpp"

namespace pbdlab {

std::uint64_t fnv1a64(const void* data, std::size_t size, std::uint64_t seed) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = seed;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex16(std::uint64_t value) {
  static const char* const kDigits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) out[static_cast<std::size_t>(i)] = kDigits[value & 15];
  return out;
}

std::string meshCacheDirFromEnvironment() {
  if (const char* dir = std::getenv("PBDLAB_CACHE_DIR"); dir && *dir) {
    return std::string(dir) == "off" ? std::string() : std::string(dir);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (std::filesystem::path(xdg) / "pbdlab").string();
  if (const char* home = std::getenv("HOME"); home && *home) {
    return (std::filesystem::path(home) / ".cache" / "pbdlab").string();
  }
  return "";
}

std::string MeshCache::entryPath(const std::string& key) const {
  return (std::filesystem::path(dir_) / "meshes" / (hex16(fnv1a64(key.data(), key.size())) + ".pbdmesh")).string();
}

namespace {

constexpr char kMagic[8] = {'P', 'B', 'D', 'M', 'E', 'S', 'H', '\0'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::uint32_t kByteOrder = 0x01020304u;

class Writer {
 public:
  template <class T>
  void pod(const T& v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void bytes(const void* p, std::size_t n) {
    if (n > 0) out_.append(static_cast<const char*>(p), n);
  }
  void text(const std::string& s) {
    pod(static_cast<std::uint64_t>(s.size()));
    out_ += s;
  }
  std::string& str() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(const std::string& in, std::size_t end) : in_(in), end_(end) {}
  template <class T>
  bool pod(T& v) {
    return bytes(&v, sizeof v);
  }
  bool bytes(void* p, std::size_t n) {
    if (n > end_ - pos_) return false;
    if (n == 0) return true;  // p may be null (an empty matrix's data)
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool text(std::string& s) {
    std::uint64_t n;
    if (!pod(n) || n > end_ - pos_) return false;
    s.assign(in_, pos_, n);
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == end_; }
  std::size_t remaining() const { return end_ - pos_; }

 private:
  const std::string& in_;
  std::size_t end_;
  std::size_t pos_ = 0;
};

bool miss(std::string* why, const std::string& reason) {
  if (why) *why = reason;
  return false;
}

}  // namespace

std::string serializeMesh(const Mesh& mesh, const std::string& key) {
  Writer w;
  w.bytes(kMagic, sizeof kMagic);
  w.pod(kFormatVersion);
  w.pod(kByteOrder);
  w.text(key);
  w.text(elementTypeName(mesh.element_type));
  w.text(mesh.source);
  const std::int64_t n = mesh.numNodes(), m = mesh.numElements(), per = mesh.elements.cols();
  w.pod(n);
  w.pod(m);
  w.pod(per);
  w.bytes(mesh.rest_positions.data(), sizeof(double) * static_cast<std::size_t>(3 * n));  // row-major
  w.bytes(mesh.elements.data(), sizeof(int) * static_cast<std::size_t>(m * per));        // row-major
  w.pod(static_cast<std::uint64_t>(mesh.node_sets.size()));
  for (const auto& [name, nodes] : mesh.node_sets) {
    w.text(name);
    w.pod(static_cast<std::uint64_t>(nodes.size()));
    w.bytes(nodes.data(), sizeof(int) * nodes.size());
  }
  const std::uint64_t checksum = fnv1a64(w.str().data(), w.str().size());
  w.pod(checksum);
  return std::move(w.str());
}

bool deserializeMesh(const std::string& bytes, const std::string& key, Mesh& mesh, std::string* why) {
  if (bytes.size() < sizeof kMagic + sizeof(std::uint64_t)) return miss(why, "entry too short");
  const std::size_t body = bytes.size() - sizeof(std::uint64_t);
  std::uint64_t checksum;
  std::memcpy(&checksum, bytes.data() + body, sizeof checksum);
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return miss(why, "not a pbdlab mesh cache entry");
  if (fnv1a64(bytes.data(), body) != checksum) return miss(why, "checksum mismatch (truncated or corrupt entry)");
  Reader r(bytes, body);
  char magic[sizeof kMagic];
  std::uint32_t version = 0, order = 0;
  std::string stored_key, type_name, source;
  if (!r.bytes(magic, sizeof magic) || !r.pod(version) || !r.pod(order)) return miss(why, "truncated header");
  if (version != kFormatVersion) return miss(why, "entry format " + std::to_string(version));
  if (order != kByteOrder) return miss(why, "entry written with another byte order");
  if (!r.text(stored_key)) return miss(why, "truncated key");
  if (stored_key != key) return miss(why, "another recipe has the same hash");
  Mesh out;
  std::int64_t n = 0, m = 0, per = 0;
  if (!r.text(type_name) || !r.text(source) || !r.pod(n) || !r.pod(m) || !r.pod(per)) return miss(why, "truncated mesh header");
  try {
    out.element_type = parseElementType(type_name);
  } catch (const std::invalid_argument&) {
    return miss(why, "unknown element type '" + type_name + "'");
  }
  if (n < 0 || m < 0 || per != nodesPerElement(out.element_type) || n > (1ll << 31) || m > (1ll << 31)) {
    return miss(why, "bad sizes");
  }
  if (n == 0 || m == 0) return miss(why, "an empty mesh");  // pbdlab stores no empty mesh
  // The sizes must match the bytes present before anything is allocated for them (a corrupt
  // entry that passed the checksum must not ask for gigabytes).
  const std::uint64_t data_bytes = sizeof(double) * 3 * static_cast<std::uint64_t>(n) +
                                   sizeof(int) * static_cast<std::uint64_t>(m) * static_cast<std::uint64_t>(per);
  if (data_bytes > r.remaining()) return miss(why, "truncated mesh data");
  out.source = source;
  out.rest_positions.resize(n, 3);
  out.elements.resize(m, per);
  if (!r.bytes(out.rest_positions.data(), sizeof(double) * static_cast<std::size_t>(3 * n)) ||
      !r.bytes(out.elements.data(), sizeof(int) * static_cast<std::size_t>(m * per))) {
    return miss(why, "truncated mesh data");
  }
  std::uint64_t n_sets = 0;
  if (!r.pod(n_sets)) return miss(why, "truncated node sets");
  for (std::uint64_t s = 0; s < n_sets; ++s) {
    std::string name;
    std::uint64_t count = 0;
    if (!r.text(name) || !r.pod(count) || count > static_cast<std::uint64_t>(n) || sizeof(int) * count > r.remaining())
      return miss(why, "truncated node set");
    std::vector<int> nodes(count);
    if (!r.bytes(nodes.data(), sizeof(int) * count)) return miss(why, "truncated node set");
    for (int node : nodes)
      if (node < 0 || node >= n) return miss(why, "node set '" + name + "' holds node " + std::to_string(node) + ", out of range");
    if (!out.node_sets.emplace(std::move(name), std::move(nodes)).second) return miss(why, "a node set appears twice");
  }
  if (!r.done()) return miss(why, "trailing bytes");
  // Never trusted: the mesh must be valid (finite coordinates, node indices in range, no
  // inverted or degenerate element), as the mesh it was made from was.
  try {
    validateMesh(out);
  } catch (const std::exception& e) {
    return miss(why, std::string("not a valid mesh (") + e.what() + ")");
  }
  mesh = std::move(out);
  return true;
}

bool MeshCache::load(const std::string& key, Mesh& mesh, std::string* why) const {
  if (!enabled()) return miss(why, "cache off");
  const std::string path = entryPath(key);
  std::ifstream file(path, std::ios::binary);
  if (!file) return miss(why, "no entry");
  file.seekg(0, std::ios::end);
  const std::streamoff size = file.tellg();
  if (size < 0) return miss(why, "cannot read the entry");
  std::string bytes(static_cast<std::size_t>(size), '\0');
  file.seekg(0);
  file.read(bytes.data(), size);
  if (!file) return miss(why, "cannot read the entry");
  return deserializeMesh(bytes, key, mesh, why);
}

bool MeshCache::store(const std::string& key, const Mesh& mesh, std::string* why) const {
  if (!enabled()) return miss(why, "cache off");
  try {
    const std::string path = entryPath(key);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    writeFileAtomically(path, serializeMesh(mesh, key));
    return true;
  } catch (const std::exception& e) {
    return miss(why, e.what());
  }
}

}  // namespace pbdlab
