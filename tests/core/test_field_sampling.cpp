// Sampling a nodal field at arbitrary points reproduces fields the elements can represent,
// on every element type, and rejects points outside the mesh.
#include <gtest/gtest.h>

#include <random>

#include "core/field_sampling.hpp"
#include "meshes/box_mesh.hpp"

namespace pbdlab {
namespace {

struct Family {
  BoxFamily family;
  int order;
};

class FieldSampling : public ::testing::TestWithParam<Family> {};

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
                         ::testing::Values(Family{BoxFamily::kFiveTet, 1}, Family{BoxFamily::kFiveTet, 2},
                                           Family{BoxFamily::kFiveTet, 3}, Family{BoxFamily::kBiased, 1},
                                           Family{BoxFamily::kHex, 1}, Family{BoxFamily::kPrism, 1},
                                           Family{BoxFamily::kPyramid, 1}),
                         [](const auto& info) {
                           return boxFamilyName(info.param.family) + "_order" + std::to_string(info.param.order);
                         });

}  // namespace
}  // namespace pbdlab
