#pragma once
// PBNG's fast path for the visits of a node's P1 tetrahedra (eq. 29-33): each element's
// contribution V P g to the node's gradient row and V (2 mu |g|^2 I + lambda c c^T),
// c = cof(F) g, to its SPD block, with g = dN_local/dX. The same values as the elastic term's
// addNodeBlock with HessianKind::kApproximate (pbngApproximateTangent), without the 9x9
// tangent.
//
// Why a packed record: a sweep visits every element four times, once in each of four
// different colors, so between two visits of an element the sweep has walked over the rest
// of the mesh and the element's data come from memory again (Res 32: 149k elements; a
// third of the earlier kernel's samples were cache misses). Everything a visit reads and
// writes is one 192-byte record (three cache lines, aligned): the rotation it updates, the
// shape gradients of nodes 1-3 (node 0's is minus their sum: F = sum_{a=1..3} (x_a - x_0)
// g_a^T), the point volume, the node indices and an index into a small table of material
// constants. The earlier kernel read six lines from four arrays a visit.
//
// Why lanes: a node of the Res 32 box has about 20 element visits, each a few hundred flops
// of 3x3 algebra (F, cof F, the rotation's Newton step, P) that depend on nothing but the
// element. They are evaluated kPbngP1Lanes at a time in structure-of-arrays form, one loop
// per phase over the lanes, so the compiler vectorizes across elements (SSE2: 2 lanes a
// vector; with -march=native, AVX2 4 or AVX-512 8), then summed in visit order.
#include <vector>

#include "core/support/types.hpp"
#include "core/terms/elastic_energy.hpp"

namespace pbdlab {

struct alignas(64) PbngP1Element {
  Mat3 rotation;         // the warm-started R (corotated with Rotation::kWarmStart; else unused)
  double shape[3][3];    // dN_a/dX of nodes a = 1, 2, 3 (rows)
  double volume;         // the one-point quadrature volume (= the rest volume)
  int nodes[4];          // global node indices, element order
  int material;          // index into the solver's PbngP1Material table
};
static_assert(sizeof(PbngP1Element) == 192, "three cache lines");

// The constants of one distinct material of the fast path.
struct PbngP1Material {
  double block_mu, block_lambda;  // eq. 32's mu and lambda, clamped at 0
  double mu, lambda;              // the model's own (the corotated stress)
  bool corotated;                 // fixed corotated: P = 2 mu (F - R) + lambda (J - 1) cof F
};

// Adds the visits visits[0..count) of one node (each 4 e + local, e indexing `elements`) to
// its gradient row and block, in visit order. The rotation of a corotated element: with
// `warm` (the sweep; warm == elements), one Newton step from elements[e].rotation
// (warmStartedPolarStep, polar_svd.hpp), written there (polarRotation(F), the SVD, where the
// step is not trusted, counted in `fallbacks`); without (null), polarRotation(F), the
// definition, and nothing written. Other materials evaluate their own P through `elastic`
// with the element's data at time t.
void addPbngP1Visits(const int* visits, int count, const PbngP1Element* elements, PbngP1Element* warm,
                     const std::vector<PbngP1Material>& materials, const Positions& x, const ElasticEnergy& elastic,
                     double t, Vec3& gradient, Mat3& block, int& fallbacks);

}  // namespace pbdlab
