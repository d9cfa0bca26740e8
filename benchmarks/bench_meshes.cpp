// Mesh generation and the mesh cache on the PBNG/PXPBD "Res N box" (unit cube, N nodes per
// side, five-tet split), through the recipe pipeline the scenes use:
//   - Res 32 generated with the cache off (target: at most 2 s),
//   - Res 32 loaded from the cache (target: at most 0.3 s),
//   - Res 64 generated with the cache off (target: at most 20 s within 2 GB), with the
//     process's peak resident set size (getrusage ru_maxrss) as the counter peak_rss_MB.
// The cache lives in a temporary folder (never the user's); its entry is written outside the
// timed region. Run in Release:
//   ./build/benchmarks/bench_meshes --benchmark_out=bench_meshes.json --benchmark_out_format=json
// Res 64 runs last, so peak_rss_MB is its own high-water mark (the earlier cases are smaller).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "meshes/mesh_recipe.hpp"

namespace pbdlab {
namespace {

namespace fs = std::filesystem;

MeshRecipe resRecipe(int n) {
  return parseMeshRecipe({{"type", "res_box"}, {"nodes_per_side", n}}, "bench_meshes", "/mesh", "");
}

double peakRssMegabytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

// A cache folder for this process, removed at exit.
struct TemporaryCache {
  fs::path dir = fs::temp_directory_path() / ("pbdlab_bench_meshes_" + std::to_string(::getpid()));
  TemporaryCache() { fs::remove_all(dir); }
  ~TemporaryCache() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};
const MeshCache& cache() {
  static TemporaryCache folder;
  static const MeshCache cache(folder.dir.string());
  return cache;
}

void setCounters(benchmark::State& state, const MeshLoad& load) {
  state.counters["nodes"] = load.mesh.numNodes();
  state.counters["elements"] = load.mesh.numElements();
  state.counters["peak_rss_MB"] = peakRssMegabytes();
}

void BM_ResBoxGenerate(benchmark::State& state) {
  const MeshRecipe recipe = resRecipe(static_cast<int>(state.range(0)));
  MeshLoad load;
  for (auto _ : state) {
    load = loadOrMakeMesh(recipe, MeshCache());  // cache off
    benchmark::DoNotOptimize(load.mesh.elements.data());
  }
  setCounters(state, load);
}

void BM_ResBoxLoadFromCache(benchmark::State& state) {
  const MeshRecipe recipe = resRecipe(static_cast<int>(state.range(0)));
  if (loadOrMakeMesh(recipe, cache()).cache == MeshLoad::Cache::kNotStored) {
    state.SkipWithError("cannot write the cache entry");
    return;
  }
  MeshLoad load;
  for (auto _ : state) {
    load = loadOrMakeMesh(recipe, cache());
    if (load.cache != MeshLoad::Cache::kHit) {
      state.SkipWithError("the cache missed");
      return;
    }
    benchmark::DoNotOptimize(load.mesh.elements.data());
  }
  setCounters(state, load);
}

BENCHMARK(BM_ResBoxGenerate)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ResBoxLoadFromCache)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ResBoxGenerate)->Name("BM_ResBoxGenerate_Res64")->Arg(64)->Iterations(2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pbdlab

BENCHMARK_MAIN();
