#pragma once
// The solvers of this folder as the registry (solvers/registry.cpp) sees them: PBD, XPBD, XPBD-QS and B-PXPBD (PXPBD paper eq. 11-22; PBNG §6 for XPBD-QS).
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/solver/solver.hpp"
#include "core/support/json_reader.hpp"

namespace pbdlab {

// The names this family registers.
std::vector<std::string> xpbdFamilySolverNames();

// Builds solver `name` of this family from its options object at JSON pointer `field`
// (unknown keys and bad values are InputErrors through `in`); null if `name` is not one of
// this family's.
std::unique_ptr<Solver> makeXpbdFamilySolver(const std::string& name, const nlohmann::json& options,
                                            const JsonReader& in, const std::string& field);

}  // namespace pbdlab
