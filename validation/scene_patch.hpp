#pragma once
// A variant of a scene file without a copy of it: "scene_patch", an object of JSON pointers
// (RFC 6901) into the scene file and the values that replace them, applied before the scene
// is validated and resolved (so `resolved`, and the key of a cached Newton reference, are
// those of the patched scene). Validation cases and benchmark tables read it the same way.
#include <string>

#include <nlohmann/json.hpp>

#include "core/support/json_reader.hpp"
#include "validation/scene.hpp"

namespace pbdlab {

// Checks `value` (at `field` of the file `in` reads) against the scene file: a non-empty
// object whose every pointer names a value the scene file gives, each replaced by a value of
// the same JSON type (an integer stays an integer), so a typo cannot silently add a field.
// Returns the patch. Throws InputError naming in's file and field/<pointer>.
nlohmann::json readScenePatch(const JsonReader& in, const nlohmann::json& value, const std::string& field,
                              const std::string& scene_path);

// The scene at `scene_path` with `patch` applied (an empty patch: the scene as it is). Relative
// paths in the scene resolve as for the scene itself. A patched value the scene rejects is an
// InputError of `source` at field/<pointer>.
Scene loadPatchedScene(const std::string& scene_path, const nlohmann::json& patch, const std::string& source,
                       const std::string& field);

// Runs `scene` with solver `name` and its `options` (validated by the registry, errors at
// `source` and `field`), recorded in scene.resolved.
void useSolver(Scene& scene, const std::string& name, const nlohmann::json& options, const std::string& source,
               const std::string& field);

}  // namespace pbdlab
