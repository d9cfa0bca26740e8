#pragma once
// One P1 tetrahedron as the position-based lane kernels read it (PBNG's node visits,
// solvers/pbng/p1_visit.cpp; the XPBD family's element sweep, solvers/pbd_xpbd/p1_lanes.cpp):
// everything a visit reads and writes in one 192-byte record (three cache lines, aligned),
// stored in the order a sweep visits the elements.
//
// Why: a sweep's time goes to memory, not arithmetic (a Res 32 box has 149k elements; between
// two visits of an element the sweep walks over the rest of the mesh). The record holds the
// rotation a corotated visit updates (warm-started: one Newton step from the last visit's,
// warmStartedPolarStep in core/materials/polar_svd.hpp), the shape gradients of nodes 1-3
// (node 0's is minus their sum: F = sum_{a=1..3} (x_a - x_0) g_a^T), the one-point volume,
// the node indices and an index into the kernel's small table of material constants.
#include "core/terms/elastic_energy.hpp"

namespace pbdlab {

struct alignas(64) P1ElementRecord {
  Mat3 rotation;       // the warm-started R of a corotated element; else unused
  double shape[3][3];  // dN_a/dX of nodes a = 1, 2, 3 (rows)
  double volume;       // the one-point quadrature volume (= the rest volume)
  int nodes[4];        // global node indices, element order
  int material;        // index into the kernel's material table
};
static_assert(sizeof(P1ElementRecord) == 192, "three cache lines");

// Whether `elastic` is a term the lane kernels serve: P1 tetrahedra, one quadrature point,
// not plane strain.
inline bool hasP1Records(const ElasticEnergy& elastic) {
  return elastic.elementType() == ElementType::kTet4 && !elastic.isPlaneStrain() &&
         elastic.quadraturePointsPerElement() == 1;
}

// Element e's shape gradients, volume and nodes (rotation and material untouched).
inline void fillP1ElementRecord(const ElasticEnergy& elastic, int e, P1ElementRecord& record) {
  record.volume = elastic.quadratureVolume(e, 0);
  const int* nodes = elastic.elementNodes(e);
  const auto G = elastic.shapeGradients<4>(e, 0);
  for (int a = 0; a < 4; ++a) record.nodes[a] = nodes[a];
  for (int a = 1; a < 4; ++a)
    for (int d = 0; d < 3; ++d) record.shape[a - 1][d] = G(a, d);
}

// C = cof F = [f1 x f2, f2 x f0, f0 x f1] (f_k = F's column k; polar_svd.hpp's cofactor) and
// J = det F of a column-major 3x3 F: the formulas of every P1 lane kernel, written once.
inline __attribute__((always_inline)) void cofactorAndDeterminant(const double* F, double* C, double& J) {
  C[0] = F[4] * F[8] - F[5] * F[7];
  C[1] = F[5] * F[6] - F[3] * F[8];
  C[2] = F[3] * F[7] - F[4] * F[6];
  C[3] = F[7] * F[2] - F[8] * F[1];
  C[4] = F[8] * F[0] - F[6] * F[2];
  C[5] = F[6] * F[1] - F[7] * F[0];
  C[6] = F[1] * F[5] - F[2] * F[4];
  C[7] = F[2] * F[3] - F[0] * F[5];
  C[8] = F[0] * F[4] - F[1] * F[3];
  J = F[0] * C[0] + F[1] * C[1] + F[2] * C[2];
}

// F = sum_{a=1..3} edge_a shape_a^T from the edges x_a - x_0 (edge[i + 3 (a - 1)]) and the
// record's shape rows (shape[(a - 1) + 3 j] = dN_a/dX_j), then cof F and J = det F
// (cofactorAndDeterminant), on column-major 3x3 arrays.
// Inline and branch-free: the lane kernels call it inside loops over elements they vectorize.
inline __attribute__((always_inline)) void p1Deformation(const double* edge, const double* shape, double* F,
                                                          double* C, double& J) {
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i)
      F[i + 3 * j] = edge[i] * shape[3 * j] + edge[i + 3] * shape[1 + 3 * j] + edge[i + 6] * shape[2 + 3 * j];
  cofactorAndDeterminant(F, C, J);
}

}  // namespace pbdlab
