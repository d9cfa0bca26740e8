#include "solvers/pbng/p1_visit.hpp"

#include <algorithm>

#include "core/materials/rotation_lanes.hpp"
#include "core/materials/tangent_projection.hpp"

namespace pbdlab {

PbngP1Material pbngP1Material(const Material& material, const LameParameters& block) {
  return {std::max(block.mu, 0.0), std::max(block.lambda, 0.0), closedFormStressOf(material)};
}

namespace {

// The phases below run inside addPbngP1Visits's target clones (one per instruction set), so
// they are inlined into each: a call would run the baseline build's code.
#define PBNG_LANE_PHASE inline __attribute__((always_inline))

// Visits evaluated together (AVX-512 holds 8 doubles; narrower vectors take several).
constexpr int kLanes = 8;

// One batch of visits in structure-of-arrays form: 3x3 matrices column-major per lane,
// m[i + 3 j][lane] = M(i, j).
struct Lanes : DeformationLanes<kLanes> {
  alignas(64) double edge[9][kLanes];   // column a - 1: x_a - x_0, a = 1..3
  alignas(64) double shape[9][kLanes];  // row a - 1: dN_a/dX, a = 1..3 (m[(a - 1) + 3 j])
  alignas(64) double P[9][kLanes];
  alignas(64) double g[3][kLanes];      // dN_local/dX
  alignas(64) double volume[kLanes];
  alignas(64) double block_mu[kLanes], block_lambda[kLanes];
  alignas(64) double out[9][kLanes];    // gradient (3), block (00, 11, 22, 01, 02, 12)
  // The closed form's coefficients (closedFormStress); closed 0: the material's own P.
  alignas(64) double a0[kLanes], c[kLanes], bJ[kLanes], b0[kLanes], snh[kLanes], closed[kLanes];
  // Exact blocks: 1 where the rotation's term is left to the SVD (K not safely definite), and
  // 1 where the block is positive definite (its leading minors).
  alignas(64) double rotation_by_svd[kLanes], definite[kLanes];
  int element[kLanes];
};

// Lane l of the batch from visit 4 e + local, or (element -1) a padding lane that evaluates
// to zero: F = R = I, V = 0.
PBNG_LANE_PHASE void load(Lanes& lanes, int l, int visit, const P1ElementRecord* elements,
          const std::vector<PbngP1Material>& materials, const Positions& x) {
  if (visit < 0) {
    for (int k = 0; k < 9; ++k) {
      const double identity = k % 4 == 0 ? 1.0 : 0.0;
      lanes.edge[k][l] = lanes.shape[k][l] = lanes.R0[k][l] = identity;
    }
    for (int d = 0; d < 3; ++d) lanes.g[d][l] = 0.0;
    lanes.volume[l] = lanes.block_mu[l] = lanes.block_lambda[l] = 0.0;
    lanes.a0[l] = lanes.c[l] = lanes.bJ[l] = lanes.b0[l] = lanes.snh[l] = 0.0;
    lanes.closed[l] = 1.0;
    for (int k = 0; k < 9; ++k) lanes.P[k][l] = 0.0;
    lanes.element[l] = -1;
    return;
  }
  const int e = visit >> 2, local = visit & 3;
  const P1ElementRecord& element = elements[e];
  const PbngP1Material& material = materials[element.material];
  const double* x0 = x.data() + 3 * element.nodes[0];
  for (int a = 1; a < 4; ++a) {
    const double* xa = x.data() + 3 * element.nodes[a];
    for (int i = 0; i < 3; ++i) lanes.edge[i + 3 * (a - 1)][l] = xa[i] - x0[i];
    for (int j = 0; j < 3; ++j) lanes.shape[(a - 1) + 3 * j][l] = element.shape[a - 1][j];
  }
  for (int k = 0; k < 9; ++k) lanes.R0[k][l] = element.rotation.data()[k];
  for (int d = 0; d < 3; ++d)
    lanes.g[d][l] = local > 0 ? element.shape[local - 1][d]
                              : -(element.shape[0][d] + element.shape[1][d] + element.shape[2][d]);
  lanes.volume[l] = element.volume;
  lanes.block_mu[l] = material.block_mu;
  lanes.block_lambda[l] = material.block_lambda;
  const ClosedFormStress& stress = material.stress;
  lanes.a0[l] = stress.a0;
  lanes.c[l] = stress.c;
  lanes.bJ[l] = stress.bJ;
  lanes.b0[l] = stress.b0;
  lanes.snh[l] = stress.snh;
  lanes.closed[l] = stress.kind != ClosedFormStressKind::kNone ? 1.0 : 0.0;
  for (int k = 0; k < 9; ++k) lanes.P[k][l] = 0.0;  // set by the material where no closed form
  lanes.element[l] = e;
}

// F, cof F and J of every lane (p1Deformation, core/terms/p1_element_record.hpp).
PBNG_LANE_PHASE void deformation(Lanes& lanes) {
  for (int l = 0; l < kLanes; ++l) {
    double edge[9], shape[9], F[9], C[9], J;
    for (int k = 0; k < 9; ++k) edge[k] = lanes.edge[k][l], shape[k] = lanes.shape[k][l];
    p1Deformation(edge, shape, F, C, J);
    for (int k = 0; k < 9; ++k) lanes.F[k][l] = F[k], lanes.C[k][l] = C[k];
    lanes.J[l] = J;
  }
}


Mat3 laneMatrix(const double (&m)[9][kLanes], int l) {
  Mat3 M;
  for (int k = 0; k < 9; ++k) M.data()[k] = m[k][l];
  return M;
}

void setLaneMatrix(double (&m)[9][kLanes], int l, const Mat3& M) {
  for (int k = 0; k < 9; ++k) m[k][l] = M.data()[k];
}

// VBD's exact block of one lane over V (p1_visit.hpp), h = (00, 11, 22, 01, 02, 12), from F,
// C = cof F, R, g and the closed form's coefficients; `uniform` as in contributions(). Sets
// rotation_by_svd where the rotation's term is not evaluated here.
template <ClosedFormStressKind uniform>
PBNG_LANE_PHASE void exactBlock(Lanes& lanes, int l, const double* F, const double* C, const double* R, double g0,
                                double g1, double g2, double* h) {
  constexpr bool rotation = uniform == ClosedFormStressKind::kCorotated || uniform == ClosedFormStressKind::kNone;
  constexpr bool stable = uniform == ClosedFormStressKind::kStableNeoHookean || uniform == ClosedFormStressKind::kNone;
  const double gg = g0 * g0 + g1 * g1 + g2 * g2;
  // b's term: bJ k k^T, k = C g (d(cof F)[e_b g^T] g = 0: det is affine along e_b g^T).
  const double k0 = C[0] * g0 + C[3] * g1 + C[6] * g2;
  const double k1 = C[1] * g0 + C[4] * g1 + C[7] * g2;
  const double k2 = C[2] * g0 + C[5] * g1 + C[8] * g2;
  const double bJ = lanes.bJ[l];
  h[0] = bJ * k0 * k0, h[1] = bJ * k1 * k1, h[2] = bJ * k2 * k2;
  h[3] = bJ * k0 * k1, h[4] = bJ * k0 * k2, h[5] = bJ * k1 * k2;
  // a's term: a |g|^2 I, plus (stable Neo-Hookean) da = 2 a0 snh / (Ic + 1)^2 (F : dF) times f f^T.
  double diagonal = 0.0;
  if constexpr (uniform == ClosedFormStressKind::kNeoHookean) diagonal = lanes.a0[l] * gg;
  if constexpr (stable) {
    double Ic = 0.0;
    for (int k = 0; k < 9; ++k) Ic += F[k] * F[k];
    const double inv = 1.0 / (Ic + 1.0), a0 = lanes.a0[l], snh = lanes.snh[l];
    diagonal = a0 * (1.0 - snh * inv) * gg;
    const double s = 2.0 * a0 * snh * inv * inv;
    const double f0 = F[0] * g0 + F[3] * g1 + F[6] * g2;
    const double f1 = F[1] * g0 + F[4] * g1 + F[7] * g2;
    const double f2 = F[2] * g0 + F[5] * g1 + F[8] * g2;
    h[0] += s * f0 * f0, h[1] += s * f1 * f1, h[2] += s * f2 * f2;
    h[3] += s * f0 * f1, h[4] += s * f0 * f2, h[5] += s * f1 * f2;
  }
  if constexpr (rotation) {
    // c (|g|^2 I + R [g]x K^-1 [g]x R^T) = c (|g|^2 I - Q K^-1 Q^T), Q = R [g]x with rows
    // q_i = r_i x g (r_i: R's row i); K^-1 = adj(K) / det K, K = tr(S) I - sym(S), S = R^T F.
    const double c = lanes.c[l];
    diagonal += c * gg;
    double S[9];
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i)
        S[i + 3 * j] = R[3 * i] * F[3 * j] + R[3 * i + 1] * F[3 * j + 1] + R[3 * i + 2] * F[3 * j + 2];
    const double t = S[0] + S[4] + S[8];
    const double k00 = t - S[0], k11 = t - S[4], k22 = t - S[8];
    const double k01 = -0.5 * (S[3] + S[1]), k02 = -0.5 * (S[6] + S[2]), k12 = -0.5 * (S[7] + S[5]);
    const double a00 = k11 * k22 - k12 * k12, a01 = k02 * k12 - k01 * k22, a02 = k01 * k12 - k02 * k11;
    const double a11 = k00 * k22 - k02 * k02, a12 = k01 * k02 - k00 * k12, a22 = k00 * k11 - k01 * k01;
    const double det = k00 * a00 + k01 * a01 + k02 * a02;
    // K's eigenvalues are sigma_i + sigma_j; the smallest is >= 4 det K / tr(K)^2 when K is
    // definite (Sylvester, NaN fails). Below polarRotationDerivative's floor (kSigmaSumFloor
    // max(sigma_1, 1), sigma_1 <= tr S) the term is left to the SVD, as the definition floors it.
    const double trK = 2.0 * t;
    const bool safe = (k00 > 0.0) & (a22 > 0.0) & (4.0 * det >= kSigmaSumFloor * std::max(t, 1.0) * trK * trK);
    const bool used = c != 0.0;  // mixed terms: the corotated lanes
    lanes.rotation_by_svd[l] = used & !safe ? 1.0 : 0.0;
    const double scale = used & safe ? c / det : 0.0;
    double q[3][3];
    for (int i = 0; i < 3; ++i) {
      const double r0 = R[i], r1 = R[i + 3], r2 = R[i + 6];
      q[i][0] = r1 * g2 - r2 * g1, q[i][1] = r2 * g0 - r0 * g2, q[i][2] = r0 * g1 - r1 * g0;
    }
    double w[3][3];  // adj(K) q_i
    for (int i = 0; i < 3; ++i) {
      w[i][0] = a00 * q[i][0] + a01 * q[i][1] + a02 * q[i][2];
      w[i][1] = a01 * q[i][0] + a11 * q[i][1] + a12 * q[i][2];
      w[i][2] = a02 * q[i][0] + a12 * q[i][1] + a22 * q[i][2];
    }
    auto dot = [&](int i, int k) { return q[i][0] * w[k][0] + q[i][1] * w[k][1] + q[i][2] * w[k][2]; };
    h[0] -= scale * dot(0, 0), h[1] -= scale * dot(1, 1), h[2] -= scale * dot(2, 2);
    h[3] -= scale * dot(0, 1), h[4] -= scale * dot(0, 2), h[5] -= scale * dot(1, 2);
  }
  h[0] += diagonal, h[1] += diagonal, h[2] += diagonal;
}

// P of the closed-form lanes (closedFormStress; the others' P is already set), then each lane's
// gradient row V P g and block: eq. 32-33's V (2 mu |g|^2 I + lambda c c^T), c = C g, or with
// `exact` VBD's exact block (exactBlock; closed-form lanes only).
// `uniform`: the stress of every lane when the term has one material (the common case: the
// formula without the others' terms and selects; kNone stands for mixed materials or a
// material without a closed form, whose lanes take the general form with a select).
template <ClosedFormStressKind uniform, bool exact>
PBNG_LANE_PHASE void contributions(Lanes& lanes) {
  for (int l = 0; l < kLanes; ++l) {
    double F[9], R[9], C[9], P[9];
    for (int k = 0; k < 9; ++k) F[k] = lanes.F[k][l], R[k] = lanes.R[k][l], C[k] = lanes.C[k][l];
    closedFormStress<uniform>(lanes.a0[l], lanes.c[l], lanes.bJ[l], lanes.b0[l], lanes.snh[l], F, C, lanes.J[l], R, P);
    if constexpr (uniform == ClosedFormStressKind::kNone)
      for (int k = 0; k < 9; ++k) {
        const double given = lanes.P[k][l];  // loaded unconditionally: a select, not a branch
        P[k] = lanes.closed[l] != 0.0 ? P[k] : given;
      }
    const double V = lanes.volume[l];
    const double g0 = lanes.g[0][l], g1 = lanes.g[1][l], g2 = lanes.g[2][l];
    for (int i = 0; i < 3; ++i) lanes.out[i][l] = V * (P[i] * g0 + P[i + 3] * g1 + P[i + 6] * g2);
    if constexpr (exact) {
      double h[6];
      exactBlock<uniform>(lanes, l, F, C, R, g0, g1, g2, h);
      for (int k = 0; k < 6; ++k) lanes.out[3 + k][l] = V * h[k];
    } else {
      const double c0 = C[0] * g0 + C[3] * g1 + C[6] * g2;
      const double c1 = C[1] * g0 + C[4] * g1 + C[7] * g2;
      const double c2 = C[2] * g0 + C[5] * g1 + C[8] * g2;
      const double scale = V * lanes.block_lambda[l];
      const double diagonal = V * 2.0 * lanes.block_mu[l] * (g0 * g0 + g1 * g1 + g2 * g2);
      lanes.out[3][l] = scale * c0 * c0 + diagonal;
      lanes.out[4][l] = scale * c1 * c1 + diagonal;
      lanes.out[5][l] = scale * c2 * c2 + diagonal;
      lanes.out[6][l] = scale * c0 * c1;
      lanes.out[7][l] = scale * c0 * c2;
      lanes.out[8][l] = scale * c1 * c2;
    }
  }
}

// The rotation's term of the exact block where exactBlock left it (K not safely definite):
// -c V g^T (dR/dF) g from the SVD's polarRotationDerivative, the definition's (floored) form.
void addRotationTermBySvd(Lanes& lanes, int l) {
  const Mat9 dR = polarRotationDerivative(rotationVariantSvd(laneMatrix(lanes.F, l)));
  const Vec3 g(lanes.g[0][l], lanes.g[1][l], lanes.g[2][l]);
  Mat3 T;
  for (int b = 0; b < 3; ++b)
    for (int a = 0; a < 3; ++a) {
      double sum = 0.0;
      for (int m = 0; m < 3; ++m)
        for (int j = 0; j < 3; ++j) sum += g[j] * dR(a + 3 * j, b + 3 * m) * g[m];
      T(a, b) = sum;
    }
  const double scale = -lanes.c[l] * lanes.volume[l];
  constexpr int kRow[6] = {0, 1, 2, 0, 0, 1}, kColumn[6] = {0, 1, 2, 1, 2, 2};
  for (int k = 0; k < 6; ++k) lanes.out[3 + k][l] += scale * T(kRow[k], kColumn[k]);
}

// Whether each lane's block is positive definite: its leading minors > 0 (Sylvester; NaN fails).
PBNG_LANE_PHASE void definiteness(Lanes& lanes) {
  for (int l = 0; l < kLanes; ++l) {
    const double h00 = lanes.out[3][l], h11 = lanes.out[4][l], h22 = lanes.out[5][l];
    const double h01 = lanes.out[6][l], h02 = lanes.out[7][l], h12 = lanes.out[8][l];
    const double m2 = h00 * h11 - h01 * h01;
    const double m3 = h00 * (h11 * h22 - h12 * h12) - h01 * (h01 * h22 - h02 * h12) + h02 * (h01 * h12 - h02 * h11);
    lanes.definite[l] = (h00 > 0.0) & (m2 > 0.0) & (m3 > 0.0) ? 1.0 : 0.0;
  }
}

// Lane l's block with its negative eigenvalues clamped at 0 (projectToPositiveSemidefinite).
void projectLaneBlock(Lanes& lanes, int l) {
  Mat3 H;
  H << lanes.out[3][l], lanes.out[6][l], lanes.out[7][l], lanes.out[6][l], lanes.out[4][l], lanes.out[8][l],
      lanes.out[7][l], lanes.out[8][l], lanes.out[5][l];
  const Mat3 projected = projectToPositiveSemidefinite(H);
  lanes.out[3][l] = projected(0, 0), lanes.out[4][l] = projected(1, 1), lanes.out[5][l] = projected(2, 2);
  lanes.out[6][l] = projected(0, 1), lanes.out[7][l] = projected(0, 2), lanes.out[8][l] = projected(1, 2);
}

template <bool exact>
PBNG_LANE_PHASE void contributionsOf(ClosedFormStressKind uniform, Lanes& lanes) {
  switch (uniform) {
    case ClosedFormStressKind::kCorotated: contributions<ClosedFormStressKind::kCorotated, exact>(lanes); break;
    case ClosedFormStressKind::kNeoHookean: contributions<ClosedFormStressKind::kNeoHookean, exact>(lanes); break;
    case ClosedFormStressKind::kStableNeoHookean:
      contributions<ClosedFormStressKind::kStableNeoHookean, exact>(lanes);
      break;
    case ClosedFormStressKind::kNone: contributions<ClosedFormStressKind::kNone, exact>(lanes); break;
  }
}

}  // namespace

// Compiled for AVX-512, AVX2 and the baseline, chosen at load time by the CPU (GCC's
// target_clones on x86-64): the lanes are 8, 4 or 2 doubles a vector on one binary. Other
// compilers and targets build the baseline only (or what -march asks for).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define PBNG_LANE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PBNG_LANE_CLONES
#endif
PBNG_LANE_CLONES
void addPbngP1Visits(const int* visits, int count, const P1ElementRecord* elements, P1ElementRecord* warm,
                     const std::vector<PbngP1Material>& materials, const Positions& x, const ElasticEnergy& elastic,
                     double t, Vec3& gradient, Mat3& block, int& fallbacks, PbngP1Block kind) {
  Lanes lanes;
  const bool exact = kind != PbngP1Block::kApproximate;
  const ClosedFormStressKind uniform =
      materials.size() == 1 ? materials.front().stress.kind : ClosedFormStressKind::kNone;
  double sum[9] = {};  // the gradient and the block's six entries, summed in visit order
  for (int first = 0; first < count; first += kLanes) {
    const int n = std::min(kLanes, count - first);
    for (int l = 0; l < kLanes; ++l) load(lanes, l, l < n ? visits[first + l] : -1, elements, materials, x);
    deformation(lanes);
    if (warm)
      warmRotationLanes(lanes.F, lanes.R0, lanes.R, lanes.trusted);
    else
      std::copy(&lanes.R0[0][0], &lanes.R0[0][0] + 9 * kLanes, &lanes.R[0][0]);  // finite for c (F - R), c = 0
    for (int l = 0; l < n; ++l) {
      const int e = lanes.element[l];
      if (lanes.closed[l] == 0.0) {
        // A material without a closed form here: its own P (no rotation).
        Mat3 P;
        elastic.material(e).evaluate(laneMatrix(lanes.F, l), elastic.pointData(e, t), nullptr, &P, nullptr);
        setLaneMatrix(lanes.P, l, P);
      } else if (lanes.c[l] != 0.0 && (!warm || lanes.trusted[l] == 0.0)) {
        // The definition, or the warm step's fallback: the SVD's rotation.
        polarRotationLane(lanes.F, l, lanes.R);
        if (warm) ++fallbacks;
      }
    }
    if (!exact) {
      contributionsOf<false>(uniform, lanes);
    } else {
      contributionsOf<true>(uniform, lanes);
      if (uniform == ClosedFormStressKind::kCorotated || uniform == ClosedFormStressKind::kNone)
        for (int l = 0; l < n; ++l)
          if (lanes.rotation_by_svd[l] != 0.0) addRotationTermBySvd(lanes, l);
      if (kind == PbngP1Block::kExactProjected) {
        // Most blocks are definite: the test runs on the lanes, the eigen-solve on the others only.
        definiteness(lanes);
        for (int l = 0; l < n; ++l)
          if (lanes.definite[l] == 0.0) projectLaneBlock(lanes, l);
      }
    }
    for (int l = 0; l < n; ++l) {
      for (int k = 0; k < 9; ++k) sum[k] += lanes.out[k][l];
      if (warm && lanes.c[l] != 0.0) warm[lanes.element[l]].rotation = laneMatrix(lanes.R, l);
    }
  }
  gradient += Vec3(sum[0], sum[1], sum[2]);
  Mat3 added;
  added << sum[3], sum[6], sum[7], sum[6], sum[4], sum[8], sum[7], sum[8], sum[5];
  block += added;
}

}  // namespace pbdlab
