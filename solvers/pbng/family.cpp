#include "solvers/pbng/family.hpp"

#include "solvers/pbng/pbng_solver.hpp"

namespace pbdlab {

std::vector<std::string> pbngFamilySolverNames() { return {"pbng"}; }

namespace {

// Options of "pbng" (solvers/pbng/pbng_solver.hpp, PbngOptions):
//   "omega": SOR's omega of §7.3, x^{l+1} = omega (x_PBNG^{l+1} - x^{l-1}) + x^{l-1}; number in
//       (0, 2) (default 1: plain PBNG; the paper uses 1.7);
//   "chebyshev_rho": Chebyshev's rho of §7.3, number in [0, 1) (default 0: Chebyshev off; the
//       paper uses 0.95); not together with omega != 1;
//   "chebyshev_gamma": Chebyshev's gamma of §7.3, number in (0, 2) (default 1.7, the paper's);
//       only with chebyshev_rho > 0;
//   "initial_guess": "inertial" (default: x~ = x^n + dt v^n with the step's boundary values;
//       x^n for quasistatic) or "previous" (x^n with the boundary values);
//   "contact_step": how a node in contact with a kinematic collider slides (§7.2):
//       "tangent_newton" (default: its Newton step restricted to the tangent plane) or "paper"
//       (the paper's tangential projection of the unconstrained step; stalls, pbng_solver.hpp);
//   "rotation": the fixed corotated P1 fast path's rotation: "warm_start" (default: one Newton
//       step from the element's previous rotation, the SVD as the fallback) or "svd" (the SVD
//       at every visit).
std::unique_ptr<Solver> makePbng(const nlohmann::json& options, const JsonReader& in, const std::string& field) {
  in.object(options, field);
  in.onlyKeys(options, field, {"omega", "chebyshev_rho", "chebyshev_gamma", "initial_guess", "contact_step", "rotation"}, "of solver 'pbng'");
  PbngOptions pbng;
  // A number in (0, 2).
  const auto below_two = [&](const char* key) {
    const std::string at = jsonPointerChild(field, key);
    const double value = in.number(options[key], at);
    if (!(value > 0.0 && value < 2.0)) in.fail(at, "must be in (0, 2), got " + describeJson(options[key]));
    return value;
  };
  if (options.contains("omega")) pbng.omega = below_two("omega");
  if (options.contains("chebyshev_rho")) {
    const std::string at = jsonPointerChild(field, "chebyshev_rho");
    pbng.chebyshev_rho = in.nonNegative(options["chebyshev_rho"], at);
    if (!(pbng.chebyshev_rho < 1.0)) in.fail(at, "must be in [0, 1), got " + describeJson(options["chebyshev_rho"]));
  }
  if (options.contains("chebyshev_gamma")) {
    pbng.chebyshev_gamma = below_two("chebyshev_gamma");
    if (!pbng.chebyshev())
      in.fail(jsonPointerChild(field, "chebyshev_gamma"), "needs chebyshev_rho > 0 (Chebyshev is off without it)");
  }
  if (pbng.chebyshev() && pbng.omega != 1.0)
    in.fail(jsonPointerChild(field, "omega"), "SOR (omega != 1) and Chebyshev (chebyshev_rho > 0) are alternatives; "
                                              "give one of them");
  if (options.contains("initial_guess"))
    pbng.initial_guess = in.enumOf<PbngOptions::InitialGuess>(
        options["initial_guess"], jsonPointerChild(field, "initial_guess"),
        {{"inertial", PbngOptions::InitialGuess::kInertial}, {"previous", PbngOptions::InitialGuess::kPrevious}},
        "initial guess");
  if (options.contains("contact_step"))
    pbng.contact_step = in.enumOf<PbngOptions::ContactStep>(
        options["contact_step"], jsonPointerChild(field, "contact_step"),
        {{"tangent_newton", PbngOptions::ContactStep::kTangentNewton}, {"paper", PbngOptions::ContactStep::kPaper}},
        "contact step");
  if (options.contains("rotation"))
    pbng.rotation = in.enumOf<PbngOptions::Rotation>(
        options["rotation"], jsonPointerChild(field, "rotation"),
        {{"warm_start", PbngOptions::Rotation::kWarmStart}, {"svd", PbngOptions::Rotation::kSvd}}, "rotation");
  return std::make_unique<PbngSolver>(pbng);
}

}  // namespace

std::unique_ptr<Solver> makePbngFamilySolver(const std::string& name, const nlohmann::json& options,
                                             const JsonReader& in, const std::string& field) {
  if (name == "pbng") return makePbng(options, in, field);
  return nullptr;
}

}  // namespace pbdlab
