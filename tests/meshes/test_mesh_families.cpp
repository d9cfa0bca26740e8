// Every mesh family: element and node counts, volumes (every order), conformity of the
// structured families (interior faces shared by two elements, boundary = box surface), the
// biased mesh's preferred diagonal (and Gmsh's six-tet split being that pattern), P2/P3 nodes
// shared between neighbours, rectangles, the bunny surface and its tetrahedralization,
// determinism.
#include <gtest/gtest.h>

#include <chrono>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/fem/mesh.hpp"
#include "core/fem/reference_element.hpp"
#include "core/support/input_error.hpp"
#include "mesh_checks.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/bunny.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "meshes/raise_order.hpp"

namespace pbdlab {
namespace {

using test::faceReport;
using test::totalVolume;

BoxMeshRecipe slab(BoxFamily family, int order = 1) {
  BoxMeshRecipe recipe;
  recipe.origin = Vec3(-1.0, 0.5, 2.0);
  recipe.size = Vec3(4.0, 1.0, 1.0);
  recipe.cells = {8, 2, 2};
  recipe.family = family;
  recipe.order = order;
  recipe.target_size = 0.3;
  return recipe;
}

// Grid counts of the slab: vertices, axis edges, cell faces (quads), cells.
struct GridCounts {
  long v, edges, quads, cells;
};
GridCounts gridCounts(const std::array<int, 3>& c) {
  const long nx = c[0], ny = c[1], nz = c[2];
  return {(nx + 1) * (ny + 1) * (nz + 1),
          nx * (ny + 1) * (nz + 1) + (nx + 1) * ny * (nz + 1) + (nx + 1) * (ny + 1) * nz,
          nx * ny * (nz + 1) + nx * (ny + 1) * nz + (nx + 1) * ny * nz, nx * ny * nz};
}

// Unique triangular faces of a tet mesh (by corner nodes).
long countTetFaces(const Mesh& mesh) {
  std::set<std::array<int, 3>> faces;
  for (int e = 0; e < mesh.numElements(); ++e) {
    for (const auto& f : test::cornerFaces(ElementType::kTet4)) {
      std::array<int, 3> t = {mesh.elements(e, f[0]), mesh.elements(e, f[1]), mesh.elements(e, f[2])};
      std::sort(t.begin(), t.end());
      faces.insert(t);
    }
  }
  return static_cast<long>(faces.size());
}

using FamilyOrder = std::tuple<BoxFamily, int>;

class BoxFamilies : public ::testing::TestWithParam<FamilyOrder> {};

TEST_P(BoxFamilies, FillTheBoxConformingly) {
  const auto [family, order] = GetParam();
  const BoxMeshRecipe recipe = slab(family, order);
  const Mesh mesh = makeBoxMesh(recipe);
  SCOPED_TRACE(recipe.describe());
  EXPECT_EQ(mesh.source, recipe.describe());
  const ElementType expected_type = order == 1 ? boxFamilyElementType(family) : order == 2 ? ElementType::kTet10 : ElementType::kTet20;
  EXPECT_EQ(mesh.element_type, expected_type);
  ASSERT_EQ(mesh.elements.cols(), nodesPerElement(expected_type));
  if (family != BoxFamily::kUnstructured) {
    EXPECT_EQ(mesh.numElements(), elementsPerCell(family) * 8 * 2 * 2);
  }

  // Volumes: every element positive, the sum the box's.
  const std::vector<double> volumes = restVolumes(mesh);
  for (std::size_t e = 0; e < volumes.size(); ++e) ASSERT_GT(volumes[e], 0.0) << "element " << e;
  EXPECT_NEAR(totalVolume(mesh), 4.0, 1e-11);
  const MeshSummary summary = summarize(mesh);
  EXPECT_NEAR(summary.total_volume, 4.0, 1e-11);
  EXPECT_TRUE(summary.bbox_min.isApprox(recipe.origin, 1e-12));
  EXPECT_TRUE(summary.bbox_max.isApprox(recipe.origin + recipe.size, 1e-12));
  EXPECT_GT(summary.min_scaled_jacobian, 0.0);
  EXPECT_GT(summary.min_dihedral_angle_deg, 0.0);

  // Conformity: no face in more than two elements, the boundary is the box surface.
  const test::FaceReport faces = faceReport(mesh, recipe.origin, recipe.origin + recipe.size, true);
  EXPECT_EQ(faces.max_share, 2);
  EXPECT_TRUE(faces.boundary_on_box);
  EXPECT_NEAR(faces.boundary_area, test::boxSurfaceArea(recipe.size), 1e-10);
  EXPECT_TRUE(test::closedSurface(faces.boundary));

  // Node sets from geometry.
  for (const char* set : {"x-min", "x-max", "y-min", "y-max", "z-min", "z-max"}) {
    const int axis = set[0] - 'x';
    const double plane = std::string(set).find("min") != std::string::npos ? recipe.origin[axis]
                                                                             : recipe.origin[axis] + recipe.size[axis];
    int on_plane = 0;
    for (int n = 0; n < mesh.numNodes(); ++n) on_plane += std::abs(mesh.rest_positions(n, axis) - plane) < 1e-9;
    ASSERT_TRUE(mesh.node_sets.count(set)) << set;
    EXPECT_EQ(static_cast<int>(mesh.node_sets.at(set).size()), on_plane) << set;
    for (int n : mesh.node_sets.at(set)) EXPECT_NEAR(mesh.rest_positions(n, axis), plane, 1e-9) << set;
  }
  EXPECT_EQ(static_cast<int>(mesh.node_sets.at("all").size()), mesh.numNodes());

  // Node counts: structured grids by formula; P2/P3 = V + E and V + 2E + F (edge and face
  // nodes shared between neighbours).
  const GridCounts g = gridCounts(recipe.cells);
  if (order == 1 && family != BoxFamily::kUnstructured) {
    EXPECT_EQ(mesh.numNodes(), g.v + (family == BoxFamily::kPyramid ? g.cells : 0));
  }
  if (isTetFamily(family)) {
    BoxMeshRecipe linear = recipe;
    linear.order = 1;
    const Mesh p1 = makeBoxMesh(linear);
    const long v = p1.numNodes(), e = static_cast<long>(test::simplexEdges(p1).size()), f = countTetFaces(p1);
    EXPECT_EQ(v - e + f - p1.numElements(), 1) << "Euler characteristic of a ball";
    if (family == BoxFamily::kFiveTet) {
      EXPECT_EQ(e, g.edges + g.quads);  // one diagonal per cell face
    }
    if (family == BoxFamily::kBiased || family == BoxFamily::kGmshSix) {
      EXPECT_EQ(e, g.edges + g.quads + g.cells);  // and one body diagonal per cell
    }
    const long expected_nodes = order == 1 ? v : order == 2 ? v + e : v + 2 * e + f;
    EXPECT_EQ(mesh.numNodes(), expected_nodes);
  }
}

std::string familyOrderName(const ::testing::TestParamInfo<FamilyOrder>& info) {
  return boxFamilyName(std::get<0>(info.param)) + "_P" + std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Linear, BoxFamilies,
                         ::testing::Combine(::testing::Values(BoxFamily::kFiveTet, BoxFamily::kBiased, BoxFamily::kGmshSix,
                                                              BoxFamily::kUnstructured, BoxFamily::kHex,
                                                              BoxFamily::kPrism, BoxFamily::kPyramid),
                                            ::testing::Values(1)),
                         familyOrderName);
INSTANTIATE_TEST_SUITE_P(HighOrder, BoxFamilies,
                         ::testing::Combine(::testing::Values(BoxFamily::kFiveTet, BoxFamily::kBiased, BoxFamily::kGmshSix,
                                                              BoxFamily::kUnstructured),
                                            ::testing::Values(2, 3)),
                         familyOrderName);

// The directions (up to sign) of the tet edges that are diagonals of a cell face or of the
// cell, on a grid of cubic cells.
std::set<std::array<int, 3>> diagonalDirections(const Mesh& mesh, double h) {
  std::set<std::array<int, 3>> directions;
  for (const auto& [a, b] : test::simplexEdges(mesh)) {
    const Vec3 d = (mesh.restPosition(b) - mesh.restPosition(a)) / h;
    std::array<int, 3> v = {static_cast<int>(std::lround(d.x())), static_cast<int>(std::lround(d.y())),
                            static_cast<int>(std::lround(d.z()))};
    const int nonzero = (v[0] != 0) + (v[1] != 0) + (v[2] != 0);
    if (nonzero < 2) continue;  // an axis edge
    // Canonical sign: first non-zero component positive.
    const int first = v[0] != 0 ? v[0] : v[1] != 0 ? v[1] : v[2];
    if (first < 0) v = {-v[0], -v[1], -v[2]};
    directions.insert(v);
  }
  return directions;
}

TEST(BiasedMesh, HasOnePreferredDiagonalPerFaceDirection) {
  BoxMeshRecipe recipe;
  recipe.size = Vec3(3.0, 2.0, 2.0);
  recipe.cells = {3, 2, 2};  // unit cells
  recipe.family = BoxFamily::kBiased;
  const std::set<std::array<int, 3>> biased = diagonalDirections(makeBoxMesh(recipe), 1.0);
  // One diagonal direction for the faces of each orientation, and one body diagonal.
  const std::set<std::array<int, 3>> expected = {{0, 1, -1}, {1, 0, -1}, {1, -1, 0}, {1, -1, 1}};
  EXPECT_EQ(biased, expected);

  // The unbiased five-tet split alternates: both diagonals of every face orientation, no
  // body diagonal.
  recipe.family = BoxFamily::kFiveTet;
  const std::set<std::array<int, 3>> five = diagonalDirections(makeBoxMesh(recipe), 1.0);
  const std::set<std::array<int, 3>> both = {{0, 1, 1}, {0, 1, -1}, {1, 0, 1}, {1, 0, -1}, {1, 1, 0}, {1, -1, 0}};
  EXPECT_EQ(five, both);
}

// The tets of a mesh as sets of corner positions, independent of node numbering.
std::set<std::array<std::array<double, 3>, 4>> tetsByPosition(const Mesh& mesh) {
  std::set<std::array<std::array<double, 3>, 4>> tets;
  for (int e = 0; e < mesh.numElements(); ++e) {
    std::array<std::array<double, 3>, 4> t;
    for (int k = 0; k < 4; ++k) {
      const Vec3 p = mesh.restPosition(mesh.elements(e, k));
      t[static_cast<std::size_t>(k)] = {p.x(), p.y(), p.z()};
    }
    std::sort(t.begin(), t.end());
    tets.insert(t);
  }
  return tets;
}

TEST(BiasedMesh, GmshSixTetSplitIsTheBiasedPattern) {
  // docs/meshes.md: Gmsh's transfinite split is 2 prisms x 3 tets, the same in every cell.
  for (const BoxMeshRecipe& base : {slab(BoxFamily::kBiased), resBox(4)}) {
    BoxMeshRecipe recipe = base;
    recipe.family = BoxFamily::kBiased;
    const Mesh biased = makeBoxMesh(recipe);
    recipe.family = BoxFamily::kGmshSix;
    const Mesh gmsh = makeBoxMesh(recipe);
    EXPECT_EQ(tetsByPosition(biased), tetsByPosition(gmsh)) << recipe.describe();
  }
}

TEST(BiasedMesh, TetsRefineThePrisms) {
  // Each prism of the prism family is the union of three biased tets: equal volume and the
  // same six corners.
  const Mesh prisms = makeBoxMesh(slab(BoxFamily::kPrism));
  const Mesh tets = makeBoxMesh(slab(BoxFamily::kBiased));
  ASSERT_EQ(3 * prisms.numElements(), tets.numElements());
  const std::vector<double> prism_volumes = restVolumes(prisms), tet_volumes = restVolumes(tets);
  for (int p = 0; p < prisms.numElements(); ++p) {
    std::set<int> prism_nodes;
    for (int k = 0; k < 6; ++k) prism_nodes.insert(prisms.elements(p, k));
    double sum = 0.0;
    for (int t = 3 * p; t < 3 * p + 3; ++t) {
      for (int k = 0; k < 4; ++k) EXPECT_TRUE(prism_nodes.count(tets.elements(t, k))) << "prism " << p << " tet " << t;
      sum += tet_volumes[static_cast<std::size_t>(t)];
    }
    EXPECT_NEAR(sum, prism_volumes[static_cast<std::size_t>(p)], 1e-14);
  }
}

TEST(BoxFamiliesDeterminism, SameRecipeSameMesh) {
  for (BoxFamily family : {BoxFamily::kFiveTet, BoxFamily::kBiased, BoxFamily::kGmshSix, BoxFamily::kUnstructured,
                           BoxFamily::kHex, BoxFamily::kPrism, BoxFamily::kPyramid}) {
    for (int order : {1, 3}) {
      if (order != 1 && !isTetFamily(family)) continue;
      const BoxMeshRecipe recipe = slab(family, order);
      SCOPED_TRACE(recipe.describe());
      test::expectSameMesh(makeBoxMesh(recipe), makeBoxMesh(recipe));
    }
  }
}

TEST(RaiseOrder, NodesAtTheReferenceCoordinatesAndShared) {
  // Two tets sharing the face (1, 2, 3).
  Mesh mesh;
  mesh.source = "two tets";
  mesh.rest_positions.resize(5, 3);
  mesh.rest_positions << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1;
  mesh.elements.resize(2, 4);
  mesh.elements << 0, 1, 2, 3, 4, 3, 2, 1;
  mesh.node_sets["face"] = {1, 2, 3};
  mesh.node_sets["edge"] = {1, 2};
  ASSERT_GT(signedTetVolume(mesh.restPosition(4), mesh.restPosition(3), mesh.restPosition(2), mesh.restPosition(1)), 0.0);

  for (int order : {2, 3}) {
    const Mesh raised = raiseOrder(mesh, order);
    const ElementType type = order == 2 ? ElementType::kTet10 : ElementType::kTet20;
    ASSERT_EQ(raised.element_type, type);
    // 9 edges, 7 faces: P2 5 + 9, P3 5 + 2 * 9 + 7.
    EXPECT_EQ(raised.numNodes(), order == 2 ? 14 : 30);
    EXPECT_EQ(raised.rest_positions.topRows(5), mesh.rest_positions);
    const ReferenceElement& ref = ReferenceElement::of(type);
    for (int e = 0; e < 2; ++e) {
      const Vec3 x0 = mesh.restPosition(mesh.elements(e, 0));
      Mat3 J;
      for (int k = 0; k < 3; ++k) J.col(k) = mesh.restPosition(mesh.elements(e, k + 1)) - x0;
      for (int i = 0; i < ref.numNodes(); ++i) {
        const Vec3 expected = x0 + J * ref.nodeCoordinates()[static_cast<std::size_t>(i)];
        EXPECT_TRUE(raised.restPosition(raised.elements(e, i)).isApprox(expected, 1e-14) || expected.norm() < 1e-14)
            << "order " << order << " element " << e << " node " << i;
      }
    }
    // The face (1, 2, 3) holds its nodes once: both elements use the same nodes on it.
    std::set<int> on_face[2];
    for (int e = 0; e < 2; ++e) {
      for (int i = 0; i < ref.numNodes(); ++i) {
        const Vec3 p = raised.restPosition(raised.elements(e, i));
        if (std::abs(p.sum() - 1.0) < 1e-12 && p.minCoeff() >= -1e-12) on_face[e].insert(raised.elements(e, i));
      }
    }
    EXPECT_EQ(on_face[0], on_face[1]);
    EXPECT_EQ(on_face[0].size(), order == 2 ? 6u : 10u);
    // Node sets grow by the nodes between their vertices.
    std::vector<int> face = raised.node_sets.at("face");
    std::sort(face.begin(), face.end());
    EXPECT_EQ(std::set<int>(face.begin(), face.end()), on_face[0]);
    EXPECT_EQ(raised.node_sets.at("edge").size(), order == 2 ? 3u : 4u);
    EXPECT_NEAR(test::totalVolume(raised), test::totalVolume(mesh), 1e-14);
  }
  EXPECT_THROW(raiseOrder(raiseOrder(mesh, 2), 3), std::invalid_argument);
  EXPECT_THROW(raiseOrder(mesh, 4), std::invalid_argument);
}

TEST(Rectangle, Structured2dAndDiagonals) {
  RectangleRecipe recipe;
  recipe.origin = Vec3(1.0, -2.0, 0.0);
  recipe.size = {3.0, 1.5};
  recipe.cells = {6, 3};
  std::set<std::vector<double>> meshes;
  for (auto diagonals : {RectangleRecipe::Diagonals::kLeft, RectangleRecipe::Diagonals::kRight,
                         RectangleRecipe::Diagonals::kAlternate}) {
    recipe.diagonals = diagonals;
    const Mesh mesh = makeRectangleMesh(recipe);
    SCOPED_TRACE(recipe.describe());
    EXPECT_EQ(mesh.element_type, ElementType::kTri3);
    EXPECT_TRUE(isTwoDimensional(mesh));
    EXPECT_EQ(mesh.numNodes(), 7 * 4);
    EXPECT_EQ(mesh.numElements(), 2 * 6 * 3);
    EXPECT_NEAR(totalVolume(mesh), 4.5, 1e-12);
    for (int e = 0; e < mesh.numElements(); ++e) {
      const Vec3 a = mesh.restPosition(mesh.elements(e, 0)), b = mesh.restPosition(mesh.elements(e, 1)),
                 c = mesh.restPosition(mesh.elements(e, 2));
      EXPECT_GT((b - a).cross(c - a).z(), 0.0) << "counter-clockwise, element " << e;
    }
    // Conformity: every edge in at most two triangles; the boundary edges make the perimeter.
    std::map<std::pair<int, int>, int> edges;
    for (int e = 0; e < mesh.numElements(); ++e)
      for (int k = 0; k < 3; ++k) ++edges[std::minmax(mesh.elements(e, k), mesh.elements(e, (k + 1) % 3))];
    double perimeter = 0.0;
    for (const auto& [edge, count] : edges) {
      EXPECT_LE(count, 2);
      if (count == 1) perimeter += (mesh.restPosition(edge.first) - mesh.restPosition(edge.second)).norm();
    }
    EXPECT_NEAR(perimeter, 9.0, 1e-12);
    EXPECT_EQ(mesh.node_sets.at("x-min").size(), 4u);
    EXPECT_EQ(mesh.node_sets.at("y-max").size(), 7u);
    EXPECT_FALSE(mesh.node_sets.count("z-min"));
    for (int n : mesh.node_sets.at("x-min")) EXPECT_EQ(mesh.rest_positions(n, 0), 1.0);
    std::vector<double> signature;
    for (int e = 0; e < mesh.numElements(); ++e)
      for (int k = 0; k < 3; ++k) signature.push_back(mesh.rest_positions(mesh.elements(e, k), 0) + 10 * mesh.rest_positions(mesh.elements(e, k), 1));
    std::sort(signature.begin(), signature.end());
    meshes.insert(signature);
  }
  EXPECT_EQ(meshes.size(), 3u) << "left, right and alternate diagonals give different meshes";
}

TEST(Rectangle, SurfaceIn3dAndUnstructured) {
  RectangleRecipe recipe;
  recipe.embedding = RectangleRecipe::Embedding::k3dSurface;
  recipe.plane = "xz";
  recipe.origin = Vec3(0.0, 2.0, 1.0);
  recipe.size = {2.0, 1.0};
  recipe.cells = {4, 2};
  const Mesh cloth = makeRectangleMesh(recipe);
  EXPECT_FALSE(isTwoDimensional(cloth));
  EXPECT_EQ(cloth.numNodes(), 15);
  for (int n = 0; n < cloth.numNodes(); ++n) EXPECT_EQ(cloth.rest_positions(n, 1), 2.0);
  for (int e = 0; e < cloth.numElements(); ++e) {
    const Vec3 a = cloth.restPosition(cloth.elements(e, 0)), b = cloth.restPosition(cloth.elements(e, 1)),
               c = cloth.restPosition(cloth.elements(e, 2));
    EXPECT_LT((b - a).cross(c - a).y(), 0.0) << "normal e_x x e_z = -e_y";
  }
  EXPECT_NEAR(totalVolume(cloth), 2.0, 1e-12);
  EXPECT_TRUE(cloth.node_sets.count("z-max"));
  EXPECT_FALSE(cloth.node_sets.count("y-min"));

  RectangleRecipe unstructured;
  unstructured.size = {2.0, 1.0};
  unstructured.target_size = 0.1;
  const Mesh mesh = makeRectangleMesh(unstructured);
  EXPECT_GT(mesh.numElements(), 300);
  EXPECT_NEAR(totalVolume(mesh), 2.0, 1e-12);
  test::expectSameMesh(mesh, makeRectangleMesh(unstructured));

  recipe.plane = "ab";
  EXPECT_THROW(makeRectangleMesh(recipe), std::invalid_argument);
  RectangleRecipe flat;
  flat.origin = Vec3(0, 0, 1);  // a 2D rectangle lies in z = 0
  EXPECT_THROW(makeRectangleMesh(flat), std::invalid_argument);
}

TEST(Bunny, SurfaceIsClosedOrientedAndShipped) {
  for (int level : {0, 2, 3}) {
    const Mesh surface = makeBunnySurface(level);
    EXPECT_EQ(surface.numElements(), 20 << (2 * level));
    std::vector<std::array<int, 3>> triangles;
    for (int e = 0; e < surface.numElements(); ++e)
      triangles.push_back({surface.elements(e, 0), surface.elements(e, 1), surface.elements(e, 2)});
    EXPECT_TRUE(test::closedAndOriented(triangles)) << "level " << level;
    EXPECT_GT(test::enclosedVolume(surface), 0.1) << "outward triangles enclose a positive volume";
    const Vec3 lo = surface.rest_positions.colwise().minCoeff().transpose();
    const Vec3 hi = surface.rest_positions.colwise().maxCoeff().transpose();
    EXPECT_NEAR(lo.norm(), 0.0, 1e-15);
    EXPECT_NEAR((hi - lo).maxCoeff(), 1.0, 1e-15);
  }
  EXPECT_THROW(makeBunnySurface(7), std::invalid_argument);
  // meshes/data/bunny.stl is this surface at level 3 (regenerate: docs/meshes.md).
  const std::string shipped = test::readText(std::string(PBDLAB_SOURCE_DIR) + "/meshes/data/bunny.stl");
  EXPECT_EQ(shipped, stlText(makeBunnySurface(3), "pbdlab")) << "meshes/data/bunny.stl is out of date";
}

TEST(Bunny, StlTetrahedralizesIntoAClosedPositiveVolumeMesh) {
  test::TempDir dir("stl");
  const Mesh surface = makeBunnySurface(3);
  const std::string path = dir.file("bunny.stl");
  writeStl(path, surface);
  const Mesh mesh = tetrahedralizeStl(path, 0.08, 60.0, "bunny");
  EXPECT_EQ(mesh.element_type, ElementType::kTet4);
  EXPECT_GT(mesh.numElements(), 500);
  const std::vector<double> volumes = restVolumes(mesh);
  for (double v : volumes) ASSERT_GT(v, 0.0);
  // The remeshed surface is a piecewise-linear resampling of the input: the volume agrees
  // to a few percent.
  const double enclosed = test::enclosedVolume(surface);
  EXPECT_NEAR(totalVolume(mesh), enclosed, 0.03 * enclosed);
  const test::FaceReport faces = faceReport(mesh);
  EXPECT_EQ(faces.max_share, 2);
  EXPECT_TRUE(test::closedSurface(faces.boundary)) << "the boundary of the tet mesh is closed";
  EXPECT_TRUE(mesh.node_sets.count("z-min"));
  test::expectSameMesh(mesh, tetrahedralizeStl(path, 0.08, 60.0, "bunny"));
  EXPECT_THROW(tetrahedralizeStl(dir.file("missing.stl"), 0.08, 60.0, "bunny"), std::runtime_error);
}

// Bad STL files are refused with a message that says what is wrong (issue 12: a NaN vertex
// aborted Gmsh's reader, an infinite one lost triangles silently, and an open or truncated
// surface ended in Gmsh's "No elements in volume 1").
TEST(Bunny, AnStlThatIsNotAFiniteClosedSurfaceIsRefusedSayingWhy) {
  test::TempDir dir("bad_stl");
  const Mesh surface = makeBunnySurface(2);
  const std::string text = stlText(surface);
  const auto expectRefused = [&](const std::string& name, const std::string& content, const std::string& says) {
    const std::string path = dir.file(name);
    std::ofstream(path, std::ios::binary) << content;
    try {
      tetrahedralizeStl(path, 0.1, 60.0, "bad");
      ADD_FAILURE() << name << " was accepted";
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << name << ": " << error.what();
    }
  };
  // ASCII: the first vertex's x replaced.
  const std::size_t at = text.find("vertex ") + 7;
  const std::size_t end = text.find(' ', at);
  for (const std::string value : {"nan", "inf"})
    expectRefused("ascii_" + value + ".stl", text.substr(0, at) + value + text.substr(end), "non-finite coordinate");
  // Binary: 80-byte header, count, then per triangle a normal, three vertices, 2 bytes.
  std::string binary(84 + 50 * surface.numElements(), '\0');
  const std::uint32_t count = surface.numElements();
  std::memcpy(&binary[80], &count, 4);
  for (int t = 0; t < surface.numElements(); ++t)
    for (int v = 0; v < 3; ++v)
      for (int c = 0; c < 3; ++c) {
        const float value = static_cast<float>(surface.rest_positions(surface.elements(t, v), c));
        std::memcpy(&binary[84 + 50 * t + 12 * (v + 1) + 4 * c], &value, 4);
      }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(&binary[84 + 50 * 7 + 12 * 2 + 4], &nan, 4);  // triangle 8, vertex 2, y
  expectRefused("binary_nan.stl", binary, "triangle 8, vertex 2 has a non-finite coordinate");
  // Open: the first facet dropped; truncated: the last third cut off.
  const std::size_t facet = text.find("facet"), next = text.find("facet", text.find("endfacet") + 8);
  expectRefused("open.stl", text.substr(0, facet) + text.substr(next), "the surface is not closed");
  // A file cut inside a facet: pbdlab's reading of the file says where (issue 12).
  expectRefused("truncated.stl", text.substr(0, 2 * text.size() / 3), "the file is truncated");
  // Cut between two facets: every facet is whole, the surface is open.
  const std::size_t between = text.find("facet", text.rfind("endfacet", 2 * text.size() / 3) + 8);
  expectRefused("truncated_between_facets.stl", text.substr(0, between), "the surface is not closed");
}

// Issue 12: a valid closed 4-facet tetrahedron made Gmsh 4.8 loop forever ("Level N partition
// with 4 triangles split in 2 parts because poincare characteristic 2 is not 0"): its surface,
// too small to partition, is now subdivided before Gmsh reads it. ASCII and binary.
TEST(Stl, AFourFacetTetrahedronMeshesInsteadOfHanging) {
  test::TempDir dir("stl_tet");
  Mesh surface;
  surface.element_type = ElementType::kTri3;
  surface.rest_positions.resize(4, 3);
  surface.rest_positions << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1;
  surface.elements.resize(4, 3);
  surface.elements << 0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3;  // outward normals
  const std::string ascii = stlText(surface, "tet");
  std::ofstream(dir.file("tet.stl"), std::ios::binary) << ascii;
  const std::vector<StlTriangle> triangles = readStl(dir.file("tet.stl"));
  ASSERT_EQ(triangles.size(), 4u);
  std::string binary(84 + 50 * 4, '\0');
  const std::uint32_t count = 4;
  std::memcpy(&binary[80], &count, 4);
  for (int t = 0; t < 4; ++t)
    for (int v = 0; v < 3; ++v)
      for (int c = 0; c < 3; ++c) {
        const float value = static_cast<float>(triangles[t][v][c]);
        std::memcpy(&binary[84 + 50 * t + 12 * (v + 1) + 4 * c], &value, 4);
      }
  std::ofstream(dir.file("tet_binary.stl"), std::ios::binary) << binary;
  for (const std::string name : {"tet.stl", "tet_binary.stl"}) {
    const auto start = std::chrono::steady_clock::now();
    const Mesh mesh = tetrahedralizeStl(dir.file(name), 0.25, 60.0, name);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60.0) << name;
    EXPECT_EQ(mesh.element_type, ElementType::kTet4);
    EXPECT_GT(mesh.numElements(), 4) << name;
    for (double v : restVolumes(mesh)) ASSERT_GT(v, 0.0);
    EXPECT_NEAR(totalVolume(mesh), 1.0 / 6.0, 1e-9) << name;  // flat facets: the volume is exact
  }
}

// pbdlab's own reading of STL bytes (parseStl): errors name the line or byte.
TEST(Stl, ParseStlNamesTheLineOrByte) {
  const auto refused = [](const std::string& bytes, const std::string& field, const std::string& says) {
    try {
      parseStl(bytes, "f.stl");
      ADD_FAILURE() << "accepted: " << bytes.substr(0, 40);
    } catch (const InputError& error) {
      EXPECT_EQ(error.file(), "f.stl");
      EXPECT_EQ(error.field(), field) << error.what();
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
  };
  refused("", "(file)", "empty");
  refused("hello", "(file)", "neither an ASCII STL");
  refused("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0", "line 5", "expected a vertex coordinate");
  refused("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 nan\n", "line 5",
          "triangle 1, vertex 2 has a non-finite coordinate");
  refused("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0", "line 4", "the file is truncated");
  EXPECT_EQ(parseStl("solid x\nendsolid x\n", "f.stl").size(), 0u);
}

TEST(GmshGenerators, LeaveTheOpenMPThreadCountAlone) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(3);  // neither Gmsh's default 1 nor this machine's core count
  makeBoxMesh(slab(BoxFamily::kUnstructured));
  EXPECT_EQ(omp_get_max_threads(), 3);
  RectangleRecipe rectangle;
  rectangle.target_size = 0.2;
  makeRectangleMesh(rectangle);
  EXPECT_EQ(omp_get_max_threads(), 3);
  test::TempDir dir("stl_threads");
  writeStl(dir.file("bunny.stl"), makeBunnySurface(2));
  tetrahedralizeStl(dir.file("bunny.stl"), 0.15, 60.0, "bunny");
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_num_threads(before);
}

}  // namespace
}  // namespace pbdlab
