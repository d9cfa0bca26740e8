#pragma once
// The XPBD family's fast path for P1 tetrahedra whose split terms have closed forms
// (MaterialTermKind, core/materials/term_kinds.hpp: fixed corotated's "pxpbd" split, PXPBD
// eq. 3-5; Neo-Hookean's three splits; stable Neo-Hookean's "lame"): the same update as XpbdSolver's generic element path (elementConstraint and
// updateConstraint, xpbd_solver.cpp), on P1ElementRecords (core/terms/p1_element_record.hpp)
// stored in sweep (color) order, evaluated kXpbdP1Lanes elements at a time.
//
// Why lanes: the elements of one color share no node, so their updates are independent.
// Each batch is held in structure-of-arrays form and every phase (F and cof F, the rotation's
// Newton step, C and grad C, the multiplier update) is one loop over the lanes that the
// compiler vectorizes across elements. The terms of an element are visited in split order,
// each from the positions the previous term left, as the generic path does.
//
// The rotation R of the stretch term: with `warm_rotations`, one Newton step from the
// element's previous rotation (warmStartedPolarStep, polar_svd.hpp), written back to the
// record; polarRotation(F) (the SVD) where the step is not trusted (counted as a fallback).
// Without, polarRotation(F) at every visit: then the iterates are the generic path's up to
// round-off. The warm rotation is a different iterate, not a different method: it converges
// to polarRotation(F) as x converges, so the fixed point is the same (test_xpbd_p1_lanes).
#include <array>
#include <vector>

#include "core/materials/material.hpp"
#include "core/support/types.hpp"
#include "core/terms/p1_element_record.hpp"

namespace pbdlab {

constexpr int kXpbdP1MaxTerms = 4;

// The kernel's view of a split: its term kinds and whether each is a signed root (shared by
// every material of the fast path), and each material's compliances alpha_k = 1 / k_k, 0 for
// PBD (infinite: the term is off) and kind constants (MaterialTerm::shift).
struct XpbdP1Split {
  std::vector<MaterialTermKind> kinds;
  std::vector<char> signed_root;
  std::vector<std::array<double, kXpbdP1MaxTerms>> compliance;  // per material
  std::vector<std::array<double, kXpbdP1MaxTerms>> shift;       // per material
};

// Whether a split's terms all have kinds the kernel evaluates (and few enough of them).
bool xpbdP1LanesServe(const MaterialSplit& split);

struct XpbdP1Update {
  double eps = 0.0;             // XpbdOptions::eps
  bool skip_near_zero = false;  // XpbdOptions::NearZero::kSkip
  bool warm_rotations = true;
  bool blended = false;         // B-PXPBD (eq. 19-22) with `zeta`
  double zeta = 1.0;
  double compliance_scale = 0.0;  // 1/dt^2 (PBD: 0)
};

// Visits the constraints of records [begin, end), which share no node (one color or part of
// one), and moves x. lambda: the multipliers, K per record (record r's at K r); totals
// (B-PXPBD only, else null): 12 per multiplier; inverse_mass: per DOF (0 where prescribed).
// Adds the rotation fallbacks to `fallbacks`.
void sweepXpbdP1Records(const XpbdP1Split& split, const XpbdP1Update& update, int begin, int end,
                        P1ElementRecord* records, const double* inverse_mass, double* x, double* lambda,
                        double* totals, int& fallbacks);

// The number of records a call of sweepXpbdP1Records evaluates together (a batch).
constexpr int kXpbdP1Lanes = 8;

}  // namespace pbdlab
