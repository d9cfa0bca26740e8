#pragma once
// Random samples the derivative and invariance tests share: a rotation uniform on SO(3) (a
// normalised Gaussian quaternion) and a uniform scalar. One definition, so every test draws
// the same stream from the same seed.
#include <Eigen/Geometry>
#include <random>

#include "core/support/types.hpp"

namespace pbdlab::test {

inline Mat3 randomRotation(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  Eigen::Quaterniond q(normal(rng), normal(rng), normal(rng), normal(rng));
  return q.normalized().toRotationMatrix();
}

inline double uniform(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

}  // namespace pbdlab::test
