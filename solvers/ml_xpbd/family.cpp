#include "solvers/ml_xpbd/family.hpp"

#include "core/solver/solver_options.hpp"
#include "solvers/ml_xpbd/ml_xpbd_solver.hpp"

namespace pbdlab {

std::vector<std::string> mlXpbdFamilySolverNames() { return {"ml_xpbd"}; }

// Options (unknown keys are errors):
//   "layers": array of numbers in [0, 100], the rigid percentage of each layer, coarse to fine
//             (strictly decreasing), the last 0 (Alg. 2). Default [0] (plain XPBD).
//   "iterations_per_layer": array of integers >= 1, one per layer (Alg. 2's n_l); required with
//             more than one layer. Absent with [0]: the layer runs until the budget ends the step.
//   "ordering": "strain_rate" (eq. 20, default), "random", "vertical_stripes",
//             "horizontal_stripes" (the cantilever's stripes, Fig. 5), "stretch" (ours: per
//             element at x^t the largest eigenvalue of M_e^-1/2 K_e M_e^-1/2, descending; §4.1's
//             costly comparison ordering, not the authors' vertex-indexed global eigenvalues).
//   "seed": integer >= 0 for "random" (step k uses seed + k). Default 0.
//   "mass_splitting": "tonge" (default) or "paper" (eq. 15 literally).
//   "layer_stop": bool, §3.6's layer stop (never in the last layer). Default false.
//   "frame_stop_reduction": number in (0, 1), the frame stop of Figs. 9-10 and Table 1: end the
//             step once the secondary residual is (1 - P) times plain XPBD's after its first
//             sweep (in the last layer, or once the pending residual velocities' norm is below h^2;
//             the last layer runs past its count, the budget is the hang stop). Absent:
//             off (the iteration schedule or the budget ends the step).
//   "restitution": number in [0, 1], eq. 29 at the contacts with kinematic colliders (as
//             intended: a bounce of -eps times the pre-solve normal velocity, none below 2|g|h).
//             Absent: off (the velocity the contact projection leaves).
//   "log_residuals": bool, log the secondary residuals (eq. 30 and the MATLAB variant) at the
//             recorded iterations, off the solver's clock. Default true.
std::unique_ptr<Solver> makeMlXpbdFamilySolver(const std::string& name, const nlohmann::json& options,
                                              const JsonReader& in, const std::string& field) {
  if (name != "ml_xpbd") return nullptr;
  in.onlyKeys(options, field, {"layers", "iterations_per_layer", "ordering", "seed", "mass_splitting", "layer_stop",
                                    "frame_stop_reduction", "restitution", "log_residuals"}, "of solver '" + name + "'");
  auto at = [&](const char* key) { return jsonPointerChild(field, key); };
  MlXpbdOptions ml;
  if (options.contains("layers")) {
    const std::string where = at("layers");
    const nlohmann::json& list = in.array(options["layers"], where);
    if (list.empty()) in.fail(where, "needs at least one layer (the last, fully elastic one: [0])");
    ml.layers.clear();
    for (size_t l = 0; l < list.size(); ++l) {
      const std::string item = jsonPointerChild(where, std::to_string(l));
      const double percent = in.nonNegative(list[l], item);
      if (percent > 100.0) in.fail(item, "a rigid percentage must be in [0, 100], got " + describeJson(list[l]));
      if (!ml.layers.empty() && !(percent < ml.layers.back()))
        in.fail(item, "layers go coarse to fine: each rigid percentage must be below the previous one");
      ml.layers.push_back(percent);
    }
    if (ml.layers.back() != 0.0) in.fail(where, "the last layer must be fully elastic (0), got " + list.back().dump());
  }
  if (options.contains("iterations_per_layer")) {
    const std::string where = at("iterations_per_layer");
    const nlohmann::json& list = in.array(options["iterations_per_layer"], where);
    if (list.size() != ml.layers.size())
      in.fail(where, "needs one count per layer (" + std::to_string(ml.layers.size()) + "), got " +
                         std::to_string(list.size()));
    for (size_t l = 0; l < list.size(); ++l)
      ml.iterations_per_layer.push_back(
          in.integer(list[l], jsonPointerChild(where, std::to_string(l)), 1, kMaxSolverCount));
  }
  if (ml.layers.size() > 1 && !options.contains("iterations_per_layer"))
    in.fail(at("iterations_per_layer"), "is required with more than one layer (one count per layer)");
  if (options.contains("ordering"))
    ml.ordering = in.enumOf<MlXpbdOrdering>(options["ordering"], at("ordering"),
                                            {{"strain_rate", MlXpbdOrdering::kStrainRate},
                                             {"random", MlXpbdOrdering::kRandom},
                                             {"vertical_stripes", MlXpbdOrdering::kVerticalStripes},
                                             {"horizontal_stripes", MlXpbdOrdering::kHorizontalStripes},
                                             {"stretch", MlXpbdOrdering::kStretch}},
                                            "ordering");
  if (options.contains("seed"))
    ml.seed = static_cast<std::uint32_t>(in.integer(options["seed"], at("seed"), 0, 2147483647));
  if (options.contains("mass_splitting"))
    ml.mass_splitting = in.enumOf<ml_xpbd::MassSplitting>(
        options["mass_splitting"], at("mass_splitting"),
        {{"tonge", ml_xpbd::MassSplitting::kTonge}, {"paper", ml_xpbd::MassSplitting::kPaper}}, "mass splitting");
  if (options.contains("layer_stop")) ml.layer_stop = in.boolean(options["layer_stop"], at("layer_stop"));
  if (options.contains("frame_stop_reduction")) {
    const std::string where = at("frame_stop_reduction");
    ml.frame_stop_reduction = in.positive(options["frame_stop_reduction"], where);
    if (ml.frame_stop_reduction >= 1.0)
      in.fail(where, "the fraction P of the residual to remove must be below 1, got " +
                         describeJson(options["frame_stop_reduction"]));
  }
  if (options.contains("restitution")) {
    const std::string where = at("restitution");
    ml.restitution = in.nonNegative(options["restitution"], where);
    if (ml.restitution > 1.0)
      in.fail(where, "a coefficient of restitution is in [0, 1], got " + describeJson(options["restitution"]));
  }
  if (options.contains("log_residuals")) ml.log_residuals = in.boolean(options["log_residuals"], at("log_residuals"));
  return std::make_unique<MlXpbdSolver>(ml);
}

}  // namespace pbdlab
