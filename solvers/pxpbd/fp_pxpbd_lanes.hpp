#pragma once
// FP-PXPBD's fast path (solvers/pxpbd/fp_pxpbd.hpp): the local Newton solves of P1 elements
// with a rank-one Hessian (eq. 48 fixed corotated, eq. 52 Neo-Hookean; Sherman-Morrison, eq. 49)
// and no prescribed DOF, kFpPxpbdLanes elements at a time in structure-of-arrays form, each
// phase (F and cof F, the rotation, P, the residual eq. 29, the translation eq. 33 and the
// distortion eq. 34/49, the update eq. 32) one loop over the lanes that the compiler
// vectorizes across elements. The elements of one color share no node: their solves are
// independent. The same arithmetic as FpPxpbdSolver::solveElement with P in closed form
// (closedFormStress, core/materials/closed_form_stress.hpp) instead of the material's evaluate.
//
// The corotated rotation: with `warm_rotations`, one Newton step from the element's last
// rotation (warmStartedPolarStep; the SVD where the step is not trusted, counted as a
// fallback), carried from one evaluation of P to the next and across sweeps; without, the SVD
// at every evaluation (then the iterates are the generic path's up to round-off).
#include <vector>

#include "core/materials/closed_form_stress.hpp"
#include "solvers/pxpbd/fp_pxpbd_element.hpp"

namespace pbdlab {

constexpr int kFpPxpbdLanes = 8;

struct FpPxpbdLaneSolve {
  double dt2 = 0.0;
  int newton_iterations = 1;
  bool warm_rotations = true;
  // The stress kind of every element the call sees, or kNone for elements of mixed kinds.
  ClosedFormStressKind uniform = ClosedFormStressKind::kNone;
};

// Solves elements [begin, end) (one color or part of one; each rankOne(), fixed_mask 0, its
// material in `materials` with a closed form), in place: x (per DOF), stress_force (sum_e B^e
// P^e per DOF), the elements' stresses and rotations (both in element order). inertial_rhs:
// m_i x~_i + dt^2 f_ext_i per DOF. Adds the rotation fallbacks to `fallbacks`.
void solveFpPxpbdLaneElements(const FpPxpbdLaneSolve& solve, const std::vector<ClosedFormStress>& materials,
                              int begin, int end, const FpPxpbdElement* elements, Mat3* stress, Mat3* rotations,
                              const double* inertial_rhs, double* stress_force, double* x, int& fallbacks);

}  // namespace pbdlab
