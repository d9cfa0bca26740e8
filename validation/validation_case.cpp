#include "validation/validation_case.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/atomic_file.hpp"
#include "core/field_sampling.hpp"
#include "core/input_error.hpp"
#include "solvers/registry.hpp"

namespace pbdlab {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const json& required(const json& object, const std::string& key, const std::string& file, const std::string& at) {
  if (!object.contains(key)) throw InputError(file, at + "/" + key, "is required");
  return object.at(key);
}

std::string stringField(const json& value, const std::string& file, const std::string& at) {
  if (!value.is_string()) throw InputError(file, at, "must be a string");
  return value.get<std::string>();
}

double numberField(const json& value, const std::string& file, const std::string& at) {
  if (!value.is_number() || !std::isfinite(value.get<double>())) throw InputError(file, at, "must be a finite number");
  return value.get<double>();
}

MetricSpec parseMetric(const json& value, const std::string& file, const std::string& at) {
  if (!value.is_object()) throw InputError(file, at, "must be an object");
  static const std::vector<std::string> kKeys = {"name", "type", "probe", "component", "expected",
                                                 "relative", "tolerance", "measured", "reference_scene",
                                                 "axis_point", "radius", "sections"};
  for (const auto& [key, unused] : value.items())
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
      throw InputError(file, at + "/" + key, "unknown key of a metric");
  MetricSpec metric;
  metric.name = stringField(required(value, "name", file, at), file, at + "/name");
  metric.type = stringField(required(value, "type", file, at), file, at + "/type");
  static const std::vector<std::string> kTypes = {"probe_error",         "final_relative_residual",
                                                  "volume_ratio_error",  "reference_max_error",
                                                  "reference_rms_error", "mesh_reference_max_error",
                                                  "mesh_reference_l2_error", "torsion_angle_deviation"};
  if (std::find(kTypes.begin(), kTypes.end(), metric.type) == kTypes.end())
    throw InputError(file, at + "/type",
                     "unknown metric type '" + metric.type +
                         "' (known: probe_error, final_relative_residual, volume_ratio_error, reference_max_error, "
                         "reference_rms_error, mesh_reference_max_error, mesh_reference_l2_error, "
                         "torsion_angle_deviation)");
  metric.tolerance = numberField(required(value, "tolerance", file, at), file, at + "/tolerance");
  metric.measured = stringField(required(value, "measured", file, at), file, at + "/measured");
  if (value.contains("expected")) metric.expected = numberField(value["expected"], file, at + "/expected");
  if (value.contains("relative")) {
    if (!value["relative"].is_boolean()) throw InputError(file, at + "/relative", "must be true or false");
    metric.relative = value["relative"].get<bool>();
  }
  if (metric.type == "probe_error") {
    metric.probe = stringField(required(value, "probe", file, at), file, at + "/probe");
    if (!metric.expected) throw InputError(file, at + "/expected", "is required for a probe_error metric");
    if (metric.relative && *metric.expected == 0.0)
      throw InputError(file, at + "/expected", "is 0: a relative error needs a non-zero expected value");
    if (value.contains("component")) {
      if (!value["component"].is_number_integer() || value["component"].get<int>() < -1 ||
          value["component"].get<int>() > 2)
        throw InputError(file, at + "/component", "must be 0, 1, 2 or -1 (the norm)");
      metric.component = value["component"].get<int>();
    }
  }
  if (metric.type == "torsion_angle_deviation") {
    const json& point = required(value, "axis_point", file, at);
    if (!point.is_array() || point.size() != 3) throw InputError(file, at + "/axis_point", "must be 3 numbers");
    for (int k = 0; k < 3; ++k) metric.axis_point[k] = numberField(point[k], file, at + "/axis_point/" + std::to_string(k));
    metric.radius = numberField(required(value, "radius", file, at), file, at + "/radius");
    if (!(metric.radius > 0)) throw InputError(file, at + "/radius", "must be > 0");
    const json& sections = required(value, "sections", file, at);
    if (!sections.is_number_integer() || sections.get<int>() < 3)
      throw InputError(file, at + "/sections", "must be an integer >= 3");
    metric.sections = sections.get<int>();
  }
  if (metric.type.rfind("mesh_reference_", 0) == 0) {
    metric.reference_scene = (fs::path(file).parent_path() /
                              stringField(required(value, "reference_scene", file, at), file, at + "/reference_scene"))
                                 .lexically_normal()
                                 .string();
    if (!fs::exists(metric.reference_scene))
      throw InputError(file, at + "/reference_scene", "no such scene file: " + metric.reference_scene);
  }
  return metric;
}

double deformedVolume(const Problem& problem, const Positions& x) {
  const ElasticEnergy& elastic = problem.elasticEnergy();
  double volume = 0.0;
  for (int e = 0; e < elastic.numElements(); ++e)
    for (int q = 0; q < elastic.quadraturePointsPerElement(); ++q)
      volume += elastic.quadratureVolume(e, q) * elastic.deformationGradient(e, q, x).determinant();
  return volume;
}

// The Newton solution of the case's scene, computed once into reference_dir.
Positions referenceSolution(const ValidationCase& validation_case, const Scene& scene, const std::string& reference_dir) {
  const fs::path cached = fs::path(reference_dir) / "final_positions.json";
  if (fs::exists(cached)) {
    std::ifstream in(cached);
    const json values = json::parse(in, nullptr, false);
    if (values.is_array() && static_cast<int>(values.size()) == scene.problem.numDofs()) {
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
  const RunResult result = runScene(reference, {reference_dir, false});
  if (!result.all_steps_converged)
    throw std::runtime_error("the Newton reference of case " + validation_case.name + " did not converge");
  json values = json::array();
  for (int k = 0; k < result.final_positions.size(); ++k) values.push_back(result.final_positions[k]);
  writeFileAtomically(cached.string(), values.dump() + "\n");
  return result.final_positions;
}

}  // namespace

// Rotation angle about the x axis of each section's probe point (unwrapped along x, starting
// from the x-min section), minus the straight line between the two end sections.
double torsionAngleDeviationDegrees(const Mesh& mesh, const VecX& displacement, const MetricSpec& metric) {
  const double x_min = mesh.rest_positions.col(0).minCoeff(), x_max = mesh.rest_positions.col(0).maxCoeff();
  const FieldSampler sampler(mesh);
  std::vector<double> angles;
  for (int k = 0; k < metric.sections; ++k) {
    const double x = x_min + (x_max - x_min) * k / (metric.sections - 1);
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
  double deviation = 0.0;
  for (int k = 0; k < metric.sections; ++k) {
    const double linear = angles.front() + (angles.back() - angles.front()) * k / (metric.sections - 1);
    deviation = std::max(deviation, std::abs(angles[k] - linear));
  }
  return deviation * 180.0 / M_PI;
}

ValidationCase loadValidationCase(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "(file)", "cannot open");
  const json document = json::parse(in, nullptr, false);
  if (document.is_discarded() || !document.is_object()) throw InputError(path, "(file)", "is not a JSON object");
  static const std::vector<std::string> kKeys = {"name", "description", "series", "label", "scene", "solvers",
                                                 "solver_options", "metrics"};
  for (const auto& [key, unused] : document.items())
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
      throw InputError(path, "/" + key, "unknown key of a validation case");
  ValidationCase c;
  c.path = path;
  c.name = stringField(required(document, "name", path, ""), path, "/name");
  if (document.contains("description")) c.description = stringField(document["description"], path, "/description");
  if (document.contains("series")) {
    c.series = stringField(document["series"], path, "/series");
    if (c.series.empty()) throw InputError(path, "/series", "must be a non-empty string");
  }
  if (document.contains("label")) {
    c.label = stringField(document["label"], path, "/label");
    if (c.label != "fast" && c.label != "full") throw InputError(path, "/label", "must be \"fast\" or \"full\"");
  }
  c.scene_path = (fs::path(path).parent_path() / stringField(required(document, "scene", path, ""), path, "/scene"))
                     .lexically_normal()
                     .string();
  if (document.contains("solvers")) {
    if (!document["solvers"].is_array()) throw InputError(path, "/solvers", "must be an array of solver names");
    const std::vector<std::string> known = solverNames();
    for (size_t k = 0; k < document["solvers"].size(); ++k) {
      const std::string name = stringField(document["solvers"][k], path, "/solvers/" + std::to_string(k));
      if (std::find(known.begin(), known.end(), name) == known.end())
        throw InputError(path, "/solvers/" + std::to_string(k), "unknown solver '" + name + "'");
      c.solvers.push_back(name);
    }
  } else {
    c.solvers = solverNames();
  }
  if (document.contains("solver_options")) {
    if (!document["solver_options"].is_object()) throw InputError(path, "/solver_options", "must be an object");
    c.solver_options = document["solver_options"];
  }
  const json& metrics = required(document, "metrics", path, "");
  if (!metrics.is_array() || metrics.empty()) throw InputError(path, "/metrics", "must be a non-empty array");
  for (size_t k = 0; k < metrics.size(); ++k) c.metrics.push_back(parseMetric(metrics[k], path, "/metrics/" + std::to_string(k)));
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
  Scene scene = loadScene(validation_case.scene_path);
  if (max_iterations > 0) {
    scene.solver.budget.max_iterations = max_iterations;
    scene.resolved["solver"]["max_iterations"] = max_iterations;
  }
  scene.solver.name = solver;
  scene.solver.options = validation_case.solver_options.contains(solver) ? validation_case.solver_options[solver]
                                                                         : json::object();
  makeSolver(solver, scene.solver.options, validation_case.path, "/solver_options/" + solver);  // validate
  scene.resolved["solver"]["name"] = solver;
  scene.resolved["solver"]["options"] = scene.solver.options;
  const RunResult run = runScene(scene, {run_dir, progress});
  const Problem& problem = scene.problem;
  const Positions& x = run.final_positions;
  const VecX displacement = x - problem.mesh.restPositionsFlat();

  std::optional<Positions> reference;
  json metrics = json::array();
  bool passed = true;
  for (const MetricSpec& metric : validation_case.metrics) {
    double value = NAN;
    std::string unit = metric.relative ? "relative" : "absolute";
    if (metric.type == "probe_error") {
      auto probe = std::find_if(scene.output.probes.begin(), scene.output.probes.end(),
                                [&](const OutputSpec::Probe& p) { return p.name == metric.probe; });
      if (probe == scene.output.probes.end())
        throw InputError(validation_case.path, "/metrics", "probe '" + metric.probe + "' is not in the scene's output.probes");
      const Vec3 u = FieldSampler(problem.mesh).sample(displacement, probe->point);
      const double measured = metric.component < 0 ? u.norm() : u[metric.component];
      value = std::abs(measured - *metric.expected);
      if (metric.relative) value /= std::abs(*metric.expected);
    } else if (metric.type == "final_relative_residual") {
      value = run.summary["steps"].back()["relative_residual"].get<double>();
      unit = "relative residual";
    } else if (metric.type == "volume_ratio_error") {
      const double ratio = deformedVolume(problem, x) / deformedVolume(problem, problem.mesh.restPositionsFlat());
      value = std::abs(ratio - metric.expected.value_or(1.0));
    } else if (metric.type == "torsion_angle_deviation") {
      value = torsionAngleDeviationDegrees(problem.mesh, displacement, metric);
      unit = "degrees";
    } else if (metric.type.rfind("mesh_reference_", 0) == 0) {
      const Scene reference_scene = loadScene(metric.reference_scene);
      const std::string folder =
          (fs::path(reference_dir).parent_path() / ("scene_" + reference_scene.name)).string();
      const Positions x_ref = referenceSolution(validation_case, reference_scene, folder);
      const Mesh& reference_mesh = reference_scene.problem.mesh;
      const VecX u_ref = x_ref - reference_mesh.restPositionsFlat();
      const VecX volumes = lumpedNodeMasses(reference_mesh, std::vector<double>(reference_mesh.numElements(), 1.0));
      const FieldSampler sampler(problem.mesh);
      double max_error = 0.0, weighted = 0.0, total_volume = 0.0, max_reference = 0.0;
      for (int i = 0; i < reference_mesh.numNodes(); ++i) {
        const Vec3 u_ref_i = u_ref.segment<3>(3 * i);
        const double e = (sampler.sample(displacement, reference_mesh.restPosition(i)) - u_ref_i).norm();
        max_error = std::max(max_error, e);
        weighted += volumes[i] * e * e;
        total_volume += volumes[i];
        max_reference = std::max(max_reference, u_ref_i.norm());
      }
      value = metric.type == "mesh_reference_max_error" ? max_error : std::sqrt(weighted / total_volume);
      if (metric.relative && max_reference > 0.0) value /= max_reference;
    } else {  // reference_max_error, reference_rms_error
      if (!reference) reference = referenceSolution(validation_case, scene, reference_dir);
      const VecX difference = x - *reference;
      const VecX reference_displacement = *reference - problem.mesh.restPositionsFlat();
      double max_difference = 0.0, sum = 0.0, max_reference = 0.0;
      for (int i = 0; i < problem.numNodes(); ++i) {
        const double d = difference.segment<3>(3 * i).norm();
        max_difference = std::max(max_difference, d);
        sum += d * d;
        max_reference = std::max(max_reference, reference_displacement.segment<3>(3 * i).norm());
      }
      value = metric.type == "reference_max_error" ? max_difference : std::sqrt(sum / problem.numNodes());
      if (metric.relative && max_reference > 0.0) value /= max_reference;
    }
    const bool pass = std::isfinite(value) && value <= metric.tolerance;
    passed &= pass;
    metrics.push_back({{"name", metric.name}, {"type", metric.type}, {"value", value}, {"tolerance", metric.tolerance},
                       {"kind", "accuracy"}, {"unit", unit}, {"pass", pass}, {"measured", metric.measured}});
  }
  const int last_step = problem.time.num_steps;
  json result = {{"case", validation_case.name},
                 {"solver", solver},
                 // Unique per run of a case: the solver and any options the case gives it.
                 {"label", scene.solver.options.empty() ? solver : solver + " " + scene.solver.options.dump()},
                 {"metrics", metrics},
                 {"passed", passed},
                 {"totals", run.summary["totals"]},
                 {"convergence", convergenceSummary(run.log.rowsOfStep(last_step), {1e-2, 1e-4, 1e-6})}};
  if (!validation_case.series.empty()) result["series"] = validation_case.series;
  result["convergence"]["step"] = last_step;
  writeFileAtomically((fs::path(run_dir) / "metrics.json").string(), result.dump(2) + "\n");
  return {result, passed};
}

}  // namespace pbdlab
