#pragma once
// Reading a solver's own options (scene `solver.options`): the helpers every options reader
// shares (solvers/registry.cpp, each family's family.cpp), so that one kind of option is
// checked the same way in every solver.
#include <nlohmann/json.hpp>
#include <string>

#include "core/support/json_reader.hpp"

namespace pbdlab {

// The upper bound of every count option of every solver (sweeps per pseudo-step, substeps per
// logged iteration, linear iterations per Newton iteration, line-search halvings): a thousand
// times the largest default, far above any useful value, so a typo such as 1000000000 is
// refused at its field instead of starting a run that does not end. (Solver time is bounded
// by solver.max_seconds as well, checked between sweeps and substeps; the count bounds what
// runs between two such checks.)
constexpr int kMaxSolverCount = 1000000;

// options[key] (present) as a count in min .. max, or an InputError at field/key naming the
// range. `max` is kMaxSolverCount unless an option needs a tighter bound (say why where it is
// read).
inline int readSolverCount(const JsonReader& in, const nlohmann::json& options, const std::string& field,
                           const std::string& key, int min, int max = kMaxSolverCount) {
  const std::string at = jsonPointerChild(field, key);
  const int value = in.integer(options.at(key), at);  // an integer that fits an int
  if (value < min || value > max)
    in.fail(at, "must be an integer in " + std::to_string(min) + " .. " + std::to_string(max) +
                    (max == kMaxSolverCount ? " (every count option of a solver is at most " +
                                                  std::to_string(kMaxSolverCount) + ")"
                                            : std::string()) +
                    ", got " + std::to_string(value));
  return value;
}

}  // namespace pbdlab
