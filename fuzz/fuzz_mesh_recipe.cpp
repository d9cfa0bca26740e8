// Mesh recipes (meshes/mesh_recipe.hpp): the "mesh" object of a scene or the argument of
// `pbdlab mesh`, parsed and checked (types, ranges, files, the memory estimate) and keyed for
// the cache. Meshes that need Gmsh are not made here (fuzz_scene makes small boxes); .msh
// recipes and small bunny surfaces are made.
#include "core/support/json_reader.hpp"
#include "fuzz/fuzz_common.hpp"
#include "meshes/mesh_recipe.hpp"
#include "meshes/msh_io.hpp"

namespace {

const std::filesystem::path& recipeFolder() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path d = pbdlab::fuzz::scratch() / "recipe";
    // Files a recipe can name ("file": "tet.stl", "box.msh").
    pbdlab::fuzz::writeFile(d / "tet.stl",
                            "solid t\nfacet normal 0 0 -1\nouter loop\nvertex 0 0 0\nvertex 0 1 0\nvertex 1 0 0\nendloop\n"
                            "endfacet\nfacet normal 0 -1 0\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 0 1\nendloop\n"
                            "endfacet\nfacet normal -1 0 0\nouter loop\nvertex 0 0 0\nvertex 0 0 1\nvertex 0 1 0\nendloop\n"
                            "endfacet\nfacet normal 1 1 1\nouter loop\nvertex 1 0 0\nvertex 0 1 0\nvertex 0 0 1\nendloop\n"
                            "endfacet\nendsolid t\n");
    pbdlab::Mesh tet;
    tet.element_type = pbdlab::ElementType::kTet4;
    tet.rest_positions.resize(4, 3);
    tet.rest_positions << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1;
    tet.elements.resize(1, 4);
    tet.elements << 0, 1, 2, 3;
    pbdlab::fuzz::writeFile(d / "box.msh", pbdlab::mshText(tet));
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = pbdlab::fuzz::bytes(data, size);
  const std::string folder = recipeFolder().string();
  pbdlab::fuzz::expectInputErrorOnly("fuzz_mesh_recipe", [&] {
    const nlohmann::json value = pbdlab::parseJsonText(text, "<fuzz>/recipe.json");
    const pbdlab::MeshRecipe recipe = pbdlab::parseMeshRecipe(value, "<fuzz>/recipe.json", "/mesh", folder);
    pbdlab::meshRecipeKey(recipe);
    recipe.describe();
    if (recipe.kind == pbdlab::MeshRecipe::Kind::kMsh && recipe.order == 1) pbdlab::makeMesh(recipe);
    if (recipe.kind == pbdlab::MeshRecipe::Kind::kBunnySurface && recipe.subdivisions <= 1) pbdlab::makeMesh(recipe);
  });
  return 0;
}
