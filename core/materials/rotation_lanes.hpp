#pragma once
// The warm-started polar rotation of a batch of elements in structure-of-arrays form
// (m[k][lane], 3x3 matrices column-major per lane), shared by the lane kernels (PBNG's node
// visits, the XPBD family's and FP-PXPBD's element sweeps). Inline: the kernels are compiled
// once per instruction set (target_clones) and each clone must inline its own copy.
#include "core/materials/polar_svd.hpp"

namespace pbdlab {

// The per-lane deformation and rotation of a batch of P1 elements that every lane kernel keeps
// (each kernel's own batch struct derives from it and adds its inputs and outputs).
template <int L>
struct DeformationLanes {
  alignas(64) double F[9][L];
  alignas(64) double C[9][L];   // cof F
  alignas(64) double J[L];
  alignas(64) double R0[9][L];  // the warm start: the element's previous rotation
  alignas(64) double R[9][L];
  alignas(64) double trusted[L];  // the rotation step's verdict (1 or 0; warmRotationLanes)
};

// R = one Newton step from R0 towards the polar rotation of F in every lane
// (warmStartedPolarStep), trusted[l] = 1 where the step is trusted, else 0.
template <int L>
inline __attribute__((always_inline)) void warmRotationLanes(const double (&F)[9][L], const double (&R0)[9][L],
                                                             double (&R)[9][L], double (&trusted)[L]) {
  for (int l = 0; l < L; ++l) {
    double f[9], r0[9], r[9];
    for (int k = 0; k < 9; ++k) f[k] = F[k][l], r0[k] = R0[k][l];
    trusted[l] = warmStartedPolarStep(f, r0, r) ? 1.0 : 0.0;
    for (int k = 0; k < 9; ++k) R[k][l] = r[k];
  }
}

// R = polarRotation(F) (the SVD) in lane l.
template <int L>
inline void polarRotationLane(const double (&F)[9][L], int l, double (&R)[9][L]) {
  Mat3 f;
  for (int k = 0; k < 9; ++k) f.data()[k] = F[k][l];
  const Mat3 r = polarRotation(f);
  for (int k = 0; k < 9; ++k) R[k][l] = r.data()[k];
}

}  // namespace pbdlab
