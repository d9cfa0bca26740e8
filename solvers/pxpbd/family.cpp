#include "solvers/pxpbd/family.hpp"

#include "core/solver/solver_options.hpp"
#include "solvers/pxpbd/fp_pxpbd.hpp"

namespace pbdlab {

std::vector<std::string> pxpbdFamilySolverNames() { return {"fp_pxpbd"}; }

namespace {

// Options of "fp_pxpbd" (solvers/pxpbd/fp_pxpbd.hpp, FpPxpbdOptions):
//   "newton_iterations": local Newton iterations per element per sweep, integer in 1 .. 100
//       (default 1; the paper runs 1-5);
//   "hessian": "approximate" (default: eq. 48 / eq. 52 with the Sherman-Morrison inverse
//       eq. 49 for fixed_corotated and neo_hookean, the SPD-projected 9x9 for other models) or
//       "projected" (the SPD-projected 9x9 solve of eq. 34 for every model);
//   "local_tolerance": end an element's Newton loop once its residual fell below this
//       fraction of its first one, number >= 0 (default 0: always newton_iterations);
//   "log_secondary_residual": log |h| of eq. 25 (default true; one stress evaluation per
//       element per logged iteration, counted in the solver's time);
//   "initial_stress": "zero" (default: P0 = 0, x0 = x~ + dt^2 M^-1 f_ext, as XPBD's
//       lambda_0 = 0) or "previous" (P0 = P(F(x^n)), x0 a semi-implicit Euler prediction,
//       unstable for stiff steps); x0 always has a zero primal residual (eq. 24);
//   "p1_lanes": bool, the lane kernel (solvers/pxpbd/fp_pxpbd_lanes.hpp) for the elements with
//       a rank-one Hessian and no prescribed DOF when local_tolerance is 0 (default true; false:
//       every element through the generic solve, the same update);
//   "rotation": the corotated rotation on the lanes: "warm_start" (default: one Newton step
//       from the element's last rotation, the SVD where the step is not trusted) or "svd" (the
//       SVD at every evaluation, as the generic solve).
std::unique_ptr<Solver> makeFpPxpbd(const nlohmann::json& options, const JsonReader& in, const std::string& field) {
  in.onlyKeys(options, field, {"newton_iterations", "hessian", "local_tolerance", "log_secondary_residual", "initial_stress",
               "p1_lanes", "rotation"},
              "of solver 'fp_pxpbd'");
  FpPxpbdOptions fp;
  if (options.contains("newton_iterations"))
    // Tighter than kMaxSolverCount: every element of every sweep runs them, and a sweep is
    // what the time budget cannot interrupt (the paper runs 1-5).
    fp.newton_iterations = readSolverCount(in, options, field, "newton_iterations", 1, 100);
  if (options.contains("hessian"))
    fp.hessian = in.enumOf<FpPxpbdOptions::Hessian>(options["hessian"], jsonPointerChild(field, "hessian"),
                                                    {{"approximate", FpPxpbdOptions::Hessian::kApproximate},
                                                     {"projected", FpPxpbdOptions::Hessian::kProjected}},
                                                    "Hessian");
  if (options.contains("local_tolerance"))
    fp.local_tolerance = in.nonNegative(options["local_tolerance"], jsonPointerChild(field, "local_tolerance"));
  if (options.contains("log_secondary_residual"))
    fp.log_secondary_residual =
        in.boolean(options["log_secondary_residual"], jsonPointerChild(field, "log_secondary_residual"));
  if (options.contains("initial_stress"))
    fp.initial_stress = in.enumOf<FpPxpbdOptions::InitialStress>(
        options["initial_stress"], jsonPointerChild(field, "initial_stress"),
        {{"previous", FpPxpbdOptions::InitialStress::kPrevious}, {"zero", FpPxpbdOptions::InitialStress::kZero}},
        "initial stress");
  if (options.contains("p1_lanes"))
    fp.p1_lanes = in.boolean(options["p1_lanes"], jsonPointerChild(field, "p1_lanes"));
  if (options.contains("rotation"))
    fp.rotation = in.enumOf<FpPxpbdOptions::Rotation>(
        options["rotation"], jsonPointerChild(field, "rotation"),
        {{"warm_start", FpPxpbdOptions::Rotation::kWarmStart}, {"svd", FpPxpbdOptions::Rotation::kSvd}}, "rotation");
  return std::make_unique<FpPxpbdSolver>(fp);
}

}  // namespace

std::unique_ptr<Solver> makePxpbdFamilySolver(const std::string& name, const nlohmann::json& options,
                                            const JsonReader& in, const std::string& field) {
  if (name == "fp_pxpbd") return makeFpPxpbd(options, in, field);
  return nullptr;
}

}  // namespace pbdlab
