// Scene files (validation/scene.hpp parseScene): every field checked, the mesh made (through
// a mesh cache in a temporary folder, so a recipe meets Gmsh once), the problem built. Inputs
// whose mesh is not a small box or bunny surface are skipped (fuzz_mesh_recipe checks those
// recipes; making large meshes would only slow the fuzzer down).
#include <cstdlib>

#include "core/support/json_reader.hpp"
#include "fuzz/fuzz_common.hpp"
#include "meshes/mesh_recipe.hpp"
#include "validation/scene.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::string cache = (pbdlab::fuzz::scratch() / "cache").string();
  ::setenv("PBDLAB_CACHE_DIR", cache.c_str(), 1);
  ::setenv("OMP_NUM_THREADS", "1", 0);
  return 0;
}

namespace {

// Whether a recipe is small and made without Gmsh's slow paths.
bool smallRecipe(const nlohmann::json& recipe) {
  try {
    const pbdlab::MeshRecipe r = pbdlab::parseMeshRecipe(recipe, "<fuzz>", "/mesh", "");
    switch (r.kind) {
      case pbdlab::MeshRecipe::Kind::kBox:
        return r.box.family != pbdlab::BoxFamily::kUnstructured &&
               static_cast<long long>(r.box.cells[0]) * r.box.cells[1] * r.box.cells[2] <= 16;
      case pbdlab::MeshRecipe::Kind::kResBox: return r.nodes_per_side <= 3;
      case pbdlab::MeshRecipe::Kind::kRectangle: return r.rectangle.target_size == 0.0 && r.rectangle.cells[0] * r.rectangle.cells[1] <= 16;
      case pbdlab::MeshRecipe::Kind::kBunnySurface: return r.subdivisions <= 1;
      default: return false;
    }
  } catch (const pbdlab::InputError&) {
    return true;  // parseScene reports it
  }
}

// Whether every mesh of the scene (top-level or per body, at most 4 bodies) is small.
bool smallMesh(const nlohmann::json& document) {
  if (!document.is_object()) return true;  // parseScene says what is wrong
  if (document.contains("mesh") && !smallRecipe(document["mesh"])) return false;
  if (document.contains("bodies") && document["bodies"].is_array()) {
    if (document["bodies"].size() > 4) return false;
    for (const nlohmann::json& body : document["bodies"])
      if (body.is_object() && body.contains("mesh") && !smallRecipe(body["mesh"])) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = pbdlab::fuzz::bytes(data, size);
  const std::string source = (pbdlab::fuzz::scratch() / "scene.json").string();
  nlohmann::json document;
  try {
    document = pbdlab::parseJsonText(text, source);
  } catch (const pbdlab::InputError&) {
    return 0;  // fuzz_json_reader covers malformed JSON
  }
  if (!smallMesh(document)) return 0;
  pbdlab::fuzz::expectInputErrorOnly("fuzz_scene", [&] { pbdlab::parseScene(document, source); });
  return 0;
}
