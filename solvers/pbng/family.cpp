#include "solvers/pbng/family.hpp"

#include <filesystem>

#include "core/solver/solver_options.hpp"
#include "core/support/input_error.hpp"
#include "meshes/mesh_recipe.hpp"
#include "solvers/pbng/mpbng_solver.hpp"
#include "solvers/pbng/pbng_solver.hpp"
#include "solvers/pbng/vbd_solver.hpp"

namespace pbdlab {

std::vector<std::string> pbngFamilySolverNames() { return {"pbng", "mpbng", "vbd"}; }

namespace {

void readSweepOptions(const nlohmann::json& options, const JsonReader& in, const std::string& field, PbngOptions& pbng);

// Options of "pbng" (solvers/pbng/pbng_solver.hpp, PbngOptions):
//   "omega": SOR's omega of §7.3, x^{l+1} = omega (x_PBNG^{l+1} - x^{l-1}) + x^{l-1}; number in
//       (0, 2) (default 1: plain PBNG; the paper uses 1.7), or "auto": estimated each step from
//       its first plain sweeps' rate (PbngSolver::estimatedOmega);
//   "chebyshev_rho": Chebyshev's rho of §7.3, number in [0, 1) (default 0: Chebyshev off; the
//       paper uses 0.95); not together with omega != 1;
//   "chebyshev_gamma": Chebyshev's gamma of §7.3, number in (0, 2) (default 1.7, the paper's);
//       only with chebyshev_rho > 0;
//   "initial_guess": "inertial" (default: x~ = x^n + dt v^n with the step's boundary values;
//       x^n for quasistatic), "previous" (x^n with the boundary values), "pbd_prediction"
//       (PBD's predicted positions x~ + dt^2 M^-1 f_ext; backward Euler) or "adaptive" (VBD's:
//       x~ + dt^2 a~, a~ the last step's acceleration along the gravity clamped to [0, |g|]);
//   "contact_step": how a node in contact with a kinematic collider slides (§7.2):
//       "tangent_newton" (default: its Newton step restricted to the tangent plane) or "paper"
//       (the paper's tangential projection of the unconstrained step; stalls, pbng_solver.hpp);
//   "rotation": the fixed corotated P1 fast path's rotation: "warm_start" (default: one Newton
//       step from the element's previous rotation, the SVD as the fallback) or "svd" (the SVD
//       at every visit);
//   "tangent_parameters": eq. 32's mu and lambda: "lame" (default: the Lamé parameters of E and
//       nu, eq. 9, as the paper writes them) or "model" (each material model's own parameters:
//       lambda_hat = mu + lambda for neo_hookean, 4/3 mu and lambda + 5/6 mu for
//       stable_neo_hookean; the same as "lame" for the other models under the matched mapping);
//   "p1_lanes": bool, the P1 lane kernel (p1_visit.hpp) where it applies (default true); false:
//       every element through addNodeBlock, the definition (to compare the two).
std::unique_ptr<Solver> makePbng(const nlohmann::json& options, const JsonReader& in, const std::string& field) {
  in.object(options, field);
  in.onlyKeys(options, field, {"omega", "chebyshev_rho", "chebyshev_gamma", "initial_guess", "contact_step", "rotation",
                                "tangent_parameters", "p1_lanes"},
              "of solver 'pbng'");
  PbngOptions pbng;
  // A number in (0, 2).
  const auto below_two = [&](const char* key) {
    const std::string at = jsonPointerChild(field, key);
    const double value = in.number(options[key], at);
    if (!(value > 0.0 && value < 2.0)) in.fail(at, "must be in (0, 2), got " + describeJson(options[key]));
    return value;
  };
  if (options.contains("omega")) {
    if (options["omega"].is_string()) {
      if (in.string(options["omega"], jsonPointerChild(field, "omega")) != "auto")
        in.fail(jsonPointerChild(field, "omega"), "must be a number in (0, 2) or \"auto\", got " + describeJson(options["omega"]));
      pbng.omega_auto = true;
    } else {
      pbng.omega = below_two("omega");
    }
  }
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
  if (pbng.chebyshev() && pbng.sor())
    in.fail(jsonPointerChild(field, "omega"), "SOR (omega != 1) and Chebyshev (chebyshev_rho > 0) are alternatives; "
                                              "give one of them");
  readSweepOptions(options, in, field, pbng);
  return std::make_unique<PbngSolver>(pbng);
}

// The options of a sweep that PBNG, MPBNG and VBD share: "initial_guess", "contact_step",
// "rotation", "tangent_parameters", "p1_lanes".
void readSweepOptions(const nlohmann::json& options, const JsonReader& in, const std::string& field, PbngOptions& pbng) {
  if (options.contains("initial_guess"))
    pbng.initial_guess = in.enumOf<PbngOptions::InitialGuess>(
        options["initial_guess"], jsonPointerChild(field, "initial_guess"),
        {{"inertial", PbngOptions::InitialGuess::kInertial},
         {"previous", PbngOptions::InitialGuess::kPrevious},
         {"pbd_prediction", PbngOptions::InitialGuess::kPbdPrediction},
         {"adaptive", PbngOptions::InitialGuess::kAdaptive}},
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
  if (options.contains("tangent_parameters"))
    pbng.tangent_parameters = in.enumOf<TangentParameters>(
        options["tangent_parameters"], jsonPointerChild(field, "tangent_parameters"),
        {{"lame", TangentParameters::kYoungsPoisson}, {"model", TangentParameters::kModel}}, "tangent parameters");
  if (options.contains("p1_lanes")) pbng.p1_lanes = in.boolean(options["p1_lanes"], jsonPointerChild(field, "p1_lanes"));
}

// Options of "mpbng" (solvers/pbng/mpbng_solver.hpp, MpbngOptions; docs/pbng.md, "MPBNG"):
//   "levels": the number of levels (default: 3, or 2 where the grid's cells halve only once),
//       coarsened from a structured grid by every other lattice line; or an array of mesh recipes, the coarse levels finest first (any
//       mesh covering the body: an unstructured Gmsh mesh, the Res 16 and 8 boxes of a Res 32);
//   "r_pad": r_des = k_max + r_pad, > 0 (default 0.05; the paper: [0.05, 2]);
//   "coarsest_sweeps": sweeps of the coarsest level (default 5; the paper: 4-6), >= 0;
//   "final_sweeps": sweeps of level 0 after the last iteration (default 7; the paper: 6-8), >= 0;
//   "binding_stiffness": k_c over the mean rest diagonal of level 0's elastic blocks, >= 0
//       (default 1);
//   "clamp_coarse": coarse vertices at prescribed vertices of level 0 are prescribed (default true);
//   "coarsest_pass": "every_iteration" (default) or "once" (before iteration 1 only);
//   "multi_level": "all_but_coarsest" (default, the paper's union over i != n) or "all";
//   "kappa": "absolute" (default) or "product" (the running product of the kappa_l);
//   "final_bindings": the bindings in the final pass at kappa_kmax (true) or off (default false);
//   "scale_gravity": kappa scales the coarse levels' weight with their mass (default true);
//   "coarse_state": "restrict" (default: from level 0 every step) or "own" (kept across steps);
//   "initial_guess", "contact_step", "rotation", "tangent_parameters", "p1_lanes": as for "pbng".
std::unique_ptr<Solver> makeMpbng(const nlohmann::json& options, const JsonReader& in, const std::string& field) {
  in.object(options, field);
  in.onlyKeys(options, field,
              {"levels", "r_pad", "coarsest_sweeps", "final_sweeps", "binding_stiffness", "clamp_coarse",
               "coarsest_pass", "multi_level", "kappa", "final_bindings", "scale_gravity", "coarse_state",
               "initial_guess", "contact_step", "rotation", "tangent_parameters", "p1_lanes"},
              "of solver 'mpbng'");
  MpbngOptions mpbng;
  const auto at = [&](const char* key) { return jsonPointerChild(field, key); };
  if (options.contains("levels")) {
    const nlohmann::json& levels = options["levels"];
    if (levels.is_array()) {
      if (levels.empty()) in.fail(at("levels"), "must list at least one coarse level's mesh recipe (or be a count)");
      const std::string base_dir = std::filesystem::path(in.source()).parent_path().string();
      for (size_t k = 0; k < levels.size(); ++k) {
        const std::string level_at = at("levels") + "/" + std::to_string(k);
        const MeshRecipe recipe = parseMeshRecipe(levels[k], in.source(), level_at, base_dir);
        try {
          mpbng.coarse_meshes.push_back(makeMesh(recipe));
        } catch (const InputError&) {
          throw;
        } catch (const std::exception& error) {
          in.fail(level_at, error.what());
        }
      }
      mpbng.levels = 1 + static_cast<int>(levels.size());
    } else {
      mpbng.levels = readSolverCount(in, options, field, "levels", 1, 12);
    }
  }
  if (options.contains("r_pad")) mpbng.r_pad = in.positive(options["r_pad"], at("r_pad"));
  if (options.contains("coarsest_sweeps")) mpbng.coarsest_sweeps = readSolverCount(in, options, field, "coarsest_sweeps", 0);
  if (options.contains("final_sweeps")) mpbng.final_sweeps = readSolverCount(in, options, field, "final_sweeps", 0);
  if (options.contains("binding_stiffness"))
    mpbng.level_options.binding_factor = in.nonNegative(options["binding_stiffness"], at("binding_stiffness"));
  if (options.contains("clamp_coarse")) mpbng.level_options.clamp_coarse = in.boolean(options["clamp_coarse"], at("clamp_coarse"));
  if (options.contains("coarsest_pass"))
    mpbng.coarsest_pass = in.enumOf<MpbngOptions::CoarsestPass>(
        options["coarsest_pass"], at("coarsest_pass"),
        {{"every_iteration", MpbngOptions::CoarsestPass::kEveryIteration}, {"once", MpbngOptions::CoarsestPass::kOnce}},
        "coarsest pass");
  if (options.contains("multi_level"))
    mpbng.multi_level = in.enumOf<MpbngOptions::MultiLevel>(
        options["multi_level"], at("multi_level"),
        {{"all_but_coarsest", MpbngOptions::MultiLevel::kAllButCoarsest}, {"all", MpbngOptions::MultiLevel::kAll}},
        "multi-level sweep");
  if (options.contains("kappa"))
    mpbng.kappa = in.enumOf<MpbngOptions::Kappa>(
        options["kappa"], at("kappa"),
        {{"absolute", MpbngOptions::Kappa::kAbsolute}, {"product", MpbngOptions::Kappa::kProduct}}, "kappa schedule");
  if (options.contains("final_bindings")) mpbng.final_bindings = in.boolean(options["final_bindings"], at("final_bindings"));
  if (options.contains("scale_gravity")) mpbng.scale_gravity = in.boolean(options["scale_gravity"], at("scale_gravity"));
  if (options.contains("coarse_state"))
    mpbng.coarse_state = in.enumOf<MpbngOptions::CoarseState>(
        options["coarse_state"], at("coarse_state"),
        {{"restrict", MpbngOptions::CoarseState::kRestrict}, {"own", MpbngOptions::CoarseState::kOwn}}, "coarse state");
  readSweepOptions(options, in, field, mpbng.pbng);
  return std::make_unique<MpbngSolver>(std::move(mpbng));
}

}  // namespace

// Options of "vbd" (solvers/pbng/vbd_solver.hpp; docs/vbd.md):
//   "node_block": "projected_terms" (default: each term's exact 3x3 node block with its negative
//       eigenvalues clamped, summed), "projected_sum" (the exact blocks summed, clamped once) or
//       "approximate" (PBNG's eq. 32-34);
//   "initial_guess": "adaptive" (default) or any of "pbng"'s;
//   "damping": VBD's k_d in seconds, >= 0 (default 0: off; backward Euler);
//   "chebyshev_rho": VBD's Chebyshev rho in [0, 1) (default 0: off; gamma 1, VBD's form);
//   "contact_step", "rotation" (the fixed corotated lanes' rotation, also in the exact block),
//       "p1_lanes": as for "pbng".
std::unique_ptr<Solver> makeVbd(const nlohmann::json& options, const JsonReader& in, const std::string& field) {
  in.object(options, field);
  in.onlyKeys(options, field, {"node_block", "initial_guess", "damping", "chebyshev_rho", "contact_step", "rotation",
                                "p1_lanes"},
              "of solver 'vbd'");
  PbngOptions vbd = vbdDefaultOptions();
  if (options.contains("node_block"))
    vbd.node_block = in.enumOf<PbngOptions::NodeBlock>(
        options["node_block"], jsonPointerChild(field, "node_block"),
        {{"projected_terms", PbngOptions::NodeBlock::kProjectedTerms},
         {"projected_sum", PbngOptions::NodeBlock::kProjectedSum},
         {"approximate", PbngOptions::NodeBlock::kApproximate}},
        "node block");
  if (options.contains("damping")) vbd.damping = in.nonNegative(options["damping"], jsonPointerChild(field, "damping"));
  if (options.contains("chebyshev_rho")) {
    const std::string at = jsonPointerChild(field, "chebyshev_rho");
    vbd.chebyshev_rho = in.nonNegative(options["chebyshev_rho"], at);
    if (!(vbd.chebyshev_rho < 1.0)) in.fail(at, "must be in [0, 1), got " + describeJson(options["chebyshev_rho"]));
  }
  readSweepOptions(options, in, field, vbd);
  return std::make_unique<VbdSolver>(vbd);
}

std::unique_ptr<Solver> makePbngFamilySolver(const std::string& name, const nlohmann::json& options,
                                             const JsonReader& in, const std::string& field) {
  if (name == "pbng") return makePbng(options, in, field);
  if (name == "vbd") return makeVbd(options, in, field);
  if (name == "mpbng") return makeMpbng(options, in, field);
  return nullptr;
}

}  // namespace pbdlab
