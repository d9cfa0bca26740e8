#include "solvers/registry.hpp"

#include "core/solver/solver_options.hpp"
#include "core/support/json_reader.hpp"
#include "reference/explicit_relaxation.hpp"
#include "reference/newton.hpp"
#include "solvers/ml_xpbd/family.hpp"
#include "solvers/pbd_xpbd/family.hpp"
#include "solvers/pbng/family.hpp"
#include "solvers/pxpbd/family.hpp"

namespace pbdlab {

std::vector<std::string> referenceSolverNames() { return {"newton", "explicit_relaxation"}; }

std::vector<std::string> solverNames() {
  std::vector<std::string> names = referenceSolverNames();
  for (const auto& family :
       {xpbdFamilySolverNames(), pxpbdFamilySolverNames(), pbngFamilySolverNames(), mlXpbdFamilySolverNames()})
    names.insert(names.end(), family.begin(), family.end());
  return names;
}

namespace {

// Options are read with the shared reader (core/support/json_reader.hpp): unknown keys are errors
// with a "did you mean", and every error names the option's JSON pointer under `field`.
std::unique_ptr<Solver> makeNewton(const nlohmann::json& options, const JsonReader& in, const std::string& field) {
  in.onlyKeys(options, field,
              {"line_search", "max_line_search_steps", "hessian", "linear_solver", "linear_iterations",
               "linear_tolerance", "sor_omega"},
              "of solver 'newton'");
  NewtonOptions newton;
  if (options.contains("line_search"))
    newton.line_search = in.boolean(options["line_search"], jsonPointerChild(field, "line_search"));
  if (options.contains("max_line_search_steps"))
    newton.max_line_search_steps = readSolverCount(in, options, field, "max_line_search_steps", 0);

  // The linear solver of a Newton step (PBNG §11's baselines beside CHOLMOD), and the options
  // that apply to it only: any other is refused at its own pointer.
  using Kind = LinearSolverKind;
  if (options.contains("linear_solver"))
    newton.linear_solver = in.enumOf<Kind>(options["linear_solver"], jsonPointerChild(field, "linear_solver"),
                                           {{"cholmod", Kind::kCholmod},
                                            {"cg", Kind::kConjugateGradient},
                                            {"bicgstab", Kind::kBiCgStab},
                                            {"gauss_seidel", Kind::kGaussSeidel},
                                            {"lu", Kind::kLu}},
                                           "linear solver");
  const std::string solver_name = linearSolverName(newton.linear_solver);
  const bool iterative = newton.linear_solver == Kind::kConjugateGradient || newton.linear_solver == Kind::kBiCgStab ||
                         newton.linear_solver == Kind::kGaussSeidel;
  auto onlyWith = [&](const char* key, bool applies, const std::string& which) {
    if (options.contains(key) && !applies)
      in.fail(jsonPointerChild(field, key),
              "applies only to linear_solver " + which + ", not to '" + solver_name + "'");
  };
  onlyWith("linear_iterations", iterative, "'cg', 'bicgstab' or 'gauss_seidel'");
  onlyWith("linear_tolerance", iterative, "'cg', 'bicgstab' or 'gauss_seidel'");
  onlyWith("sor_omega", newton.linear_solver == Kind::kGaussSeidel, "'gauss_seidel'");
  if (options.contains("linear_iterations"))
    newton.linear_iterations = readSolverCount(in, options, field, "linear_iterations", 1);
  if (options.contains("linear_tolerance"))
    newton.linear_tolerance = in.nonNegative(options["linear_tolerance"], jsonPointerChild(field, "linear_tolerance"));
  if (options.contains("sor_omega")) {
    const std::string at = jsonPointerChild(field, "sor_omega");
    newton.sor_omega = in.number(options["sor_omega"], at);
    if (!(newton.sor_omega > 0.0 && newton.sor_omega < 2.0))
      in.fail(at, "must be in (0, 2), got " + describeJson(options["sor_omega"]));
  }

  newton.hessian = defaultHessian(newton.linear_solver);
  if (options.contains("hessian")) {
    const std::string at = jsonPointerChild(field, "hessian");
    newton.hessian = in.enumOf<NewtonOptions::Hessian>(options["hessian"], at,
                                                       {{"auto", NewtonOptions::Hessian::kAuto},
                                                        {"projected", NewtonOptions::Hessian::kProjected},
                                                        {"true", NewtonOptions::Hessian::kTrue}},
                                                       "Hessian");
    if (newton.hessian == NewtonOptions::Hessian::kAuto && newton.linear_solver != Kind::kCholmod)
      in.fail(at, "\"auto\" (the true Hessian with projected and shifted fallbacks) needs linear_solver 'cholmod'; "
                  "with '" + solver_name + "' choose \"projected\" or \"true\"");
  }
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
    relaxation.substeps = readSolverCount(in, options, field, "substeps", 1);
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
  if (auto solver = makeMlXpbdFamilySolver(name, options, in, field)) return solver;
  in.failUnknownName("/solver/name", name, solverNames(), "solver");
}

}  // namespace pbdlab
