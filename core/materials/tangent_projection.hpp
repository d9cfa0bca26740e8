#pragma once
// Positive semi-definite projections of a material tangent dP/dF (9x9), used for the
// "projected" element Hessian V B^T (dP/dF) B of the Newton reference's fallback, and of a
// node's 3x3 Hessian block (VBD).
#include "core/support/types.hpp"

namespace pbdlab {

// Nearest symmetric PSD matrix: eigenvalues of the symmetric part clamped at zero (a 9x9
// eigen-solve; a Cholesky first returns definite matrices untouched). Any material.
Mat9 projectToPositiveSemidefinite(const Mat9& A);
// The same for a 3x3 (VBD's node blocks, solvers/pbng/vbd_solver.hpp).
Mat3 projectToPositiveSemidefinite(const Mat3& A);

// The same result for an isotropic material, cheaper: in the frame of F's SVD, F = U S V^T,
// an isotropic tangent is block diagonal (Teran et al. 2005): one 3x3 block on the
// directions u_i v_i^T and three 2x2 blocks on the pairs (u_i v_j^T, u_j v_i^T). Each block
// is clamped on its own (closed-form 3x3 and 2x2 eigen-solves) and rotated back.
Mat9 projectIsotropicTangentToPositiveSemidefinite(const Mat3& F, const Mat9& A);

}  // namespace pbdlab
