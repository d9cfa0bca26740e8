#pragma once
// Prescribed motion of a Dirichlet node set over time: a sequence of rigid stages (fixed,
// translate, rotate about an axis through a point), each ramped linearly over its time
// interval and applied on top of the previous ones. "Stretch, then squeeze, then twist" is
// three stages.
#include <string>
#include <vector>

#include "core/support/types.hpp"

namespace pbdlab {

struct MotionStage {
  enum class Kind { kFixed, kTranslate, kRotate };
  Kind kind = Kind::kFixed;
  double t_start = 0.0;  // the stage ramps from 0 at t_start ...
  double t_end = 0.0;    // ... to its full amount at t_end (a jump if t_end == t_start)
  Vec3 translation = Vec3::Zero();     // kTranslate
  Vec3 axis_point = Vec3::Zero();      // kRotate: axis through this point (rest frame) ...
  Vec3 axis_direction = Vec3::UnitZ(); // ... along this direction (normalized on use)
  double angle = 0.0;                  // kRotate: radians, right-hand rule about the axis
};

// Fraction of a stage applied at time t, in [0, 1].
double stageRamp(const MotionStage& stage, double t);

struct BoundaryMotion {
  std::vector<MotionStage> stages;  // empty: fixed at the rest position
  // Position at time t of the point with rest position X. Stages compose in order: a rotate
  // stage turns the current point about its axis, which moves with the translations of the
  // stages before it.
  Vec3 positionAt(const Vec3& X, double t) const;
};

}  // namespace pbdlab
