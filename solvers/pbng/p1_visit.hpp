#pragma once
// PBNG's fast path for the visits of a node's P1 tetrahedra (eq. 29-33): each element's
// contribution V P g to the node's gradient row and V (2 mu |g|^2 I + lambda c c^T),
// c = cof(F) g, to its SPD block, with g = dN_local/dX. The same values as the elastic term's
// addNodeBlock with HessianKind::kApproximate (pbngApproximateTangent), without the 9x9
// tangent.
//
// VBD's exact node block (PbngP1Block::kExact*) on the same lanes: H_i = V g^T (dP/dF) g, for
// P = a F + c (F - R) + b cof F (closed_form_stress.hpp) in closed form,
//   H_i / V = a |g|^2 I + (2 a0 snh / (Ic + 1)^2) f f^T + bJ k k^T
//             + c (|g|^2 I + R [g]x K^-1 [g]x R^T),
// f = F g, k = (cof F) g, K = tr(S) I - S, S = sym(R^T F). The perturbation e_b g^T is rank one
// with g on the right, so det(F + u e_b g^T) is affine in u and d(cof F) drops out of b's term;
// dR[dF] = R [w]x with w = K^-1 axial(R^T dF - dF^T R) gives the rotation's term (K singular:
// sigma_2 + sigma_3 = 0, where dR/dF does not exist; docs/vbd.md). The same values as
// addNodeBlock with HessianKind::kTrue to round-off (tests/solvers/pbng/test_vbd.cpp).
//
// The element data are P1ElementRecords (core/terms/p1_element_record.hpp), one per element,
// read four times a sweep (once in each of four colors).
//
// Why lanes: a node of the Res 32 box has about 20 element visits, each a few hundred flops
// of 3x3 algebra (F, cof F, the rotation's Newton step, P) that depend on nothing but the
// element. They are evaluated kPbngP1Lanes at a time in structure-of-arrays form, one loop
// per phase over the lanes, so the compiler vectorizes across elements (SSE2: 2 lanes a
// vector; with -march=native, AVX2 4 or AVX-512 8), then summed in visit order.
#include <vector>

#include "core/materials/closed_form_stress.hpp"
#include "core/support/types.hpp"
#include "core/terms/elastic_energy.hpp"
#include "core/terms/p1_element_record.hpp"

namespace pbdlab {

// The constants of one distinct material of the fast path: eq. 32's block parameters and the
// model's closed-form stress (core/materials/closed_form_stress.hpp; kind kNone: the
// material's own evaluate, for muscle and St. Venant-Kirchhoff).
struct PbngP1Material {
  double block_mu, block_lambda;  // eq. 32's mu and lambda, clamped at 0
  ClosedFormStress stress;
  bool corotated() const { return stress.usesRotation(); }
};

// The fast path's constants of `material` with eq. 32's block parameters `block`
// (modelParameters(): lambda_hat for Neo-Hookean).
PbngP1Material pbngP1Material(const Material& material, const LameParameters& block);

// The block the visits add (PbngOptions::node_block): kApproximate, eq. 32 (PBNG); kExact, each
// element's exact block (VBD's "projected_sum": the caller projects the sum); kExactProjected,
// each element's exact block with its negative eigenvalues clamped at 0
// (projectToPositiveSemidefinite, tangent_projection.hpp; VBD's "projected_terms"). The exact
// blocks need every visited element's material to have a closed form (kind != kNone).
enum class PbngP1Block { kApproximate, kExact, kExactProjected };

// Adds the visits visits[0..count) of one node (each 4 e + local, e indexing `elements`) to
// its gradient row and block (`kind`), in visit order. The rotation of a corotated element: with
// `warm` (the sweep; warm == elements), one Newton step from elements[e].rotation
// (warmStartedPolarStep, polar_svd.hpp), written there (polarRotation(F), the SVD, where the
// step is not trusted, counted in `fallbacks`); without (null), polarRotation(F), the
// definition, and nothing written. Neo-Hookean and stable Neo-Hookean take their closed-form
// P (closedFormStress); other materials evaluate their own through `elastic` with the element's
// data at time t.
void addPbngP1Visits(const int* visits, int count, const P1ElementRecord* elements, P1ElementRecord* warm,
                     const std::vector<PbngP1Material>& materials, const Positions& x, const ElasticEnergy& elastic,
                     double t, Vec3& gradient, Mat3& block, int& fallbacks,
                     PbngP1Block kind = PbngP1Block::kApproximate);

}  // namespace pbdlab
