// Every input the libFuzzer targets of fuzz/ found crashing, hanging or tripping a sanitizer
// (docs/fuzzing.md), fed again the way the target fed it: tests/meshes/fuzz_crashes/<target>/.
// Each must now give an InputError (or a valid mesh, or a cache miss), never anything else.
// Under the sanitizer build (scripts/sanitize.sh) these tests also fail on the UB or overflow
// the input once caused.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/support/input_error.hpp"
#include "core/support/json_reader.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "meshes/mesh_cache.hpp"
#include "meshes/mesh_recipe.hpp"
#include "meshes/msh_io.hpp"

namespace pbdlab {
namespace {

namespace fs = std::filesystem;

std::vector<std::pair<std::string, std::string>> crashes(const std::string& target) {
  std::vector<std::pair<std::string, std::string>> out;
  const fs::path folder = fs::path(PBDLAB_SOURCE_DIR) / "tests" / "meshes" / "fuzz_crashes" / target;
  if (!fs::is_directory(folder)) return out;
  for (const auto& entry : fs::directory_iterator(folder)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    out.emplace_back(entry.path().filename().string(), text.str());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// An InputError naming a file and a field, or success.
template <typename Read>
void expectInputErrorOrSuccess(const std::string& name, Read&& read) {
  try {
    read();
  } catch (const InputError& error) {
    EXPECT_FALSE(error.file().empty()) << name;
    EXPECT_FALSE(error.field().empty()) << name << ": " << error.what();
  } catch (const std::exception& error) {
    ADD_FAILURE() << name << ": not an InputError: " << error.what();
  }
}

// fuzz/fuzz_mesh_cache.cpp: the first byte odd = rewrite the checksum of the rest.
TEST(FuzzRegressions, MeshCacheEntries) {
  for (const auto& [name, input] : crashes("mesh_cache")) {
    ASSERT_FALSE(input.empty());
    std::string entry = input.substr(1);
    if ((input[0] & 1) && entry.size() >= 8) {
      const std::uint64_t checksum = fnv1a64(entry.data(), entry.size() - 8);
      std::memcpy(entry.data() + entry.size() - 8, &checksum, 8);
    }
    Mesh mesh;
    std::string why;
    bool hit = false;
    EXPECT_NO_THROW(hit = deserializeMesh(entry, "pbdlab-fuzz-key", mesh, &why)) << name;
    if (hit) EXPECT_NO_THROW(validateMesh(mesh)) << name;
    else EXPECT_FALSE(why.empty()) << name;
  }
}

// An entry of a mesh without elements (found by fuzz_mesh_cache: memcpy from a null pointer
// for the empty connectivity) is a miss.
TEST(FuzzRegressions, AnEmptyMeshEntryIsAMiss) {
  Mesh empty;
  empty.element_type = ElementType::kTri3;
  empty.rest_positions = MatX3::Zero(4, 3);
  empty.elements.resize(0, 3);
  Mesh back;
  std::string why;
  EXPECT_FALSE(deserializeMesh(serializeMesh(empty, "k"), "k", back, &why));
  EXPECT_EQ(why, "an empty mesh");
}

TEST(FuzzRegressions, MshFiles) {
  for (const auto& [file, bytes] : crashes("msh")) {
    const std::string &name = file, &input = bytes;  // (clang 14: lambdas capture no structured binding)
    expectInputErrorOrSuccess(name, [&] { readMshText(input, name); });
  }
}

TEST(FuzzRegressions, StlFiles) {
  for (const auto& [file, bytes] : crashes("stl")) {
    const std::string &name = file, &input = bytes;
    expectInputErrorOrSuccess(name, [&] { parseStl(input, name); });
  }
}

TEST(FuzzRegressions, MeshRecipes) {
  for (const auto& [file, bytes] : crashes("mesh_recipe")) {
    const std::string &name = file, &input = bytes;
    expectInputErrorOrSuccess(name, [&] {
      const MeshRecipe r = parseMeshRecipe(parseJsonText(input, name), name, "/mesh", "");
      meshRecipeKey(r);
    });
  }
}

}  // namespace
}  // namespace pbdlab
