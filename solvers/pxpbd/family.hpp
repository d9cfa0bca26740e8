#pragma once
// The solvers of this folder as the registry (solvers/registry.cpp) sees them: FP-PXPBD (PXPBD paper eq. 24-52, Algorithm 2).
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/solver/solver.hpp"
#include "core/support/json_reader.hpp"

namespace pbdlab {

// The names this family registers.
std::vector<std::string> pxpbdFamilySolverNames();

// Builds solver `name` of this family from its options object at JSON pointer `field`
// (unknown keys and bad values are InputErrors through `in`); null if `name` is not one of
// this family's.
std::unique_ptr<Solver> makePxpbdFamilySolver(const std::string& name, const nlohmann::json& options,
                                            const JsonReader& in, const std::string& field);

}  // namespace pbdlab
