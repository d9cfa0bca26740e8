#include "solvers/pbd_xpbd/p1_lanes.hpp"

#include <algorithm>
#include <cmath>

#include "core/materials/rotation_lanes.hpp"
#include "core/materials/term_kinds.hpp"
#include "solvers/pbd_xpbd/xpbd_solver.hpp"

namespace pbdlab {

bool xpbdP1LanesServe(const MaterialSplit& split) {
  if (split.numTerms() > kXpbdP1MaxTerms) return false;
  for (const MaterialTerm& term : split.terms)
    if (term.kind == MaterialTermKind::kGeneric || (term.signed_root && term.kind != MaterialTermKind::kVolume))
      return false;  // a signed root the lanes know: kVolume's J - s
  return true;
}

namespace {

// The phases run inside sweepXpbdP1Records's target clones (one per instruction set), so they
// are inlined into each.
#define XPBD_LANE_PHASE inline __attribute__((always_inline))

constexpr int kLanes = kXpbdP1Lanes;

// One batch in structure-of-arrays form; 3x3 matrices column-major per lane.
struct Lanes : DeformationLanes<kLanes> {
  alignas(64) double x[12][kLanes];             // node a's component i at 3 a + i
  alignas(64) double inverse_mass[12][kLanes];  // the same layout
  alignas(64) double shape[9][kLanes];          // record shape rows: shape[(a - 1) + 3 j]
  alignas(64) double g0[3][kLanes];             // node 0's dN/dX: minus the sum of the rows
  alignas(64) double volume[kLanes];
  alignas(64) double alpha[kXpbdP1MaxTerms][kLanes];  // alpha~ = alpha / dt^2 (0 where off)
  alignas(64) double on[kXpbdP1MaxTerms][kLanes];     // 1: the term is a constraint here
  alignas(64) double lambda[kXpbdP1MaxTerms][kLanes];
  alignas(64) double shift[kXpbdP1MaxTerms][kLanes];
  int record[kLanes];
};

XPBD_LANE_PHASE void load(Lanes& lanes, int l, int r, const XpbdP1Split& split, const XpbdP1Update& update,
                          const P1ElementRecord* records, const double* inverse_mass, const double* x,
                          const double* lambda) {
  const int K = static_cast<int>(split.kinds.size());
  if (r < 0) {
    // A padding lane: F = R = I, no volume, no constraint.
    for (int k = 0; k < 12; ++k) lanes.x[k][l] = 0.0, lanes.inverse_mass[k][l] = 0.0;
    for (int k = 0; k < 9; ++k) lanes.shape[k][l] = lanes.R0[k][l] = k % 4 == 0 ? 1.0 : 0.0;
    for (int a = 1; a < 4; ++a) lanes.x[3 * a + a - 1][l] = 1.0;  // edges e_1, e_2, e_3
    for (int d = 0; d < 3; ++d) lanes.g0[d][l] = 0.0;
    lanes.volume[l] = 0.0;
    for (int k = 0; k < K; ++k) lanes.alpha[k][l] = lanes.on[k][l] = lanes.lambda[k][l] = lanes.shift[k][l] = 0.0;
    lanes.record[l] = -1;
    return;
  }
  const P1ElementRecord& record = records[r];
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < 3; ++i) {
      lanes.x[3 * a + i][l] = x[3 * record.nodes[a] + i];
      lanes.inverse_mass[3 * a + i][l] = inverse_mass[3 * record.nodes[a] + i];
    }
  for (int a = 1; a < 4; ++a)
    for (int j = 0; j < 3; ++j) lanes.shape[(a - 1) + 3 * j][l] = record.shape[a - 1][j];
  for (int d = 0; d < 3; ++d) lanes.g0[d][l] = -(record.shape[0][d] + record.shape[1][d] + record.shape[2][d]);
  for (int k = 0; k < 9; ++k) lanes.R0[k][l] = record.rotation.data()[k];
  lanes.volume[l] = record.volume;
  const std::array<double, kXpbdP1MaxTerms>& compliance = split.compliance[record.material];
  for (int k = 0; k < K; ++k) {
    const bool on = std::isfinite(compliance[k]);
    lanes.on[k][l] = on ? 1.0 : 0.0;
    lanes.alpha[k][l] = on ? compliance[k] * update.compliance_scale : 0.0;
    lanes.lambda[k][l] = lambda[static_cast<size_t>(r) * K + k];
    lanes.shift[k][l] = split.shift[record.material][k];
  }
  lanes.record[l] = r;
}

XPBD_LANE_PHASE void deformation(Lanes& lanes) {
  for (int l = 0; l < kLanes; ++l) {
    double edge[9], shape[9], F[9], C[9], J;
    for (int a = 1; a < 4; ++a)
      for (int i = 0; i < 3; ++i) edge[i + 3 * (a - 1)] = lanes.x[3 * a + i][l] - lanes.x[i][l];
    for (int k = 0; k < 9; ++k) shape[k] = lanes.shape[k][l];
    p1Deformation(edge, shape, F, C, J);
    for (int k = 0; k < 9; ++k) lanes.F[k][l] = F[k], lanes.C[k][l] = C[k];
    lanes.J[l] = J;
  }
}


// One term of every lane: Psi~ and P~ of its kind (closedFormTerm), C = sqrt(2 V |Psi~| +
// 2 V eps), negated where a signed root J - s is negative, and grad C (elementConstraint),
// then the XPBD or B-PXPBD update (updateConstraint), with selects where the generic path
// returns early (the term off, near zero under "skip", grad C = 0 under PBD), so that the
// loop has no branch.
template <MaterialTermKind kind, bool blended>
XPBD_LANE_PHASE void updateTerm(Lanes& lanes, int k, bool signed_root, const XpbdP1Update& update,
                                double (*total)[kLanes]) {
  for (int l = 0; l < kLanes; ++l) {
    double F[9], C[9], R[9], P[9];
    for (int m = 0; m < 9; ++m) F[m] = lanes.F[m][l], C[m] = lanes.C[m][l], R[m] = lanes.R[m][l];
    const double psi = closedFormTerm(kind, lanes.shift[k][l], F, C, lanes.J[l], R, P);
    const double V = lanes.volume[l];
    const double unsigned_magnitude = std::sqrt(2.0 * V * std::abs(psi) + 2.0 * V * update.eps);
    const bool negative = signed_root && lanes.J[l] - lanes.shift[k][l] < 0.0;
    const double magnitude = negative ? -unsigned_magnitude : unsigned_magnitude;  // C
    const double scale = unsigned_magnitude > 0.0 ? V / magnitude : 0.0;  // grad C = V P~ dN/dX / C
    double gradient[12];
    const double g0[3] = {lanes.g0[0][l], lanes.g0[1][l], lanes.g0[2][l]};
    for (int i = 0; i < 3; ++i)
      gradient[i] = scale * (P[i] * g0[0] + P[i + 3] * g0[1] + P[i + 6] * g0[2]);
    for (int a = 1; a < 4; ++a)
      for (int i = 0; i < 3; ++i)
        gradient[3 * a + i] = scale * (P[i] * lanes.shape[a - 1][l] + P[i + 3] * lanes.shape[a + 2][l] +
                                       P[i + 6] * lanes.shape[a + 5][l]);
    double weighted[12], denominator = lanes.alpha[k][l];
    double norm2 = 0.0;
    for (int m = 0; m < 12; ++m) {
      weighted[m] = lanes.inverse_mass[m][l] * gradient[m];
      norm2 += weighted[m] * gradient[m];
    }
    denominator += norm2;
    const bool near_zero = update.skip_near_zero && std::abs(V * psi) <= XpbdOptions::kSkipBelow * V;
    const bool visit = lanes.on[k][l] != 0.0 && !near_zero && denominator > 0.0;
    const double lambda = lanes.lambda[k][l];
    const double delta = visit ? -(magnitude + lanes.alpha[k][l] * lambda) / denominator : 0.0;
    if constexpr (blended) {
      const double zeta = update.zeta;
      for (int m = 0; m < 12; ++m) {
        const double fixed_point = (lambda + delta) * weighted[m] - total[m][l];  // eq. 22
        const double dx = visit ? zeta * delta * weighted[m] + (1.0 - zeta) * fixed_point : 0.0;  // eq. 21
        lanes.x[m][l] += dx;
        total[m][l] += dx;
      }
    } else {
      for (int m = 0; m < 12; ++m) lanes.x[m][l] += delta * weighted[m];  // eq. 15, 17
    }
    lanes.lambda[k][l] = lambda + delta;
  }
}

template <bool blended>
XPBD_LANE_PHASE void sweepBatches(const XpbdP1Split& split, const XpbdP1Update& update, int begin, int end,
                                  P1ElementRecord* records, const double* inverse_mass, double* x, double* lambda,
                                  double* totals, int& fallbacks) {
  const int K = static_cast<int>(split.kinds.size());
  Lanes lanes;
  alignas(64) double total[kXpbdP1MaxTerms][12][kLanes];
  for (int first = begin; first < end; first += kLanes) {
    const int n = std::min(kLanes, end - first);
    for (int l = 0; l < kLanes; ++l)
      load(lanes, l, l < n ? first + l : -1, split, update, records, inverse_mass, x, lambda);
    if constexpr (blended) {
      for (int k = 0; k < K; ++k)
        for (int l = 0; l < kLanes; ++l)
          for (int m = 0; m < 12; ++m)
            total[k][m][l] = l < n ? totals[(static_cast<size_t>(first + l) * K + k) * 12 + m] : 0.0;
    }
    for (int k = 0; k < K; ++k) {
      deformation(lanes);
      const bool signed_root = split.signed_root[k] != 0;
      if (split.kinds[k] == MaterialTermKind::kCorotatedStretch) {
        if (update.warm_rotations) {
          warmRotationLanes(lanes.F, lanes.R0, lanes.R, lanes.trusted);
        } else {
          // R finite in the padding lanes too (their R0 is I); the others take the SVD below.
          std::copy(&lanes.R0[0][0], &lanes.R0[0][0] + 9 * kLanes, &lanes.R[0][0]);
          for (int l = 0; l < kLanes; ++l) lanes.trusted[l] = 0.0;
        }
        for (int l = 0; l < n; ++l) {
          if (lanes.trusted[l] != 0.0) continue;
          polarRotationLane(lanes.F, l, lanes.R);
          if (update.warm_rotations) ++fallbacks;
        }
        updateTerm<MaterialTermKind::kCorotatedStretch, blended>(lanes, k, signed_root, update, total[k]);
        if (update.warm_rotations)
          for (int l = 0; l < n; ++l)
            for (int m = 0; m < 9; ++m) records[first + l].rotation.data()[m] = lanes.R[m][l];
      } else {
        switch (split.kinds[k]) {
          case MaterialTermKind::kVolume:
            updateTerm<MaterialTermKind::kVolume, blended>(lanes, k, signed_root, update, total[k]);
            break;
          case MaterialTermKind::kInvariantI2:
            updateTerm<MaterialTermKind::kInvariantI2, blended>(lanes, k, signed_root, update, total[k]);
            break;
          case MaterialTermKind::kNeoHookeanShape:
            updateTerm<MaterialTermKind::kNeoHookeanShape, blended>(lanes, k, signed_root, update, total[k]);
            break;
          case MaterialTermKind::kStableNeoHookeanShape:
            updateTerm<MaterialTermKind::kStableNeoHookeanShape, blended>(lanes, k, signed_root, update, total[k]);
            break;
          case MaterialTermKind::kCorotatedStretch:
          case MaterialTermKind::kGeneric: break;  // handled above; refused by xpbdP1LanesServe
        }
      }
    }
    for (int l = 0; l < n; ++l) {
      const P1ElementRecord& record = records[first + l];
      for (int a = 0; a < 4; ++a)
        for (int i = 0; i < 3; ++i) x[3 * record.nodes[a] + i] = lanes.x[3 * a + i][l];
      for (int k = 0; k < K; ++k) lambda[static_cast<size_t>(first + l) * K + k] = lanes.lambda[k][l];
      if constexpr (blended)
        for (int k = 0; k < K; ++k)
          for (int m = 0; m < 12; ++m) totals[(static_cast<size_t>(first + l) * K + k) * 12 + m] = total[k][m][l];
    }
  }
}

}  // namespace

// AVX-512, AVX2 and the baseline, chosen at load time (as PBNG's p1_visit.cpp).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define XPBD_LANE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define XPBD_LANE_CLONES
#endif
XPBD_LANE_CLONES
void sweepXpbdP1Records(const XpbdP1Split& split, const XpbdP1Update& update, int begin, int end,
                        P1ElementRecord* records, const double* inverse_mass, double* x, double* lambda,
                        double* totals, int& fallbacks) {
  if (update.blended)
    sweepBatches<true>(split, update, begin, end, records, inverse_mass, x, lambda, totals, fallbacks);
  else
    sweepBatches<false>(split, update, begin, end, records, inverse_mass, x, lambda, totals, fallbacks);
}

}  // namespace pbdlab
