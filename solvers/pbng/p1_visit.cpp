#include "solvers/pbng/p1_visit.hpp"

#include <algorithm>

#include "core/materials/rotation_lanes.hpp"

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
struct Lanes {
  alignas(64) double edge[9][kLanes];   // column a - 1: x_a - x_0, a = 1..3
  alignas(64) double shape[9][kLanes];  // row a - 1: dN_a/dX, a = 1..3 (m[(a - 1) + 3 j])
  alignas(64) double F[9][kLanes];
  alignas(64) double C[9][kLanes];      // cof F
  alignas(64) double J[kLanes];
  alignas(64) double R0[9][kLanes];
  alignas(64) double R[9][kLanes];
  alignas(64) double P[9][kLanes];
  alignas(64) double g[3][kLanes];      // dN_local/dX
  alignas(64) double volume[kLanes];
  alignas(64) double block_mu[kLanes], block_lambda[kLanes];
  alignas(64) double trusted[kLanes];   // the rotation step's verdict (1 or 0)
  alignas(64) double out[9][kLanes];    // gradient (3), block (00, 11, 22, 01, 02, 12)
  // The closed form's coefficients (closedFormStress); closed 0: the material's own P.
  alignas(64) double a0[kLanes], c[kLanes], bJ[kLanes], b0[kLanes], snh[kLanes], closed[kLanes];
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

// P of the closed-form lanes (closedFormStress; the others' P is already set), then each lane's
// gradient row V P g and block V (2 mu |g|^2 I + lambda c c^T), c = C g (eq. 32-33).
// `uniform`: the stress of every lane when the term has one material (the common case: the
// formula without the others' terms and selects; kNone stands for mixed materials or a
// material without a closed form, whose lanes take the general form with a select).
template <ClosedFormStressKind uniform>
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
                     double t, Vec3& gradient, Mat3& block, int& fallbacks) {
  Lanes lanes;
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
    switch (uniform) {
      case ClosedFormStressKind::kCorotated: contributions<ClosedFormStressKind::kCorotated>(lanes); break;
      case ClosedFormStressKind::kNeoHookean: contributions<ClosedFormStressKind::kNeoHookean>(lanes); break;
      case ClosedFormStressKind::kStableNeoHookean:
        contributions<ClosedFormStressKind::kStableNeoHookean>(lanes);
        break;
      case ClosedFormStressKind::kNone: contributions<ClosedFormStressKind::kNone>(lanes); break;
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
