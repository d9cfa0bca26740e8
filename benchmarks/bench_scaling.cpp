// Cost growth with the mesh (issue: "ns per element visit roughly constant from Res 16 to Res
// 128"): one sweep of PBNG (node colors) and of XPBD (element colors), fixed corotated on the
// Res N box (unit cube, N nodes per side, five tets per cell; Res 128: 2.1 M vertices,
// 10.2 M tets), x-min clamped, gravity, E = 1000, nu = 0.3, rho = 10, dt = 0.01 (PBNG Table 1's
// box). Counters: ns_per_visit (an element visit is one element evaluated for one of its nodes
// by PBNG, 4 a tet; one element's constraints projected by XPBD, 1 a tet), peak_rss_gb (the
// process's peak resident memory after the set-up and the sweeps: run one resolution and
// solver per process to read it for that pair alone, as benchmarks/scaling_table.py does).
// Set-up is outside the timed region; a new step every 40 sweeps (outside the timing).
// The Res 128 runs take minutes of set-up and several GB: registered only with
// PBDLAB_BENCH_RES128=1 in the environment,
//   PBDLAB_BENCH_RES128=1 ./build/benchmarks/bench_scaling --benchmark_filter='Pbng/res:128/threads:2'
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <utility>

#include "benchmarks/omp_threads.hpp"
#include "benchmarks/pbng_sweep_loop.hpp"
#include "benchmarks/xpbd_sweep_loop.hpp"
#include "meshes/box_mesh.hpp"
#include "solvers/pbng/pbng_solver.hpp"
#include "solvers/pbd_xpbd/xpbd_solver.hpp"
#include "tests/support/clamped_block.hpp"

namespace pbdlab {
namespace {

const Problem& boxFor(int res) {
  static std::map<int, std::unique_ptr<Problem>> problems;
  auto& slot = problems[res];
  if (!slot)
    slot = std::make_unique<Problem>(test::clampedBlock(makeBoxMesh(resBox(res)), MaterialModel::kFixedCorotated,
                                                        Integrator::kBackwardEuler, 0.01, 1, "bench_scaling"));
  return *slot;
}

double peakResidentGigabytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB on Linux
}

void setCounters(benchmark::State& state, const Problem& problem, double visits_per_sweep) {
  state.counters["vertices"] = problem.numNodes();
  state.counters["tets"] = problem.mesh.numElements();
  state.counters["ns_per_visit"] = benchmark::Counter(
      visits_per_sweep, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["peak_rss_gb"] = peakResidentGigabytes();
}

void BM_Pbng(benchmark::State& state) {
  const bench::ScopedOmpThreads threads(static_cast<int>(state.range(1)));
  const Problem& problem = boxFor(static_cast<int>(state.range(0)));
  PbngSolver solver;
  const Positions x = bench::timePbngSweeps(state, solver, problem);
  setCounters(state, problem, 4.0 * problem.mesh.numElements());
  state.counters["colors"] = solver.numColors();
  state.counters["fallbacks"] =
      benchmark::Counter(static_cast<double>(solver.rotationFallbacks()), benchmark::Counter::kAvgIterations);
  if (!x.allFinite()) state.SkipWithError("positions became non-finite");
}

void BM_Xpbd(benchmark::State& state) {
  const bench::ScopedOmpThreads threads(static_cast<int>(state.range(1)));
  const Problem& problem = boxFor(static_cast<int>(state.range(0)));
  XpbdOptions options;
  options.log_residuals = false;
  XpbdSolver solver(options);
  solver.setup(problem);
  const Positions x = bench::timeXpbdSweeps(state, solver, problem, 40);
  setCounters(state, problem, problem.mesh.numElements());
  state.counters["colors"] = solver.numElementColors();
  // SVD fallbacks of the warm-started rotation per sweep (of one visit a tet).
  state.counters["fallbacks"] =
      benchmark::Counter(static_cast<double>(solver.rotationFallbacks()), benchmark::Counter::kAvgIterations);
  if (!x.allFinite()) state.SkipWithError("positions became non-finite");
}

BENCHMARK(BM_Pbng)->ArgsProduct({{16, 32, 64}, {1, 2}})->ArgNames({"res", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Xpbd)->ArgsProduct({{16, 32, 64}, {1, 2}})->ArgNames({"res", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace pbdlab

int main(int argc, char** argv) {
  if (std::getenv("PBDLAB_BENCH_RES128")) {
    // A sweep is seconds here: 10 of them (a new step after the 40th never comes).
    for (auto [name, run] : {std::pair{"BM_Pbng", &pbdlab::BM_Pbng}, std::pair{"BM_Xpbd", &pbdlab::BM_Xpbd}})
      benchmark::RegisterBenchmark(name, run)
          ->ArgsProduct({{128}, {1, 2}})
          ->ArgNames({"res", "threads"})
          ->Iterations(10)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
