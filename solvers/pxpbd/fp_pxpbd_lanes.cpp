#include "solvers/pxpbd/fp_pxpbd_lanes.hpp"

#include <algorithm>

#include "core/materials/rotation_lanes.hpp"
#include "core/terms/p1_element_record.hpp"

namespace pbdlab {

namespace {

// The phases run inside solveFpPxpbdLaneElements's target clones (one per instruction set), so
// they are inlined into each.
#define FP_LANE_PHASE inline __attribute__((always_inline))

constexpr int kLanes = kFpPxpbdLanes;

// One batch; 3x3 matrices column-major per lane, m[i + 3 j][lane] = M(i, j); the element's
// nodal 3x4 matrices (positions, right-hand side, forces, offsets) at i + 3 a.
struct Lanes : DeformationLanes<kLanes> {
  alignas(64) double xe[12][kLanes];
  alignas(64) double rhs[12][kLanes];    // m_a x~_a + dt^2 (f_ext_a - the other elements' forces)
  alignas(64) double own[12][kLanes];    // V P_old G_a: the element's force before the solve
  alignas(64) double G[12][kLanes];      // shape gradients, G(a, j) at a + 4 j
  alignas(64) double offsets[12][kLanes];  // X_a - X_com, component i at i + 3 a
  alignas(64) double mass[4][kLanes];
  alignas(64) double Z[9][kLanes];       // Z^ of eq. 49
  alignas(64) double total_mass[kLanes], volume[kLanes], rank_one_c[kLanes];
  alignas(64) double a0[kLanes], c[kLanes], bJ[kLanes], b0[kLanes], snh[kLanes];
  alignas(64) double P[9][kLanes];
};

// Lane l from element k, or (k < 0) a padding lane: a unit-mass element at rest, which the
// solve leaves where it is (no volume, no stress, no force).
FP_LANE_PHASE void load(Lanes& lanes, int l, int k, const std::vector<ClosedFormStress>& materials,
                        const FpPxpbdElement* elements, const Mat3* stress, const Mat3* rotations,
                        const double* inertial_rhs, const double* stress_force, const double* x, double dt2) {
  if (k < 0) {
    for (int m = 0; m < 12; ++m) lanes.xe[m][l] = lanes.rhs[m][l] = lanes.own[m][l] = lanes.G[m][l] = 0.0;
    for (int m = 0; m < 12; ++m) lanes.offsets[m][l] = 0.0;
    for (int a = 0; a < 4; ++a) lanes.mass[a][l] = 1.0;
    for (int m = 0; m < 9; ++m) lanes.Z[m][l] = lanes.R0[m][l] = m % 4 == 0 ? 1.0 : 0.0;
    lanes.total_mass[l] = 4.0;
    lanes.volume[l] = lanes.rank_one_c[l] = 0.0;
    lanes.a0[l] = lanes.c[l] = lanes.bJ[l] = lanes.b0[l] = lanes.snh[l] = 0.0;
    return;
  }
  const FpPxpbdElement& el = elements[k];
  const ClosedFormStress& s = materials[el.material];
  const Mat3& P_old = stress[k];
  for (int a = 0; a < 4; ++a) {
    const int node = el.nodes[a];
    for (int i = 0; i < 3; ++i) {
      // V P_old G_a, as solveElement's own_force.
      double f = 0.0;
      for (int j = 0; j < 3; ++j) f += P_old(i, j) * el.shape_gradients(a, j);
      f *= el.volume;
      lanes.own[i + 3 * a][l] = f;
      lanes.xe[i + 3 * a][l] = x[3 * node + i];
      lanes.rhs[i + 3 * a][l] = inertial_rhs[3 * node + i] - dt2 * (stress_force[3 * node + i] - f);
      lanes.offsets[i + 3 * a][l] = el.offsets(i, a);
    }
    for (int j = 0; j < 3; ++j) lanes.G[a + 4 * j][l] = el.shape_gradients(a, j);
    lanes.mass[a][l] = el.masses[a];
  }
  for (int m = 0; m < 9; ++m) lanes.Z[m][l] = el.affine_block.data()[m], lanes.R0[m][l] = rotations[k].data()[m];
  lanes.total_mass[l] = el.total_mass;
  lanes.volume[l] = el.volume;
  lanes.rank_one_c[l] = el.rank_one_c;
  lanes.a0[l] = s.a0, lanes.c[l] = s.c, lanes.bJ[l] = s.bJ, lanes.b0[l] = s.b0, lanes.snh[l] = s.snh;
}

// F = x_e G (the four nodes, in node order), cof F and J.
FP_LANE_PHASE void deformation(Lanes& lanes) {
  for (int l = 0; l < kLanes; ++l) {
    double F[9];
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i)
        F[i + 3 * j] = lanes.xe[i][l] * lanes.G[4 * j][l] + lanes.xe[i + 3][l] * lanes.G[1 + 4 * j][l] +
                       lanes.xe[i + 6][l] * lanes.G[2 + 4 * j][l] + lanes.xe[i + 9][l] * lanes.G[3 + 4 * j][l];
    double C[9], J;
    cofactorAndDeterminant(F, C, J);
    for (int m = 0; m < 9; ++m) lanes.F[m][l] = F[m], lanes.C[m][l] = C[m];
    lanes.J[l] = J;
  }
}

template <ClosedFormStressKind uniform>
FP_LANE_PHASE void stresses(Lanes& lanes) {
  for (int l = 0; l < kLanes; ++l) {
    double F[9], C[9], R[9], P[9];
    for (int m = 0; m < 9; ++m) F[m] = lanes.F[m][l], C[m] = lanes.C[m][l], R[m] = lanes.R[m][l];
    closedFormStress<uniform>(lanes.a0[l], lanes.c[l], lanes.bJ[l], lanes.b0[l], lanes.snh[l], F, C, lanes.J[l], R, P);
    for (int m = 0; m < 9; ++m) lanes.P[m][l] = P[m];
  }
}

// One local Newton iteration of every lane at its current P: the residual of eq. 29,
// g_a = m_a x_a + dt^2 V P G_a - rhs_a; the translation b = -sum_a g_a / m^e (eq. 33); the
// distortion dF of eq. 49 (corrected, distortional_step.hpp's shermanMorrisonStep) from
// G = sum_a g_a (X_a - X_com)^T (eq. 35); x_a += dF (X_a - X_com) + b (eq. 32).
FP_LANE_PHASE void newtonStep(Lanes& lanes, double dt2) {
  for (int l = 0; l < kLanes; ++l) {
    const double dt2_V = dt2 * lanes.volume[l];
    double g[12];
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) {
        const double PG = lanes.P[i][l] * lanes.G[a][l] + lanes.P[i + 3][l] * lanes.G[a + 4][l] +
                          lanes.P[i + 6][l] * lanes.G[a + 8][l];
        g[i + 3 * a] = lanes.xe[i + 3 * a][l] * lanes.mass[a][l] + (dt2_V * PG - lanes.rhs[i + 3 * a][l]);
      }
    double b[3], Gaff[9];
    for (int i = 0; i < 3; ++i) {
      b[i] = -(g[i] + g[i + 3] + g[i + 6] + g[i + 9]) / lanes.total_mass[l];
      for (int j = 0; j < 3; ++j)
        Gaff[i + 3 * j] = g[i] * lanes.offsets[j][l] + g[i + 3] * lanes.offsets[j + 3][l] +
                          g[i + 6] * lanes.offsets[j + 6][l] + g[i + 9] * lanes.offsets[j + 9][l];
    }
    double ZG[9], ZW[9], wZG = 0.0, wZw = 0.0;
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) {
        const double z0 = lanes.Z[3 * j][l], z1 = lanes.Z[1 + 3 * j][l], z2 = lanes.Z[2 + 3 * j][l];
        ZG[i + 3 * j] = Gaff[i] * z0 + Gaff[i + 3] * z1 + Gaff[i + 6] * z2;
        ZW[i + 3 * j] = lanes.C[i][l] * z0 + lanes.C[i + 3][l] * z1 + lanes.C[i + 6][l] * z2;
      }
    for (int m = 0; m < 9; ++m) wZG += lanes.C[m][l] * ZG[m], wZw += lanes.C[m][l] * ZW[m];
    const double c = lanes.rank_one_c[l];
    const double coefficient = c * wZG / (1.0 + c * wZw);
    double dF[9];
    for (int m = 0; m < 9; ++m) dF[m] = -(ZG[m] - coefficient * ZW[m]);
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i)
        lanes.xe[i + 3 * a][l] += dF[i] * lanes.offsets[3 * a][l] + dF[i + 3] * lanes.offsets[1 + 3 * a][l] +
                                  dF[i + 6] * lanes.offsets[2 + 3 * a][l] + b[i];
  }
}

// R of every lane at its F: the warm step from R0 and the SVD where it is not trusted, or the
// SVD everywhere. Then R0 = R: the next evaluation starts from it.
FP_LANE_PHASE void rotations(Lanes& lanes, int n, bool warm, int& fallbacks) {
  if (warm)
    warmRotationLanes(lanes.F, lanes.R0, lanes.R, lanes.trusted);
  else  // R finite in every lane: c (F - R) with c = 0 (Neo-Hookean lanes of a mixed batch, padding)
    std::copy(&lanes.R0[0][0], &lanes.R0[0][0] + 9 * kLanes, &lanes.R[0][0]);
  for (int l = 0; l < n; ++l) {
    if (lanes.c[l] == 0.0 || (warm && lanes.trusted[l] != 0.0)) continue;  // no rotation, or trusted
    polarRotationLane(lanes.F, l, lanes.R);
    if (warm) ++fallbacks;
  }
  std::copy(&lanes.R[0][0], &lanes.R[0][0] + 9 * kLanes, &lanes.R0[0][0]);
}

template <ClosedFormStressKind uniform>
FP_LANE_PHASE void solveBatches(const FpPxpbdLaneSolve& solve, const std::vector<ClosedFormStress>& materials,
                                int begin, int end, const FpPxpbdElement* elements, Mat3* stress, Mat3* rotation,
                                const double* inertial_rhs, double* stress_force, double* x, int& fallbacks) {
  constexpr bool maybe_rotated =
      uniform == ClosedFormStressKind::kCorotated || uniform == ClosedFormStressKind::kNone;
  Lanes lanes;
  for (int first = begin; first < end; first += kLanes) {
    const int n = std::min(kLanes, end - first);
    for (int l = 0; l < kLanes; ++l)
      load(lanes, l, l < n ? first + l : -1, materials, elements, stress, rotation, inertial_rhs, stress_force, x,
           solve.dt2);
    for (int iteration = 0;; ++iteration) {
      deformation(lanes);
      if constexpr (maybe_rotated) rotations(lanes, n, solve.warm_rotations, fallbacks);
      stresses<uniform>(lanes);
      if (iteration == solve.newton_iterations) break;  // Algorithm 2 step 6: P^e = P(F^e(x^e))
      newtonStep(lanes, solve.dt2);
    }
    for (int l = 0; l < n; ++l) {
      const FpPxpbdElement& el = elements[first + l];
      for (int a = 0; a < 4; ++a)
        for (int i = 0; i < 3; ++i) {
          double f = 0.0;  // V P G_a, the element's new force
          for (int j = 0; j < 3; ++j) f += lanes.P[i + 3 * j][l] * lanes.G[a + 4 * j][l];
          f *= lanes.volume[l];
          const int dof = 3 * el.nodes[a] + i;
          x[dof] = lanes.xe[i + 3 * a][l];
          stress_force[dof] += f - lanes.own[i + 3 * a][l];
        }
      for (int m = 0; m < 9; ++m) stress[first + l].data()[m] = lanes.P[m][l];
      if constexpr (maybe_rotated)
        if (lanes.c[l] != 0.0)
          for (int m = 0; m < 9; ++m) rotation[first + l].data()[m] = lanes.R[m][l];
    }
  }
}

}  // namespace

// AVX-512, AVX2 and the baseline, chosen at load time (as PBNG's p1_visit.cpp).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define FP_LANE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define FP_LANE_CLONES
#endif
FP_LANE_CLONES
void solveFpPxpbdLaneElements(const FpPxpbdLaneSolve& solve, const std::vector<ClosedFormStress>& materials,
                              int begin, int end, const FpPxpbdElement* elements, Mat3* stress, Mat3* rotations,
                              const double* inertial_rhs, double* stress_force, double* x, int& fallbacks) {
  switch (solve.uniform) {
    case ClosedFormStressKind::kCorotated:
      solveBatches<ClosedFormStressKind::kCorotated>(solve, materials, begin, end, elements, stress, rotations,
                                                     inertial_rhs, stress_force, x, fallbacks);
      break;
    case ClosedFormStressKind::kNeoHookean:
      solveBatches<ClosedFormStressKind::kNeoHookean>(solve, materials, begin, end, elements, stress, rotations,
                                                      inertial_rhs, stress_force, x, fallbacks);
      break;
    default:  // mixed kinds (the stable Neo-Hookean model has no rank-one Hessian: not here)
      solveBatches<ClosedFormStressKind::kNone>(solve, materials, begin, end, elements, stress, rotations,
                                                inertial_rhs, stress_force, x, fallbacks);
  }
}

}  // namespace pbdlab
