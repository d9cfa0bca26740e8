#include "meshes/vtu_writer.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "core/fem/reference_element.hpp"
#include "core/support/atomic_file.hpp"

namespace pbdlab {

int vtkCellType(ElementType type) {
  switch (type) {
    case ElementType::kTet4: return 10;      // VTK_TETRA
    case ElementType::kTet10: return 24;     // VTK_QUADRATIC_TETRA
    case ElementType::kTet20: return 71;     // VTK_LAGRANGE_TETRAHEDRON
    case ElementType::kHex8: return 12;      // VTK_HEXAHEDRON
    case ElementType::kPrism6: return 13;    // VTK_WEDGE
    case ElementType::kPyramid5: return 14;  // VTK_PYRAMID
    case ElementType::kTri3: return 5;       // VTK_TRIANGLE
  }
  throw std::invalid_argument("vtkCellType: unknown element type");
}

std::vector<Vec3> vtkReferenceCoordinates(ElementType type) {
  // The parametric coordinates of VTK's cells (vtkTetra, vtkQuadraticTetra,
  // vtkHigherOrderTetra, vtkHexahedron, vtkWedge, vtkPyramid, vtkTriangle).
  const std::vector<Vec3> tet = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)};
  switch (type) {
    case ElementType::kTet4: return tet;
    case ElementType::kTet10: {
      std::vector<Vec3> r = tet;
      for (const Vec3& p : {Vec3(.5, 0, 0), Vec3(.5, .5, 0), Vec3(0, .5, 0), Vec3(0, 0, .5), Vec3(.5, 0, .5), Vec3(0, .5, .5)})
        r.push_back(p);
      return r;
    }
    case ElementType::kTet20: {
      // vtkHigherOrderTetra (Lagrange, order 3): the corners; the edges (0,1) (1,2) (2,0) (0,3)
      // (1,3) (2,3), each edge's nodes from its first vertex to its second; then one node per
      // face, the faces in the order of their constant barycentric coordinate (FaceMinCoord):
      // (0,1,3) (1,2,3) (0,2,3) (0,1,2).
      std::vector<Vec3> r = tet;
      const int edges[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};
      for (const auto& e : edges)
        for (int j = 1; j <= 2; ++j) r.push_back(tet[e[0]] + (j / 3.0) * (tet[e[1]] - tet[e[0]]));
      const int faces[4][3] = {{0, 1, 3}, {1, 2, 3}, {0, 2, 3}, {0, 1, 2}};
      for (const auto& f : faces) r.push_back((tet[f[0]] + tet[f[1]] + tet[f[2]]) / 3.0);
      return r;
    }
    case ElementType::kHex8:
      return {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(1, 1, 0), Vec3(0, 1, 0),
              Vec3(0, 0, 1), Vec3(1, 0, 1), Vec3(1, 1, 1), Vec3(0, 1, 1)};
    case ElementType::kPrism6:
      // vtkWedge documents its orientation as "(0,1,2) is the base of the wedge which, using
      // the right hand rule, forms a triangle whose normal points away from the triangular
      // face (3,4,5)", and its face table ({0,1,2}, {3,5,4}, {0,3,4,1}, ...) lists outward
      // faces. vtkWedge::GetParametricCoords() lists (0,0,0) (1,0,0) (0,1,0) ..., whose
      // (0,1,2) normal points towards (3,4,5): that table is the mirror image of the documented
      // cell. These are the coordinates of the documented (outward-faced) wedge: r and s
      // exchanged. Gmsh's own VTK export (MPrism::getVertexVTK) agrees.
      return {Vec3(0, 0, 0), Vec3(0, 1, 0), Vec3(1, 0, 0), Vec3(0, 0, 1), Vec3(0, 1, 1), Vec3(1, 0, 1)};
    case ElementType::kPyramid5:
      return {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(1, 1, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)};
    case ElementType::kTri3: return {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)};
  }
  throw std::invalid_argument("vtkReferenceCoordinates: unknown element type");
}

Vec3 gmshToVtkReference(ElementType type, const Vec3& r) {
  switch (type) {
    case ElementType::kTet4:
    case ElementType::kTet10:
    case ElementType::kTet20:
    case ElementType::kTri3: return r;  // the same unit simplex
    case ElementType::kHex8: return (r + Vec3::Ones()) / 2.0;  // [-1,1]^3 -> [0,1]^3
    case ElementType::kPrism6: return Vec3(r.x(), r.y(), (r.z() + 1.0) / 2.0);  // w in [-1,1] -> [0,1]
    case ElementType::kPyramid5: {
      // Gmsh: base [-1,1]^2 at w = 0, apex (0,0,1); VTK: a cube [0,1]^3 whose top face
      // collapses to the apex, listed as (0,0,1).
      if (r.z() >= 1.0) return Vec3(0, 0, 1);
      const double s = 1.0 - r.z();
      return Vec3((r.x() / s + 1.0) / 2.0, (r.y() / s + 1.0) / 2.0, r.z());
    }
  }
  throw std::invalid_argument("gmshToVtkReference: unknown element type");
}

namespace {

std::vector<int> deriveVtkNodeOrder(ElementType type) {
  const std::vector<Vec3>& gmsh = ReferenceElement::of(type).nodeCoordinates();
  const std::vector<Vec3> vtk = vtkReferenceCoordinates(type);
  if (gmsh.size() != vtk.size()) throw std::logic_error("vtkNodeOrder: node counts differ for " + elementTypeName(type));
  std::vector<int> order(vtk.size(), -1);
  std::vector<bool> taken(gmsh.size(), false);
  for (std::size_t i = 0; i < vtk.size(); ++i) {
    for (std::size_t j = 0; j < gmsh.size(); ++j) {
      if ((gmshToVtkReference(type, gmsh[j]) - vtk[i]).norm() < 1e-9) {
        if (order[i] >= 0 || taken[j]) throw std::logic_error("vtkNodeOrder: ambiguous match for " + elementTypeName(type));
        order[i] = static_cast<int>(j);
        taken[j] = true;
      }
    }
    if (order[i] < 0) throw std::logic_error("vtkNodeOrder: VTK node " + std::to_string(i) + " of " + elementTypeName(type) + " has no Gmsh node");
  }
  return order;
}

}  // namespace

const std::vector<int>& vtkNodeOrder(ElementType type) {
  static const std::vector<std::vector<int>> orders = [] {
    std::vector<std::vector<int>> all;
    for (ElementType t : allElementTypes()) {
      const std::size_t i = static_cast<std::size_t>(t);
      if (all.size() <= i) all.resize(i + 1);
      all[i] = deriveVtkNodeOrder(t);
    }
    return all;
  }();
  return orders.at(static_cast<std::size_t>(type));
}

namespace {

std::string xmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

void checkFields(const std::string& path, const std::vector<VtuField>& fields, int count,
                 const char* where, std::set<std::string>& names) {
  for (const VtuField& f : fields) {
    const std::string what = "writeVtu('" + path + "'): " + where + " field '" + f.name + "': ";
    if (f.name.empty()) throw std::invalid_argument(what + "empty name");
    if (f.components != 1 && f.components != 3) {
      throw std::invalid_argument(what + "components must be 1 or 3, got " +
                                  std::to_string(f.components));
    }
    const std::size_t expected = static_cast<std::size_t>(count) * f.components;
    if (f.values.size() != expected) {
      throw std::invalid_argument(what + std::to_string(f.values.size()) + " values, expected " +
                                  std::to_string(expected) + " (" + std::to_string(count) +
                                  " x " + std::to_string(f.components) + ")");
    }
    if (!names.insert(f.name).second) throw std::invalid_argument(what + "duplicate name");
  }
}

// Host byte order, written into the file (VTK and meshio read either).
bool littleEndian() {
  const std::uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

std::string base64(const unsigned char* data, std::size_t n) {
  static const char kTable[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < n; i += 3) {
    const std::uint32_t v = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8) | data[i + 2];
    out += kTable[(v >> 18) & 63];
    out += kTable[(v >> 12) & 63];
    out += kTable[(v >> 6) & 63];
    out += kTable[v & 63];
  }
  if (i + 1 == n) {
    const std::uint32_t v = std::uint32_t{data[i]} << 16;
    out += kTable[(v >> 18) & 63];
    out += kTable[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == n) {
    const std::uint32_t v = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8);
    out += kTable[(v >> 18) & 63];
    out += kTable[(v >> 12) & 63];
    out += kTable[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// VTK's vtkZLibDataCompressor layout with header_type UInt64: the header [number of blocks,
// uncompressed block size, uncompressed size of the last block if partial (else 0), compressed
// size of each block], then the compressed blocks. VTK's default block size, 32 KiB.
constexpr std::size_t kBlockSize = 32768;

struct Compressed {
  std::vector<std::uint64_t> header;
  std::string blocks;
};

Compressed compress(const std::string& path, const unsigned char* data, std::size_t n) {
  Compressed c;
  const std::size_t count = (n + kBlockSize - 1) / kBlockSize;
  c.header = {count, kBlockSize, n % kBlockSize};
  std::vector<unsigned char> buffer(compressBound(kBlockSize));
  for (std::size_t b = 0; b < count; ++b) {
    const std::size_t size = std::min(kBlockSize, n - b * kBlockSize);
    uLongf written = static_cast<uLongf>(buffer.size());
    if (compress2(buffer.data(), &written, data + b * kBlockSize, static_cast<uLong>(size), Z_DEFAULT_COMPRESSION) != Z_OK)
      throw std::runtime_error("writeVtu('" + path + "'): zlib compression failed");
    c.header.push_back(written);
    c.blocks.append(reinterpret_cast<const char*>(buffer.data()), written);
  }
  return c;
}

// Writes DataArray elements in one of the three formats; the appended bytes are collected for
// the <AppendedData> section at the end.
class ArrayWriter {
 public:
  ArrayWriter(std::ostringstream& xml, VtuFormat format, std::string path)
      : xml_(xml), format_(format), path_(std::move(path)) {}

  template <class T>
  void write(const char* vtk_type, const std::string& name, int components, const T* values, std::size_t n,
             int per_line) {
    xml_ << "        <DataArray type=\"" << vtk_type << "\" Name=\"" << xmlEscape(name) << '"';
    if (components > 1) xml_ << " NumberOfComponents=\"" << components << '"';
    if (format_ == VtuFormat::kAscii) {
      xml_ << " format=\"ascii\">\n";
      for (std::size_t i = 0; i < n; i += static_cast<std::size_t>(per_line)) {
        xml_ << "         ";
        for (std::size_t k = i; k < std::min(n, i + static_cast<std::size_t>(per_line)); ++k) {
          if constexpr (std::is_floating_point_v<T>) xml_ << ' ' << values[k];
          else xml_ << ' ' << static_cast<long long>(values[k]);
        }
        xml_ << '\n';
      }
      xml_ << "        </DataArray>\n";
      return;
    }
    const Compressed c = compress(path_, reinterpret_cast<const unsigned char*>(values), n * sizeof(T));
    const auto* header = reinterpret_cast<const unsigned char*>(c.header.data());
    const std::size_t header_bytes = c.header.size() * sizeof(std::uint64_t);
    if (format_ == VtuFormat::kBase64) {
      // As VTK writes it: the header and the blocks encoded separately.
      xml_ << " format=\"binary\">\n          " << base64(header, header_bytes)
           << base64(reinterpret_cast<const unsigned char*>(c.blocks.data()), c.blocks.size())
           << "\n        </DataArray>\n";
    } else {
      xml_ << " format=\"appended\" offset=\"" << appended_.size() << "\"/>\n";
      appended_.append(reinterpret_cast<const char*>(header), header_bytes);
      appended_ += c.blocks;
    }
  }

  const std::string& appended() const { return appended_; }

 private:
  std::ostringstream& xml_;
  VtuFormat format_;
  std::string path_;
  std::string appended_;
};

}  // namespace

const char* vtuFormatName(VtuFormat format) {
  switch (format) {
    case VtuFormat::kBinary: return "binary";
    case VtuFormat::kBase64: return "base64";
    case VtuFormat::kAscii: return "ascii";
  }
  throw std::invalid_argument("vtuFormatName: unknown format");
}

VtuFormat vtuFormatFromName(const std::string& name) {
  for (VtuFormat f : {VtuFormat::kBinary, VtuFormat::kBase64, VtuFormat::kAscii})
    if (name == vtuFormatName(f)) return f;
  throw std::invalid_argument("unknown .vtu format '" + name + "' (known: binary, base64, ascii)");
}

void writeVtu(const std::string& path, const Mesh& mesh, const Positions& x,
              const std::vector<VtuField>& point_fields,
              const std::vector<VtuField>& cell_fields, VtuFormat format) {
  // The mesh is not copied: a non-owning pointer to it as the one block.
  const std::shared_ptr<const Mesh> block(&mesh, [](const Mesh*) {});
  writeVtu(path, std::vector<std::shared_ptr<const Mesh>>{block}, x, point_fields, cell_fields, format);
}

void writeVtu(const std::string& path, const std::vector<std::shared_ptr<const Mesh>>& blocks, const Positions& x,
              const std::vector<VtuField>& point_fields,
              const std::vector<VtuField>& cell_fields, VtuFormat format) {
  if (blocks.empty()) throw std::invalid_argument("writeVtu('" + path + "'): no element block");
  const Mesh& mesh = *blocks.front();  // the nodes (every block has the same)
  const int n_nodes = mesh.numNodes();
  if (x.size() != 3 * static_cast<Eigen::Index>(n_nodes)) {
    throw std::invalid_argument("writeVtu('" + path + "'): positions have " +
                                std::to_string(x.size()) + " values, expected " +
                                std::to_string(3 * static_cast<long>(n_nodes)));
  }
  int n_cells = 0;
  std::size_t n_connectivity = 0;
  for (const auto& block : blocks) {
    if (block != blocks.front() &&
        (block->numNodes() != n_nodes || (block->rest_positions.array() != mesh.rest_positions.array()).any()))
      throw std::invalid_argument("writeVtu('" + path + "'): the element blocks do not share their nodes (" +
                                  block->source + " and " + mesh.source + ")");
    const int per_cell = nodesPerElement(block->element_type);
    if (block->numElements() > 0 && block->elements.cols() != per_cell) {
      throw std::invalid_argument("writeVtu('" + path + "'): the connectivity has " + std::to_string(block->elements.cols()) +
                                  " columns, a " + elementTypeName(block->element_type) + " has " +
                                  std::to_string(per_cell) + " nodes");
    }
    n_cells += block->numElements();
    n_connectivity += static_cast<std::size_t>(block->numElements()) * static_cast<std::size_t>(per_cell);
  }
  std::set<std::string> point_names{"displacement"}, cell_names;
  checkFields(path, point_fields, n_nodes, "point", point_names);
  checkFields(path, cell_fields, n_cells, "cell", cell_names);
  std::ostringstream out;
  out << std::setprecision(std::numeric_limits<double>::max_digits10);
  out << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\""
      << (littleEndian() ? "LittleEndian" : "BigEndian") << "\" header_type=\"UInt64\""
      << (format == VtuFormat::kAscii ? "" : " compressor=\"vtkZLibDataCompressor\"") << ">\n"
      << "  <UnstructuredGrid>\n"
      << "    <Piece NumberOfPoints=\"" << n_nodes << "\" NumberOfCells=\"" << n_cells << "\">\n";
  ArrayWriter arrays(out, format, path);

  // Points at rest, the motion in "displacement" (the active vectors: Warp By Vector's input).
  out << "      <PointData Vectors=\"displacement\">\n";
  const Positions rest = mesh.restPositionsFlat();
  const Positions displacement = x - rest;
  arrays.write("Float64", "displacement", 3, displacement.data(), static_cast<std::size_t>(displacement.size()), 3);
  for (const VtuField& f : point_fields)
    arrays.write("Float64", f.name, f.components, f.values.data(), f.values.size(), f.components);
  out << "      </PointData>\n";

  out << "      <CellData>\n";
  for (const VtuField& f : cell_fields)
    arrays.write("Float64", f.name, f.components, f.values.data(), f.values.size(), f.components);
  out << "      </CellData>\n";

  out << "      <Points>\n";
  arrays.write("Float64", "Points", 3, rest.data(), static_cast<std::size_t>(rest.size()), 3);
  out << "      </Points>\n";

  // Cells of every block in block order, each block with its VTK type and node order.
  std::vector<std::int64_t> connectivity;
  std::vector<std::int64_t> offsets;
  std::vector<std::uint8_t> types;
  connectivity.reserve(n_connectivity);
  offsets.reserve(static_cast<std::size_t>(n_cells));
  types.reserve(static_cast<std::size_t>(n_cells));
  int widest = 1;  // the largest cell, for ASCII line breaks
  for (const auto& block : blocks) {
    const std::uint8_t vtk_type = static_cast<std::uint8_t>(vtkCellType(block->element_type));
    const std::vector<int>& order = vtkNodeOrder(block->element_type);
    const int per_cell = static_cast<int>(order.size());
    widest = std::max(widest, per_cell);
    for (int e = 0; e < block->numElements(); ++e) {
      for (int k = 0; k < per_cell; ++k) connectivity.push_back(block->elements(e, order[static_cast<std::size_t>(k)]));
      offsets.push_back(static_cast<std::int64_t>(connectivity.size()));
      types.push_back(vtk_type);
    }
  }
  out << "      <Cells>\n";
  arrays.write("Int64", "connectivity", 1, connectivity.data(), connectivity.size(), blocks.size() == 1 ? widest : 1);
  arrays.write("Int64", "offsets", 1, offsets.data(), offsets.size(), 1);
  arrays.write("UInt8", "types", 1, types.data(), types.size(), 1);
  out << "      </Cells>\n"
      << "    </Piece>\n"
      << "  </UnstructuredGrid>\n";
  if (format == VtuFormat::kBinary) {
    // "_" starts the data (offsets count from the byte after it); the newline before the closing
    // tag is what meshio's reader strips.
    out << "  <AppendedData encoding=\"raw\">\n   _" << arrays.appended() << "\n  </AppendedData>\n";
  }
  out << "</VTKFile>\n";

  writeFileAtomically(path, out.str());
}

void writePvd(const std::string& path, const std::vector<PvdEntry>& entries) {
  std::ostringstream out;
  out << std::setprecision(std::numeric_limits<double>::max_digits10);
  out << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"Collection\" version=\"0.1\">\n"
      << "  <Collection>\n";
  for (const PvdEntry& e : entries) {
    if (!std::isfinite(e.time)) throw std::invalid_argument("writePvd('" + path + "'): time of '" + e.file + "' is not finite");
    out << "    <DataSet timestep=\"" << e.time << "\" group=\"\" part=\"0\" file=\"" << xmlEscape(e.file) << "\"/>\n";
  }
  out << "  </Collection>\n"
      << "</VTKFile>\n";
  writeFileAtomically(path, out.str());
}

}  // namespace pbdlab
