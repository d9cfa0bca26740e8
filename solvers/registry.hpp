#pragma once
// Every solver by name, with its options from a scene's "solver" object. Each solver issue
// adds its entry here; tests and validation cases iterate over solverNames().
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/solver/solver.hpp"

namespace pbdlab {

std::vector<std::string> solverNames();
// The reference solvers (reference/): what a validation case runs when it names no solvers.
std::vector<std::string> referenceSolverNames();

// Builds solver `name` with `options` (a JSON object; unknown keys are errors). Throws
// InputError(source, field, ...) for an unknown solver or a bad option; `field` is the JSON
// pointer of the options object in the scene (e.g. "/solver/options").
std::unique_ptr<Solver> makeSolver(const std::string& name, const nlohmann::json& options,
                                   const std::string& source, const std::string& field);

}  // namespace pbdlab
