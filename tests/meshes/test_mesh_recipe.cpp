// Mesh recipes: parsing with every default filled in (the canonical form reads back to
// itself), errors naming the file and the JSON pointer, file paths relative to the recipe,
// the cache key, and the cache (identical mesh on a hit, a changed recipe or input file
// misses, a corrupt entry is a miss and is rewritten, the folder from the environment).
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/support/input_error.hpp"
#include "mesh_checks.hpp"
#include "meshes/mesh_cache.hpp"
#include "meshes/mesh_recipe.hpp"
#include "meshes/msh_io.hpp"

namespace pbdlab {
namespace {

using nlohmann::json;

MeshRecipe parse(const json& j, const std::string& base_dir = "") { return parseMeshRecipe(j, "recipe.json", "/mesh", base_dir); }

TEST(MeshRecipe, EveryKindParsesToACanonicalFixedPoint) {
  const std::vector<json> recipes = {
      json::parse(R"({"type": "box", "cells": [2, 2, 2]})"),
      json::parse(R"({"type": "box", "split": "gmsh_six", "size": [4, 1, 1], "cells": [4, 1, 1]})"),
      json::parse(R"({"type": "box", "family": "biased", "origin": [1, 2, 3], "cells": [1, 2, 3], "order": 3})"),
      json::parse(R"({"type": "box", "family": "unstructured", "size": [1, 1, 4], "target_size": 0.5, "order": 2})"),
      json::parse(R"({"type": "box", "family": "pyramid", "cells": [1, 1, 1]})"),
      json::parse(R"({"type": "res_box", "nodes_per_side": 5})"),
      json::parse(R"({"type": "rectangle", "cells": [3, 2]})"),
      json::parse(R"({"type": "rectangle", "embedding": "3d_surface", "plane": "xz", "size": [2, 1], "target_size": 0.2})"),
      json::parse(R"({"type": "bunny_surface", "subdivisions": 1})"),
      json::parse(R"({"type": "quadrilateral", "corners": [[0, 0], [48, 44], [48, 60], [0, 44]], "cells": [3, 2]})"),
  };
  for (const json& j : recipes) {
    SCOPED_TRACE(j.dump());
    const MeshRecipe r = parse(j);
    const MeshRecipe again = parse(r.canonical);
    EXPECT_EQ(again.canonical, r.canonical);
    EXPECT_EQ(meshRecipeKey(again), meshRecipeKey(r));
    EXPECT_FALSE(r.describe().empty());
    const Mesh mesh = makeMesh(r);
    EXPECT_GT(mesh.numElements(), 0);
    EXPECT_EQ(mesh.source, r.describe());
  }
  const MeshRecipe box = parse(recipes[0]);
  EXPECT_EQ(box.canonical, json::parse(R"({"type": "box", "family": "five_tet", "origin": [0.0, 0.0, 0.0],
                                           "size": [1.0, 1.0, 1.0], "cells": [2, 2, 2], "order": 1})"));
  EXPECT_EQ(parse(recipes[1]).canonical["family"], "gmsh_six");  // the older "split" key maps to "family"
  const MeshRecipe res = parse(recipes[5]);
  EXPECT_EQ(res.box.cells, (std::array<int, 3>{4, 4, 4}));
  EXPECT_EQ(makeMesh(res).numElements(), 5 * 64);
}

struct BadRecipe {
  std::string json_text;
  std::string field;
};

// Each recipe must be refused with an InputError at its field; `check` looks at the error too.
template <typename Check>
void expectEachRefused(const std::vector<BadRecipe>& cases, Check check) {
  for (const BadRecipe& c : cases) {
    SCOPED_TRACE(c.json_text);
    try {
      parse(json::parse(c.json_text));
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), c.field) << e.what();
      check(e);
    }
  }
}

// Cook's membrane: (n + 1)^2 nodes, 2 n^2 counter-clockwise triangles covering the trapezoid's
// area 1440, and the four edge sets (n + 1 nodes each, on their segments); the right edge is
// also the bounding box's x-max, the left x-min.
TEST(MeshRecipe, QuadrilateralMeshesCookMembrane) {
  const int n = 6;
  const Mesh mesh = makeMesh(parse(json::parse(
      R"({"type": "quadrilateral", "corners": [[0, 0], [48, 44], [48, 60], [0, 44]], "cells": [6, 6]})")));
  ASSERT_EQ(mesh.element_type, ElementType::kTri3);
  EXPECT_EQ(mesh.numNodes(), (n + 1) * (n + 1));
  EXPECT_EQ(mesh.numElements(), 2 * n * n);
  double area = 0.0;
  for (int e = 0; e < mesh.numElements(); ++e) {
    const Vec3 a = mesh.restPosition(mesh.elements(e, 0)), b = mesh.restPosition(mesh.elements(e, 1)),
               c = mesh.restPosition(mesh.elements(e, 2));
    const double twice = (b - a).x() * (c - a).y() - (b - a).y() * (c - a).x();
    EXPECT_GT(twice, 0.0);
    area += 0.5 * twice;
  }
  EXPECT_NEAR(area, 1440.0, 1e-9);
  const Vec3 corners[4] = {Vec3(0, 0, 0), Vec3(48, 44, 0), Vec3(48, 60, 0), Vec3(0, 44, 0)};
  const std::array<std::string, 4> names = quadrilateralEdgeSetNames();
  for (int k = 0; k < 4; ++k) {
    const std::vector<int>& set = mesh.node_sets.at(names[k]);
    EXPECT_EQ(set.size(), size_t(n + 1)) << names[k];
    const Vec3 d = corners[(k + 1) % 4] - corners[k];
    for (int i : set) EXPECT_NEAR(d.normalized().cross(mesh.restPosition(i) - corners[k]).norm(), 0.0, 1e-9) << names[k];
  }
  EXPECT_EQ(mesh.node_sets.at("edge-12"), mesh.node_sets.at("x-max"));
  EXPECT_EQ(mesh.node_sets.at("edge-30"), mesh.node_sets.at("x-min"));
}

TEST(MeshRecipe, BadRecipesNameTheField) {
  const std::vector<BadRecipe> cases = {
      {R"([1, 2])", "/mesh"},
      {R"({"cells": [2, 2, 2]})", "/mesh/type"},
      {R"({"type": "sphere"})", "/mesh/radius"},
      {R"({"type": "cone"})", "/mesh/type"},
      {R"({"type": "box"})", "/mesh/cells"},
      {R"({"type": "box", "cells": [2, 0, 2]})", "/mesh/cells/1"},
      {R"({"type": "box", "cells": [2, 2, 2.5]})", "/mesh/cells/2"},
      {R"({"type": "box", "cells": [100000, 100000, 1]})", "/mesh/cells"},
      {R"({"type": "box", "cells": [2, 2, 2], "size": [1, -1, 1]})", "/mesh/size/1"},
      {R"({"type": "box", "cells": [2, 2, 2], "origin": [0, 0]})", "/mesh/origin"},
      {R"({"type": "box", "cells": [2, 2, 2], "family": "tetris"})", "/mesh/family"},
      {R"({"type": "box", "cells": [2, 2, 2], "split": "four"})", "/mesh/split"},
      {R"({"type": "box", "cells": [2, 2, 2], "split": "five", "family": "five_tet"})", "/mesh/split"},
      {R"({"type": "box", "cells": [2, 2, 2], "order": 4})", "/mesh/order"},
      {R"({"type": "box", "cells": [2, 2, 2], "family": "hex", "order": 2})", "/mesh/order"},
      {R"({"type": "box", "cells": [2, 2, 2], "cell": [2, 2, 2]})", "/mesh/cell"},
      {R"({"type": "box", "cells": [2, 2, 2], "target_size": 0.1})", "/mesh/target_size"},
      {R"({"type": "box", "family": "unstructured"})", "/mesh/target_size"},
      {R"({"type": "box", "family": "unstructured", "target_size": 0.001})", "/mesh/target_size"},
      {R"({"type": "box", "family": "unstructured", "target_size": 0.1, "cells": [1, 1, 1]})", "/mesh/cells"},
      {R"({"type": "res_box"})", "/mesh/nodes_per_side"},
      {R"({"type": "res_box", "nodes_per_side": 1})", "/mesh/nodes_per_side"},
      {R"({"type": "rectangle", "cells": [2, 2, 2]})", "/mesh/cells"},
      {R"({"type": "rectangle", "cells": [2, 2], "embedding": "1d"})", "/mesh/embedding"},
      {R"({"type": "rectangle", "cells": [2, 2], "plane": "xz"})", "/mesh/plane"},
      {R"({"type": "rectangle", "cells": [2, 2], "embedding": "3d_surface", "plane": "xx"})", "/mesh/plane"},
      {R"({"type": "rectangle", "cells": [2, 2], "origin": [0, 0, 1]})", "/mesh/origin"},
      {R"({"type": "rectangle", "cells": [2, 2], "diagonals": "crossed"})", "/mesh/diagonals"},
      {R"({"type": "rectangle", "target_size": 0.1, "diagonals": "left"})", "/mesh/diagonals"},
      {R"({"type": "msh"})", "/mesh/file"},
      {R"({"type": "msh", "file": "does_not_exist.msh"})", "/mesh/file"},
      {R"({"type": "stl", "file": "does_not_exist.stl", "target_size": 0.1})", "/mesh/file"},
      {R"({"type": "bunny_surface", "subdivisions": 9})", "/mesh/subdivisions"},
      {R"({"type": "quadrilateral", "cells": [2, 2]})", "/mesh/corners"},
      {R"({"type": "quadrilateral", "corners": [[0, 0], [1, 0], [1, 1]], "cells": [2, 2]})", "/mesh/corners"},
      {R"({"type": "quadrilateral", "corners": [[0, 0], [0, 1], [1, 1], [1, 0]], "cells": [2, 2]})", "/mesh/corners"},
      {R"({"type": "quadrilateral", "corners": [[0, 0], [2, 0], [0.5, 0.5], [0, 2]], "cells": [2, 2]})", "/mesh/corners"},
      {R"({"type": "quadrilateral", "corners": [[0, 0], [1, 0], [1, 1], [0, "a"]], "cells": [2, 2]})", "/mesh/corners/3/1"},
      {R"({"type": "quadrilateral", "corners": [[0, 0], [1, 0], [1, 1], [0, 1]]})", "/mesh/cells"},
      {R"({"type": "quadrilateral", "corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "cells": [2, 2], "size": [1, 1]})", "/mesh/size"},
  };
  expectEachRefused(cases, [](const InputError& e) { EXPECT_EQ(e.file(), "recipe.json"); });
}

// Issue 12, resource limits: a recipe whose mesh would not fit in this machine's memory is
// refused while parsing, before anything is allocated, with the estimate in the message.
TEST(MeshRecipe, ARecipeTooLargeForThisMachineIsRefusedWithAnEstimate) {
  const double have = physicalMemoryBytes();
  ASSERT_GT(have, 0.0);
  const std::vector<BadRecipe> cases = {
      {R"({"type": "box", "cells": [2000, 2000, 2000]})", "/mesh/cells"},                  // 8e9 cells
      {R"({"type": "box", "cells": [2147483647, 2147483647, 2147483647], "family": "hex"})", "/mesh/cells"},
      {R"({"type": "box", "cells": [1000, 1000, 1000], "order": 3})", "/mesh/cells"},
      {R"({"type": "res_box", "nodes_per_side": 100000})", "/mesh/nodes_per_side"},
      {R"({"type": "box", "family": "unstructured", "target_size": 1e-5})", "/mesh/target_size"},
      {R"({"type": "rectangle", "cells": [2000000000, 2000000000]})", "/mesh/cells"},
      {R"({"type": "rectangle", "target_size": 1e-8})", "/mesh/target_size"},
  };
  expectEachRefused(cases, [](const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("would need about "), std::string::npos) << what;
    EXPECT_NE(what.find(" GiB for "), std::string::npos) << what;
    EXPECT_NE(what.find("this machine has "), std::string::npos) << what;
  });
  // Within memory but above the index cap: the cap's own message.
  try {
    parse(json::parse(R"({"type": "box", "cells": [5000, 5000, 1], "family": "hex"})"));
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "/mesh/cells");
  }
  // The estimate grows with the order: order 3 of the same box needs more.
  EXPECT_GT(estimatedMeshBytes(5e6, 5e6 / 5 + 4.4 * 5e6, 20), estimatedMeshBytes(5e6, 1e6, 4));
}

TEST(MeshRecipe, FilesAreRelativeToTheRecipeAndHashedByContent) {
  test::TempDir dir("recipe_files");
  std::filesystem::create_directories(dir.path() / "data");
  const MeshRecipe box = parse(json::parse(R"({"type": "box", "cells": [2, 1, 1], "size": [2, 1, 1]})"));
  writeMsh((dir.path() / "data" / "bar.msh").string(), makeMesh(box));
  const json j = json::parse(R"({"type": "msh", "file": "data/bar.msh", "order": 2})");
  const MeshRecipe r = parse(j, dir.path().string());
  EXPECT_EQ(r.path, (dir.path() / "data" / "bar.msh").string());
  EXPECT_EQ(r.canonical["file"], "data/bar.msh");  // as written
  const Mesh mesh = makeMesh(r);
  EXPECT_EQ(mesh.element_type, ElementType::kTet10);
  EXPECT_NEAR(test::totalVolume(mesh), 2.0, 1e-12);

  // The key holds the file's content, not its path: a changed file is another mesh.
  const std::string key = meshRecipeKey(r);
  EXPECT_EQ(key.find("data/bar.msh"), std::string::npos);
  writeMsh(r.path, makeMesh(parse(json::parse(R"({"type": "box", "cells": [4, 1, 1], "size": [2, 1, 1]})"))));
  EXPECT_NE(meshRecipeKey(r), key);

  // An order on a file of another element type is an error naming the file.
  writeMsh(r.path, makeMesh(parse(json::parse(R"({"type": "box", "family": "hex", "cells": [1, 1, 1]})"))));
  try {
    makeMesh(r);
    ADD_FAILURE() << "order 2 on a hex mesh accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), r.path);
  }
}

TEST(MeshCache, HitReturnsTheIdenticalMeshAndAChangedRecipeMisses) {
  test::TempDir dir("cache");
  const MeshCache cache(dir.path().string());
  const MeshRecipe r = parse(json::parse(R"({"type": "box", "family": "biased", "cells": [3, 2, 2], "order": 2})"));
  const MeshLoad first = loadOrMakeMesh(r, cache);
  EXPECT_EQ(first.cache, MeshLoad::Cache::kStored) << first.note;
  EXPECT_TRUE(std::filesystem::exists(first.entry));
  EXPECT_EQ(std::filesystem::path(first.entry).parent_path(), dir.path() / "meshes");
  const MeshLoad second = loadOrMakeMesh(r, cache);
  EXPECT_EQ(second.cache, MeshLoad::Cache::kHit);
  EXPECT_EQ(second.entry, first.entry);
  test::expectSameMesh(second.mesh, first.mesh);
  test::expectSameMesh(second.mesh, makeMesh(r));

  const MeshRecipe changed = parse(json::parse(R"({"type": "box", "family": "biased", "cells": [3, 2, 3], "order": 2})"));
  EXPECT_NE(meshRecipeKey(changed), meshRecipeKey(r));
  const MeshLoad other = loadOrMakeMesh(changed, cache);
  EXPECT_EQ(other.cache, MeshLoad::Cache::kStored);
  EXPECT_NE(other.entry, first.entry);
  EXPECT_NE(other.mesh.numElements(), first.mesh.numElements());

  // The same mesh written differently (the older "split" key, defaults spelled out) hits.
  const MeshRecipe spelled = parse(json::parse(
      R"({"type": "box", "split": "biased", "cells": [3, 2, 2], "order": 2, "origin": [0, 0, 0], "size": [1, 1, 1]})"));
  EXPECT_EQ(loadOrMakeMesh(spelled, cache).cache, MeshLoad::Cache::kHit);

  // The cache off: made every time, nothing stored.
  const MeshLoad off = loadOrMakeMesh(r, MeshCache());
  EXPECT_EQ(off.cache, MeshLoad::Cache::kOff);
  test::expectSameMesh(off.mesh, first.mesh);
}

TEST(MeshCache, CorruptOrForeignEntriesAreMissesAndRewritten) {
  test::TempDir dir("cache_corrupt");
  const MeshCache cache(dir.path().string());
  const MeshRecipe r = parse(json::parse(R"({"type": "res_box", "nodes_per_side": 4})"));
  const MeshLoad first = loadOrMakeMesh(r, cache);
  const std::string bytes = test::readText(first.entry);
  // Truncated.
  std::ofstream(first.entry, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::string why;
  Mesh mesh;
  EXPECT_FALSE(cache.load(meshRecipeKey(r), mesh, &why));
  EXPECT_NE(why.find("checksum"), std::string::npos) << why;
  EXPECT_EQ(loadOrMakeMesh(r, cache).cache, MeshLoad::Cache::kStored);
  EXPECT_EQ(loadOrMakeMesh(r, cache).cache, MeshLoad::Cache::kHit);
  // One flipped byte in the coordinates.
  std::string flipped = test::readText(first.entry);
  flipped[flipped.size() / 2] ^= 0x10;
  std::ofstream(first.entry, std::ios::binary) << flipped;
  EXPECT_EQ(loadOrMakeMesh(r, cache).cache, MeshLoad::Cache::kStored);
  // Another key with the same file name (a hash collision) is a miss.
  const std::string entry = serializeMesh(first.mesh, "another recipe");
  EXPECT_FALSE(deserializeMesh(entry, meshRecipeKey(r), mesh, &why));
  EXPECT_NE(why.find("same hash"), std::string::npos) << why;
  Mesh back;
  ASSERT_TRUE(deserializeMesh(entry, "another recipe", back));
  test::expectSameMesh(back, first.mesh);
  // A cache folder that cannot be created: the mesh is still made.
  const std::string blocker = dir.write("file_not_folder", "x");
  const MeshLoad unwritable = loadOrMakeMesh(r, MeshCache(blocker));
  EXPECT_EQ(unwritable.cache, MeshLoad::Cache::kNotStored);
  EXPECT_FALSE(unwritable.note.empty());
  EXPECT_EQ(unwritable.mesh.numElements(), first.mesh.numElements());
}

// Sets an environment variable for the scope, restoring its previous value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(MeshCache, FolderFromTheEnvironment) {
  {
    ScopedEnv dir("PBDLAB_CACHE_DIR", "/tmp/somewhere");
    EXPECT_EQ(meshCacheDirFromEnvironment(), "/tmp/somewhere");
    EXPECT_EQ(MeshCache::fromEnvironment().entryPath("k").rfind("/tmp/somewhere/meshes/", 0), 0u);
  }
  {
    ScopedEnv dir("PBDLAB_CACHE_DIR", "off");
    EXPECT_EQ(meshCacheDirFromEnvironment(), "");
    EXPECT_FALSE(MeshCache::fromEnvironment().enabled());
  }
  {
    ScopedEnv dir("PBDLAB_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", "/tmp/xdg");
    EXPECT_EQ(meshCacheDirFromEnvironment(), "/tmp/xdg/pbdlab");
  }
  {
    ScopedEnv dir("PBDLAB_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(meshCacheDirFromEnvironment(), "/home/someone/.cache/pbdlab");
  }
  EXPECT_EQ(hex16(0x0123456789abcdefull), "0123456789abcdef");
  const std::string a = "a";
  EXPECT_EQ(fnv1a64(a.data(), a.size()), 0xaf63dc4c8601ec8cull);  // FNV-1a 64 test vector
}

}  // namespace
}  // namespace pbdlab
