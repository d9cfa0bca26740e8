#include "solvers/registry.hpp"

#include "core/json_reader.hpp"
#include "reference/explicit_relaxation.hpp"
#include "reference/newton.hpp"
#include "solvers/pbd_xpbd/family.hpp"
#include "solvers/pbng/family.hpp"
#include "solvers/pxpbd/family.hpp"

namespace pbdlab {

std::vector<std::string> referenceSolverNames() { return {"newton", "explicit_relaxation"}; }

std::vector<std::string> solverNames() {
  std::vector<std::string> names = referenceSolverNames();
  for (const auto& family : {xpbdFamilySolverNames(), pxpbdFamilySolverNames(), pbngFamilySolverNames()})
    names.insert(names.end(), family.begin(), family.end());
  return names;
}

namespace {

// Options are read with the shared reader (core/json_reader.hpp): unknown keys are errors
// with a "did you mean", and every error names the option's JSON pointer under `field`.
std::unique_ptr<Solver> makeNewton(const nlohmann::json& options, const JsonReader& in, const std::string& field) {
  in.onlyKeys(options, field, {"line_search", "max_line_search_steps", "hessian"}, "of solver 'newton'");
  NewtonOptions newton;
  if (options.contains("line_search"))
    newton.line_search = in.boolean(options["line_search"], jsonPointerChild(field, "line_search"));
  if (options.contains("max_line_search_steps"))
    newton.max_line_search_steps =
        in.integerAtLeast(options["max_line_search_steps"], jsonPointerChild(field, "max_line_search_steps"), 0);
  if (options.contains("hessian"))
    newton.hessian = in.enumOf<NewtonOptions::Hessian>(options["hessian"], jsonPointerChild(field, "hessian"),
                                                       {{"auto", NewtonOptions::Hessian::kAuto},
                                                        {"projected", NewtonOptions::Hessian::kProjected},
                                                        {"true", NewtonOptions::Hessian::kTrue}},
                                                       "Hessian");
  return std::make_unique<NewtonSolver>(newton);
}

std::unique_ptr<Solver> makeExplicitRelaxation(const nlohmann::json& options, const JsonReader& in,
                                               const std::string& field) {
  in.onlyKeys(options, field, {"dt", "damping", "substeps"}, "of solver 'explicit_relaxation'");
  ExplicitRelaxationOptions relaxation;
  if (options.contains("dt")) relaxation.dt = in.positive(options["dt"], jsonPointerChild(field, "dt"));
  if (options.contains("damping"))
    relaxation.damping = in.positive(options["damping"], jsonPointerChild(field, "damping"));
  if (options.contains("substeps"))
    relaxation.substeps = in.integerAtLeast(options["substeps"], jsonPointerChild(field, "substeps"), 1);
  return std::make_unique<ExplicitRelaxationSolver>(relaxation);
}

}  // namespace

std::unique_ptr<Solver> makeSolver(const std::string& name, const nlohmann::json& options,
                                   const std::string& source, const std::string& field) {
  const JsonReader in(source);
  in.object(options, field);
  if (name == "newton") return makeNewton(options, in, field);
  if (name == "explicit_relaxation") return makeExplicitRelaxation(options, in, field);
  if (auto solver = makeXpbdFamilySolver(name, options, in, field)) return solver;
  if (auto solver = makePxpbdFamilySolver(name, options, in, field)) return solver;
  if (auto solver = makePbngFamilySolver(name, options, in, field)) return solver;
  in.failUnknownName("/solver/name", name, solverNames(), "solver");
}

}  // namespace pbdlab
