// .vtu output: counts, cell type, displacement field read back as text; failures leave no file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "meshes/box_mesh.hpp"
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

// The whitespace-separated numbers inside the DataArray whose Name is `name`.
std::vector<double> dataArray(const std::string& text, const std::string& name) {
  const std::string open = "Name=\"" + name + "\"";
  const std::size_t at = text.find(open);
  if (at == std::string::npos) return {};
  const std::size_t begin = text.find('>', at) + 1;
  const std::size_t end = text.find("</DataArray>", begin);
  std::istringstream in(text.substr(begin, end - begin));
  std::vector<double> values;
  double v;
  while (in >> v) values.push_back(v);
  return values;
}

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

  const fs::path dir = freshTempDir("ok");
  const fs::path path = dir / "frame.vtu";
  writeVtu(path.string(), mesh, x, {temperature}, {energy, stress});
  const std::string text = readText(path);

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

  const std::vector<double> points = dataArray(text, "Points");
  ASSERT_EQ(points.size(), 36u);
  for (int i = 0; i < 36; ++i) EXPECT_EQ(points[i], x[i]) << i;  // bit-exact round trip

  const std::vector<double> displacement = dataArray(text, "displacement");
  ASSERT_EQ(displacement.size(), 36u);
  const Positions rest = mesh.restPositionsFlat();
  for (int i = 0; i < 36; ++i) EXPECT_EQ(displacement[i], x[i] - rest[i]) << i;
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

}  // namespace
}  // namespace pbdlab
