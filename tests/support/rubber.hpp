#pragma once
// The rubber-like solid the model tests load (stable Neo-Hookean, nu 0.3).
#include "core/materials/material.hpp"

namespace pbdlab::test {

inline MaterialSpec rubber(double youngs_modulus = 1e6, double density = 1000.0) {
  MaterialSpec spec;
  spec.model = MaterialModel::kStableNeoHookean;
  spec.youngs_modulus = youngs_modulus;
  spec.poisson_ratio = 0.3;
  spec.density = density;
  return spec;
}

}  // namespace pbdlab::test
