#include <gtest/gtest.h>

#include <cmath>

#include "core/model/boundary_motion.hpp"

namespace pbdlab {
namespace {

TEST(BoundaryMotion, EmptyMotionIsFixed) {
  const BoundaryMotion motion;
  EXPECT_EQ(motion.positionAt(Vec3(1, 2, 3), 5.0), Vec3(1, 2, 3));
}

TEST(BoundaryMotion, TranslateRampsLinearly) {
  MotionStage stage;
  stage.kind = MotionStage::Kind::kTranslate;
  stage.translation = Vec3(2, 0, 0);
  stage.t_start = 1.0;
  stage.t_end = 3.0;
  const BoundaryMotion motion{{stage}};
  EXPECT_NEAR((motion.positionAt(Vec3::Zero(), 0.5) - Vec3::Zero()).norm(), 0.0, 1e-15);
  EXPECT_NEAR((motion.positionAt(Vec3::Zero(), 2.0) - Vec3(1, 0, 0)).norm(), 0.0, 1e-15);
  EXPECT_NEAR((motion.positionAt(Vec3::Zero(), 9.0) - Vec3(2, 0, 0)).norm(), 0.0, 1e-15);
}

TEST(BoundaryMotion, RotateAboutAxisThroughPoint) {
  MotionStage stage;
  stage.kind = MotionStage::Kind::kRotate;
  stage.axis_point = Vec3(0, 0.5, 0.5);
  stage.axis_direction = Vec3(2, 0, 0);  // normalized on use
  stage.angle = M_PI / 2;
  stage.t_end = 1.0;
  const BoundaryMotion motion{{stage}};
  // (4, 1, 0.5) is 0.5 from the axis in +y; a quarter turn about +x takes it to +z.
  EXPECT_NEAR((motion.positionAt(Vec3(4, 1, 0.5), 1.0) - Vec3(4, 0.5, 1.0)).norm(), 0.0, 1e-14);
  EXPECT_NEAR((motion.positionAt(Vec3(4, 1, 0.5), 0.5) - Vec3(4, 0.5 + 0.5 * std::cos(M_PI / 4), 0.5 + 0.5 * std::sin(M_PI / 4))).norm(), 0.0, 1e-14);
}

TEST(BoundaryMotion, StretchThenTwistRotatesAboutTheMovedAxis) {
  MotionStage stretch;
  stretch.kind = MotionStage::Kind::kTranslate;
  stretch.translation = Vec3(1, 0, 0);
  stretch.t_end = 1.0;
  MotionStage twist;
  twist.kind = MotionStage::Kind::kRotate;
  twist.axis_point = Vec3(0, 0, 0);
  twist.axis_direction = Vec3(0, 0, 1);
  twist.angle = M_PI;
  twist.t_start = 1.0;
  twist.t_end = 2.0;
  const BoundaryMotion motion{{stretch, twist}};
  // After the stretch the axis passes through (1, 0, 0); the point (2, 0, 0) sits at 1 from it.
  EXPECT_NEAR((motion.positionAt(Vec3(1, 0, 0), 2.0) - Vec3(0, 0, 0)).norm(), 0.0, 1e-14);
  EXPECT_NEAR((motion.positionAt(Vec3(1, 0, 0), 1.0) - Vec3(2, 0, 0)).norm(), 0.0, 1e-14);
}

}  // namespace
}  // namespace pbdlab
