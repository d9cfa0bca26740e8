// Time per PBNG iteration (one nonlinear Gauss-Seidel sweep over every free node, node colors in
// parallel; PBNG §7, §10) with fixed corotated on the Res 16, 32 and 64 boxes (unit cube, N
// nodes per side, five tets per cell), x-min clamped, gravity, E = 1000, nu = 0.3, rho = 10,
// backward Euler dt = 0.01 (the PBNG Table 1 dropping box; PXPBD §5.2); the warm-started
// rotation (default) and the SVD at every visit (…Svd); beside them a PBD sweep (constraint
// coloring, PBNG Table 1's comparison) and a VBD sweep (docs/vbd.md) on the same box.
// ns_per_visit: per element-node incidence (4 a tet; PBNG evaluates each element once for each
// of its free nodes). Set-up (node table,
// coloring) and the yardstick are outside the timed region. Run in Release:
//   OMP_NUM_THREADS=2 ./build/benchmarks/bench_pbng --benchmark_out=bench.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "benchmarks/omp_threads.hpp"
#include "benchmarks/pbng_sweep_loop.hpp"
#include "benchmarks/xpbd_sweep_loop.hpp"
#include "meshes/box_mesh.hpp"
#include "solvers/pbd_xpbd/xpbd_solver.hpp"
#include "solvers/pbng/pbng_solver.hpp"
#include "solvers/pbng/vbd_solver.hpp"
#include "tests/support/clamped_block.hpp"

namespace pbdlab {
namespace {

const Problem& boxFor(int res, MaterialModel model = MaterialModel::kFixedCorotated) {
  static std::map<std::pair<int, MaterialModel>, std::unique_ptr<Problem>> problems;
  auto& slot = problems[{res, model}];
  if (!slot) {
    slot = std::make_unique<Problem>(
        test::clampedBlock(makeBoxMesh(resBox(res)), model, Integrator::kBackwardEuler, 0.01, 1, "bench_pbng"));
  }
  return *slot;
}

// One node solver's sweeps: PBNG with `rotation`, or VBD (solvers/pbng/vbd_solver.hpp: the
// exact node blocks, projected per element, on the same lane kernel: p1_visit.hpp) when `vbd`.
void sweepModel(benchmark::State& state, MaterialModel model, PbngOptions::Rotation rotation, bool vbd = false) {
  const bench::ScopedOmpThreads threads(static_cast<int>(state.range(1)));
  const Problem& problem = boxFor(static_cast<int>(state.range(0)), model);
  PbngOptions options = vbd ? vbdDefaultOptions() : PbngOptions{};
  options.rotation = rotation;
  VbdSolver vbd_solver(options);
  PbngSolver pbng_solver(options);
  PbngSolver& solver = vbd ? static_cast<PbngSolver&>(vbd_solver) : pbng_solver;
  const Positions x = bench::timePbngSweeps(state, solver, problem);
  state.counters["vertices"] = problem.numNodes();
  state.counters["tets"] = problem.mesh.numElements();
  state.counters["colors"] = solver.numColors();
  // SVD fallbacks of the warm-started rotation per sweep (of 4 x tets element visits).
  state.counters["fallbacks"] = benchmark::Counter(static_cast<double>(solver.rotationFallbacks()),
                                                   benchmark::Counter::kAvgIterations);
  state.counters["ns_per_node"] = benchmark::Counter(static_cast<double>(problem.numNodes()),
                                                     benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
  state.counters["ns_per_visit"] =
      benchmark::Counter(static_cast<double>(problem.mesh.numElements() * problem.mesh.elements.cols()),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  if (!x.allFinite()) state.SkipWithError("positions became non-finite");
}

// PBD on the same box: one sweep over the element constraints (constraint colors in
// parallel), zero compliance, eps = 0 and near_zero "skip" (the pbd solver's defaults,
// family.cpp).
void BM_PbdSweepCorotated(benchmark::State& state) {
  const bench::ScopedOmpThreads threads(static_cast<int>(state.range(1)));
  const Problem& problem = boxFor(static_cast<int>(state.range(0)));
  XpbdOptions options;
  options.variant = XpbdVariant::kPbd;
  options.eps = 0.0;
  options.near_zero = XpbdOptions::NearZero::kSkip;
  XpbdSolver solver(options);
  solver.setup(problem);
  const Positions x = bench::timeXpbdSweeps(state, solver, problem, 40);
  state.counters["vertices"] = problem.numNodes();
  state.counters["tets"] = problem.mesh.numElements();
  state.counters["colors"] = solver.numElementColors();
  if (!x.allFinite()) state.SkipWithError("positions became non-finite");
}

// The default: the per-element rotation warm-started by one Newton step (pbng_solver.hpp).
void BM_PbngSweepCorotated(benchmark::State& state) {
  sweepModel(state, MaterialModel::kFixedCorotated, PbngOptions::Rotation::kWarmStart);
}
// The SVD at every element visit ("rotation": "svd"; the path before the warm start).
void BM_PbngSweepCorotatedSvd(benchmark::State& state) {
  sweepModel(state, MaterialModel::kFixedCorotated, PbngOptions::Rotation::kSvd);
}
// The two Neo-Hookean models (PBNG eq. 8, 10) on the lanes' closed-form stresses (p1_visit.hpp):
// Fig. 9's model comparison on equal engineering.
void BM_PbngSweepNeoHookean(benchmark::State& state) {
  sweepModel(state, MaterialModel::kNeoHookean, PbngOptions::Rotation::kWarmStart);
}
void BM_PbngSweepStableNeoHookean(benchmark::State& state) {
  sweepModel(state, MaterialModel::kStableNeoHookean, PbngOptions::Rotation::kWarmStart);
}

// VBD's sweep on the same box, beside PBNG's (issue 31): the exact block in closed form on the
// lanes (before the lane kernel, through addNodeBlock's 9x9 tangents: docs/vbd.md).
void BM_VbdSweepCorotated(benchmark::State& state) {
  sweepModel(state, MaterialModel::kFixedCorotated, PbngOptions::Rotation::kWarmStart, true);
}
void BM_VbdSweepNeoHookean(benchmark::State& state) {
  sweepModel(state, MaterialModel::kNeoHookean, PbngOptions::Rotation::kWarmStart, true);
}

BENCHMARK(BM_PbngSweepCorotated)->ArgsProduct({{16, 32, 64}, {1, 2}})->ArgNames({"res", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PbngSweepCorotatedSvd)->ArgsProduct({{16, 32}, {1, 2}})->ArgNames({"res", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PbngSweepNeoHookean)->ArgsProduct({{16, 32, 64}, {1, 2}})->ArgNames({"res", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PbngSweepStableNeoHookean)->ArgsProduct({{16, 32, 64}, {1, 2}})->ArgNames({"res", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_VbdSweepCorotated)->ArgsProduct({{16, 32, 64}, {1, 2}})->ArgNames({"res", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_VbdSweepNeoHookean)->ArgsProduct({{16, 32, 64}, {1, 2}})->ArgNames({"res", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PbdSweepCorotated)->ArgsProduct({{16, 32, 64}, {1, 2}})->ArgNames({"res", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace pbdlab

BENCHMARK_MAIN();
