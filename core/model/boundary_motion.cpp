#include "core/model/boundary_motion.hpp"

#include <Eigen/Geometry>
#include <algorithm>

namespace pbdlab {

double stageRamp(const MotionStage& stage, double t) {
  if (t >= stage.t_end) return 1.0;
  if (t <= stage.t_start) return 0.0;
  return (t - stage.t_start) / (stage.t_end - stage.t_start);
}

Vec3 BoundaryMotion::positionAt(const Vec3& X, double t) const {
  Vec3 p = X;
  Vec3 frame_offset = Vec3::Zero();  // translation so far: rotation axes move with it
  for (const MotionStage& stage : stages) {
    const double s = stageRamp(stage, t);
    switch (stage.kind) {
      case MotionStage::Kind::kFixed:
        break;
      case MotionStage::Kind::kTranslate:
        p += s * stage.translation;
        frame_offset += s * stage.translation;
        break;
      case MotionStage::Kind::kRotate: {
        const Vec3 center = stage.axis_point + frame_offset;
        const Eigen::AngleAxisd rotation(s * stage.angle, stage.axis_direction.normalized());
        p = center + rotation * (p - center);
        break;
      }
    }
  }
  return p;
}

}  // namespace pbdlab
