#pragma once
// Test states: every rest position mapped by a matrix A (stretched, inverted when det A < 0,
// near-degenerate when A squashes a direction), plus Gaussian noise so no state is special.
#include <random>

#include "core/fem/mesh.hpp"

namespace pbdlab::test {

inline Positions mappedPositions(const Mesh& mesh, const Mat3& A, std::mt19937& rng, double noise) {
  std::normal_distribution<double> normal(0.0, noise);
  Positions x = mesh.restPositionsFlat();
  for (int i = 0; i < mesh.numNodes(); ++i) {
    x.segment<3>(3 * i) = A * mesh.restPosition(i);
    for (int k = 0; k < 3; ++k) x[3 * i + k] += normal(rng);
  }
  return x;
}

}  // namespace pbdlab::test
