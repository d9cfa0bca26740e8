// High-order XPBD (issue 11): time of one substep (one Gauss-Seidel sweep over every element
// constraint, colors in parallel; Algorithm 1 runs one per substep) per element and per
// quadrature point, for each element type, and the memory the problem and the solver hold per
// vertex. The high-order paper's target: a P2/P3 quadrature point within 1.5x of a P1
// element's cost.
//
// Meshes: the 4x1x1 bending beam of the paper (x-min clamped, gravity), about 2,100-3,100
// vertices for every type; the paper's developed stable Neo-Hooke split (two constraints per
// element), E = 1e6, nu = 0.35, rho = 1000, one substep of a 1/60 s frame of 50 substeps.
// The prediction is reset every 50 sweeps outside the timing (a frame).
//
// BM_HighOrderXpbdScaling (the paper's Fig. 8): the unit cube fixed at its base under gravity,
// nu = 0.49, E = 1e6, rho = 1000, five-tet cubes of P1, P2 and P3 from about 700 to 10,000
// vertices; seconds per frame of 50 substeps and bytes per vertex. Run in Release:
//   OMP_NUM_THREADS=2 ./build/benchmarks/bench_high_order_xpbd --benchmark_out=ho.json --benchmark_out_format=json
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <memory>

#include "benchmarks/omp_threads.hpp"
#include "benchmarks/xpbd_sweep_loop.hpp"
#include "meshes/box_mesh.hpp"
#include "solvers/pbd_xpbd/xpbd_solver.hpp"

namespace pbdlab {
namespace {

struct ElementCase {
  const char* label;
  BoxFamily family;
  int order;
  std::array<int, 3> cells;
};

// Indexed by the benchmark's first argument.
const ElementCase kCases[] = {
    {"P1", BoxFamily::kFiveTet, 1, {32, 8, 8}},   {"P2", BoxFamily::kFiveTet, 2, {16, 4, 4}},
    {"P3", BoxFamily::kFiveTet, 3, {12, 3, 3}},   {"Q1", BoxFamily::kHex, 1, {32, 8, 8}},
    {"prism", BoxFamily::kPrism, 1, {32, 8, 8}}, {"pyramid", BoxFamily::kPyramid, 1, {24, 6, 6}},
};

size_t heapBytesInUse() { return mallinfo2().uordblks; }

// E = 1e6, rho = 1000, gravity -y, the raw-lambda Neo-Hookean of the paper's eq. 18, one node
// set clamped; a substep of a 1/60 s frame of 50.
Problem paperProblem(Mesh mesh, double poisson_ratio, const std::string& clamped) {
  Problem problem;
  problem.mesh = std::move(mesh);
  problem.material.model = MaterialModel::kNeoHookean;
  problem.material.mapping = LameMapping::kRaw;
  problem.material.youngs_modulus = 1e6;
  problem.material.poisson_ratio = poisson_ratio;
  problem.material.density = 1000.0;
  problem.gravity = Vec3(0.0, -9.8, 0.0);
  problem.dirichlet.push_back({clamped, {true, true, true}, {}});
  problem.time = {Integrator::kBackwardEuler, 1.0 / 60.0 / 50.0, 1, 1};
  problem.finalize("bench_high_order_xpbd");
  return problem;
}

Problem bendingBeam(const ElementCase& c) {
  BoxMeshRecipe box;
  box.size = Vec3(4.0, 1.0, 1.0);
  box.cells = c.cells;
  box.family = c.family;
  box.order = c.order;
  return paperProblem(makeBoxMesh(box), 0.35, "x-min");
}

// The paper's Fig. 8 cube: unit cube, base (y-min) fixed.
Problem scalingCube(int order, int cells) {
  BoxMeshRecipe box;
  box.cells = {cells, cells, cells};
  box.order = order;
  return paperProblem(makeBoxMesh(box), 0.49, "y-min");
}

// A problem and its XPBD solver on the developed split, set up; the heap both hold (the mesh,
// energy data: dN/dX and V_q per point, masses, the solver's per-slot copies) per vertex.
struct SetUpRun {
  std::unique_ptr<Problem> problem;
  std::unique_ptr<XpbdSolver> solver;
  double bytes_per_vertex = 0.0;
};

template <class MakeProblem>
SetUpRun setUp(MakeProblem&& make_problem) {
  SetUpRun run;
  const size_t heap_before = heapBytesInUse();
  run.problem = std::make_unique<Problem>(make_problem());
  XpbdOptions options;
  options.split = "developed";
  run.solver = std::make_unique<XpbdSolver>(options);
  run.solver->setup(*run.problem);
  run.bytes_per_vertex =
      static_cast<double>(heapBytesInUse() - heap_before) / static_cast<double>(run.problem->numNodes());
  return run;
}

void BM_HighOrderXpbdSubstep(benchmark::State& state) {
  const ElementCase& c = kCases[state.range(0)];
  const bench::ScopedOmpThreads threads(static_cast<int>(state.range(1)));
  const SetUpRun run = setUp([&] { return bendingBeam(c); });
  const Problem* problem = run.problem.get();
  const XpbdSolver& solver = *run.solver;
  const Positions x = bench::timeXpbdSweeps(state, *run.solver, *problem, 50);  // a frame of 50 substeps
  const int elements = problem->mesh.numElements();
  const int points = problem->elasticEnergy().quadraturePointsPerElement();
  state.SetLabel(c.label);
  state.counters["vertices"] = problem->numNodes();
  state.counters["elements"] = elements;
  state.counters["points_per_element"] = points;
  state.counters["colors"] = solver.numElementColors();
  state.counters["ns_per_element"] = benchmark::Counter(
      static_cast<double>(elements), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["ns_per_point"] =
      benchmark::Counter(static_cast<double>(elements) * points,
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["bytes_per_vertex"] = run.bytes_per_vertex;
  if (!x.allFinite()) state.SkipWithError("positions became non-finite");
}

// Element types compared at equal threading (range 2: OpenMP threads). With 2 threads a colour
// runs in parallel only when it holds enough elements (XpbdSolver's worthThreads): P1's
// colours do from about 2,700 vertices, P2's and P3's small colours never at these sizes, so
// the 1-thread rows are the like-for-like comparison of the element types.
void BM_HighOrderXpbdScaling(benchmark::State& state) {
  const int order = static_cast<int>(state.range(0));
  const bench::ScopedOmpThreads threads(static_cast<int>(state.range(2)));
  const SetUpRun run = setUp([&] { return scalingCube(order, static_cast<int>(state.range(1))); });
  const Problem* problem = run.problem.get();
  const Positions x = bench::timeXpbdSweeps(state, *run.solver, *problem, 50);
  state.SetLabel("P" + std::to_string(order));
  state.counters["vertices"] = problem->numNodes();
  state.counters["elements"] = problem->mesh.numElements();
  // A frame is 50 substeps of one sweep: 50x the time per iteration (printed with an SI
  // prefix: "25.3m" is 25.3 ms).
  state.counters["seconds_per_frame"] = benchmark::Counter(
      1.0 / 50.0, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["bytes_per_vertex"] = run.bytes_per_vertex;
  if (!x.allFinite()) state.SkipWithError("positions became non-finite");
}

BENCHMARK(BM_HighOrderXpbdScaling)
    ->ArgsProduct({{1}, {8, 13, 17, 21}, {1, 2}})
    ->ArgsProduct({{2}, {4, 6, 8, 10}, {1, 2}})
    ->ArgsProduct({{3}, {3, 4, 5, 7}, {1, 2}})
    ->ArgNames({"order", "cells", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK(BM_HighOrderXpbdSubstep)
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {1, 2}})
    ->ArgNames({"element", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace pbdlab

BENCHMARK_MAIN();
