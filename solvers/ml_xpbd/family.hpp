#pragma once
// The multi-layer XPBD solver (Mercier-Aubin & Kry 2024) as the registry (solvers/registry.cpp)
// sees it: "ml_xpbd" (Algorithm 2 without contacts; docs/multi-layer-xpbd.md).
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/solver/solver.hpp"
#include "core/support/json_reader.hpp"

namespace pbdlab {

// The names this family registers.
std::vector<std::string> mlXpbdFamilySolverNames();

// Builds solver `name` of this family from its options object at JSON pointer `field`
// (unknown keys and bad values are InputErrors through `in`); null if `name` is not one of
// this family's.
std::unique_ptr<Solver> makeMlXpbdFamilySolver(const std::string& name, const nlohmann::json& options,
                                              const JsonReader& in, const std::string& field);

}  // namespace pbdlab
