// Multi-layer XPBD (solvers/ml_xpbd/, docs/multi-layer-xpbd.md "Benchmarks") against Voigt
// XPBD (the same solver with layers [0]) on the multi-layer paper's Table 1 scene: a free 3 x 1
// plane-strain rectangle of Gmsh triangles (target sizes 0.1095, 0.0685, 0.0464: 642, 1,530
// and 3,296 triangles, the paper's 651, 1,550, 3,304), and on the Res 32 box (unit cube, 32
// nodes per side, five tets per cell, 148,955 tet4); StVK E 1e6, nu 0.3, rho 1, no gravity, no
// Dirichlet, h 0.005, started stretched 10% in x at rest velocity (Table 1), 1 and 2 threads.
//  - BM_VoigtXpbdSweep/mesh/threads: one Gauss-Seidel sweep over every element
//    (MlXpbdSolver::sweep) from the first step's x~ (the stretched state); a new step
//    (multipliers reset, x back to x~) every 50 sweeps, outside the timing.
//  - BM_MultiLayerStep/mesh/threads: one whole step of Table 1's schedule (layers [50, 25, 0] x
//    [1, 2, 47], strain-rate ordering, log_residuals false), and BM_VoigtXpbdStep/mesh/threads
//    the Voigt XPBD step of 50 sweeps (layers [0]). Consecutive steps of a free run, restarted
//    from the stretched state every 50 steps (Table 1's frames) with two untimed steps, so
//    every timed step has x^{t-1} for the strain rates. Time = the step's solver seconds
//    (StepMonitor's clock: the yardstick, evaluated at iterations 0 and 50, is excluded).
//    Counters ms_per_iteration (step / 50) and, from the solver's own log, layer_build_ms
//    (ordering + union-find of the step) and layer_build_share_percent of the step.
//  - BM_LayerConstruction/mesh: the layer construction alone, as the solver does it each step
//    (layered_step.cpp buildStepLayers): Green strains at x^t and x^{t-1} (here through
//    ElasticEnergy::deformationGradient; the solver has no public hook), strain rates (eq. 20),
//    sort and Algorithm 1's union-find (ml_xpbd::buildLayers); counter share_percent of a
//    1-thread multi-layer step from the same state (the mean of three consecutive steps,
//    measured after the loop).
// Mesh and Problem are built once per mesh, outside the timed regions. Run in Release:
//   OMP_NUM_THREADS=2 ./build/benchmarks/bench_ml_xpbd --benchmark_min_time=0.5
// (add --benchmark_out=bench.json --benchmark_out_format=json for a machine-readable copy).
#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/omp_threads.hpp"
#include "benchmarks/sweep_loop.hpp"
#include "core/solver/solver.hpp"
#include "meshes/box_mesh.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "solvers/ml_xpbd/layers.hpp"
#include "solvers/ml_xpbd/ml_xpbd_solver.hpp"

namespace pbdlab {
namespace {

constexpr double kDt = 0.005;            // Table 1's h
constexpr int kIterationsPerStep = 50;   // Table 1's iterations a frame
constexpr int kStepsPerRun = 50;         // Table 1's frames: then the run restarts
constexpr int kWarmUpSteps = 2;          // untimed after each restart: x^{t-1} exists

// The benchmark's "mesh" argument.
struct MeshCase {
  const char* label;
  double target_size;  // Gmsh's size on the 3 x 1 rectangle; 0: the Res 32 box
};
constexpr MeshCase kMeshes[] = {
    {"rect 3x1 h=0.1095 (paper 651 tris)", 0.1095},
    {"rect 3x1 h=0.0685 (paper 1550 tris)", 0.0685},
    {"rect 3x1 h=0.0464 (paper 3304 tris)", 0.0464},
    {"box res 32 (five-tet)", 0.0},
};

Mesh makeCaseMesh(const MeshCase& mesh_case) {
  if (mesh_case.target_size == 0.0) return makeBoxMesh(resBox(32));
  RectangleRecipe rectangle;
  rectangle.size = {3.0, 1.0};
  rectangle.target_size = mesh_case.target_size;
  return makeRectangleMesh(rectangle);
}

// Table 1's scene on mesh `index`, built once (plane strain for the rectangle: every z = 0).
const Problem& tableOneProblem(int index) {
  static std::map<int, std::unique_ptr<Problem>> problems;
  auto& slot = problems[index];
  if (!slot) {
    auto problem = std::make_unique<Problem>();
    problem->mesh = makeCaseMesh(kMeshes[index]);
    problem->material.model = MaterialModel::kStVenantKirchhoff;
    problem->material.youngs_modulus = 1e6;
    problem->material.poisson_ratio = 0.3;
    problem->material.density = 1.0;
    problem->initial_map = Vec3(1.1, 1.0, 1.0).asDiagonal();  // stretched 10% in x, released
    problem->time = {Integrator::kBackwardEuler, kDt, kStepsPerRun, 1};
    problem->finalize("bench_ml_xpbd");
    slot = std::move(problem);
  }
  return *slot;
}

MlXpbdOptions tableOneLayers() {
  MlXpbdOptions options;
  options.layers = {50.0, 25.0, 0.0};
  options.iterations_per_layer = {1, 2, 47};
  options.ordering = MlXpbdOrdering::kStrainRate;
  options.log_residuals = false;
  return options;
}

MlXpbdOptions voigtXpbd() {
  MlXpbdOptions options;  // layers [0]: the budget's 50 iterations end the step
  options.log_residuals = false;
  return options;
}

void setMeshCounters(benchmark::State& state, const Problem& problem, const MlXpbdSolver& solver, int index) {
  state.SetLabel(kMeshes[index].label);
  state.counters["vertices"] = problem.numNodes();
  state.counters["elements"] = problem.numElements();
  state.counters["colors"] = solver.numElementColors();
}

struct TimedStep {
  double seconds = 0.0;              // the step's solver seconds
  double layer_build_seconds = 0.0;  // the solver's own log (iteration 0)
};

// One step of `solver` (set up for `problem`) from `run`, which it advances.
TimedStep stepOnce(MlXpbdSolver& solver, const Problem& problem, State& run) {
  Budget budget;
  budget.max_iterations = kIterationsPerStep;
  budget.target_relative_residual = 0.0;   // never converged: every step does 50 iterations
  budget.record_every = kIterationsPerStep;  // the yardstick at iterations 0 and 50 only
  IterationLog log(solver.logColumns());
  const StepResult result = advanceOneStep(solver, problem, run, budget, log);
  TimedStep timed;
  timed.seconds = result.solver_seconds;
  timed.layer_build_seconds = log.value(log.rows().front(), "layer_build_seconds");
  return timed;
}

// From the stretched start, kWarmUpSteps untimed steps.
State warmedUpRun(MlXpbdSolver& solver, const Problem& problem) {
  State run = initialState(problem);
  for (int step = 0; step < kWarmUpSteps; ++step) stepOnce(solver, problem, run);
  return run;
}

void BM_VoigtXpbdSweep(benchmark::State& state) {
  const int index = static_cast<int>(state.range(0));
  const bench::ScopedOmpThreads threads(static_cast<int>(state.range(1)));
  const Problem& problem = tableOneProblem(index);
  MlXpbdSolver solver(voigtXpbd());
  solver.setup(problem);
  // The first step's x~ = x^0 (rest velocity, no external force): the stretched state.
  const State start = initialState(problem);
  const double inv_h2 = 1.0 / (kDt * kDt);
  double seconds = 0.0;  // the sweeps alone, for the counter (the benchmark's time is the same)
  const Positions x = bench::timeSweepsFrom(state, solver, start.x, kIterationsPerStep, [&](Positions& y) {
    const auto begin = std::chrono::steady_clock::now();
    solver.sweep(y, inv_h2);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  });
  setMeshCounters(state, problem, solver, index);
  state.counters["ms_per_iteration"] = 1e3 * seconds / static_cast<double>(state.iterations());
  if (!x.allFinite()) state.SkipWithError("positions became non-finite");
}

void runSteps(benchmark::State& state, const MlXpbdOptions& options) {
  const int index = static_cast<int>(state.range(0));
  const bench::ScopedOmpThreads threads(static_cast<int>(state.range(1)));
  const Problem& problem = tableOneProblem(index);
  MlXpbdSolver solver(options);
  solver.setup(problem);
  State run = warmedUpRun(solver, problem);
  int steps_in_run = 0;
  double seconds = 0.0, layer_build_seconds = 0.0;
  for (auto _ : state) {
    if (steps_in_run == kStepsPerRun) {
      run = warmedUpRun(solver, problem);  // not timed: the iteration time is set by hand
      steps_in_run = 0;
    }
    const TimedStep timed = stepOnce(solver, problem, run);
    state.SetIterationTime(timed.seconds);
    seconds += timed.seconds;
    layer_build_seconds += timed.layer_build_seconds;
    ++steps_in_run;
  }
  setMeshCounters(state, problem, solver, index);
  const double steps = static_cast<double>(state.iterations());
  state.counters["ms_per_iteration"] = 1e3 * seconds / (steps * kIterationsPerStep);
  state.counters["layer_build_ms"] = 1e3 * layer_build_seconds / steps;
  state.counters["layer_build_share_percent"] = seconds > 0.0 ? 100.0 * layer_build_seconds / seconds : 0.0;
  if (!run.x.allFinite()) state.SkipWithError("positions became non-finite");
}

void BM_MultiLayerStep(benchmark::State& state) { runSteps(state, tableOneLayers()); }
void BM_VoigtXpbdStep(benchmark::State& state) { runSteps(state, voigtXpbd()); }

std::vector<Mat3> greenStrainsAt(const ElasticEnergy& energy, const Positions& x) {
  std::vector<Mat3> strains(energy.numElements());
  for (int e = 0; e < energy.numElements(); ++e) strains[e] = ml_xpbd::greenStrain(energy.deformationGradient(e, 0, x));
  return strains;
}

void BM_LayerConstruction(benchmark::State& state) {
  const int index = static_cast<int>(state.range(0));
  const bench::ScopedOmpThreads threads(1);
  const Problem& problem = tableOneProblem(index);
  const ElasticEnergy& energy = problem.elasticEnergy();
  MlXpbdSolver solver(tableOneLayers());
  solver.setup(problem);
  // x^{t-1} and x^t of the first timed step of BM_MultiLayerStep.
  State run = initialState(problem);
  stepOnce(solver, problem, run);
  const Positions x_previous = run.x;
  stepOnce(solver, problem, run);
  const Positions& x_now = run.x;
  ml_xpbd::LayerRequest request;
  request.ordering = ml_xpbd::ElementOrdering::kStrainRate;
  request.rigid_percentages = tableOneLayers().layers;
  double seconds = 0.0, ordering_seconds = 0.0, union_find_seconds = 0.0;
  int bodies = 0;
  for (auto _ : state) {
    const auto begin = std::chrono::steady_clock::now();
    const std::vector<Mat3> now = greenStrainsAt(energy, x_now);
    const std::vector<Mat3> previous = greenStrainsAt(energy, x_previous);
    request.strain_rates = ml_xpbd::strainRatesFromGreenStrains(now, previous, kDt);
    const ml_xpbd::LayerHierarchy hierarchy = ml_xpbd::buildLayers(problem.mesh.elements, problem.numNodes(), request);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    ordering_seconds += hierarchy.times.ordering_seconds;
    union_find_seconds += hierarchy.times.union_find_seconds;
    bodies = static_cast<int>(hierarchy.layers.front().bodies.size());
    benchmark::DoNotOptimize(hierarchy.layers.data());
  }
  // The steps the construction belongs to, on one thread: the mean of this one and the next
  // two (consecutive, so each has x^{t-1} for its strain rates).
  double step_seconds = 0.0;
  for (int step = 0; step < 3; ++step) step_seconds += stepOnce(solver, problem, run).seconds / 3.0;
  setMeshCounters(state, problem, solver, index);
  const double iterations = static_cast<double>(state.iterations());
  state.counters["construction_ms"] = 1e3 * seconds / iterations;
  state.counters["sort_ms"] = 1e3 * ordering_seconds / iterations;
  state.counters["union_find_ms"] = 1e3 * union_find_seconds / iterations;
  state.counters["bodies_layer1"] = bodies;
  state.counters["ml_step_ms_1thread"] = 1e3 * step_seconds;
  state.counters["share_percent"] = 100.0 * seconds / iterations / step_seconds;
}

void meshesAndThreads(benchmark::internal::Benchmark* benchmark) {
  benchmark->ArgsProduct({{0, 1, 2, 3}, {1, 2}})->ArgNames({"mesh", "threads"})->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_VoigtXpbdSweep)->Apply(meshesAndThreads)->UseRealTime();
BENCHMARK(BM_MultiLayerStep)->Apply(meshesAndThreads)->UseManualTime();
BENCHMARK(BM_VoigtXpbdStep)->Apply(meshesAndThreads)->UseManualTime();
BENCHMARK(BM_LayerConstruction)
    ->ArgsProduct({{0, 1, 2, 3}})
    ->ArgNames({"mesh"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace pbdlab

BENCHMARK_MAIN();
