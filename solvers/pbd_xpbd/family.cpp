#include "solvers/pbd_xpbd/family.hpp"

#include <algorithm>

#include "core/materials/material.hpp"
#include "core/solver/solver_options.hpp"
#include "solvers/pbd_xpbd/grid_xpbd_solver.hpp"
#include "solvers/pbd_xpbd/xpbd_solver.hpp"

namespace pbdlab {

namespace {

// "sqrt_psi" and every split some material model offers: a split outside these is refused
// when the options are read; one the scene's material does not offer, when the scene is
// loaded (XpbdSolver::materialConflict).
std::vector<std::string> knownSplitNames() {
  std::vector<std::string> names = {"sqrt_psi"};
  for (const std::string& model : materialModelNames()) {
    MaterialSpec spec;
    spec.model = parseMaterialModel(model);
    for (const std::string& split : makeMaterial(spec)->splitNames())
      if (std::find(names.begin(), names.end(), split) == names.end()) names.push_back(split);
  }
  return names;
}

}  // namespace

std::vector<std::string> xpbdFamilySolverNames() {
  return {"xpbd", "pbd", "xpbd_qs", "b_pxpbd", "grid_xpbd", "grid_b_pxpbd"};
}

// Options (every solver of the family; unknown keys are errors):
//   "split": string, the material's split whose terms become the element constraints
//            ("" or absent: the material's default, e.g. "pxpbd" for fixed_corotated), or
//            "sqrt_psi": the whole energy as one constraint C = sqrt(2 V Psi) (PXPBD §5.3).
//            A name no material offers is refused here; one the scene's material does not
//            offer, at scene load (XpbdSolver::materialConflict), both at /solver/options/split.
//   "eps":   number >= 0, C = sqrt(2 V (Psi~ + eps)) (PXPBD eq. 5's regularization; not given
//            in the paper). Default 1e-8; 0 for pbd (zero compliance divides by |grad C|^2).
//   "near_zero": "regularize" (default, pbd's too when it is given eps > 0: eps above) or
//            "skip" (pbd's default; the high-order paper's §4.1: eps = 0 and a constraint
//            whose |sum_q V_q Psi~| is at round-off, at most XpbdOptions::kSkipBelow V_e, is
//            not visited; not together with eps > 0).
//   "p1_lanes": bool, the P1 lane kernel (solvers/pbd_xpbd/p1_lanes.hpp) where it applies: P1
//            tetrahedra whose split terms all have closed forms (fixed_corotated's "pxpbd").
//            Default true; false runs the generic element path (the same update).
//   "rotation": the corotated stretch's rotation on the lanes: "warm_start" (default: one
//            Newton step from the element's previous rotation, the SVD where the step is not
//            trusted) or "svd" (the SVD at every visit, as the generic path).
//   "log_residuals": bool, log g and h (PXPBD eq. 11-12) at the recorded iterations. Their
//            evaluation is on the solver's clock; false for timing runs. Default true.
// xpbd only:
//   "primal_residual_in_update": bool, keep eq. 13's primal residual (Fig. 3b). Default false.
// b_pxpbd only:
//   "zeta": number in (0, 1], eq. 19's blend; 1 is XPBD. Default 0.5 (the paper: 0.5, 0.1).
// xpbd_qs only:
//   "pseudo_dt": number > 0, seconds of pseudo-time per pseudo-step. Default 0.05.
//   "iterations_per_pseudo_step": integer in 1 .. kMaxSolverCount, sweeps per pseudo-step
//            (max_seconds is checked after each). Default 1.
//   "flipped": bool, the weak constraints before the elastic ones (PBNG §11). Default false.
//   "velocity_damping": number in [0, 1], the fraction of the pseudo-velocity removed after
//            each pseudo-step. Default 0 (PBNG §6.1 keeps it all).
// grid_xpbd and grid_b_pxpbd (grid_xpbd_solver.hpp; the grid-based scheme's problems only):
//   "split", "eps", "near_zero", "log_residuals" as above (no lane kernel: no "p1_lanes",
//   "rotation"); grid_b_pxpbd also "zeta" as above, and both:
//   "coloring_nodes": "kernel" (default: an element is incident to every node of its vertices'
//            kernel stencils, colorElementsOnGrid, PXPBD Fig. 6) or "touched" (the nodes of
//            nonzero weight only, which its update reads and moves).
std::unique_ptr<Solver> makeXpbdFamilySolver(const std::string& name, const nlohmann::json& options,
                                            const JsonReader& in, const std::string& field) {
  XpbdOptions xpbd;
  bool grid = false;  // grid_xpbd, grid_b_pxpbd
  std::vector<std::string> keys = {"split", "eps", "near_zero", "log_residuals", "p1_lanes", "rotation"};
  if (name == "xpbd") {
    xpbd.variant = XpbdVariant::kXpbd;
    keys.push_back("primal_residual_in_update");
  } else if (name == "pbd") {
    xpbd.variant = XpbdVariant::kPbd;
    // Zero compliance divides by |grad C|^2: eps > 0 sends it to 0 near C's minimum, and at
    // eps = 0 a constraint at round-off has a noise gradient whose part on a free node can be
    // near zero while C is not (steps of 1e40 m measured on a converged box), so PBD skips it.
    xpbd.eps = 0.0;
    xpbd.near_zero = XpbdOptions::NearZero::kSkip;
  } else if (name == "xpbd_qs") {
    xpbd.variant = XpbdVariant::kXpbdQuasistatic;
    keys.insert(keys.end(), {"pseudo_dt", "iterations_per_pseudo_step", "flipped", "velocity_damping"});
  } else if (name == "b_pxpbd") {
    xpbd.variant = XpbdVariant::kBlendedPrimal;
    keys.push_back("zeta");
  } else if (name == "grid_xpbd" || name == "grid_b_pxpbd") {
    grid = true;
    keys = {"split", "eps", "near_zero", "log_residuals", "coloring_nodes"};
    if (name == "grid_b_pxpbd") {
      xpbd.variant = XpbdVariant::kBlendedPrimal;
      keys.push_back("zeta");
    }
  } else {
    return nullptr;
  }
  in.onlyKeys(options, field, keys, "of solver '" + name + "'");
  auto at = [&](const char* key) { return jsonPointerChild(field, key); };
  if (options.contains("split")) {
    xpbd.split = in.string(options["split"], at("split"));
    if (!xpbd.split.empty()) in.oneOf(options["split"], at("split"), knownSplitNames(), "split");
  }
  if (options.contains("near_zero")) {
    xpbd.near_zero = in.enumOf<XpbdOptions::NearZero>(
        options["near_zero"], at("near_zero"),
        {{"regularize", XpbdOptions::NearZero::kRegularize}, {"skip", XpbdOptions::NearZero::kSkip}}, "near_zero rule");
    if (xpbd.near_zero == XpbdOptions::NearZero::kSkip) xpbd.eps = 0.0;
  }
  if (options.contains("eps")) {
    xpbd.eps = in.nonNegative(options["eps"], at("eps"));
    if (xpbd.eps > 0.0 && !options.contains("near_zero")) xpbd.near_zero = XpbdOptions::NearZero::kRegularize;
    if (xpbd.near_zero == XpbdOptions::NearZero::kSkip && xpbd.eps > 0.0)
      in.fail(at("eps"), "eps regularizes C near 0; near_zero \"skip\" replaces it (give one of them)");
  }
  if (options.contains("p1_lanes")) xpbd.p1_lanes = in.boolean(options["p1_lanes"], at("p1_lanes"));
  if (options.contains("rotation"))
    xpbd.rotation = in.enumOf<XpbdOptions::Rotation>(
        options["rotation"], at("rotation"),
        {{"warm_start", XpbdOptions::Rotation::kWarmStart}, {"svd", XpbdOptions::Rotation::kSvd}}, "rotation");
  if (options.contains("log_residuals"))
    xpbd.log_residuals = in.boolean(options["log_residuals"], at("log_residuals"));
  if (options.contains("primal_residual_in_update"))
    xpbd.primal_residual_in_update = in.boolean(options["primal_residual_in_update"], at("primal_residual_in_update"));
  if (options.contains("zeta")) {
    xpbd.zeta = in.positive(options["zeta"], at("zeta"));
    if (xpbd.zeta > 1.0) in.fail(at("zeta"), "zeta must be in (0, 1] (1 is plain XPBD), got " + options["zeta"].dump());
  }
  if (options.contains("pseudo_dt")) xpbd.pseudo_dt = in.positive(options["pseudo_dt"], at("pseudo_dt"));
  if (options.contains("iterations_per_pseudo_step"))
    xpbd.iterations_per_pseudo_step = readSolverCount(in, options, field, "iterations_per_pseudo_step", 1);
  if (options.contains("flipped")) xpbd.flipped = in.boolean(options["flipped"], at("flipped"));
  if (options.contains("velocity_damping")) {
    xpbd.velocity_damping = in.nonNegative(options["velocity_damping"], at("velocity_damping"));
    if (xpbd.velocity_damping > 1.0)
      in.fail(at("velocity_damping"), "velocity_damping must be in [0, 1] (0 keeps the pseudo-velocity, 1 "
                                      "starts every pseudo-step at rest), got " + options["velocity_damping"].dump());
  }
  if (grid) {
    GridXpbdOptions options_of_grid;
    options_of_grid.blended = xpbd.variant == XpbdVariant::kBlendedPrimal;
    options_of_grid.split = xpbd.split;
    options_of_grid.eps = xpbd.eps;
    options_of_grid.near_zero = xpbd.near_zero;
    options_of_grid.zeta = xpbd.zeta;
    options_of_grid.log_residuals = xpbd.log_residuals;
    if (options.contains("coloring_nodes"))
      options_of_grid.coloring_nodes = in.enumOf<GridColoringNodes>(
          options["coloring_nodes"], at("coloring_nodes"),
          {{"kernel", GridColoringNodes::kKernel}, {"touched", GridColoringNodes::kTouched}}, "coloring_nodes");
    return std::make_unique<GridXpbdSolver>(options_of_grid);
  }
  return std::make_unique<XpbdSolver>(xpbd);
}

}  // namespace pbdlab
