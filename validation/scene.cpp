#include "validation/scene.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/input_error.hpp"
#include "meshes/mesh_recipe.hpp"
#include "solvers/registry.hpp"

namespace pbdlab {

namespace {

using nlohmann::json;

constexpr double kPi = 3.14159265358979323846;

// JSON pointer escaping of one reference token (RFC 6901): '~' -> "~0", '/' -> "~1".
std::string escapeToken(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string child(const std::string& at, const std::string& key) { return at + "/" + escapeToken(key); }
std::string child(const std::string& at, size_t index) { return at + "/" + std::to_string(index); }

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// What a value is, for "must be X, got Y" messages.
std::string describe(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case json::value_t::string: return "the string " + value.dump();
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return value.dump();
    case json::value_t::number_float: {
      const double d = value.get<double>();
      if (std::isnan(d)) return "NaN";
      if (std::isinf(d)) return d > 0 ? "infinity (a number too large for a double)" : "-infinity";
      return value.dump();
    }
    default: return "a value of another type";
  }
}

// Reads typed values out of the document; every error names `source` and the field.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& at, const std::string& message) const {
    throw InputError(source_, at, message);
  }

  const json& object(const json& value, const std::string& at) const {
    if (!value.is_object()) fail(at, "must be a JSON object, got " + describe(value));
    return value;
  }

  // Rejects every key of `object` outside `known`, suggesting the nearest known key.
  void onlyKeys(const json& object, const std::string& at, std::initializer_list<const char*> known) const {
    for (const auto& item : object.items()) {
      const std::string& key = item.key();
      if (std::any_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) continue;
      std::string message = "unknown key '" + key + "'";
      std::string nearest;
      size_t best = std::numeric_limits<size_t>::max();
      for (const char* k : known) {
        const size_t d = editDistance(key, k);
        if (d < best) best = d, nearest = k;
      }
      if (!nearest.empty() && best <= std::max<size_t>(2, nearest.size() / 4))
        message += " (did you mean '" + nearest + "'?)";
      std::vector<std::string> names(known.begin(), known.end());
      message += "; known keys here: " + joinNames(names);
      fail(child(at, key), message);
    }
  }

  const json& required(const json& object, const char* key, const std::string& at) const {
    auto it = object.find(key);
    if (it == object.end()) fail(child(at, key), "is required but missing");
    return *it;
  }

  // A finite number (JSON accepts 1e999, which parses to infinity: rejected here).
  double number(const json& value, const std::string& at) const {
    if (!value.is_number()) fail(at, "must be a number, got " + describe(value));
    const double d = value.get<double>();
    if (!std::isfinite(d)) fail(at, "must be a finite number, got " + describe(value));
    return d;
  }

  int integer(const json& value, const std::string& at) const {
    if (!value.is_number_integer()) fail(at, "must be an integer, got " + describe(value));
    if (value.is_number_unsigned()) {
      if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
        fail(at, "is too large, got " + value.dump());
    } else {
      const std::int64_t i = value.get<std::int64_t>();
      if (i > std::numeric_limits<int>::max() || i < std::numeric_limits<int>::min())
        fail(at, "is out of range, got " + value.dump());
    }
    return value.get<int>();
  }

  std::string string(const json& value, const std::string& at) const {
    if (!value.is_string()) fail(at, "must be a string, got " + describe(value));
    return value.get<std::string>();
  }

  Vec3 vec3(const json& value, const std::string& at) const {
    if (!value.is_array() || value.size() != 3)
      fail(at, "must be an array of 3 numbers, got " +
                   (value.is_array() ? "an array of " + std::to_string(value.size()) : describe(value)));
    return Vec3(number(value[0], child(at, size_t{0})), number(value[1], child(at, size_t{1})),
                number(value[2], child(at, size_t{2})));
  }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

json toJson(const Vec3& v) { return json::array({v[0], v[1], v[2]}); }

// --- sections --------------------------------------------------------------------------

// The mesh recipe (meshes/mesh_recipe.hpp, docs/meshes.md): its own parser checks every key
// and names the field under "/mesh"; file paths in it are relative to the scene's folder.
MeshRecipe parseMesh(const Reader& in, const json& doc, json& out) {
  const std::string at = "/mesh";
  const json& mesh = in.object(in.required(doc, "mesh", ""), at);
  const std::string base_dir = in.source() == "<inline>" ? std::string()
                                                        : std::filesystem::path(in.source()).parent_path().string();
  MeshRecipe recipe = parseMeshRecipe(mesh, in.source(), at, base_dir);
  out = recipe.canonical;
  return recipe;
}

MaterialSpec parseMaterial(const Reader& in, const json& doc, json& out) {
  const std::string at = "/material";
  const json& material = in.object(in.required(doc, "material", ""), at);
  in.onlyKeys(material, at, {"model", "youngs_modulus", "poisson_ratio", "lame_mapping", "density"});

  MaterialSpec spec;
  const std::string model = in.string(in.required(material, "model", at), at + "/model");
  try {
    spec.model = parseMaterialModel(model);
  } catch (const std::invalid_argument&) {
    in.fail(at + "/model", "unknown material model '" + model + "' (known: " + joinNames(materialModelNames()) + ")");
  }

  spec.youngs_modulus = in.number(in.required(material, "youngs_modulus", at), at + "/youngs_modulus");
  if (!(spec.youngs_modulus > 0.0))
    in.fail(at + "/youngs_modulus", "Young's modulus must be > 0 (Pa), got " + material["youngs_modulus"].dump());
  spec.poisson_ratio = in.number(in.required(material, "poisson_ratio", at), at + "/poisson_ratio");
  if (!(spec.poisson_ratio > -1.0 && spec.poisson_ratio < 0.5))
    in.fail(at + "/poisson_ratio",
            "Poisson's ratio must lie strictly between -1 and 0.5 (0.5 is exactly incompressible, which these "
            "models cannot represent), got " + material["poisson_ratio"].dump());

  if (material.contains("lame_mapping")) {
    const std::string mapping = in.string(material["lame_mapping"], at + "/lame_mapping");
    try {
      spec.mapping = parseLameMapping(mapping);
    } catch (const std::invalid_argument&) {
      in.fail(at + "/lame_mapping", "unknown Lame mapping '" + mapping + "' (known: raw, matched)");
    }
  }
  // The range of the density is checked by Problem::finalize (field /material/density).
  if (material.contains("density")) spec.density = in.number(material["density"], at + "/density");

  out = {{"model", materialModelName(spec.model)},
         {"youngs_modulus", spec.youngs_modulus},
         {"poisson_ratio", spec.poisson_ratio},
         {"lame_mapping", lameMappingName(spec.mapping)},
         {"density", spec.density}};
  return spec;
}

TimeStepping parseTime(const Reader& in, const json& doc, json& out) {
  const std::string at = "/time";
  const json& time = in.object(in.required(doc, "time", ""), at);
  in.onlyKeys(time, at, {"integrator", "dt", "steps"});
  TimeStepping stepping;
  const std::string integrator =
      time.contains("integrator") ? in.string(time["integrator"], at + "/integrator") : "quasistatic";
  if (integrator == "quasistatic") stepping.integrator = Integrator::kQuasistatic;
  else if (integrator == "backward_euler") stepping.integrator = Integrator::kBackwardEuler;
  else in.fail(at + "/integrator", "unknown integrator '" + integrator + "' (known: quasistatic, backward_euler)");
  // Ranges (dt > 0, steps >= 1) are checked by Problem::finalize with these same fields.
  stepping.dt = in.number(in.required(time, "dt", at), at + "/dt");
  stepping.num_steps = in.integer(in.required(time, "steps", at), at + "/steps");
  out = {{"integrator", integratorName(stepping.integrator)}, {"dt", stepping.dt}, {"steps", stepping.num_steps}};
  return stepping;
}

// "discretization": quadrature degree (0 = the element type's stiffness degree) and mass
// lumping ("equal_share", PXPBD eq. 50, or "hrz").
Discretization parseDiscretization(const Reader& in, const json& doc, json& out) {
  const std::string at = "/discretization";
  Discretization discretization;
  if (doc.contains("discretization")) {
    const json& value = in.object(doc["discretization"], at);
    in.onlyKeys(value, at, {"quadrature_degree", "mass_lumping"});
    if (value.contains("quadrature_degree")) {
      discretization.quadrature_degree = in.integer(value["quadrature_degree"], at + "/quadrature_degree");
      if (discretization.quadrature_degree < 0)
        in.fail(at + "/quadrature_degree", "must be >= 1 (or 0 for the element type's default)");
    }
    if (value.contains("mass_lumping")) {
      try {
        discretization.mass_lumping = parseMassLumping(in.string(value["mass_lumping"], at + "/mass_lumping"));
      } catch (const std::invalid_argument& error) {
        in.fail(at + "/mass_lumping", error.what());
      }
    }
  }
  out = {{"quadrature_degree", discretization.quadrature_degree},
         {"mass_lumping", massLumpingName(discretization.mass_lumping)}};
  return discretization;
}

MotionStage parseStage(const Reader& in, const json& value, const std::string& at, double run_end, json& out) {
  const json& stage_json = in.object(value, at);
  const std::string type = in.string(in.required(stage_json, "type", at), at + "/type");
  MotionStage stage;
  if (type == "fixed") {
    in.onlyKeys(stage_json, at, {"type", "t_start", "t_end"});
    stage.kind = MotionStage::Kind::kFixed;
  } else if (type == "translate") {
    in.onlyKeys(stage_json, at, {"type", "by", "t_start", "t_end"});
    stage.kind = MotionStage::Kind::kTranslate;
    stage.translation = in.vec3(in.required(stage_json, "by", at), at + "/by");
  } else if (type == "rotate") {
    in.onlyKeys(stage_json, at, {"type", "axis_point", "axis_direction", "angle_degrees", "t_start", "t_end"});
    stage.kind = MotionStage::Kind::kRotate;
    stage.axis_point = in.vec3(in.required(stage_json, "axis_point", at), at + "/axis_point");
    stage.axis_direction = in.vec3(in.required(stage_json, "axis_direction", at), at + "/axis_direction");
    // A zero axis_direction is rejected by Problem::finalize (field .../axis_direction).
    stage.angle = in.number(in.required(stage_json, "angle_degrees", at), at + "/angle_degrees") * kPi / 180.0;
  } else {
    in.fail(at + "/type", "unknown motion type '" + type + "' (known: fixed, translate, rotate)");
  }
  stage.t_start = stage_json.contains("t_start") ? in.number(stage_json["t_start"], at + "/t_start") : 0.0;
  stage.t_end = stage_json.contains("t_end") ? in.number(stage_json["t_end"], at + "/t_end")
                                             : std::max(run_end, stage.t_start);
  if (stage.t_end < stage.t_start)
    in.fail(at + "/t_end", "must be >= t_start (" + json(stage.t_start).dump() + ")");

  out = {{"type", type}, {"t_start", stage.t_start}, {"t_end", stage.t_end}};
  if (stage.kind == MotionStage::Kind::kTranslate) out["by"] = toJson(stage.translation);
  if (stage.kind == MotionStage::Kind::kRotate) {
    out["axis_point"] = toJson(stage.axis_point);
    out["axis_direction"] = toJson(stage.axis_direction);
    out["angle_degrees"] = stage_json["angle_degrees"].get<double>();
  }
  return stage;
}

std::vector<DirichletCondition> parseDirichlet(const Reader& in, const json& doc, double run_end, json& out) {
  const std::string at = "/dirichlet";
  std::vector<DirichletCondition> conditions;
  out = json::array();
  if (!doc.contains("dirichlet")) return conditions;
  const json& list = doc["dirichlet"];
  if (!list.is_array()) in.fail(at, "must be an array of Dirichlet conditions, got " + describe(list));
  for (size_t c = 0; c < list.size(); ++c) {
    const std::string here = child(at, c);
    const json& entry = in.object(list[c], here);
    in.onlyKeys(entry, here, {"node_set", "components", "motion"});
    DirichletCondition condition;
    // Whether the set exists in the mesh is checked by Problem::finalize (field .../node_set).
    condition.node_set = in.string(in.required(entry, "node_set", here), here + "/node_set");

    std::string components = "xyz";
    if (entry.contains("components")) {
      components = in.string(entry["components"], here + "/components");
      if (components.empty()) in.fail(here + "/components", "must name at least one of x, y, z");
      condition.components = {false, false, false};
      for (char c : components) {
        const size_t k = std::string("xyz").find(c);
        if (k == std::string::npos)
          in.fail(here + "/components", "must be a non-empty subset of \"xyz\", got \"" + components + "\"");
        if (condition.components[k])
          in.fail(here + "/components", "names '" + std::string(1, c) + "' twice in \"" + components + "\"");
        condition.components[k] = true;
      }
      components.clear();
      for (int k = 0; k < 3; ++k)
        if (condition.components[k]) components += "xyz"[k];
    }

    json motion_out = json::array();
    if (entry.contains("motion")) {
      const json& motion = entry["motion"];
      if (!motion.is_array()) in.fail(here + "/motion", "must be an array of motion stages, got " + describe(motion));
      for (size_t s = 0; s < motion.size(); ++s) {
        json stage_out;
        condition.motion.stages.push_back(parseStage(in, motion[s], child(here + "/motion", s), run_end, stage_out));
        motion_out.push_back(std::move(stage_out));
      }
    }
    out.push_back({{"node_set", condition.node_set}, {"components", components}, {"motion", motion_out}});
    conditions.push_back(std::move(condition));
  }
  return conditions;
}

SolverSpec parseSolver(const Reader& in, const json& doc, json& out) {
  const std::string at = "/solver";
  SolverSpec spec;
  const json empty = json::object();
  const json& solver = doc.contains("solver") ? in.object(doc["solver"], at) : empty;
  in.onlyKeys(solver, at,
              {"name", "max_iterations", "max_seconds", "target_relative_residual", "absolute_residual_floor",
               "options"});
  if (solver.contains("name")) spec.name = in.string(solver["name"], at + "/name");
  if (solver.contains("options")) spec.options = in.object(solver["options"], at + "/options");

  Budget& budget = spec.budget;
  if (solver.contains("max_iterations")) {
    budget.max_iterations = in.integer(solver["max_iterations"], at + "/max_iterations");
    if (budget.max_iterations < 1) in.fail(at + "/max_iterations", "must be >= 1");
  }
  if (solver.contains("max_seconds") && !solver["max_seconds"].is_null()) {
    budget.max_seconds = in.number(solver["max_seconds"], at + "/max_seconds");
    if (!(budget.max_seconds > 0.0)) in.fail(at + "/max_seconds", "must be > 0 (or null for no limit)");
  }
  if (solver.contains("target_relative_residual")) {
    budget.target_relative_residual = in.number(solver["target_relative_residual"], at + "/target_relative_residual");
    if (budget.target_relative_residual < 0.0) in.fail(at + "/target_relative_residual", "must be >= 0");
  }
  if (solver.contains("absolute_residual_floor")) {
    budget.absolute_residual_floor = in.number(solver["absolute_residual_floor"], at + "/absolute_residual_floor");
    if (budget.absolute_residual_floor < 0.0) in.fail(at + "/absolute_residual_floor", "must be >= 0");
  }

  // Validates the name and the options; the runner builds its own instance.
  makeSolver(spec.name, spec.options, in.source(), at + "/options");

  out = {{"name", spec.name},
         {"max_iterations", budget.max_iterations},
         {"max_seconds", std::isfinite(budget.max_seconds) ? json(budget.max_seconds) : json(nullptr)},
         {"target_relative_residual", budget.target_relative_residual},
         {"absolute_residual_floor", budget.absolute_residual_floor},
         {"options", spec.options}};
  return spec;
}

OutputSpec parseOutput(const Reader& in, const json& doc, json& out) {
  const std::string at = "/output";
  OutputSpec spec;
  const json empty = json::object();
  const json& output = doc.contains("output") ? in.object(doc["output"], at) : empty;
  in.onlyKeys(output, at, {"vtu", "probes"});
  std::string vtu = "final";
  if (output.contains("vtu")) {
    vtu = in.string(output["vtu"], at + "/vtu");
    if (vtu == "none") spec.vtu = OutputSpec::Frames::kNone;
    else if (vtu == "final") spec.vtu = OutputSpec::Frames::kFinal;
    else if (vtu == "every_step") spec.vtu = OutputSpec::Frames::kEveryStep;
    else in.fail(at + "/vtu", "unknown value '" + vtu + "' (known: none, final, every_step)");
  }
  json probes = json::object();
  if (output.contains("probes")) {
    const json& value = in.object(output["probes"], at + "/probes");
    for (const auto& [name, point] : value.items()) {
      spec.probes.push_back({name, in.vec3(point, at + "/probes/" + name)});
      probes[name] = toJson(spec.probes.back().point);
    }
  }
  out = {{"vtu", vtu}, {"probes", probes}};
  return spec;
}

// Follows the parse to know the JSON pointer of the value being read: nlohmann keeps the last
// of two equal keys silently (rejected here, naming the duplicate), and reports a number too
// large for a double (1e999) without saying where (currentPointer() says it).
class ParseTracker {
 public:
  explicit ParseTracker(std::string source) : source_(std::move(source)) {}

  bool onEvent(json::parse_event_t event, const json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: frames_.push_back(frame(false)); break;
      case json::parse_event_t::array_start: frames_.push_back(frame(true)); break;
      case json::parse_event_t::key: {
        Frame& top = frames_.back();
        top.key = parsed.get<std::string>();
        if (!top.keys.insert(top.key).second)
          throw InputError(source_, currentPointer(), "duplicate key '" + top.key + "' (JSON keeps only one of them)");
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames_.pop_back();
        elementDone();
        break;
      case json::parse_event_t::value: elementDone(); break;
    }
    return true;
  }

  // The pointer of the value being parsed now (of the last key read, or the next array slot).
  std::string currentPointer() const {
    std::string out;
    for (const Frame& frame : frames_) out = frame.is_array ? child(out, frame.index) : child(out, frame.key);
    return out.empty() ? "(root)" : out;
  }

 private:
  struct Frame {
    bool is_array = false;
    size_t index = 0;
    std::string key;
    std::set<std::string> keys;
  };

  static Frame frame(bool is_array) {
    Frame f;
    f.is_array = is_array;
    return f;
  }

  void elementDone() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
  }

  std::string source_;
  std::vector<Frame> frames_;
};

}  // namespace

Scene parseScene(const nlohmann::json& document, const std::string& source) {
  const Reader in(source);
  if (!document.is_object()) in.fail("(root)", "a scene must be a JSON object, got " + describe(document));
  in.onlyKeys(document, "",
              {"name", "description", "mesh", "material", "discretization", "gravity", "dirichlet", "time", "solver",
               "output"});

  Scene scene;
  scene.path = source;
  json resolved = json::object();

  if (document.contains("name")) {
    scene.name = in.string(document["name"], "/name");
    if (scene.name.empty()) in.fail("/name", "must not be empty");
    if (scene.name.find_first_of("/\\") != std::string::npos)
      in.fail("/name", "must not contain '/' or '\\' (it names output files)");
  } else {
    scene.name = std::filesystem::path(source).stem().string();
    if (scene.name.empty()) scene.name = "scene";
  }
  resolved["name"] = scene.name;
  if (document.contains("description"))
    resolved["description"] = in.string(document["description"], "/description");

  const MeshRecipe recipe = parseMesh(in, document, resolved["mesh"]);
  scene.problem.material = parseMaterial(in, document, resolved["material"]);
  scene.problem.discretization = parseDiscretization(in, document, resolved["discretization"]);
  scene.problem.gravity = document.contains("gravity") ? in.vec3(document["gravity"], "/gravity") : Vec3::Zero();
  resolved["gravity"] = toJson(scene.problem.gravity);
  scene.problem.time = parseTime(in, document, resolved["time"]);
  const double run_end = scene.problem.time.dt * scene.problem.time.num_steps;
  scene.problem.dirichlet = parseDirichlet(in, document, run_end, resolved["dirichlet"]);
  scene.solver = parseSolver(in, document, resolved["solver"]);
  scene.output = parseOutput(in, document, resolved["output"]);

  try {
    // Through the mesh cache (PBDLAB_CACHE_DIR, docs/meshes.md): a repeated run does not re-mesh.
    scene.problem.mesh = loadOrMakeMesh(recipe, MeshCache::fromEnvironment()).mesh;
  } catch (const std::invalid_argument& error) {
    in.fail("/mesh", error.what());
  }
  scene.problem.finalize(source);
  scene.resolved = std::move(resolved);
  return scene;
}

Scene loadScene(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::error_code ec;
  if (!file || std::filesystem::is_directory(path, ec)) {
    const std::string reason = std::filesystem::is_directory(path, ec) ? "is a directory" : std::strerror(errno);
    throw InputError(path, "(file)", "cannot open (" + reason + ")");
  }
  std::stringstream text;
  text << file.rdbuf();
  if (file.bad()) throw InputError(path, "(file)", "cannot read");

  nlohmann::json document;
  ParseTracker tracker(path);
  try {
    document = nlohmann::json::parse(
        text.str(), [&tracker](int, json::parse_event_t event, json& parsed) { return tracker.onEvent(event, parsed); });
  } catch (const nlohmann::json::parse_error& error) {
    throw InputError(path, "(file)", std::string("not valid JSON: ") + error.what());
  } catch (const nlohmann::json::out_of_range& error) {
    // 406: a number beyond the range of a double, such as 1e999 (it would be infinite).
    throw InputError(path, tracker.currentPointer(),
                     std::string("must be a finite number (") + error.what() + ")");
  }
  return parseScene(document, path);
}

}  // namespace pbdlab
