#include "solvers/ml_xpbd/family.hpp"

#include "core/solver/solver_options.hpp"
#include "solvers/ml_xpbd/ml_xpbd_solver.hpp"

namespace pbdlab {

std::vector<std::string> mlXpbdFamilySolverNames() { return {"ml_xpbd"}; }

// Options (unknown keys are errors):
//   "layers": array of numbers in [0, 100], the rigid percentage of each layer, coarse to fine
//             (strictly decreasing), the last 0 (Alg. 2). Default [0]. Only [0] is accepted
//             until the rigid layers are built.
//   "iterations_per_layer": array of integers >= 1, one per layer (Alg. 2's n_l). Default:
//             none, the last layer runs until the solver's budget ends the step.
//   "log_residuals": bool, log the secondary residuals (eq. 30 and the MATLAB variant) at the
//             recorded iterations, off the solver's clock. Default true.
std::unique_ptr<Solver> makeMlXpbdFamilySolver(const std::string& name, const nlohmann::json& options,
                                              const JsonReader& in, const std::string& field) {
  if (name != "ml_xpbd") return nullptr;
  in.onlyKeys(options, field, {"layers", "iterations_per_layer", "log_residuals"}, "of solver '" + name + "'");
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
    if (ml.layers.size() != 1)
      in.fail(where, "only [0] (one fully elastic layer) is accepted: the rigid layers of multi-layer XPBD are not "
                     "built yet");
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
  if (options.contains("log_residuals")) ml.log_residuals = in.boolean(options["log_residuals"], at("log_residuals"));
  return std::make_unique<MlXpbdSolver>(ml);
}

}  // namespace pbdlab
