// The shared mesh model on hand-made meshes: volumes, validation messages, masses, node
// sets, summary, atomic output and element coloring.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/atomic_file.hpp"
#include "core/coloring.hpp"
#include "core/input_error.hpp"
#include "core/mesh.hpp"

namespace pbdlab {
namespace {

namespace fs = std::filesystem;

// Unit cube split into 5 positively oriented tets (8 nodes, one cell).
Mesh fiveTetCube() {
  Mesh mesh;
  mesh.source = "five_tet_cube";
  mesh.rest_positions.resize(8, 3);
  for (int n = 0; n < 8; ++n) mesh.rest_positions.row(n) << (n & 1), ((n >> 1) & 1), ((n >> 2) & 1);
  // Node n = a + 2b + 4c. Central tet of the even corners 0, 3, 5, 6, then the odd corners.
  mesh.elements.resize(5, 4);
  mesh.elements << 0, 3, 5, 6,  //
      1, 0, 3, 5,               //
      2, 3, 0, 6,               //
      4, 5, 6, 0,               //
      7, 6, 5, 3;
  for (int e = 0; e < 5; ++e) {
    const double v = signedTetVolume(mesh.restPosition(mesh.elements(e, 0)),
                                     mesh.restPosition(mesh.elements(e, 1)),
                                     mesh.restPosition(mesh.elements(e, 2)),
                                     mesh.restPosition(mesh.elements(e, 3)));
    if (v < 0) std::swap(mesh.elements(e, 2), mesh.elements(e, 3));
  }
  return mesh;
}

std::string expectInputError(const Mesh& mesh, const std::string& field) {
  try {
    validateMesh(mesh);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), mesh.source);
    EXPECT_EQ(e.field(), field);
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "validateMesh accepted a bad mesh, expected an error at " << field;
  return "";
}

TEST(Mesh, SignedTetVolumeSign) {
  const Vec3 a(0, 0, 0), b(1, 0, 0), c(0, 1, 0), d(0, 0, 1);
  EXPECT_NEAR(signedTetVolume(a, b, c, d), 1.0 / 6.0, 1e-15);
  EXPECT_NEAR(signedTetVolume(a, c, b, d), -1.0 / 6.0, 1e-15);
  EXPECT_NEAR(signedTetVolume(b, a, c, d), -1.0 / 6.0, 1e-15);
  EXPECT_EQ(signedTetVolume(a, b, c, Vec3(1, 1, 0)), 0.0);
}

TEST(Mesh, NodesPerElementAndName) {
  EXPECT_EQ(nodesPerElement(ElementType::kTet4), 4);
  EXPECT_EQ(elementTypeName(ElementType::kTet4), "tet4");
}

TEST(Mesh, RestPositionsFlat) {
  const Mesh mesh = fiveTetCube();
  const Positions flat = mesh.restPositionsFlat();
  ASSERT_EQ(flat.size(), 24);
  for (int n = 0; n < 8; ++n) {
    for (int d = 0; d < 3; ++d) EXPECT_EQ(flat[3 * n + d], mesh.rest_positions(n, d));
  }
}

TEST(Mesh, ValidMeshPassesAndVolumesSumToCube) {
  const Mesh mesh = fiveTetCube();
  EXPECT_NO_THROW(validateMesh(mesh));
  const std::vector<double> v = restVolumes(mesh);
  ASSERT_EQ(v.size(), 5u);
  double total = 0;
  for (double x : v) {
    EXPECT_GT(x, 0.0);
    total += x;
  }
  EXPECT_NEAR(total, 1.0, 1e-14);
  EXPECT_NEAR(v[0], 1.0 / 3.0, 1e-14);
}

TEST(Mesh, ValidateCatchesInvertedElement) {
  Mesh mesh = fiveTetCube();
  std::swap(mesh.elements(3, 0), mesh.elements(3, 1));
  const std::string what = expectInputError(mesh, "element 3");
  EXPECT_NE(what.find("inverted"), std::string::npos) << what;
  EXPECT_NE(what.find("five_tet_cube"), std::string::npos) << what;
  EXPECT_THROW(restVolumes(mesh), InputError);
}

TEST(Mesh, ValidateCatchesZeroVolumeElement) {
  Mesh mesh = fiveTetCube();
  mesh.elements.row(2) << 0, 1, 2, 3;  // four corners of the bottom face: flat
  const std::string what = expectInputError(mesh, "element 2");
  EXPECT_NE(what.find("degenerate"), std::string::npos) << what;
  EXPECT_THROW(restVolumes(mesh), InputError);
}

TEST(Mesh, ValidateCatchesNearlyFlatElementByRelativeThreshold) {
  Mesh mesh;
  mesh.source = "sliver";
  mesh.rest_positions.resize(4, 3);
  mesh.rest_positions << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0.3, 0.3, 1e-12;
  mesh.elements.resize(1, 4);
  mesh.elements << 0, 1, 2, 3;
  expectInputError(mesh, "element 0");
  EXPECT_NO_THROW(validateMesh(mesh, 1e-14));
}

TEST(Mesh, ValidateCatchesOutOfRangeIndex) {
  Mesh mesh = fiveTetCube();
  mesh.elements(4, 2) = 8;
  std::string what = expectInputError(mesh, "element 4");
  EXPECT_NE(what.find("out of range"), std::string::npos) << what;
  mesh.elements(4, 2) = -1;
  what = expectInputError(mesh, "element 4");
  EXPECT_NE(what.find("out of range"), std::string::npos) << what;
}

TEST(Mesh, ValidateCatchesNonFiniteCoordinate) {
  Mesh mesh = fiveTetCube();
  mesh.rest_positions(6, 1) = std::numeric_limits<double>::quiet_NaN();
  const std::string what = expectInputError(mesh, "node 6");
  EXPECT_NE(what.find("non-finite"), std::string::npos) << what;
  mesh.rest_positions(6, 1) = std::numeric_limits<double>::infinity();
  expectInputError(mesh, "node 6");
}

TEST(Mesh, LumpedMassesSumToDensityTimesVolume) {
  const Mesh mesh = fiveTetCube();
  const VecX m = lumpedNodeMasses(mesh, std::vector<double>(5, 1000.0));
  ASSERT_EQ(m.size(), 8);
  EXPECT_NEAR(m.sum(), 1000.0, 1e-10);
  for (int i = 0; i < 8; ++i) EXPECT_GT(m[i], 0.0);
  // Even corners belong to the central tet and to three corner tets.
  EXPECT_NEAR(m[0], 1000.0 * (1.0 / 3.0 + 3.0 / 6.0) / 4.0, 1e-10);
  EXPECT_NEAR(m[1], 1000.0 * (1.0 / 6.0) / 4.0, 1e-10);

  // Per-element densities.
  std::vector<double> rho = {1, 2, 3, 4, 5};
  const std::vector<double> v = restVolumes(mesh);
  double expected = 0;
  for (int e = 0; e < 5; ++e) expected += rho[e] * v[e];
  EXPECT_NEAR(lumpedNodeMasses(mesh, rho).sum(), expected, 1e-12);
  EXPECT_THROW(lumpedNodeMasses(mesh, std::vector<double>(4, 1.0)), std::invalid_argument);
}

TEST(Mesh, BoundingBoxNodeSets) {
  Mesh mesh = fiveTetCube();
  // Stretch and shift the cube: x in [2, 5], y in [-1, 0], z in [0, 0.5].
  for (int n = 0; n < 8; ++n) {
    mesh.rest_positions(n, 0) = 2 + 3 * mesh.rest_positions(n, 0);
    mesh.rest_positions(n, 1) = -1 + mesh.rest_positions(n, 1);
    mesh.rest_positions(n, 2) = 0.5 * mesh.rest_positions(n, 2);
  }
  addBoundingBoxNodeSets(mesh);
  EXPECT_EQ(mesh.node_sets.at("x-min"), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(mesh.node_sets.at("x-max"), (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(mesh.node_sets.at("y-min"), (std::vector<int>{0, 1, 4, 5}));
  EXPECT_EQ(mesh.node_sets.at("y-max"), (std::vector<int>{2, 3, 6, 7}));
  EXPECT_EQ(mesh.node_sets.at("z-min"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(mesh.node_sets.at("z-max"), (std::vector<int>{4, 5, 6, 7}));

  // A node slightly inside the face is not on it; one within tolerance is.
  mesh.rest_positions(0, 0) = 2 + 1e-6;
  mesh.rest_positions(2, 0) = 2 + 1e-12;
  addBoundingBoxNodeSets(mesh);
  EXPECT_EQ(mesh.node_sets.at("x-min"), (std::vector<int>{2, 4, 6}));
}

TEST(Mesh, Summary) {
  Mesh mesh = fiveTetCube();
  for (int n = 0; n < 8; ++n) mesh.rest_positions(n, 0) *= 2.0;
  const MeshSummary s = summarize(mesh);
  EXPECT_EQ(s.nodes, 8);
  EXPECT_EQ(s.elements, 5);
  EXPECT_NEAR(s.total_volume, 2.0, 1e-14);
  EXPECT_NEAR(s.min_volume, 2.0 / 6.0, 1e-14);
  EXPECT_NEAR(s.max_volume, 2.0 / 3.0, 1e-14);
  EXPECT_TRUE(s.bbox_min.isApprox(Vec3(0, 0, 0)));
  EXPECT_TRUE(s.bbox_max.isApprox(Vec3(2, 1, 1)));
}

fs::path freshTempDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() /
                       ("pbdlab_test_mesh_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(AtomicFile, WritesContentsAndLeavesNoTempFile) {
  const fs::path dir = freshTempDir("atomic");
  const std::string path = (dir / "out.txt").string();
  writeFileAtomically(path, "first\n");
  writeFileAtomically(path, "second line\nwith two lines\n");
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  EXPECT_EQ(contents.str(), "second line\nwith two lines\n");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "out.txt");
  }
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
}

TEST(AtomicFile, MissingFolderThrowsNamingPathAndLeavesNothing) {
  const fs::path dir = freshTempDir("atomic_missing");
  const std::string path = (dir / "no_such_folder" / "out.txt").string();
  try {
    writeFileAtomically(path, "x");
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(AtomicFile, RenameFailureRemovesTempFile) {
  // The target is an existing non-empty folder: rename fails after the temp file is written.
  const fs::path dir = freshTempDir("atomic_rename");
  const fs::path target = dir / "occupied";
  fs::create_directories(target / "inside");
  EXPECT_THROW(writeFileAtomically(target.string(), "x"), std::runtime_error);
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++entries;
    EXPECT_EQ(entry.path().filename(), "occupied");
  }
  EXPECT_EQ(entries, 1);
  fs::remove_all(dir);
}

// A 2 x 2 x 2 grid of cubes, each split like fiveTetCube (unmirrored, but that does not
// matter for coloring): 27 nodes, 40 tets.
Mesh gridOfCubes() {
  const Mesh cube = fiveTetCube();
  Mesh mesh;
  mesh.source = "grid";
  mesh.rest_positions.resize(27, 3);
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) mesh.rest_positions.row(i + 3 * j + 9 * k) << i, j, k;
  mesh.elements.resize(40, 4);
  int e = 0;
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i)
        for (int t = 0; t < 5; ++t, ++e)
          for (int c = 0; c < 4; ++c) {
            const int n = cube.elements(t, c);
            mesh.elements(e, c) = (i + (n & 1)) + 3 * (j + ((n >> 1) & 1)) + 9 * (k + ((n >> 2) & 1));
          }
  return mesh;
}

TEST(Coloring, GreedyColoringIsValidAndDeterministic) {
  const Mesh mesh = gridOfCubes();
  const Coloring coloring = colorElements(mesh);
  EXPECT_TRUE(isValidElementColoring(mesh, coloring));
  EXPECT_GE(coloring.numColors(), 5);  // the 5 tets of one cube share a node pairwise
  const std::vector<int> sizes = coloring.sizes();
  ASSERT_EQ(static_cast<int>(sizes.size()), coloring.numColors());
  int total = 0;
  for (int s : sizes) {
    EXPECT_GT(s, 0);
    total += s;
  }
  EXPECT_EQ(total, 40);
  EXPECT_EQ(colorElements(mesh).groups, coloring.groups);
  // Greedy in element order: element 0 takes color 0.
  EXPECT_EQ(coloring.groups[0].front(), 0);
}

TEST(Coloring, InvalidColoringsAreRejected) {
  const Mesh mesh = fiveTetCube();
  Coloring one_color;
  one_color.groups = {{0, 1, 2, 3, 4}};
  EXPECT_FALSE(isValidElementColoring(mesh, one_color));
  Coloring missing;
  missing.groups = {{0}, {1}, {2}, {3}};
  EXPECT_FALSE(isValidElementColoring(mesh, missing));
  Coloring twice;
  twice.groups = {{0}, {1}, {2}, {3}, {4}, {4}};
  EXPECT_FALSE(isValidElementColoring(mesh, twice));
  Coloring good;
  good.groups = {{0}, {1}, {2}, {3}, {4}};
  EXPECT_TRUE(isValidElementColoring(mesh, good));
  EXPECT_TRUE(isValidElementColoring(mesh, colorElements(mesh)));
  EXPECT_EQ(colorElements(mesh).numColors(), 5);
}

TEST(Coloring, DisjointElementsShareAColor) {
  Mesh mesh;
  mesh.rest_positions.resize(8, 3);
  mesh.rest_positions << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1,  //
      5, 0, 0, 6, 0, 0, 5, 1, 0, 5, 0, 1;
  mesh.elements.resize(2, 4);
  mesh.elements << 0, 1, 2, 3, 4, 5, 6, 7;
  const Coloring coloring = colorElements(mesh);
  EXPECT_EQ(coloring.numColors(), 1);
  EXPECT_EQ(coloring.sizes(), std::vector<int>{2});
}

}  // namespace
}  // namespace pbdlab
