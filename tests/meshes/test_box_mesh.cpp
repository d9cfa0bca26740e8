// Structured boxes through Gmsh: counts of the paper meshes, volumes, orientation,
// conformity of the mirrored five-tet split, node sets, determinism, OpenMP thread count.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <Eigen/Geometry>

#include "core/fem/mesh.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_session.hpp"
#include "mesh_checks.hpp"

namespace pbdlab {
namespace {

using test::totalVolume;

void expectAllPositive(const Mesh& mesh) {
  for (int e = 0; e < mesh.numElements(); ++e) {
    const double v = signedTetVolume(
        mesh.restPosition(mesh.elements(e, 0)), mesh.restPosition(mesh.elements(e, 1)),
        mesh.restPosition(mesh.elements(e, 2)), mesh.restPosition(mesh.elements(e, 3)));
    ASSERT_GT(v, 0.0) << "element " << e;
  }
}

struct FaceCheck {
  int max_share = 0;
  double boundary_area = 0.0;
  bool boundary_on_box_surface = true;
};

// Counts how many tets share each triangular face (by sorted node triple).
FaceCheck checkFaces(const Mesh& mesh, const BoxMeshRecipe& recipe) {
  static const int kFaces[4][3] = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};
  std::vector<std::array<int, 3>> faces;
  faces.reserve(4 * static_cast<std::size_t>(mesh.numElements()));
  for (int e = 0; e < mesh.numElements(); ++e) {
    for (const auto& f : kFaces) {
      std::array<int, 3> t = {mesh.elements(e, f[0]), mesh.elements(e, f[1]), mesh.elements(e, f[2])};
      std::sort(t.begin(), t.end());
      faces.push_back(t);
    }
  }
  std::sort(faces.begin(), faces.end());
  FaceCheck out;
  const double tol = 1e-9 * recipe.size.norm();
  for (std::size_t i = 0; i < faces.size();) {
    std::size_t j = i;
    while (j < faces.size() && faces[j] == faces[i]) ++j;
    const int share = static_cast<int>(j - i);
    out.max_share = std::max(out.max_share, share);
    if (share == 1) {
      const Vec3 a = mesh.restPosition(faces[i][0]), b = mesh.restPosition(faces[i][1]),
                 c = mesh.restPosition(faces[i][2]);
      out.boundary_area += 0.5 * (b - a).cross(c - a).norm();
      // All three nodes on one face of the box.
      bool on_one_face = false;
      for (int d = 0; d < 3; ++d) {
        for (double plane : {recipe.origin[d], recipe.origin[d] + recipe.size[d]}) {
          if (std::abs(a[d] - plane) < tol && std::abs(b[d] - plane) < tol &&
              std::abs(c[d] - plane) < tol) {
            on_one_face = true;
          }
        }
      }
      out.boundary_on_box_surface = out.boundary_on_box_surface && on_one_face;
    }
    i = j;
  }
  return out;
}

double surfaceArea(const Vec3& s) { return 2.0 * (s.x() * s.y() + s.y() * s.z() + s.z() * s.x()); }

void expectConforming(const Mesh& mesh, const BoxMeshRecipe& recipe) {
  const FaceCheck faces = checkFaces(mesh, recipe);
  EXPECT_LE(faces.max_share, 2) << recipe.describe();
  EXPECT_NEAR(faces.boundary_area, surfaceArea(recipe.size), 1e-10 * surfaceArea(recipe.size))
      << recipe.describe();
  EXPECT_TRUE(faces.boundary_on_box_surface) << recipe.describe();
}

BoxMeshRecipe slabRecipe(BoxFamily family) {
  BoxMeshRecipe recipe;
  recipe.origin = Vec3(-1.0, 0.5, 2.0);
  recipe.size = Vec3(4.0, 1.0, 1.0);
  recipe.cells = {8, 2, 2};
  recipe.family = family;
  return recipe;
}

TEST(BoxMesh, FamilyNamesAndRecipes) {
  EXPECT_EQ(parseBoxFamily("five"), BoxFamily::kFiveTet);  // the older name
  for (const std::string& name : boxFamilyNames()) EXPECT_EQ(boxFamilyName(parseBoxFamily(name)), name);
  EXPECT_EQ(boxFamilyNames().size(), 7u);
  EXPECT_THROW(parseBoxFamily("six"), std::invalid_argument);
  EXPECT_EQ(boxFamilyName(BoxFamily::kFiveTet), "five_tet");
  EXPECT_EQ(boxFamilyName(BoxFamily::kGmshSix), "gmsh_six");

  const BoxMeshRecipe res = resBox(16);
  EXPECT_EQ(res.cells, (std::array<int, 3>{15, 15, 15}));
  EXPECT_EQ(res.size, Vec3::Ones());
  EXPECT_EQ(res.origin, Vec3::Zero());
  EXPECT_EQ(res.family, BoxFamily::kFiveTet);
  EXPECT_THROW(resBox(1), std::invalid_argument);

  BoxMeshRecipe recipe;
  recipe.size = Vec3(4, 1, 1);
  recipe.cells = {8, 2, 2};
  EXPECT_EQ(recipe.describe(), "box 4x1x1 m, 8x2x2 cells, five-tet split");
  recipe.order = 2;
  EXPECT_EQ(recipe.describe(), "box 4x1x1 m, 8x2x2 cells, five-tet split, order 2");
  recipe.order = 1;
  recipe.family = BoxFamily::kUnstructured;
  recipe.target_size = 0.25;
  EXPECT_EQ(recipe.describe(), "box 4x1x1 m, unstructured tets, target size 0.25");
}

TEST(BoxMesh, BadRecipesThrow) {
  BoxMeshRecipe recipe;
  recipe.cells = {2, 0, 2};
  EXPECT_THROW(makeBoxMesh(recipe), std::invalid_argument);
  recipe.cells = {2, 2, -1};
  EXPECT_THROW(makeBoxMesh(recipe), std::invalid_argument);
  recipe.cells = {2, 2, 2};
  recipe.size = Vec3(1, 0, 1);
  EXPECT_THROW(makeBoxMesh(recipe), std::invalid_argument);
  recipe.size = Vec3(1, -1, 1);
  EXPECT_THROW(makeBoxMesh(recipe), std::invalid_argument);
  recipe.size = Vec3(1, 1, std::nan(""));
  EXPECT_THROW(makeBoxMesh(recipe), std::invalid_argument);
  recipe.size = Vec3(1, 1, HUGE_VAL);
  EXPECT_THROW(makeBoxMesh(recipe), std::invalid_argument);
  recipe.size = Vec3(1, 1, 1);
  recipe.order = 4;
  EXPECT_THROW(makeBoxMesh(recipe), std::invalid_argument);
  recipe.order = 2;
  recipe.family = BoxFamily::kHex;  // order applies to tets only
  EXPECT_THROW(makeBoxMesh(recipe), std::invalid_argument);
  recipe.order = 1;
  recipe.family = BoxFamily::kUnstructured;
  recipe.target_size = 0.0;
  EXPECT_THROW(makeBoxMesh(recipe), std::invalid_argument);
  recipe.target_size = 1e-4;  // about 8.5e11 tets
  EXPECT_THROW(makeBoxMesh(recipe), std::invalid_argument);
}

TEST(BoxMesh, Res16CountsVolumeConformity) {
  const BoxMeshRecipe recipe = resBox(16);
  const Mesh mesh = makeBoxMesh(recipe);
  EXPECT_EQ(mesh.numNodes(), 4096);
  EXPECT_EQ(mesh.numElements(), 16875);
  EXPECT_EQ(mesh.element_type, ElementType::kTet4);
  EXPECT_EQ(mesh.source, recipe.describe());
  expectAllPositive(mesh);
  EXPECT_NEAR(totalVolume(mesh), 1.0, 1e-12);
  expectConforming(mesh, recipe);
}

TEST(BoxMesh, Res32CountsVolumeConformity) {
  const BoxMeshRecipe recipe = resBox(32);
  const Mesh mesh = makeBoxMesh(recipe);
  EXPECT_EQ(mesh.numNodes(), 32768);
  EXPECT_EQ(mesh.numElements(), 148955);
  expectAllPositive(mesh);
  EXPECT_NEAR(totalVolume(mesh), 1.0, 1e-11);
  expectConforming(mesh, recipe);
}

TEST(BoxMesh, FiveSplitNonCubicBox) {
  const BoxMeshRecipe recipe = slabRecipe(BoxFamily::kFiveTet);
  const Mesh mesh = makeBoxMesh(recipe);
  EXPECT_EQ(mesh.numNodes(), 9 * 3 * 3);
  EXPECT_EQ(mesh.numElements(), 5 * 8 * 2 * 2);
  expectAllPositive(mesh);
  EXPECT_NEAR(totalVolume(mesh), 4.0, 1e-12);
  expectConforming(mesh, recipe);
  const MeshSummary s = summarize(mesh);
  EXPECT_TRUE(s.bbox_min.isApprox(Vec3(-1.0, 0.5, 2.0), 1e-12));
  EXPECT_TRUE(s.bbox_max.isApprox(Vec3(3.0, 1.5, 3.0), 1e-12));
  // Cells of 0.5^3: central tets 1/3 of a cell, corner tets 1/6.
  EXPECT_NEAR(s.max_volume, 0.125 / 3.0, 1e-12);
  EXPECT_NEAR(s.min_volume, 0.125 / 6.0, 1e-12);
}

TEST(BoxMesh, GmshSixSplit) {
  const BoxMeshRecipe recipe = slabRecipe(BoxFamily::kGmshSix);
  const Mesh mesh = makeBoxMesh(recipe);
  EXPECT_EQ(mesh.numNodes(), 9 * 3 * 3);
  EXPECT_EQ(mesh.numElements(), 6 * 8 * 2 * 2);
  expectAllPositive(mesh);
  EXPECT_NEAR(totalVolume(mesh), 4.0, 1e-12);
  expectConforming(mesh, recipe);

  const Mesh cube = makeBoxMesh([] {
    BoxMeshRecipe r = resBox(5);
    r.family = BoxFamily::kGmshSix;
    return r;
  }());
  EXPECT_EQ(cube.numNodes(), 125);
  EXPECT_EQ(cube.numElements(), 6 * 64);
  EXPECT_NEAR(totalVolume(cube), 1.0, 1e-12);
}

TEST(BoxMesh, SingleCell) {
  BoxMeshRecipe recipe;
  const Mesh five = makeBoxMesh(recipe);
  EXPECT_EQ(five.numNodes(), 8);
  EXPECT_EQ(five.numElements(), 5);
  EXPECT_NEAR(totalVolume(five), 1.0, 1e-14);
  recipe.family = BoxFamily::kGmshSix;
  const Mesh six = makeBoxMesh(recipe);
  EXPECT_EQ(six.numElements(), 6);
  EXPECT_NEAR(totalVolume(six), 1.0, 1e-14);
}

TEST(BoxMesh, NodeSets) {
  for (BoxFamily family : {BoxFamily::kFiveTet, BoxFamily::kGmshSix}) {
    const BoxMeshRecipe recipe = slabRecipe(family);
    const Mesh mesh = makeBoxMesh(recipe);
    const int nx = recipe.cells[0], ny = recipe.cells[1], nz = recipe.cells[2];
    EXPECT_EQ(mesh.node_sets.at("x-min").size(), static_cast<std::size_t>((ny + 1) * (nz + 1)));
    EXPECT_EQ(mesh.node_sets.at("x-max").size(), static_cast<std::size_t>((ny + 1) * (nz + 1)));
    EXPECT_EQ(mesh.node_sets.at("y-min").size(), static_cast<std::size_t>((nx + 1) * (nz + 1)));
    EXPECT_EQ(mesh.node_sets.at("y-max").size(), static_cast<std::size_t>((nx + 1) * (nz + 1)));
    EXPECT_EQ(mesh.node_sets.at("z-min").size(), static_cast<std::size_t>((nx + 1) * (ny + 1)));
    EXPECT_EQ(mesh.node_sets.at("z-max").size(), static_cast<std::size_t>((nx + 1) * (ny + 1)));
    EXPECT_EQ(mesh.node_sets.at("all").size(), static_cast<std::size_t>(mesh.numNodes()));
    for (int n : mesh.node_sets.at("x-min")) EXPECT_NEAR(mesh.rest_positions(n, 0), -1.0, 1e-12);
    for (int n : mesh.node_sets.at("x-max")) EXPECT_NEAR(mesh.rest_positions(n, 0), 3.0, 1e-12);
    for (int n : mesh.node_sets.at("z-max")) EXPECT_NEAR(mesh.rest_positions(n, 2), 3.0, 1e-12);
  }
}

TEST(BoxMesh, NodesLieOnTheGrid) {
  const BoxMeshRecipe recipe = slabRecipe(BoxFamily::kFiveTet);
  const Mesh mesh = makeBoxMesh(recipe);
  for (int n = 0; n < mesh.numNodes(); ++n) {
    for (int d = 0; d < 3; ++d) {
      const double u = (mesh.rest_positions(n, d) - recipe.origin[d]) / recipe.size[d] * recipe.cells[d];
      EXPECT_NEAR(u, std::round(u), 1e-9) << "node " << n;
    }
  }
}

TEST(BoxMesh, Deterministic) {
  for (BoxFamily family : {BoxFamily::kFiveTet, BoxFamily::kGmshSix}) {
    const BoxMeshRecipe recipe = slabRecipe(family);
    const Mesh a = makeBoxMesh(recipe);
    const Mesh b = makeBoxMesh(recipe);
    EXPECT_EQ(a.rest_positions, b.rest_positions);
    EXPECT_EQ(a.elements, b.elements);
    EXPECT_EQ(a.node_sets, b.node_sets);
    EXPECT_EQ(a.source, b.source);
  }
}

TEST(BoxMesh, OpenMPThreadCountUnchanged) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(3);  // neither Gmsh's default 1 nor this machine's core count
  const Mesh mesh = makeBoxMesh(resBox(4));
  EXPECT_EQ(omp_get_max_threads(), 3);
  {
    GmshSession outer;
    EXPECT_EQ(omp_get_max_threads(), 3);
    EXPECT_EQ(outer.savedThreadCount(), 3);
    const Mesh nested = makeBoxMesh(resBox(3));  // nested session: inner guard is a no-op
    EXPECT_EQ(nested.numElements(), 5 * 8);
    EXPECT_EQ(omp_get_max_threads(), 3);
  }
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_num_threads(before);
}

}  // namespace
}  // namespace pbdlab
