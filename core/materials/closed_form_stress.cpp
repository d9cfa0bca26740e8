#include "core/materials/closed_form_stress.hpp"

namespace pbdlab {

ClosedFormStress closedFormStressOf(const Material& material) {
  ClosedFormStress s;
  const std::string name = material.name();
  const LameParameters own = material.modelParameters();
  if (name == "fixed_corotated") {
    s.kind = ClosedFormStressKind::kCorotated;
    s.c = 2.0 * own.mu, s.bJ = own.lambda;
  } else if (name == "neo_hookean") {
    s.kind = ClosedFormStressKind::kNeoHookean;
    s.a0 = own.mu, s.bJ = own.lambda, s.b0 = -own.mu;
  } else if (name == "stable_neo_hookean") {
    s.kind = ClosedFormStressKind::kStableNeoHookean;
    s.a0 = own.mu, s.bJ = own.lambda, s.b0 = -0.75 * own.mu, s.snh = 1.0;
  }
  return s;
}

}  // namespace pbdlab
