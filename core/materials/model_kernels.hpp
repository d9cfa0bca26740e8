#pragma once
// Kernels shared between the model files (internal to pbdlab_materials): the fixed corotated
// model and its two split terms, which the muscle model reuses, and small helpers.
#include <string>
#include <vector>

#include "core/materials/material.hpp"

namespace pbdlab::detail {

// Psi = mu |F - R|^2 + lambda/2 (J - 1)^2 with P and dP/dF, one rotation-variant SVD (none
// when only psi is asked for: the singular values suffice). Any output may be null.
void fixedCorotatedEvaluate(double mu, double lambda, const Mat3& F, double* psi, Mat3* P, Mat9* dPdF);

// The split terms of PXPBD eq. 3-5: Psi~ = |F - R|^2 (stiffness mu) and (J - 1)^2 / 2
// (stiffness lambda).
MaterialTerm corotatedStretchTerm(double mu);
MaterialTerm volumeTerm(const std::string& name, double lambda);  // (J - 1)^2 / 2

// Throws std::invalid_argument naming the model, the split and the valid names.
[[noreturn]] void throwUnknownSplit(const std::string& model, const std::string& split,
                                    const std::vector<std::string>& valid);

// Resolves "" to the default (first) name; throws for a name not in the list.
std::string resolveSplitName(const std::string& model, const std::string& split,
                             const std::vector<std::string>& valid);

}  // namespace pbdlab::detail
