#include "validation/validation_case.hpp"

#include <fmt/core.h>

#include <Eigen/LU>
#include <algorithm>
#include <map>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/fem/field_sampling.hpp"
#include "core/support/atomic_file.hpp"
#include "core/support/input_error.hpp"
#include "core/support/json_reader.hpp"
#include "solvers/registry.hpp"
#include "validation/measures.hpp"
#include "validation/runner.hpp"
#include "validation/scene_patch.hpp"

namespace pbdlab {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A run of `validate` (and a reference computation) says where it is after this many silent
// wall seconds.
constexpr double kProgressEverySeconds = 5.0;

const std::vector<std::string> kMetricTypes = {"probe_error",         "final_relative_residual",
                                               "volume_ratio_error",  "reference_max_error",
                                               "reference_rms_error", "mesh_reference_max_error",
                                               "mesh_reference_l2_error", "torsion_angle_deviation",
                                               "max_penetration",     "inverted_elements",
                                               "max_inverted_elements",
                                               "rest_shape_error",    "edge_stretch_mean",
                                               "edge_stretch_max",    "area_ratio_error",
                                               "lowest_point_error"};

// One metric of the case file; fields through the shared reader (core/support/json_reader.hpp).
// The margin a gate keeps over its measured value (issue: "gates that cannot pass by accident").
constexpr double kGateMargin = 3.0;
std::string fmtNumber(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", x);
  return text;
}

// The largest |u_i| over the nodes of a flat displacement: what the relative reference metrics
// divide by.
double largestNodeNorm(const VecX& u) {
  double largest = 0.0;
  for (Eigen::Index i = 0; i < u.size() / 3; ++i) largest = std::max(largest, u.segment<3>(3 * i).norm());
  return largest;
}

MetricSpec parseMetric(const JsonReader& in, const json& value, const std::string& at) {
  in.object(value, at);
  in.onlyKeys(value, at,
              {"name", "type", "probe", "component", "expected", "relative", "tolerance", "measured",
               "measured_value", "reference_scene", "axis_point", "radius", "sections", "by_run"},
              "of a metric");
  const auto field = [&](const std::string& key) { return jsonPointerChild(at, key); };
  MetricSpec metric;
  metric.name = in.string(in.required(value, "name", at), field("name"));
  metric.type = in.oneOf(in.required(value, "type", at), field("type"), kMetricTypes, "metric type");
  metric.tolerance = in.number(in.required(value, "tolerance", at), field("tolerance"));
  metric.measured = in.string(in.required(value, "measured", at), field("measured"));
  if (value.contains("expected")) metric.expected = in.number(value["expected"], field("expected"));
  if (value.contains("relative")) metric.relative = in.boolean(value["relative"], field("relative"));
  // A residual gate keeps a margin over what was measured, so round-off or a thread count
  // does not flip it, while a real regression (an order of magnitude) still fails it.
  if (metric.type == "final_relative_residual" && !value.contains("measured_value"))
    in.fail(field("measured_value"), "is required for a final_relative_residual metric: the largest value measured "
                                     "over the case's solvers, which the tolerance must exceed by " +
                                         fmtNumber(kGateMargin) + "x");
  // A tolerance and its measured value (the metric's, or a run's in by_run).
  const auto checkMargin = [&](double tolerance, const json& measured, const std::string& tolerance_at,
                               const std::string& measured_at) {
    const double measured_value = in.nonNegative(measured, measured_at);
    if (tolerance < kGateMargin * measured_value)
      in.fail(tolerance_at, "is " + fmtNumber(tolerance) + ", less than " + fmtNumber(kGateMargin) +
                                "x the measured value " + fmtNumber(measured_value) +
                                ": a gate needs a margin over what it was measured at");
    return measured_value;
  };
  if (value.contains("measured_value"))
    metric.measured_value = checkMargin(metric.tolerance, value["measured_value"], field("tolerance"), field("measured_value"));
  if (value.contains("by_run")) {
    const json& runs = in.object(value["by_run"], field("by_run"));
    for (const auto& [run, gate] : runs.items()) {
      const std::string gate_at = jsonPointerChild(field("by_run"), run);
      in.object(gate, gate_at);
      in.onlyKeys(gate, gate_at, {"tolerance", "measured_value"}, "of a run's gate");
      MetricSpec::RunGate run_gate;
      run_gate.tolerance = in.number(in.required(gate, "tolerance", gate_at), jsonPointerChild(gate_at, "tolerance"));
      if (gate.contains("measured_value"))
        run_gate.measured_value = checkMargin(run_gate.tolerance, gate["measured_value"], jsonPointerChild(gate_at, "tolerance"),
                                              jsonPointerChild(gate_at, "measured_value"));
      else if (metric.type == "final_relative_residual")
        in.fail(jsonPointerChild(gate_at, "measured_value"), "is required for a final_relative_residual metric's run gate");
      metric.by_run[run] = run_gate;
    }
  }
  if (metric.type == "probe_error") {
    metric.probe = in.string(in.required(value, "probe", at), field("probe"));
    if (!metric.expected) in.fail(field("expected"), "is required for a probe_error metric");
    if (metric.relative && *metric.expected == 0.0)
      in.fail(field("expected"), "is 0: a relative error needs a non-zero expected value");
    if (value.contains("component")) {
      metric.component = in.integer(value["component"], field("component"));
      if (metric.component < -1 || metric.component > 2)
        in.fail(field("component"), "must be 0, 1, 2 or -1 (the norm), got " + std::to_string(metric.component));
    }
  }
  if (metric.type == "torsion_angle_deviation") {
    metric.axis_point = in.vec3(in.required(value, "axis_point", at), field("axis_point"));
    metric.radius = in.positive(in.required(value, "radius", at), field("radius"));
    metric.sections = in.integerAtLeast(in.required(value, "sections", at), field("sections"), 3);
  }
  if (metric.type.rfind("mesh_reference_", 0) == 0) {
    metric.reference_scene = (fs::path(in.source()).parent_path() /
                              in.string(in.required(value, "reference_scene", at), field("reference_scene")))
                                 .lexically_normal()
                                 .string();
    std::error_code ec;  // the non-throwing form: a name too long is "no such file", not an internal error
    if (!fs::exists(metric.reference_scene, ec))
      in.fail(field("reference_scene"), "no such scene file: " + metric.reference_scene);
  }
  return metric;
}

// FNV-1a of the resolved scene without its solver and output sections: the key of a cached
// reference (a changed material or mesh with the same DOF count must not reuse it).
std::string sceneKey(const Scene& scene) {
  json physics = scene.resolved;
  physics.erase("solver");
  physics.erase("output");
  physics.erase("name");
  physics.erase("description");
  std::uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : physics.dump()) hash = (hash ^ c) * 1099511628211ull;
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

// A Newton reference that stops short of its target: the metrics that need it fail (value NaN,
// the reason in the row's note) instead of ending the whole validate run.
struct ReferenceNotConverged : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The Newton solution of the case's scene, computed once into reference_dir and reused while
// the scene's physics (its key) is the same.

Positions referenceSolution(const ValidationCase& validation_case, const Scene& scene, const std::string& reference_dir) {
  const fs::path cached = fs::path(reference_dir) / "final_positions.json";
  const std::string key = sceneKey(scene);
  if (fs::exists(cached)) {
    std::ifstream in(cached);
    const json document = json::parse(in, nullptr, false);
    if (document.is_object() && document.value("scene_key", "") == key && document.contains("positions") &&
        document["positions"].is_array() && static_cast<int>(document["positions"].size()) == scene.problem.numDofs()) {
      const json& values = document["positions"];
      Positions x(values.size());
      for (size_t k = 0; k < values.size(); ++k) x[k] = values[k].get<double>();
      return x;
    }
  }
  Scene reference = scene;
  reference.solver.name = "newton";
  reference.solver.options = json::object();
  reference.solver.budget = Budget{};
  reference.solver.budget.max_iterations = 200;
  reference.output.vtu = OutputSpec::Frames::kNone;
  reference.resolved["output"]["vtu"] = "none";  // what its summary.json says it wrote
  fmt::print(stderr, "reference for case {}: Newton on {} nodes, {} steps ...\n", validation_case.name,
             scene.problem.numNodes(), scene.problem.time.numSubsteps());
  const auto start = std::chrono::steady_clock::now();
  const RunResult result =
      runScene(reference, {reference_dir, true, kProgressEverySeconds, "reference for case " + validation_case.name});
  fmt::print(stderr, "reference for case {}: done in {:.1f} s wall ({:.1f} s solver)\n", validation_case.name,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
             result.summary["totals"]["solver_seconds"].get<double>());
  if (!result.all_steps_converged)
    throw ReferenceNotConverged("the Newton reference (" + scene.name + ", " + std::to_string(reference.solver.budget.max_iterations) +
                                " iterations per step at most) did not converge; nothing is cached");
  json values = json::array();
  for (int k = 0; k < result.final_positions.size(); ++k) values.push_back(result.final_positions[k]);
  writeFileAtomically(cached.string(), json({{"scene_key", key}, {"positions", values}}).dump() + "\n");
  return result.final_positions;
}

// "sweep": {"name", "parameter", "value"}, or an array of them (a case that is a point of two
// sweeps, e.g. the shared point of an iteration and a Poisson-ratio sweep).
std::vector<ValidationCase::SweepPoint> parseSweeps(const JsonReader& in, const json& value) {
  std::vector<std::pair<const json*, std::string>> entries;
  if (value.is_array()) {
    if (value.empty()) in.fail("/sweep", "must not be an empty array");
    for (size_t k = 0; k < value.size(); ++k) entries.emplace_back(&value[k], jsonPointerChild("/sweep", k));
  } else if (value.is_object()) {
    entries.emplace_back(&value, "/sweep");
  } else {
    in.fail("/sweep", "must be an object {\"name\", \"parameter\", \"value\"} or an array of them, got " +
                          describeJson(value));
  }
  std::vector<ValidationCase::SweepPoint> sweeps;
  for (const auto& [entry, at] : entries) {
    in.object(*entry, at);
    in.onlyKeys(*entry, at, {"name", "parameter", "value"}, "of a sweep");
    ValidationCase::SweepPoint point;
    point.name = in.nonEmptyString(in.required(*entry, "name", at), at + "/name");
    point.parameter = in.nonEmptyString(in.required(*entry, "parameter", at), at + "/parameter");
    point.value = in.number(in.required(*entry, "value", at), at + "/value");
    for (const ValidationCase::SweepPoint& other : sweeps)
      if (other.name == point.name) in.fail(at + "/name", "names the sweep '" + point.name + "' a second time");
    sweeps.push_back(point);
  }
  return sweeps;
}

}  // namespace

Scene loadCaseScene(const ValidationCase& validation_case) {
  return loadPatchedScene(validation_case.scene_path, validation_case.scene_patch, validation_case.path, "/scene_patch");
}

// Rotation angle about the x axis of each section's probe point (unwrapped along x, starting
// from the x-min section), minus the straight line between the two end sections.
TorsionAngleProfile torsionAngleProfile(const Mesh& mesh, const VecX& displacement, const MetricSpec& metric) {
  const std::shared_ptr<const Mesh> block(&mesh, [](const Mesh*) {});  // not owned, not copied
  return torsionAngleProfile(std::vector<std::shared_ptr<const Mesh>>{block}, displacement, metric);
}

TorsionAngleProfile torsionAngleProfile(const std::vector<std::shared_ptr<const Mesh>>& blocks, const VecX& displacement,
                                        const MetricSpec& metric) {
  const MatX3& X = blocks.front()->rest_positions;  // every block has every node
  const double x_min = X.col(0).minCoeff(), x_max = X.col(0).maxCoeff();
  const BlockFieldSampler sampler(blocks);
  TorsionAngleProfile profile;
  std::vector<double> angles;
  for (int k = 0; k < metric.sections; ++k) {
    const double x = x_min + (x_max - x_min) * k / (metric.sections - 1);
    profile.x.push_back(x);
    const Vec3 rest(x, metric.axis_point.y() + metric.radius, metric.axis_point.z());
    const Vec3 deformed = rest + sampler.sample(displacement, rest);
    const double raw = std::atan2(deformed.z() - metric.axis_point.z(), deformed.y() - metric.axis_point.y());
    if (angles.empty()) {
      angles.push_back(raw);
    } else {  // unwrap: sections are close enough that neighbours differ by less than pi
      double step = raw - std::remainder(angles.back(), 2 * M_PI);
      step = std::remainder(step, 2 * M_PI);
      angles.push_back(angles.back() + step);
    }
  }
  for (int k = 0; k < metric.sections; ++k) {
    const double linear = angles.front() + (angles.back() - angles.front()) * k / (metric.sections - 1);
    const double deviation = (angles[k] - linear) * 180.0 / M_PI;
    profile.deviation_degrees.push_back(deviation);
    profile.largest_degrees = std::max(profile.largest_degrees, std::abs(deviation));
  }
  return profile;
}

ValidationCase loadValidationCase(const std::string& path) {
  // Strict parsing (duplicate keys, 1e999) with the same errors as scene files.
  const json document = readJsonFile(path);
  const JsonReader in(path);
  if (!document.is_object()) in.fail("(root)", "a validation case must be a JSON object, got " + describeJson(document));
  in.onlyKeys(document, "",
              {"name", "description", "series", "label", "paper", "scene", "scene_patch", "sweep", "solvers", "solver_options", "solver_max_iterations",
               "converged_steps", "expected_divergence", "metrics", "claim"},
              "of a validation case");
  ValidationCase c;
  c.path = path;
  c.name = in.string(in.required(document, "name", ""), "/name");
  if (document.contains("description")) c.description = in.string(document["description"], "/description");
  if (document.contains("series")) c.series = in.nonEmptyString(document["series"], "/series");
  if (document.contains("label")) c.label = in.oneOf(document["label"], "/label", {"fast", "full"}, "label");
  if (document.contains("paper"))
    c.paper = in.oneOf(document["paper"], "/paper", {"pxpbd", "pbng", "high_order", "multilayer", "vbd", "model"}, "paper");
  if (document.contains("converged_steps"))
    c.converged_steps = in.oneOf(document["converged_steps"], "/converged_steps", {"all", "last", "none"},
                                 "converged_steps");
  c.scene_path = (fs::path(path).parent_path() / in.string(in.required(document, "scene", ""), "/scene"))
                     .lexically_normal()
                     .string();
  if (document.contains("scene_patch")) {
    std::error_code ec;  // the non-throwing form (a name too long)
    if (!fs::is_regular_file(c.scene_path, ec)) in.fail("/scene", "no such scene file: " + c.scene_path + " (scene_patch patches it)");
    c.scene_patch = readScenePatch(in, document["scene_patch"], "/scene_patch", c.scene_path);
  }
  if (document.contains("sweep")) c.sweeps = parseSweeps(in, document["sweep"]);
  if (document.contains("claim")) {
    const json& claim = in.object(document["claim"], "/claim");
    in.onlyKeys(claim, "/claim", {"source", "text", "verdict", "ours", "theirs", "readings"}, "of a claim");
    if (!document.contains("paper")) in.fail("/claim", "needs the case's \"paper\" (whose claim it is)");
    c.claim.source = in.nonEmptyString(in.required(claim, "source", "/claim"), "/claim/source");
    c.claim.text = in.nonEmptyString(in.required(claim, "text", "/claim"), "/claim/text");
    c.claim.verdict = in.oneOf(in.required(claim, "verdict", "/claim"), "/claim/verdict", kClaimVerdicts, "claim verdict");
    c.claim.ours = in.nonEmptyString(in.required(claim, "ours", "/claim"), "/claim/ours");
    c.claim.theirs = in.nonEmptyString(in.required(claim, "theirs", "/claim"), "/claim/theirs");
    if (claim.contains("readings")) {
      const json& readings = in.array(claim["readings"], "/claim/readings");
      for (size_t k = 0; k < readings.size(); ++k)
        c.claim.readings.push_back(in.nonEmptyString(readings[k], jsonPointerChild("/claim/readings", k)));
    }
  }
  const std::vector<std::string> known = solverNames();
  if (document.contains("solvers")) {
    const json& solvers = in.array(document["solvers"], "/solvers");
    for (size_t k = 0; k < solvers.size(); ++k) {
      const std::string at = jsonPointerChild("/solvers", k);
      std::string run;
      if (solvers[k].is_object()) {  // a named variant: one solver with its own options
        in.onlyKeys(solvers[k], at, {"name", "solver", "options"}, "of a solver variant");
        run = in.nonEmptyString(in.required(solvers[k], "name", at), jsonPointerChild(at, "name"));
        if (run.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != std::string::npos ||
            run.front() == '.')
          in.fail(jsonPointerChild(at, "name"), "'" + run + "' is not a run name (letters, digits, '_', '-', '.'; it names the run's folder)");
        if (std::find(known.begin(), known.end(), run) != known.end())
          in.fail(jsonPointerChild(at, "name"), "'" + run + "' is a registered solver's name: a variant needs a name of its own");
        c.variant_solver[run] = in.oneOf(in.required(solvers[k], "solver", at), jsonPointerChild(at, "solver"), known, "solver");
        if (solvers[k].contains("options"))
          c.solver_options[run] = in.object(solvers[k]["options"], jsonPointerChild(at, "options"));
      } else {
        run = in.oneOf(solvers[k], at, known, "solver");
      }
      if (std::find(c.solvers.begin(), c.solvers.end(), run) != c.solvers.end())
        in.fail(at, "'" + run + "' is already one of the case's runs (a second option set needs a named variant)");
      c.solvers.push_back(run);
    }
  } else {
    c.solvers = referenceSolverNames();
  }
  if (document.contains("solver_options")) {
    const json& options = in.object(document["solver_options"], "/solver_options");
    // Per registered solver name (a variant carries its own options).
    in.onlyKeys(options, "/solver_options", known, "(not a registered solver)");
    for (const auto& [name, value] : options.items()) {
      if (c.variant_solver.count(name))  // unreachable today: variant names are not solver names
        in.fail(jsonPointerChild("/solver_options", name), "a variant's options go in its /solvers entry");
      c.solver_options[name] = value;
    }
  }
  // Every option set is checked now, not when the run starts.
  for (const auto& [run, options] : c.solver_options.items()) {
    const auto variant = std::find(c.solvers.begin(), c.solvers.end(), run);
    const std::string at = c.variant_solver.count(run)
                               ? jsonPointerChild(jsonPointerChild("/solvers", variant - c.solvers.begin()), "options")
                               : jsonPointerChild("/solver_options", run);
    makeSolver(c.solverOf(run), options, path, at);
  }
  if (document.contains("solver_max_iterations")) {
    const json& budgets = in.object(document["solver_max_iterations"], "/solver_max_iterations");
    for (const auto& [name, value] : budgets.items()) {
      const std::string at = jsonPointerChild("/solver_max_iterations", name);
      if (std::find(c.solvers.begin(), c.solvers.end(), name) == c.solvers.end())
        in.fail(at, "'" + name + "' is not one of the case's solvers");
      c.solver_max_iterations[name] = in.integerAtLeast(value, at, 1);
    }
  }
  if (document.contains("expected_divergence")) {
    // {"solver": "the measured run"}: solvers of the case that diverge on its scene (a result of
    // a sweep point); their run passes only if it diverges.
    const json& expected = in.object(document["expected_divergence"], "/expected_divergence");
    for (const auto& [name, measured] : expected.items()) {
      const std::string at = jsonPointerChild("/expected_divergence", name);
      if (std::find(c.solvers.begin(), c.solvers.end(), name) == c.solvers.end())
        in.fail(at, "'" + name + "' is not one of the case's solvers (" + joinNames(c.solvers) + ")");
      c.expected_divergence[name] = in.nonEmptyString(measured, at);
    }
  }
  const json& metrics = in.array(in.required(document, "metrics", ""), "/metrics");
  if (metrics.empty()) in.fail("/metrics", "must be a non-empty array");
  for (size_t k = 0; k < metrics.size(); ++k) {
    c.metrics.push_back(parseMetric(in, metrics[k], jsonPointerChild("/metrics", k)));
    for (const auto& gate : c.metrics.back().by_run)
      if (std::find(c.solvers.begin(), c.solvers.end(), gate.first) == c.solvers.end())
        in.fail(jsonPointerChild(jsonPointerChild(jsonPointerChild("/metrics", k), "by_run"), gate.first),
                "'" + gate.first + "' is not one of the case's runs (" + joinNames(c.solvers) + ")");
  }
  return c;
}

std::vector<ValidationCase> loadValidationCases(const std::string& folder) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  std::vector<ValidationCase> cases;
  for (const std::string& file : files) cases.push_back(loadValidationCase(file));
  return cases;
}

json convergenceSummary(const std::vector<IterationRow>& rows, const std::vector<double>& thresholds) {
  json iterations = json::array(), seconds = json::array();
  for (double threshold : thresholds) {
    auto hit = std::find_if(rows.begin(), rows.end(), [&](const IterationRow& row) { return row.relative_residual <= threshold; });
    iterations.push_back(hit == rows.end() ? json(nullptr) : json(hit->iteration));
    seconds.push_back(hit == rows.end() ? json(nullptr) : json(hit->solver_seconds));
  }
  return {{"thresholds", thresholds}, {"iterations_to", iterations}, {"seconds_to", seconds}};
}

CaseRunResult runValidationCase(const ValidationCase& validation_case, const std::string& solver,
                                const std::string& run_dir, const std::string& reference_dir, bool progress,
                                int max_iterations) {
  Scene scene = loadCaseScene(validation_case);
  const std::string& run_name = solver;  // a registered solver's name or a variant's
  const bool variant = validation_case.variant_solver.count(run_name) > 0;
  const std::string options_at =
      variant ? jsonPointerChild(jsonPointerChild("/solvers", std::find(validation_case.solvers.begin(), validation_case.solvers.end(), run_name) -
                                                               validation_case.solvers.begin()),
                                 "options")
              : jsonPointerChild("/solver_options", run_name);
  const std::string& registered = validation_case.solverOf(run_name);
  if (auto budget = validation_case.solver_max_iterations.find(solver); budget != validation_case.solver_max_iterations.end()) {
    scene.solver.budget.max_iterations = budget->second;
    scene.resolved["solver"]["max_iterations"] = budget->second;
  }
  if (max_iterations > 0) {  // the command line's override wins (a deliberately degraded run)
    scene.solver.budget.max_iterations = max_iterations;
    scene.resolved["solver"]["max_iterations"] = max_iterations;
  }
  // Options: the case's for this solver; else the scene's own when the scene names this solver
  // (a scene written for b_pxpbd with zeta 0.9 runs with zeta 0.9); else the defaults.
  if (validation_case.solver_options.contains(run_name))
    scene.solver.options = validation_case.solver_options[run_name];
  else if (variant || scene.solver.name != registered)
    scene.solver.options = json::object();
  useSolver(scene, registered, json(scene.solver.options), validation_case.path, options_at);
  {
    const std::unique_ptr<Solver> instance = makeSolver(registered, scene.solver.options, validation_case.path, options_at);
    const std::string reason = sceneRejection(*instance, scene);  // a grid scene: its grid problem's
    if (!reason.empty()) {  // not a failure: the pair does not exist (reported as skipped)
      CaseRunResult skipped;
      skipped.passed = true;
      skipped.skipped = reason;
      skipped.metrics = {{"case", validation_case.name}, {"solver", registered}, {"run", run_name}, {"skipped", reason}};
      return skipped;
    }
  }
  const RunResult run = runScene(scene, {run_dir, progress, kProgressEverySeconds, validation_case.name + " with " + run_name});
  const Problem& problem = scene.problem;
  const Positions& x = run.final_positions;
  const VecX displacement = x - problem.mesh.restPositionsFlat();

  // Newton references by folder (this scene's, and every reference_scene's), each asked once per
  // run: a failed one is not recomputed for the case's next metric.
  std::map<std::string, Positions> references;
  std::map<std::string, std::string> failed_references;
  auto referenceIn = [&](const Scene& reference_scene, const std::string& folder) -> const Positions& {
    if (const auto failed = failed_references.find(folder); failed != failed_references.end())
      throw ReferenceNotConverged(failed->second);
    auto found = references.find(folder);
    if (found == references.end()) try {
        found = references.emplace(folder, referenceSolution(validation_case, reference_scene, folder)).first;
      } catch (const ReferenceNotConverged& error) {
        failed_references.emplace(folder, error.what());
        throw;
      }
    return found->second;
  };
  json metrics = json::array();
  json profiles = json::array();  // curves behind some metrics (metrics.json "profiles")
  bool passed = true;
  for (const MetricSpec& metric : validation_case.metrics) {
    double value = NAN;
    std::string unit = metric.relative ? "relative" : "absolute";
    std::string reference_failure;
    try {
      if (metric.type == "probe_error") {
        const OutputSpec::Probe* probe = scene.output.probe(metric.probe);
        if (!probe)
          throw InputError(validation_case.path, "/metrics", "probe '" + metric.probe + "' is not in the scene's output.probes");
        const Vec3 u = BlockFieldSampler(problem.elementBlocks()).sample(displacement, probe->point);
        const double measured = metric.component < 0 ? u.norm() : u[metric.component];
        value = std::abs(measured - *metric.expected);
        if (metric.relative) value /= std::abs(*metric.expected);
      } else if (metric.type == "final_relative_residual") {
        value = run.summary["steps"].back()["relative_residual"].get<double>();
        unit = "relative residual";
      } else if (metric.type == "max_penetration") {
        // The deepest penetration at the end of any frame (colliders and collision contacts).
        value = 0.0;
        for (const auto& step : run.summary["steps"])
          if (step.contains("max_penetration")) value = std::max(value, step["max_penetration"].get<double>());
        unit = "m";
      } else if (metric.type == "inverted_elements") {
        // Elements of the final state with det F <= 0 at a quadrature point (summary's final_state).
        value = run.summary["final_state"]["inverted_elements"].get<double>();
        unit = "elements";
      } else if (metric.type == "max_inverted_elements") {
        // The most elements with det F <= 0 at the end of any frame (the per-frame count of the
        // summary's steps): a robustness gate that an inversion healed by the end cannot pass.
        value = 0.0;
        for (const auto& step : run.summary["steps"])
          value = std::max(value, step["inverted_elements"].get<double>());
        unit = "elements";
      } else if (metric.type == "rest_shape_error") {
        // Distance from the rest shape up to a rigid motion (measures.hpp), relative to the
        // rest mesh's largest bounding-box extent when asked.
        value = restShapeDistance(problem.mesh, x);
        if (metric.relative) {
          const MatX3& X = problem.mesh.rest_positions;
          value /= (X.colwise().maxCoeff() - X.colwise().minCoeff()).maxCoeff();
        }
        unit = metric.relative ? "relative to the largest extent" : "m";
      } else if (metric.type == "edge_stretch_mean" || metric.type == "edge_stretch_max") {
        // A cloth's edges l/L - 1 at the end (measures.hpp); NaN (a failed metric) for a solid.
        const SurfaceMeasures cloth = surfaceMeasures(problem, x);
        value = metric.type == "edge_stretch_mean" ? cloth.stretch_mean : cloth.stretch_max;
        unit = "stretch l/L - 1";
      } else if (metric.type == "area_ratio_error") {
        value = std::abs(surfaceMeasures(problem, x).area_ratio - metric.expected.value_or(1.0));
        unit = "area ratio";
      } else if (metric.type == "lowest_point_error") {
        // The lowest point against Newton's solution of the same scene (the reference), relative to
        // the reference's largest displacement when asked.
        const Positions& reference = referenceIn(scene, reference_dir);
        value = std::abs(surfaceMeasures(problem, x).lowest_point - surfaceMeasures(problem, reference).lowest_point);
        const double max_reference = largestNodeNorm(reference - problem.mesh.restPositionsFlat());
        if (metric.relative && max_reference > 0.0) value /= max_reference;
      } else if (metric.type == "volume_ratio_error") {
        // NaN (a failed metric) for a problem without an elastic term (cloth).
        value = std::abs(volumeRatio(problem, x) - metric.expected.value_or(1.0));
      } else if (metric.type == "torsion_angle_deviation") {
        const TorsionAngleProfile profile = torsionAngleProfile(problem.elementBlocks(), displacement, metric);
        value = profile.largest_degrees;
        unit = "degrees";
        // The curve behind the value, for the report's profile figure (Fig. 5 of the high-order paper).
        profiles.push_back({{"metric", metric.name},
                            {"x_label", "x of the cross-section [m]"},
                            {"y_label", "rotation − linear between the ends [degrees]"},
                            {"x", profile.x},
                            {"y", profile.deviation_degrees}});
      } else if (metric.type.rfind("mesh_reference_", 0) == 0) {
        const Scene reference_scene = loadScene(metric.reference_scene);
        const std::string folder =
            (fs::path(reference_dir).parent_path() / ("scene_" + reference_scene.name)).string();
        const Positions& x_ref = referenceIn(reference_scene, folder);
        const Mesh& reference_mesh = reference_scene.problem.mesh;
        const VecX u_ref = x_ref - reference_mesh.restPositionsFlat();
        // Nodal volumes of the reference, summed over its element blocks (one unless its bodies
        // have different element types).
        VecX volumes = VecX::Zero(reference_mesh.numNodes());
        for (const auto& block : reference_scene.problem.elementBlocks())
          volumes += lumpedNodeMasses(*block, std::vector<double>(block->numElements(), 1.0));
        const BlockFieldSampler sampler(problem.elementBlocks());
        double max_error = 0.0, weighted = 0.0, total_volume = 0.0;
        for (int i = 0; i < reference_mesh.numNodes(); ++i) {
          const Vec3 u_ref_i = u_ref.segment<3>(3 * i);
          const double e = (sampler.sample(displacement, reference_mesh.restPosition(i)) - u_ref_i).norm();
          max_error = std::max(max_error, e);
          weighted += volumes[i] * e * e;
          total_volume += volumes[i];
        }
        const double max_reference = largestNodeNorm(u_ref);
        value = metric.type == "mesh_reference_max_error" ? max_error : std::sqrt(weighted / total_volume);
        if (metric.relative && max_reference > 0.0) value /= max_reference;
      } else {  // reference_max_error, reference_rms_error
        const Positions& reference = referenceIn(scene, reference_dir);
        const VecX difference = x - reference;
        double max_difference = 0.0, sum = 0.0;
        for (int i = 0; i < problem.numNodes(); ++i) {
          const double d = difference.segment<3>(3 * i).norm();
          max_difference = std::max(max_difference, d);
          sum += d * d;
        }
        const double max_reference = largestNodeNorm(reference - problem.mesh.restPositionsFlat());
        value = metric.type == "reference_max_error" ? max_difference : std::sqrt(sum / problem.numNodes());
        if (metric.relative && max_reference > 0.0) value /= max_reference;
      }
    } catch (const ReferenceNotConverged& error) {
      reference_failure = error.what();  // value stays NaN: the metric fails, the other cases still run
      fmt::print(stderr, "case {}: metric {} fails: {}\n", validation_case.name, metric.name, reference_failure);
    }
    // Newton against its own solution measures nothing: shown, never counted as a pass.
    const bool against_itself = (metric.type == "reference_max_error" || metric.type == "reference_rms_error" ||
                                 metric.type == "lowest_point_error") &&
                                registered == "newton" && scene.solver.options.empty();
    const double tolerance = metric.toleranceFor(run_name);
    const bool pass = std::isfinite(value) && value <= tolerance;
    const bool expected_divergence = validation_case.expected_divergence.count(solver) > 0;
    json row = {{"name", metric.name}, {"type", metric.type}, {"value", value},   {"tolerance", tolerance},
                {"kind", "accuracy"},  {"unit", unit},        {"measured", metric.measured}};
    if (!reference_failure.empty()) row["note"] = reference_failure;
    if (against_itself) {
      row["pass"] = nullptr;
      row["note"] = "not applicable: the reference is this solver's own solution";
    } else if (expected_divergence) {
      row["pass"] = nullptr;
      row["note"] = "not gated: the case expects this solver to diverge (expected_divergence)";
    } else {
      row["pass"] = pass;
      passed &= pass;
    }
    metrics.push_back(row);
  }
  if (validation_case.expected_divergence.count(solver)) {
    // A measured divergence (a sweep point where this solver fails): the run passes only if it
    // diverges again; value 1 (> tolerance 0) when it did not.
    passed &= run.diverged;
    metrics.push_back({{"name", "expected_divergence"}, {"type", "expected_divergence"}, {"value", run.diverged ? 0 : 1},
                       {"tolerance", 0}, {"kind", "divergence"}, {"unit", "expected divergence not seen"},
                       {"pass", run.diverged}, {"measured", validation_case.expected_divergence.at(solver)}});
  } else {
    // The metrics count only if the steps they read converged (or reached the round-off floor).
    int unconverged = 0;
    for (const json& step : run.summary["steps"]) {
      const std::string reason = step["stop_reason"].get<std::string>();
      if (reason != "converged" && reason != "roundoff_floor") ++unconverged;
    }
    const std::string last = run.summary["steps"].back()["stop_reason"].get<std::string>();
    // "none": a fixed-budget case (what a solver reaches in N iterations); only divergence fails.
    const std::string& rule = validation_case.converged_steps;
    const bool ok = rule == "all"    ? unconverged == 0
                    : rule == "last" ? (last == "converged" || last == "roundoff_floor")
                                     : !run.diverged;
    passed &= ok;
    metrics.push_back({{"name", "steps_converged"}, {"type", "steps_converged"}, {"value", unconverged},
                       {"tolerance", 0}, {"kind", "convergence"}, {"unit", "steps not converged"}, {"pass", ok},
                       {"measured", rule == "all"    ? "every step must reach its target or the round-off floor"
                                    : rule == "last" ? "the last step must reach its target or the round-off floor"
                                                     : "a fixed iteration budget: no step may diverge"}});
  }
  const int last_step = problem.time.num_steps;
  json result = {{"case", validation_case.name},
                 {"solver", registered},
                 {"run", run_name},
                 // Unique per run of a case: a variant's name, else the solver and any options the case gives it.
                 {"label", variant ? run_name : scene.solver.options.empty() ? registered : registered + " " + scene.solver.options.dump()},
                 {"metrics", metrics},
                 {"passed", passed},
                 {"totals", run.summary["totals"]},
                 {"convergence", convergenceSummary(run.log.rowsOfStep(last_step), {1e-2, 1e-4, 1e-6})}};
  if (!validation_case.series.empty()) result["series"] = validation_case.series;
  if (!profiles.empty()) result["profiles"] = profiles;
  if (!validation_case.sweeps.empty()) {
    result["sweep"] = json::array();
    for (const ValidationCase::SweepPoint& point : validation_case.sweeps)
      result["sweep"].push_back({{"name", point.name}, {"parameter", point.parameter}, {"value", point.value}});
  }
  if (!validation_case.scene_patch.empty()) result["scene_patch"] = validation_case.scene_patch;
  result["convergence"]["step"] = last_step;
  writeFileAtomically((fs::path(run_dir) / "metrics.json").string(), result.dump(2) + "\n");
  return {result, passed, ""};
}

}  // namespace pbdlab
