#pragma once
// Measures of a deformed state that the runner writes per frame and the validation metrics
// read: one implementation, so the summary's per-frame values and a case's metrics agree.
#include "core/model/problem.hpp"
#include "core/support/types.hpp"

#include <cmath>

namespace pbdlab {

// V(x) = sum over the elastic terms' quadrature points of V_q det F(x) (every element block,
// so bodies of different element types all count): the deformed volume
// of the solid (and plane strain) bodies, integrated with the element quadrature (exact for
// P1 tets). NaN when the problem has no elastic term (a cloth problem).
double deformedVolume(const Problem& problem, const Positions& x);

// V(x) / V(X), X the rest positions; NaN without an elastic term.
double volumeRatio(const Problem& problem, const Positions& x);

// How far x is from the rest shape up to a rigid motion: the root mean square over the nodes of
// |Q x_i + t - X_i| after the least-squares rigid alignment (Q, t) of x onto the rest positions
// X (Umeyama's method, Eigen::umeyama without scaling; it minimizes exactly this sum). 0 exactly
// when x is a rigid motion of X. RMS, not the largest distance: a recovered shape that still
// rings (thin ears swinging) keeps a large largest distance while its bulk is back.
double restShapeDistance(const Mesh& mesh, const Positions& x);

// Elements of the elastic terms (every element block) that a converged state can still hold and that a user must be
// told about (a St. Venant-Kirchhoff bar stretched at nu = 0.49 converges to collapsed
// elements): inverted, det F <= 0 at some quadrature point; degenerate, not inverted but
// det F below `degenerate_below` (the element kept less than that fraction of its volume
// there). Zero counts without an elastic term.
struct ElementQuality {
  int inverted = 0;
  int degenerate = 0;
  double degenerate_below = 0.0;
};
constexpr double kDegenerateVolumeFraction = 1e-3;
ElementQuality elementQuality(const Problem& problem, const Positions& x,
                              double degenerate_below = kDegenerateVolumeFraction);

// A cloth (a problem of triangles in 3D, membrane and bending terms, no elastic term) against
// its rest shape, the quantities PBNG's Fig. 19 is judged by: over the mesh's unique edges, the
// stretch l/L - 1 (mean and largest: positive is longer than at rest); the total area A(x)/A(X);
// the lowest point, the smallest height of a node along -gravity (along +y without gravity).
// NaN fields for a problem that is not a cloth, and where x holds NaN.
struct SurfaceMeasures {
  double stretch_mean = NAN;
  double stretch_max = NAN;
  double area_ratio = NAN;
  double lowest_point = NAN;
};
bool isSurfaceProblem(const Problem& problem);
SurfaceMeasures surfaceMeasures(const Problem& problem, const Positions& x);

}  // namespace pbdlab
