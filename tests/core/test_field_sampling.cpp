// Sampling a nodal field at arbitrary points reproduces fields the elements can represent,
// on every element type, and rejects points outside the mesh.
#include <gtest/gtest.h>

#include <random>

#include "core/fem/field_sampling.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/bunny.hpp"
#include "meshes/gmsh_meshes.hpp"

namespace pbdlab {
namespace {

struct SamplingCase {
  BoxFamily family;
  int order;
};

class FieldSampling : public ::testing::TestWithParam<SamplingCase> {};

TEST_P(FieldSampling, ReproducesALinearFieldAtRandomPoints) {
  BoxMeshRecipe recipe;
  recipe.size = Vec3(2.0, 1.0, 0.5);
  recipe.cells = {4, 2, 2};
  recipe.family = GetParam().family;
  recipe.order = GetParam().order;
  const Mesh mesh = makeBoxMesh(recipe);
  const Mat3 A = (Mat3() << 0.3, -0.2, 0.1, 0.05, 0.4, 0.0, -0.1, 0.2, 0.7).finished();
  const Vec3 b(0.01, -0.02, 0.03);
  VecX field(3 * mesh.numNodes());
  for (int i = 0; i < mesh.numNodes(); ++i) field.segment<3>(3 * i) = A * mesh.restPosition(i) + b;
  const FieldSampler sampler(mesh);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int k = 0; k < 200; ++k) {
    const Vec3 X(2.0 * unit(rng), unit(rng), 0.5 * unit(rng));
    EXPECT_LT((sampler.sample(field, X) - (A * X + b)).norm(), 1e-12) << X.transpose();
  }
  // Corners and faces of the box are inside (within tolerance); a point beyond is not.
  EXPECT_GE(sampler.locate(Vec3(2.0, 1.0, 0.5)).element, 0);
  EXPECT_EQ(sampler.locate(Vec3(2.1, 0.5, 0.25)).element, -1);
  EXPECT_THROW(sampler.sample(field, Vec3(-0.5, 0.5, 0.25)), std::out_of_range);
}

INSTANTIATE_TEST_SUITE_P(Families, FieldSampling,
                         ::testing::Values(SamplingCase{BoxFamily::kFiveTet, 1}, SamplingCase{BoxFamily::kFiveTet, 2},
                                           SamplingCase{BoxFamily::kFiveTet, 3}, SamplingCase{BoxFamily::kBiased, 1},
                                           SamplingCase{BoxFamily::kHex, 1}, SamplingCase{BoxFamily::kPrism, 1},
                                           SamplingCase{BoxFamily::kPyramid, 1}),
                         [](const auto& info) {
                           return boxFamilyName(info.param.family) + "_order" + std::to_string(info.param.order);
                         });


// Triangle meshes: a 2D mesh in z = 0 (plane strain) and cloth surfaces in 3D, flat and curved.
// A field linear in X is reproduced on the triangles; a point off a triangle's plane by more
// than kSurfaceDistance of its size is not on the mesh, one within it is.
Mat3 linearMap() { return (Mat3() << 0.3, -0.2, 0.1, 0.05, 0.4, 0.0, -0.1, 0.2, 0.7).finished(); }

VecX linearField(const Mesh& mesh) {
  VecX field(3 * mesh.numNodes());
  for (int i = 0; i < mesh.numNodes(); ++i) field.segment<3>(3 * i) = linearMap() * mesh.restPosition(i);
  return field;
}

TEST(FieldSamplingTriangles, PlaneStrainMeshInTheXyPlane) {
  RectangleRecipe recipe;
  recipe.size = {4.0, 1.0};
  recipe.target_size = 0.3;  // unstructured
  const Mesh mesh = makeRectangleMesh(recipe);
  const FieldSampler sampler(mesh);
  const VecX field = linearField(mesh);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int k = 0; k < 200; ++k) {
    const Vec3 X(4.0 * unit(rng), unit(rng), 0.0);
    EXPECT_LT((sampler.sample(field, X) - linearMap() * X).norm(), 1e-12) << X.transpose();
  }
  EXPECT_GE(sampler.locate(Vec3(4.0, 1.0, 0.0)).element, 0);  // a corner
  EXPECT_EQ(sampler.locate(Vec3(4.1, 0.5, 0.0)).element, -1);
  EXPECT_EQ(sampler.locate(Vec3(2.0, 0.5, 1e-3)).element, -1);  // off the plane
  EXPECT_GE(sampler.locate(Vec3(2.0, 0.5, 1e-9)).element, 0);   // on it, within round-off
}

TEST(FieldSamplingTriangles, FlatClothInTheXzPlane) {
  RectangleRecipe recipe;
  recipe.embedding = RectangleRecipe::Embedding::k3dSurface;
  recipe.plane = "xz";
  recipe.origin = Vec3(0.0, 0.5, 0.0);
  recipe.size = {1.0, 2.0};
  recipe.cells = {3, 5};
  const Mesh mesh = makeRectangleMesh(recipe);
  const FieldSampler sampler(mesh);
  const VecX field = linearField(mesh);
  std::mt19937 rng(6);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int k = 0; k < 100; ++k) {
    const Vec3 X(unit(rng), 0.5, 2.0 * unit(rng));
    EXPECT_LT((sampler.sample(field, X) - linearMap() * X).norm(), 1e-12) << X.transpose();
  }
  EXPECT_EQ(sampler.locate(Vec3(0.5, 0.5 + 1e-4, 1.0)).element, -1);
  EXPECT_EQ(sampler.locate(Vec3(0.5, 0.0, 1.0)).element, -1);
}

TEST(FieldSamplingTriangles, CurvedClosedSurface) {
  const Mesh mesh = makeBunnySurface(2);
  const FieldSampler sampler(mesh);
  const VecX field = linearField(mesh);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> unit(0.05, 0.95);
  for (int k = 0; k < 50; ++k) {
    // A point inside a random triangle: its field value is the same linear map.
    const int e = static_cast<int>(unit(rng) * mesh.numElements());
    double a = unit(rng), b = unit(rng);
    if (a + b > 1.0) a = 1.0 - a, b = 1.0 - b;
    const Vec3 X = (1 - a - b) * mesh.restPosition(mesh.elements(e, 0)) + a * mesh.restPosition(mesh.elements(e, 1)) +
                   b * mesh.restPosition(mesh.elements(e, 2));
    const FieldSampler::Location at = sampler.locate(X);
    ASSERT_GE(at.element, 0) << X.transpose();
    EXPECT_LT((sampler.sample(field, X) - linearMap() * X).norm(), 1e-12);
  }
  // The centre of the closed surface lies on no triangle.
  const Vec3 centre = mesh.rest_positions.colwise().mean().transpose();
  EXPECT_EQ(sampler.locate(centre).element, -1);
}

}  // namespace
}  // namespace pbdlab
