// .vtu output: counts, cell types, the Gmsh -> VTK node permutations (derived from the
// reference coordinates, checked against Gmsh's getElementProperties and VTK's outward face
// tables), fields read back as text; failures leave no file.
#include <gmsh.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "core/reference_element.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "meshes/gmsh_session.hpp"
#include "meshes/vtu_writer.hpp"
#include "mesh_checks.hpp"

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
    SCOPED_TRACE(mesh.source);
    const std::string path = (dir / "mesh.vtu").string();
    Positions x = mesh.restPositionsFlat();
    x *= 1.5;
    VtuField element_index{"element_index", 1, std::vector<double>(static_cast<std::size_t>(mesh.numElements()))};
    for (int e = 0; e < mesh.numElements(); ++e) element_index.values[static_cast<std::size_t>(e)] = e;
    writeVtu(path, mesh, x, {}, {element_index});
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
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pbdlab
