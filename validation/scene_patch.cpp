#include "validation/scene_patch.hpp"

#include <filesystem>

#include "core/support/input_error.hpp"
#include "solvers/registry.hpp"

namespace pbdlab {

namespace {

using nlohmann::json;

// What a JSON value is, for "a patch keeps the type" messages.
std::string jsonKind(const json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return "null";
}

// Whether `document` has a value at `pointer` (false where the pointer walks through a value of
// another kind, e.g. a key into an array).
bool hasValueAt(const json& document, const json::json_pointer& pointer) {
  try {
    return document.contains(pointer);
  } catch (const json::exception&) {
    return false;
  }
}

}  // namespace

json readScenePatch(const JsonReader& in, const json& value, const std::string& field, const std::string& scene_path) {
  const json& patch = in.object(value, field);
  if (patch.empty()) in.fail(field, "must not be empty (leave it out to run the scene as it is)");
  std::error_code ec;  // the non-throwing form: a name too long is "no such file", not an internal error
  if (!std::filesystem::is_regular_file(scene_path, ec))
    in.fail(field, "no such scene file: " + scene_path + " (the patch patches it)");
  const json scene = readJsonFile(scene_path);
  for (const auto& [pointer, replacement] : patch.items()) {
    const std::string at = jsonPointerChild(field, pointer);
    if (pointer.empty()) in.fail(at, "the empty pointer names the whole scene: patch its values one by one");
    json::json_pointer target;
    try {
      target = json::json_pointer(pointer);
    } catch (const json::exception&) {
      in.fail(at, "'" + pointer + "' is not a JSON pointer (RFC 6901, e.g. \"/material/poisson_ratio\")");
    }
    if (!hasValueAt(scene, target))
      in.fail(at, "the scene " + scene_path + " has no value at '" + pointer +
                      "' (a patch replaces a value the scene file gives)");
    const json& original = scene.at(target);
    const bool same_kind = (original.is_number() && replacement.is_number()) || original.type() == replacement.type();
    if (!same_kind || (original.is_number_integer() && !replacement.is_number_integer()))
      in.fail(at, "must be " + jsonKind(original) + " like the scene's value " + original.dump() + " at '" + pointer +
                      "', got " + describeJson(replacement));
  }
  return patch;
}

Scene loadPatchedScene(const std::string& scene_path, const json& patch, const std::string& source,
                       const std::string& field) {
  if (patch.empty()) return loadScene(scene_path);
  json document = readJsonFile(scene_path);
  for (const auto& [pointer, value] : patch.items()) {
    const json::json_pointer target(pointer);
    if (!hasValueAt(document, target))  // checked when the patch was read: the scene file changed since
      throw InputError(source, jsonPointerChild(field, pointer), "the scene " + scene_path + " has no value at '" + pointer + "'");
    document[target] = value;
  }
  try {
    return parseScene(document, scene_path);
  } catch (const InputError& error) {
    // A patched value the scene rejects (poisson_ratio 0.5) is the patch's error, at its field.
    for (const auto& [pointer, value] : patch.items())
      if (error.field() == pointer || error.field().rfind(pointer + "/", 0) == 0)
        throw InputError(source, jsonPointerChild(field, pointer),
                         "the scene rejects the patched value " + value.dump() + ": " + error.what());
    throw InputError(source, field, std::string("the scene with the patch applied is invalid: ") + error.what());
  }
}

void useSolver(Scene& scene, const std::string& name, const json& options, const std::string& source,
               const std::string& field) {
  makeSolver(name, options, source, field);  // validates the name and the options
  scene.solver.name = name;
  scene.solver.options = options;
  scene.resolved["solver"]["name"] = name;
  scene.resolved["solver"]["options"] = options;
}

}  // namespace pbdlab
