#pragma once
// A validation case: a scene, the solvers it is run with, and the metrics that judge a run,
// each with a tolerance justified by a measured run written beside it in the case file
// (STYLE.md 6). Cases live in validation/cases/*.json; docs/validation.md has the format.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "validation/runner.hpp"

namespace pbdlab {

struct MetricSpec {
  std::string name;
  // "probe_error": |u_probe[component] - expected| (relative to |expected| if `relative`);
  // "final_relative_residual": the last step's relative residual;
  // "volume_ratio_error": |V(x) / V(X) - expected| (expected defaults to 1);
  // "reference_max_error" / "reference_rms_error": max / RMS over the nodes of |x - x_ref|,
  //   x_ref the Newton solution of the same scene, divided by the reference's max displacement;
  // "mesh_reference_max_error" / "mesh_reference_l2_error": the same against the Newton
  //   solution of another scene (`reference_scene`, usually a finer mesh of the same problem):
  //   this run's displacement is sampled at the reference's nodes; L2 is volume-weighted
  //   (lumped nodal volumes of the reference mesh), sqrt(sum V_i |e_i|^2 / sum V_i).
  // "torsion_angle_deviation": the high-order paper's Fig. 5 measure: the rotation angle of
  //   `sections` cross-sections along the x axis (of the point at `radius` from the axis through
  //   `axis_point`, in the +y direction), minus the linear interpolation between the
  //   sections at x-min and x-max; the largest absolute deviation, in degrees.
  std::string type;
  std::string reference_scene;  // resolved against the case file's folder
  Vec3 axis_point = Vec3::Zero();
  double radius = 0.0;
  int sections = 0;
  std::string probe;
  int component = -1;  // probe_error: 0, 1, 2, or -1 for the displacement's norm
  std::optional<double> expected;
  bool relative = true;
  double tolerance = 0.0;
  std::string measured;  // the run that justified the tolerance (free text, required)
  // The measured value itself (required for residual gates): the loader refuses a tolerance
  // below 3x it.
  std::optional<double> measured_value;
  // "by_run": {"run": {"tolerance": t, "measured_value": v}}: a run's own gate in place of the
  // metric's (the paper's claim that one variant beats another, gated per run at 3x what each
  // was measured at). measured_value is required where the metric needs one.
  struct RunGate {
    double tolerance = 0.0;
    std::optional<double> measured_value;
  };
  std::map<std::string, RunGate> by_run;
  double toleranceFor(const std::string& run) const {
    const auto found = by_run.find(run);
    return found == by_run.end() ? tolerance : found->second.tolerance;
  }
};

struct ValidationCase {
  std::string path;  // the case file
  std::string name;
  std::string description;
  // Cases running one problem on different meshes share a series name; the report plots their
  // errors against node count. Empty: not part of a series.
  std::string series;
  // Which steps must reach their target (or the round-off floor) for the case's metrics to
  // count: "all" (default) or "last" (the metrics read only the final state, and earlier load
  // steps may end at their budget: say why in the case's description).
  // Which steps must reach their target for the metrics to count: "all", "last", or "none"
  // (a fixed iteration budget per step: only a diverged step fails).
  std::string converged_steps = "all";
  std::string label = "fast";  // "fast": plain ctest and `pbdlab validate`; "full": on request
  // The paper whose claim the case gates ("pxpbd", "pbng", "high_order", "multilayer"), or
  // "model" (the shared model and the references): the case's ctest label, so that
  // `ctest -L pbng` runs one paper's gates. Default "model".
  std::string paper = "model";
  std::string scene_path;      // resolved against the case file's folder
  // "scene_patch": JSON pointer of the scene file -> value, applied to the scene's JSON before
  // it is validated and resolved (a variant of a scene without a copy of its file). Every
  // pointer names a value the scene file has, and the value keeps its JSON type.
  nlohmann::json scene_patch = nlohmann::json::object();
  // "sweep": the parameter sweeps the case is one point of (the report tabulates and plots each
  // sweep against `value`). Empty: not part of a sweep.
  struct SweepPoint {
    std::string name;       // the sweep, e.g. "falling_block_iterations"
    std::string parameter;  // what is varied, e.g. "iterations per frame"
    double value = 0.0;     // its value at this case
  };
  std::vector<SweepPoint> sweeps;
  // "expected_divergence": solver -> the measured run that showed it diverging on this case's
  // scene (a sweep point past a solver's stability). Such a run passes only if it diverges;
  // its other metrics are shown, not gated.
  std::map<std::string, std::string> expected_divergence;
  // The case's runs, by run name. Default: the reference solvers (referenceSolverNames()) that
  // accept the scene; a case names the position-based solvers it judges. A run is a registered
  // solver's name, or a named variant {"name": "pbng_sor", "solver": "pbng", "options": {...}}
  // (one solver with several option sets in one case; the run's folder and report column are
  // its name).
  std::vector<std::string> solvers;
  std::map<std::string, std::string> variant_solver;  // variant run name -> registered solver
  nlohmann::json solver_options = nlohmann::json::object();  // per run name
  // The registered solver a run uses (the run name itself unless it is a variant).
  const std::string& solverOf(const std::string& run) const {
    const auto found = variant_solver.find(run);
    return found == variant_solver.end() ? run : found->second;
  }
  // "solver_max_iterations": {"run": N}, a run's iteration budget per step in place of the
  // scene's (an equal time budget converted to each solver's iteration count).
  std::map<std::string, int> solver_max_iterations;
  std::vector<MetricSpec> metrics;
  // "claim": the paper's claim the case tests and the verdict its gates encode, for the
  // report's claims ledger (docs/validation.md, "The claims ledger"). Empty `text`: none.
  struct Claim {
    std::string source;   // where in the paper: "Fig. 8", "Table 2", "§5.4"
    std::string text;     // the claim in one line
    std::string verdict;  // kClaimVerdicts
    std::string ours;     // our numbers, one line
    std::string theirs;   // theirs (a number, or what the figure shows)
    std::vector<std::string> readings;  // the paper's open choices tried, each with its result
  };
  Claim claim;
};

// The verdicts a case's claim may state: its gates hold exactly when the verdict does.
inline const std::vector<std::string> kClaimVerdicts = {"reproduces", "partly_reproduces", "does_not_reproduce"};

// Reads and checks a case file (InputError naming the file and field).
ValidationCase loadValidationCase(const std::string& path);
// Every *.json case under `folder`, sorted by name.
std::vector<ValidationCase> loadValidationCases(const std::string& folder);
// The case's scene with its scene_patch applied before the scene is validated and resolved (so
// `resolved`, and the key of a cached Newton reference, are those of the patched scene). An
// invalid patched value is an InputError naming the case file and its /scene_patch field.
Scene loadCaseScene(const ValidationCase& validation_case);

struct CaseRunResult {
  nlohmann::json metrics;  // the metrics.json written into the run folder
  bool passed = false;
  std::string skipped;     // non-empty: the solver cannot run the case's scene, and why
};

// Runs `solver` (one of the case's runs: a solver name or a variant's name) on the case's scene into `run_dir` (iterations.csv, summary.json, .vtu,
// metrics.json). `reference_dir` holds the Newton solution of the case's scene, computed
// once and reused (reference_*_error metrics need it). `progress`: a step line every 5 s of a
// long run (and of a reference computation, which always says when it starts and ends).
CaseRunResult runValidationCase(const ValidationCase& validation_case, const std::string& solver,
                                const std::string& run_dir, const std::string& reference_dir, bool progress,
                                int max_iterations = 0);  // > 0: overrides the scene's budget

// The torsion_angle_deviation metric of a displacement field: per cross-section (evenly spaced
// from x-min to x-max) its rotation about x minus the straight line between the end sections,
// in degrees (signed: the high-order paper's Fig. 5 curve), and the largest |deviation| (the
// metric's value).
struct TorsionAngleProfile {
  std::vector<double> x;                  // the sections' positions
  std::vector<double> deviation_degrees;  // signed
  double largest_degrees = 0.0;
};
TorsionAngleProfile torsionAngleProfile(const Mesh& mesh, const VecX& displacement, const MetricSpec& metric);
// The same over a problem's element blocks (Problem::elementBlocks(): every element type).
TorsionAngleProfile torsionAngleProfile(const std::vector<std::shared_ptr<const Mesh>>& blocks, const VecX& displacement,
                                        const MetricSpec& metric);
inline double torsionAngleDeviationDegrees(const Mesh& mesh, const VecX& displacement, const MetricSpec& metric) {
  return torsionAngleProfile(mesh, displacement, metric).largest_degrees;
}

// Iterations and solver seconds until the relative residual first reaches each threshold in
// the rows of one step (-1 where it never does).
nlohmann::json convergenceSummary(const std::vector<IterationRow>& rows, const std::vector<double>& thresholds);

}  // namespace pbdlab
