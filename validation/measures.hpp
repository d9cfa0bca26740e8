#pragma once
// Measures of a deformed state that the runner writes per frame and the validation metrics
// read: one implementation, so the summary's per-frame values and a case's metrics agree.
#include "core/problem.hpp"
#include "core/types.hpp"

namespace pbdlab {

// V(x) = sum over the elastic term's quadrature points of V_q det F(x): the deformed volume
// of the solid (and plane strain) bodies, integrated with the element quadrature (exact for
// P1 tets). NaN when the problem has no elastic term (a cloth problem).
double deformedVolume(const Problem& problem, const Positions& x);

// V(x) / V(X), X the rest positions; NaN without an elastic term.
double volumeRatio(const Problem& problem, const Positions& x);

}  // namespace pbdlab
