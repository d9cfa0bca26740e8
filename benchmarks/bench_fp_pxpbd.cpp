// Time per iteration (one Gauss-Seidel sweep over every element, color by color) of
// FP-PXPBD on the Res 16 and Res 32 boxes (unit cube, five tets per cell, x-min clamped,
// gravity, backward Euler dt = 0.01, E = 1000, nu = 0.3, rho = 10: the PXPBD paper's Fig. 1-2
// setup), for fixed corotated (eq. 48 + 49) and Neo-Hookean (eq. 52 + 49); the time of one
// element's local solve (serial); and, as a floor, a plain Gauss-Seidel loop over the same
// elements in the same color order that only evaluates P and scatters V P dN/dX. Set-up
// (mesh, coloring, the step's start) is outside the timed region. The thread count comes
// from OMP_NUM_THREADS:
//   OMP_NUM_THREADS=2 ./build-materials/benchmarks/bench_fp_pxpbd --benchmark_out=fp.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "benchmarks/omp_threads.hpp"
#include "core/terms/elastic_energy.hpp"
#include "meshes/box_mesh.hpp"
#include "solvers/pxpbd/fp_pxpbd.hpp"
#include "tests/support/clamped_block.hpp"

namespace pbdlab {
namespace {

struct Case {
  Problem problem;
  std::unique_ptr<StepObjective> objective;
  std::unique_ptr<FpPxpbdSolver> solver;
  Positions x;
};

// One case per (resolution, model), built once: the first step of the falling box, started
// and swept 3 times so that the elements are deformed.
Case& caseFor(int res, MaterialModel model) {
  static std::map<std::pair<int, MaterialModel>, std::unique_ptr<Case>> cases;
  auto& slot = cases[{res, model}];
  if (!slot) {
    slot = std::make_unique<Case>();
    slot->problem = test::clampedBlock(makeBoxMesh(resBox(res)), model, Integrator::kBackwardEuler, 0.01, 1, "bench");
    const Problem& problem = slot->problem;
    const Positions x0 = problem.mesh.restPositionsFlat();
    VecX v0 = VecX::Zero(x0.size());
    for (int i = 0; i < problem.numNodes(); ++i) v0[3 * i + 1] = -2.0 * x0[3 * i];  // a swing: deformed elements
    slot->objective = std::make_unique<StepObjective>(problem, x0, v0, 0);
    FpPxpbdOptions options;
    options.log_secondary_residual = false;
    slot->solver = std::make_unique<FpPxpbdSolver>(options);
    slot->solver->setup(problem);
    slot->solver->beginStep(*slot->objective, slot->x);
    for (int k = 0; k < 3; ++k) slot->solver->sweep(slot->x);
  }
  return *slot;
}

void setCounters(benchmark::State& state, const Case& c) {
  state.counters["vertices"] = c.problem.numNodes();
  state.counters["tets"] = c.problem.mesh.numElements();
  state.counters["colors"] = c.solver->numColors();
}

void sweepBenchmark(benchmark::State& state, MaterialModel model) {
  const bench::ScopedOmpThreads threads(static_cast<int>(state.range(1)));
  Case& c = caseFor(static_cast<int>(state.range(0)), model);
  const long long fallbacks_before = c.solver->rotationFallbacks();
  for (auto _ : state) {
    c.solver->sweep(c.x);
    benchmark::ClobberMemory();
  }
  setCounters(state, c);
  // The lanes' warm rotations that fell back to the SVD, per sweep; the lane elements' share.
  state.counters["fallbacks"] = benchmark::Counter(static_cast<double>(c.solver->rotationFallbacks() - fallbacks_before),
                                                   benchmark::Counter::kAvgIterations);
  state.counters["lane_elements"] = c.solver->numLaneElements();
}

void BM_FpPxpbdSweepCorotated(benchmark::State& state) { sweepBenchmark(state, MaterialModel::kFixedCorotated); }
void BM_FpPxpbdSweepNeoHookean(benchmark::State& state) { sweepBenchmark(state, MaterialModel::kNeoHookean); }

// One element's local Newton solve (1 iteration: two stress evaluations), serial; the
// counter "per_element" is the time of one.
void elementBenchmark(benchmark::State& state, MaterialModel model) {
  Case& c = caseFor(static_cast<int>(state.range(0)), model);
  const int n = c.solver->numElements();
  for (auto _ : state) {
    for (int k = 0; k < n; ++k) c.solver->solveElement(k, c.x);
    benchmark::ClobberMemory();
  }
  state.counters["per_element"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  setCounters(state, c);
}

void BM_FpPxpbdElementCorotated(benchmark::State& state) { elementBenchmark(state, MaterialModel::kFixedCorotated); }
void BM_FpPxpbdElementNeoHookean(benchmark::State& state) { elementBenchmark(state, MaterialModel::kNeoHookean); }

// The floor: the same colors and element order, per element F, P (one SVD for corotated) and
// the scatter of V P dN/dX into a force vector; no solve, no position update.
void BM_StressOnlySweepCorotated(benchmark::State& state) {
  Case& c = caseFor(static_cast<int>(state.range(0)), MaterialModel::kFixedCorotated);
  const ElasticEnergy& energy = c.problem.elasticEnergy();
  std::vector<int> order;
  std::vector<int> color_start{0};
  for (int color = 0; color < c.solver->numColors(); ++color) {
    for (int e : c.solver->elementsOfColor(color)) order.push_back(e);
    color_start.push_back(static_cast<int>(order.size()));
  }
  VecX force = VecX::Zero(c.x.size());
  const int colors = c.solver->numColors();
  for (auto _ : state) {
#pragma omp parallel
    for (int color = 0; color < colors; ++color) {
#pragma omp for schedule(static)
      for (int k = color_start[color]; k < color_start[color + 1]; ++k) {
        const int e = order[k];
        const int* nodes = energy.elementNodes(e);
        Eigen::Matrix<double, 3, 4> xe;
        for (int a = 0; a < 4; ++a) xe.col(a) = c.x.segment<3>(3 * nodes[a]);
        const Eigen::Matrix<double, 4, 3> G = energy.shapeGradients<4>(e, 0);
        Mat3 P;
        energy.material(e).evaluate(xe * G, MaterialPointData{}, nullptr, &P, nullptr);
        const Eigen::Matrix<double, 3, 4> f = energy.restVolume(e) * P * G.transpose();
        for (int a = 0; a < 4; ++a) force.segment<3>(3 * nodes[a]) += f.col(a);
      }
    }
    benchmark::DoNotOptimize(force.data());
    benchmark::ClobberMemory();
  }
  setCounters(state, c);
}

BENCHMARK(BM_FpPxpbdSweepCorotated)->ArgsProduct({{16, 32}, {1, 2}})->ArgNames({"res", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FpPxpbdSweepNeoHookean)->ArgsProduct({{16, 32}, {1, 2}})->ArgNames({"res", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_StressOnlySweepCorotated)->Arg(16)->Arg(32)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FpPxpbdElementCorotated)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FpPxpbdElementNeoHookean)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace pbdlab

BENCHMARK_MAIN();
