// .vtu output: counts, cell types, the Gmsh -> VTK node permutations (derived from the
// reference coordinates, checked against Gmsh's getElementProperties and VTK's outward face
// tables), fields read back in each format (appended raw and base64 zlib-compressed, ASCII)
// by the test's own decoder, the ParaView collection (.pvd); failures leave no file.
#include <gmsh.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "core/fem/reference_element.hpp"
#include "mesh_checks.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "meshes/gmsh_session.hpp"
#include "meshes/vtu_writer.hpp"

namespace pbdlab {
namespace {

namespace fs = std::filesystem;

fs::path freshTempDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() /
                       ("pbdlab_test_vtu_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string attributeText(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const std::size_t at = tag.find(key);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + key.size();
  return tag.substr(begin, tag.find('"', begin) - begin);
}

// An independent reader of the three layouts (base64 decoding and zlib's uncompress here,
// VTK's header_type UInt64 compression header [blocks, block size, last partial block size,
// compressed sizes...]).
std::string decodeBase64(const std::string& text) {
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else if (c == '=') { buffer = 0; bits = 0; continue; }  // padding ends a separately encoded part
    else continue;
    buffer = (buffer << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

std::uint64_t headerItem(const std::string& bytes, std::size_t i) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + 8 * i, 8);
  return v;
}

// The uncompressed bytes of a compressed array whose header and blocks are `bytes`; checks the
// header's sizes, and that the array takes exactly `stored` bytes (when known: 0 = unknown).
std::string decompressArray(const std::string& bytes, std::size_t stored = 0) {
  const std::uint64_t blocks = headerItem(bytes, 0);
  const std::uint64_t block_size = headerItem(bytes, 1);
  const std::uint64_t last_size = headerItem(bytes, 2);
  EXPECT_EQ(block_size, 32768u);
  std::size_t at = 8 * (3 + blocks);
  std::string out;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const std::uint64_t compressed = headerItem(bytes, 3 + b);
    const std::uint64_t expected = (b + 1 == blocks && last_size != 0) ? last_size : block_size;
    std::string block(expected, '\0');
    uLongf size = static_cast<uLongf>(expected);
    EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(&block[0]), &size,
                         reinterpret_cast<const Bytef*>(bytes.data() + at), static_cast<uLong>(compressed)),
              Z_OK) << "block " << b;
    EXPECT_EQ(size, expected) << "block " << b;
    out += block.substr(0, size);
    at += compressed;
  }
  if (stored != 0) {
    EXPECT_EQ(at, stored) << "the header's sizes do not add up to the array's bytes";
  }
  return out;
}

template <class T>
std::vector<double> asDoubles(const std::string& bytes) {
  std::vector<double> values(bytes.size() / sizeof(T));
  for (std::size_t i = 0; i < values.size(); ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    values[i] = static_cast<double>(v);
  }
  return values;
}

// The numbers of the DataArray whose Name is `name`, in whichever format it was written.
std::vector<double> dataArray(const std::string& text, const std::string& name) {
  const std::string open = "Name=\"" + name + "\"";
  const std::size_t at = text.find(open);
  if (at == std::string::npos) return {};
  const std::size_t tag_begin = text.rfind('<', at);
  const std::size_t tag_end = text.find('>', at);
  const std::string tag = text.substr(tag_begin, tag_end - tag_begin);
  const std::string format = attributeText(tag, "format");
  const std::string type = attributeText(tag, "type");
  std::string bytes;
  if (format == "ascii") {
    const std::size_t end = text.find("</DataArray>", tag_end);
    std::istringstream in(text.substr(tag_end + 1, end - tag_end - 1));
    std::vector<double> values;
    double v;
    while (in >> v) values.push_back(v);
    return values;
  } else if (format == "binary") {
    const std::size_t end = text.find("</DataArray>", tag_end);
    std::string encoded;
    for (std::size_t i = tag_end + 1; i < end; ++i)
      if (!std::isspace(static_cast<unsigned char>(text[i]))) encoded += text[i];
    // The header is encoded on its own: decode the block count, then the header, then the rest.
    const std::uint64_t blocks = headerItem(decodeBase64(encoded.substr(0, 12)), 0);
    const std::size_t header_chars = (8 * (3 + blocks) + 2) / 3 * 4;
    bytes = decodeBase64(encoded.substr(0, header_chars)).substr(0, 8 * (3 + blocks)) +
            decodeBase64(encoded.substr(header_chars));
    bytes = decompressArray(bytes, bytes.size());
  } else if (format == "appended") {
    const std::size_t section = text.find("<AppendedData encoding=\"raw\">");
    EXPECT_NE(section, std::string::npos);
    const std::size_t start = text.find('_', section) + 1;
    const std::size_t end = text.rfind("\n  </AppendedData>");
    // The array ends where the next one (the next larger offset) or the data begins.
    const std::size_t offset = std::stoull(attributeText(tag, "offset"));
    std::size_t next = end - start;
    for (std::size_t at_offset = text.find(" offset=\""); at_offset < section;
         at_offset = text.find(" offset=\"", at_offset + 1)) {
      const std::size_t other = std::stoull(text.substr(at_offset + 9));
      if (other > offset) next = std::min(next, other);
    }
    bytes = decompressArray(text.substr(start + offset, next - offset), next - offset);
  } else {
    ADD_FAILURE() << "unknown format '" << format << "' of " << name;
    return {};
  }
  if (type == "Float64") return asDoubles<double>(bytes);
  if (type == "Int64") return asDoubles<std::int64_t>(bytes);
  if (type == "UInt8") return asDoubles<std::uint8_t>(bytes);
  ADD_FAILURE() << "unknown type '" << type << "' of " << name;
  return {};
}

const VtuFormat kFormats[] = {VtuFormat::kBinary, VtuFormat::kBase64, VtuFormat::kAscii};

int attribute(const std::string& text, const std::string& name) {
  std::smatch m;
  const std::regex re(name + "=\"([0-9]+)\"");
  if (!std::regex_search(text, m, re)) return -1;
  return std::stoi(m[1]);
}

BoxMeshRecipe smallBox() {
  BoxMeshRecipe recipe;
  recipe.size = Vec3(2.0, 1.0, 1.0);
  recipe.cells = {2, 1, 1};
  return recipe;
}

TEST(VtuWriter, WritesCountsCellTypesAndFields) {
  const Mesh mesh = makeBoxMesh(smallBox());
  ASSERT_EQ(mesh.numNodes(), 12);
  ASSERT_EQ(mesh.numElements(), 10);
  Positions x = mesh.restPositionsFlat();
  for (int n = 0; n < mesh.numNodes(); ++n) {
    x[3 * n + 0] += 0.1 * n + 1.0 / 3.0;  // not exactly representable: checks round-trip
    x[3 * n + 2] -= 0.25;
  }
  VtuField temperature{"temperature", 1, std::vector<double>(12)};
  for (int n = 0; n < 12; ++n) temperature.values[n] = 300.0 + n;
  VtuField energy{"energy", 1, std::vector<double>(10, 2.5)};
  VtuField stress{"stress <xx>", 3, std::vector<double>(30, -1.0)};

  for (VtuFormat format : kFormats) {
    SCOPED_TRACE(vtuFormatName(format));
    const fs::path dir = freshTempDir("ok");
    const fs::path path = dir / "frame.vtu";
    writeVtu(path.string(), mesh, x, {temperature}, {energy, stress}, format);
    const std::string text = readText(path);
    EXPECT_EQ(text.find("compressor=\"vtkZLibDataCompressor\"") != std::string::npos, format != VtuFormat::kAscii);
    EXPECT_EQ(text.find("<AppendedData") != std::string::npos, format == VtuFormat::kBinary);

    EXPECT_NE(text.find("<VTKFile type=\"UnstructuredGrid\""), std::string::npos);
    EXPECT_EQ(attribute(text, "NumberOfPoints"), 12);
    EXPECT_EQ(attribute(text, "NumberOfCells"), 10);

    const std::vector<double> types = dataArray(text, "types");
    ASSERT_EQ(types.size(), 10u);
    for (double t : types) EXPECT_EQ(t, 10.0);
    const std::vector<double> offsets = dataArray(text, "offsets");
    ASSERT_EQ(offsets.size(), 10u);
    EXPECT_EQ(offsets.back(), 40.0);
    const std::vector<double> connectivity = dataArray(text, "connectivity");
    ASSERT_EQ(connectivity.size(), 40u);
    for (int e = 0; e < 10; ++e) {
      for (int k = 0; k < 4; ++k) EXPECT_EQ(connectivity[4 * e + k], mesh.elements(e, k));
  }

  // The points at rest, the motion in "displacement" (Warp By Vector gives x).
  const Positions rest = mesh.restPositionsFlat();
  const std::vector<double> points = dataArray(text, "Points");
  ASSERT_EQ(points.size(), 36u);
  for (int i = 0; i < 36; ++i) EXPECT_EQ(points[i], rest[i]) << i;  // bit-exact round trip

  const std::vector<double> displacement = dataArray(text, "displacement");
  ASSERT_EQ(displacement.size(), 36u);
  for (int i = 0; i < 36; ++i) EXPECT_EQ(displacement[i], x[i] - rest[i]) << i;
  EXPECT_NE(text.find("<PointData Vectors=\"displacement\">"), std::string::npos);
  EXPECT_NEAR(displacement[2], -0.25, 1e-15);

  EXPECT_EQ(dataArray(text, "temperature"), temperature.values);
  EXPECT_EQ(dataArray(text, "energy"), energy.values);
  EXPECT_EQ(dataArray(text, "stress &lt;xx&gt;"), stress.values);
  EXPECT_EQ(text.find("stress <xx>"), std::string::npos);

  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "frame.vtu");
  }
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
  }
}

// Arrays longer than one 32 KiB compression block: several blocks, the last one partial (or
// full), read back exactly in both binary layouts.
TEST(VtuWriter, BinaryArraysOfSeveralBlocks) {
  BoxMeshRecipe recipe;
  recipe.cells = {12, 12, 12};  // 2197 nodes (52,728 bytes of points), 8640 tets
  const Mesh mesh = makeBoxMesh(recipe);
  Positions x = mesh.restPositionsFlat();
  for (Eigen::Index i = 0; i < x.size(); ++i) x[i] += 1e-3 * std::sin(0.37 * static_cast<double>(i));
  // 8640 values: 69,120 bytes, two full blocks and a partial one.
  VtuField full{"full", 1, std::vector<double>(static_cast<std::size_t>(mesh.numElements()))};
  for (std::size_t e = 0; e < full.values.size(); ++e) full.values[e] = 0.5 * static_cast<double>(e) - 7.0;
  const fs::path dir = freshTempDir("blocks");
  for (VtuFormat format : {VtuFormat::kBinary, VtuFormat::kBase64}) {
    SCOPED_TRACE(vtuFormatName(format));
    const fs::path path = dir / "big.vtu";
    writeVtu(path.string(), mesh, x, {}, {full}, format);
    const std::string text = readText(path);
    const std::vector<double> points = dataArray(text, "Points");
    ASSERT_EQ(points.size(), static_cast<std::size_t>(x.size()));
    const std::vector<double> displacement = dataArray(text, "displacement");
    ASSERT_EQ(displacement.size(), static_cast<std::size_t>(x.size()));
    const Positions rest = mesh.restPositionsFlat();
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      ASSERT_EQ(points[static_cast<std::size_t>(i)], rest[i]) << i;
      ASSERT_EQ(displacement[static_cast<std::size_t>(i)], x[i] - rest[i]) << i;
    }
    EXPECT_EQ(dataArray(text, "full"), full.values);
    const std::vector<double> connectivity = dataArray(text, "connectivity");
    ASSERT_EQ(connectivity.size(), static_cast<std::size_t>(4 * mesh.numElements()));
    for (int e = 0; e < mesh.numElements(); ++e)
      for (int k = 0; k < 4; ++k) ASSERT_EQ(connectivity[static_cast<std::size_t>(4 * e + k)], mesh.elements(e, k));
    // Compression pays: smaller than the raw bytes of the arrays.
    const std::size_t raw = 8 * (2 * x.size() + 5 * mesh.numElements() + full.values.size()) + mesh.numElements();
    EXPECT_LT(text.size(), raw / 2) << "raw " << raw;
  }
  fs::remove_all(dir);
}

// Element blocks of different types sharing one node numbering (a Problem whose bodies have
// different element types): one file, the cells of both blocks with their own VTK types.
TEST(VtuWriter, BlocksOfDifferentElementTypesInOneFile) {
  BoxMeshRecipe tet_recipe = smallBox();  // 12 nodes, 10 tets
  BoxMeshRecipe hex_recipe = smallBox();  // 12 nodes, 2 hexes
  hex_recipe.family = BoxFamily::kHex;
  hex_recipe.origin = Vec3(2.0, 0.0, 0.0);
  const Mesh tet = makeBoxMesh(tet_recipe), hex = makeBoxMesh(hex_recipe);
  ASSERT_EQ(hex.numElements(), 2);
  const int n = tet.numNodes() + hex.numNodes();
  MatX3 rest(n, 3);
  rest << tet.rest_positions, hex.rest_positions;
  auto block = [&](const Mesh& body, int first) {
    auto b = std::make_shared<Mesh>();
    b->rest_positions = rest;
    b->element_type = body.element_type;
    b->elements = body.elements.array() + first;
    return std::shared_ptr<const Mesh>(b);
  };
  const std::vector<std::shared_ptr<const Mesh>> blocks{block(tet, 0), block(hex, tet.numNodes())};
  Positions x = blocks[0]->restPositionsFlat();
  for (int i = 0; i < n; ++i) x[3 * i + 1] += 0.01 * i;
  VtuField cell{"cell", 1, std::vector<double>(12)};
  for (int e = 0; e < 12; ++e) cell.values[static_cast<std::size_t>(e)] = e;
  const std::vector<int>& hex_order = vtkNodeOrder(ElementType::kHex8);
  const fs::path dir = freshTempDir("mixed");
  for (VtuFormat format : kFormats) {
    SCOPED_TRACE(vtuFormatName(format));
    const fs::path path = dir / "mixed.vtu";
    writeVtu(path.string(), blocks, x, {}, {cell}, format);
    const std::string text = readText(path);
    EXPECT_EQ(attribute(text, "NumberOfPoints"), n);
    EXPECT_EQ(attribute(text, "NumberOfCells"), 12);
    const std::vector<double> types = dataArray(text, "types");
    ASSERT_EQ(types.size(), 12u);
    for (int e = 0; e < 12; ++e) EXPECT_EQ(types[static_cast<std::size_t>(e)], e < 10 ? 10.0 : 12.0) << e;
    const std::vector<double> offsets = dataArray(text, "offsets");
    ASSERT_EQ(offsets.size(), 12u);
    EXPECT_EQ(offsets[9], 40.0);
    EXPECT_EQ(offsets[10], 48.0);
    EXPECT_EQ(offsets[11], 56.0);
    const std::vector<double> connectivity = dataArray(text, "connectivity");
    ASSERT_EQ(connectivity.size(), 56u);
    for (int e = 0; e < 10; ++e)
      for (int k = 0; k < 4; ++k) EXPECT_EQ(connectivity[static_cast<std::size_t>(4 * e + k)], tet.elements(e, k));
    for (int e = 0; e < 2; ++e)
      for (int k = 0; k < 8; ++k)
        EXPECT_EQ(connectivity[static_cast<std::size_t>(40 + 8 * e + k)],
                  hex.elements(e, hex_order[static_cast<std::size_t>(k)]) + tet.numNodes());
    EXPECT_EQ(dataArray(text, "cell"), cell.values);
    const std::vector<double> displacement = dataArray(text, "displacement");
    ASSERT_EQ(displacement.size(), static_cast<std::size_t>(3 * n));
    const Positions rest_flat = blocks[0]->restPositionsFlat();
    for (int i = 0; i < 3 * n; ++i) EXPECT_EQ(displacement[static_cast<std::size_t>(i)], x[i] - rest_flat[i]) << i;
  }
  // A cell field sized for one block only, and blocks that do not share their nodes, are refused.
  VtuField short_field{"short", 1, std::vector<double>(10)};
  EXPECT_THROW(writeVtu((dir / "bad.vtu").string(), blocks, x, {}, {short_field}), std::invalid_argument);
  auto other = std::make_shared<Mesh>(*blocks[1]);
  other->rest_positions(0, 0) += 1.0;
  EXPECT_THROW(writeVtu((dir / "bad.vtu").string(), {blocks[0], other}, x), std::invalid_argument);
  EXPECT_FALSE(fs::exists(dir / "bad.vtu"));
  fs::remove_all(dir);
}

TEST(VtuWriter, FormatNames) {
  for (VtuFormat format : kFormats) EXPECT_EQ(vtuFormatFromName(vtuFormatName(format)), format);
  EXPECT_STREQ(vtuFormatName(VtuFormat::kBinary), "binary");
  EXPECT_THROW(vtuFormatFromName("raw"), std::invalid_argument);
}

// The ParaView collection: one DataSet per file with its time; written atomically.
TEST(Pvd, ListsEveryFileWithItsTime) {
  const fs::path dir = freshTempDir("pvd");
  const fs::path path = dir / "steps.pvd";
  writePvd(path.string(), {{0.1, "step_0001.vtu"}, {0.2, "step_0002.vtu"}, {1.0 / 3.0, "a&b.vtu"}});
  const std::string text = readText(path);
  EXPECT_NE(text.find("<VTKFile type=\"Collection\""), std::string::npos);
  EXPECT_NE(text.find("<DataSet timestep=\"0.10000000000000001\" group=\"\" part=\"0\" file=\"step_0001.vtu\"/>"),
            std::string::npos) << text;
  EXPECT_NE(text.find("file=\"a&amp;b.vtu\""), std::string::npos);
  std::size_t count = 0;
  for (std::size_t at = text.find("<DataSet"); at != std::string::npos; at = text.find("<DataSet", at + 1)) ++count;
  EXPECT_EQ(count, 3u);
  EXPECT_THROW(writePvd(path.string(), {{std::nan(""), "x.vtu"}}), std::invalid_argument);
  EXPECT_THROW(writePvd((dir / "absent" / "s.pvd").string(), {}), std::runtime_error);
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "steps.pvd");
  }
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
}

TEST(VtuWriter, MissingFolderThrowsAndLeavesNoFile) {
  const Mesh mesh = makeBoxMesh(smallBox());
  const fs::path dir = freshTempDir("missing");
  const std::string path = (dir / "absent" / "frame.vtu").string();
  try {
    writeVtu(path, mesh, mesh.restPositionsFlat());
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(VtuWriter, WrongSizesThrowAndWriteNothing) {
  const Mesh mesh = makeBoxMesh(smallBox());
  const fs::path dir = freshTempDir("sizes");
  const std::string path = (dir / "frame.vtu").string();
  const Positions x = mesh.restPositionsFlat();
  EXPECT_THROW(writeVtu(path, mesh, x, {VtuField{"t", 1, std::vector<double>(11)}}),
               std::invalid_argument);
  EXPECT_THROW(writeVtu(path, mesh, x, {}, {VtuField{"e", 3, std::vector<double>(10)}}),
               std::invalid_argument);
  EXPECT_THROW(writeVtu(path, mesh, x, {VtuField{"t", 2, std::vector<double>(24)}}),
               std::invalid_argument);
  EXPECT_THROW(writeVtu(path, mesh, x, {VtuField{"displacement", 3, std::vector<double>(36)}}),
               std::invalid_argument);
  EXPECT_THROW(writeVtu(path, mesh, Positions::Zero(35)), std::invalid_argument);
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

// Gmsh's own local node coordinates (gmsh::model::mesh::getElementProperties), padded to 3D.
std::vector<Vec3> gmshLocalCoordinates(ElementType type) {
  GmshSession session;
  std::string name;
  int dim = 0, order = 0, n = 0, primary = 0;
  std::vector<double> coords;
  gmsh::model::mesh::getElementProperties(gmshElementType(type), name, dim, order, n, coords, primary);
  std::vector<Vec3> out;
  for (int i = 0; i < n; ++i) {
    Vec3 r = Vec3::Zero();
    for (int d = 0; d < dim; ++d) r[d] = coords[static_cast<std::size_t>(dim * i + d)];
    out.push_back(r);
  }
  return out;
}

TEST(VtkOrder, PermutedGmshReferenceCoordinatesAreVtks) {
  for (ElementType type : allElementTypes()) {
    SCOPED_TRACE(elementTypeName(type));
    const std::vector<Vec3> gmsh = gmshLocalCoordinates(type);
    const std::vector<Vec3>& pbdlab = ReferenceElement::of(type).nodeCoordinates();
    ASSERT_EQ(gmsh.size(), pbdlab.size());
    for (std::size_t i = 0; i < gmsh.size(); ++i) EXPECT_LT((gmsh[i] - pbdlab[i]).norm(), 1e-12) << "node " << i;
    const std::vector<Vec3> vtk = vtkReferenceCoordinates(type);
    const std::vector<int>& order = vtkNodeOrder(type);
    ASSERT_EQ(order.size(), vtk.size());
    for (std::size_t i = 0; i < vtk.size(); ++i) {
      EXPECT_LT((gmshToVtkReference(type, gmsh[static_cast<std::size_t>(order[i])]) - vtk[i]).norm(), 1e-12)
          << "VTK node " << i;
    }
  }
}

TEST(VtkOrder, KnownPermutationsAndCellTypes) {
  auto identity = [](int n) {
    std::vector<int> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
    return v;
  };
  // tet10: Gmsh's last two edge nodes are (2,3), (1,3); VTK's are (1,3), (2,3).
  EXPECT_EQ(vtkNodeOrder(ElementType::kTet10), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 9, 8}));
  // tet20: Gmsh's edges (3,0) (3,2) (3,1) run from vertex 3, VTK's (0,3) (1,3) (2,3) to it;
  // Gmsh's faces are (0,1,2) (0,1,3) (0,2,3) (1,2,3), VTK's (0,1,3) (1,2,3) (0,2,3) (0,1,2).
  EXPECT_EQ(vtkNodeOrder(ElementType::kTet20),
            (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 10, 15, 14, 13, 12, 17, 19, 18, 16}));
  // The wedge: VTK's (0,1,2) turns the other way (Gmsh's MPrism::getVertexVTK agrees).
  EXPECT_EQ(vtkNodeOrder(ElementType::kPrism6), (std::vector<int>{0, 2, 1, 3, 5, 4}));
  for (ElementType type : {ElementType::kTet4, ElementType::kHex8, ElementType::kPyramid5, ElementType::kTri3})
    EXPECT_EQ(vtkNodeOrder(type), identity(nodesPerElement(type))) << elementTypeName(type);
  EXPECT_EQ(vtkCellType(ElementType::kTet4), 10);
  EXPECT_EQ(vtkCellType(ElementType::kTet10), 24);
  EXPECT_EQ(vtkCellType(ElementType::kTet20), 71);
  EXPECT_EQ(vtkCellType(ElementType::kHex8), 12);
  EXPECT_EQ(vtkCellType(ElementType::kPrism6), 13);
  EXPECT_EQ(vtkCellType(ElementType::kPyramid5), 14);
  EXPECT_EQ(vtkCellType(ElementType::kTri3), 5);
}

TEST(VtkOrder, VtkFacesOfAPositiveElementPointOutward) {
  // VTK's cells list their faces with outward normals (vtkTetra, vtkHexahedron, vtkWedge,
  // vtkPyramid face tables). A positively oriented pbdlab element (its own reference element)
  // written in VTK order must keep them outward.
  const std::vector<std::pair<ElementType, std::vector<std::vector<int>>>> faces = {
      {ElementType::kTet4, {{0, 1, 3}, {1, 2, 3}, {2, 0, 3}, {0, 2, 1}}},
      {ElementType::kHex8, {{0, 4, 7, 3}, {1, 2, 6, 5}, {0, 1, 5, 4}, {3, 7, 6, 2}, {0, 3, 2, 1}, {4, 5, 6, 7}}},
      {ElementType::kPrism6, {{0, 1, 2}, {3, 5, 4}, {0, 3, 4, 1}, {1, 4, 5, 2}, {2, 5, 3, 0}}},
      {ElementType::kPyramid5, {{0, 3, 2, 1}, {0, 1, 4}, {1, 2, 4}, {2, 3, 4}, {3, 0, 4}}},
  };
  for (const auto& [type, list] : faces) {
    const std::vector<Vec3>& x = ReferenceElement::of(type).nodeCoordinates();
    const std::vector<int>& order = vtkNodeOrder(type);
    Vec3 centroid = Vec3::Zero();
    for (const Vec3& p : x) centroid += p;
    centroid /= static_cast<double>(x.size());
    for (const auto& face : list) {
      Vec3 normal = Vec3::Zero(), centre = Vec3::Zero();
      for (std::size_t k = 0; k < face.size(); ++k) {
        const Vec3& a = x[static_cast<std::size_t>(order[static_cast<std::size_t>(face[k])])];
        const Vec3& b = x[static_cast<std::size_t>(order[static_cast<std::size_t>(face[(k + 1) % face.size()])])];
        normal += a.cross(b);  // Newell
        centre += a / static_cast<double>(face.size());
      }
      EXPECT_GT(normal.dot(centre - centroid), 0.0) << elementTypeName(type) << " face " << face[0] << face[1] << face[2];
    }
  }
}

TEST(VtuWriter, EveryElementTypeWithItsCellTypeAndOrder) {
  const fs::path dir = freshTempDir("types");
  RectangleRecipe rectangle;
  rectangle.cells = {2, 2};
  const std::vector<Mesh> meshes = test::oneMeshOfEveryType(smallBox(), rectangle);
  for (const Mesh& mesh : meshes) {
    for (VtuFormat format : kFormats) {
      SCOPED_TRACE(mesh.source + " " + vtuFormatName(format));
      const std::string path = (dir / "mesh.vtu").string();
      Positions x = mesh.restPositionsFlat();
      x *= 1.5;
      VtuField element_index{"element_index", 1, std::vector<double>(static_cast<std::size_t>(mesh.numElements()))};
      for (int e = 0; e < mesh.numElements(); ++e) element_index.values[static_cast<std::size_t>(e)] = e;
      writeVtu(path, mesh, x, {}, {element_index}, format);
      const std::string text = readText(path);
      const int per = nodesPerElement(mesh.element_type);
      EXPECT_EQ(attribute(text, "NumberOfCells"), mesh.numElements());
      const std::vector<double> types = dataArray(text, "types");
      ASSERT_EQ(types.size(), static_cast<std::size_t>(mesh.numElements()));
      for (double t : types) EXPECT_EQ(t, vtkCellType(mesh.element_type));
      const std::vector<double> offsets = dataArray(text, "offsets");
      EXPECT_EQ(offsets.back(), static_cast<double>(per * mesh.numElements()));
      const std::vector<double> connectivity = dataArray(text, "connectivity");
      ASSERT_EQ(connectivity.size(), static_cast<std::size_t>(per * mesh.numElements()));
      const std::vector<int>& order = vtkNodeOrder(mesh.element_type);
      for (int e = 0; e < mesh.numElements(); ++e)
        for (int k = 0; k < per; ++k)
          ASSERT_EQ(connectivity[static_cast<std::size_t>(per * e + k)], mesh.elements(e, order[static_cast<std::size_t>(k)]));
      EXPECT_EQ(dataArray(text, "element_index"), element_index.values);
      const std::vector<double> displacement = dataArray(text, "displacement");
      ASSERT_EQ(displacement.size(), static_cast<std::size_t>(3 * mesh.numNodes()));
      for (int i = 0; i < 3 * mesh.numNodes(); ++i) EXPECT_EQ(displacement[static_cast<std::size_t>(i)], x[i] - mesh.restPositionsFlat()[i]);
      const std::vector<double> points = dataArray(text, "Points");
      ASSERT_EQ(points.size(), static_cast<std::size_t>(3 * mesh.numNodes()));
      for (int i = 0; i < 3 * mesh.numNodes(); ++i) EXPECT_EQ(points[static_cast<std::size_t>(i)], mesh.restPositionsFlat()[i]);
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pbdlab
