// Time of PBNG and MPBNG on PBNG Fig. 19's cloth as pbdlab reads it (scenes/pbng_fig19_cloth.json:
// 1 x 1 m, 88 x 88 cells = 7,921 vertices, held at two corners, E 1000 N/m, nu 0.3, rho 10
// kg/m^2, backward Euler dt 0.005), at 1 and 2 threads:
//  - BM_PbngClothSweep: one PBNG sweep over every free vertex (PBNG §7, §10);
//  - BM_PbngClothStep/BM_MpbngClothStep: one whole step of `iterations` (44 sweeps; 13 MPBNG
//    iterations with 3 levels, each 5 coarsest sweeps and a sweep of levels 0-1, then 7 final
//    sweeps: solvers/pbng/mpbng_solver.hpp), the yardstick evaluated at the start and the end
//    only (record_every), counters s_per_iteration and fine_sweeps (MPBNG: sweeps of level 0's
//    size the step did).
// The equal-time comparison of docs/pbng.md ("MPBNG") reads these. Run in Release:
//   ./build/benchmarks/bench_mpbng --benchmark_out=bench.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>

#include "benchmarks/omp_threads.hpp"
#include "meshes/gmsh_meshes.hpp"
#include "solvers/pbng/mpbng_solver.hpp"
#include "solvers/pbng/pbng_solver.hpp"

namespace pbdlab {
namespace {

const Problem& fig19Cloth() {
  static std::unique_ptr<Problem> problem;
  if (!problem) {
    RectangleRecipe recipe;
    recipe.embedding = RectangleRecipe::Embedding::k3dSurface;
    recipe.plane = "xz";
    recipe.cells = {88, 88};
    problem = std::make_unique<Problem>();
    problem->mesh = makeRectangleMesh(recipe);
    for (int i = 0; i < problem->mesh.numNodes(); ++i) {
      const Vec3 X = problem->mesh.restPosition(i);
      if (std::abs(X.z() - 1.0) < 1e-9 && (std::abs(X.x()) < 1e-9 || std::abs(X.x() - 1.0) < 1e-9))
        problem->mesh.node_sets["held"].push_back(i);
    }
    problem->material.model = MaterialModel::kFixedCorotated;
    problem->material.youngs_modulus = 1000.0;
    problem->material.poisson_ratio = 0.3;
    problem->material.density = 10.0;
    problem->discretization.triangles = TriangleModel::kMembrane;
    problem->gravity = Vec3(0.0, -9.8, 0.0);
    problem->dirichlet.push_back({"held", {true, true, true}, {}});
    problem->time = {Integrator::kBackwardEuler, 0.005, 1, 1};
    problem->finalize("bench_mpbng cloth");
  }
  return *problem;
}

void BM_PbngClothSweep(benchmark::State& state) {
  const bench::ScopedOmpThreads threads(static_cast<int>(state.range(0)));
  const Problem& problem = fig19Cloth();
  PbngSolver solver;
  solver.setup(problem);
  const State start = initialState(problem);
  const StepObjective objective(problem, start.x, start.v, 0);
  Positions x;
  solver.beginStep(objective, x);
  for (auto _ : state) {
    solver.sweep(x);
    benchmark::ClobberMemory();
  }
  state.counters["vertices"] = problem.numNodes();
  state.counters["colors"] = solver.numColors();
}

// One step of `solver` from the cloth's initial state with an iteration budget of `iterations`.
void timeSteps(benchmark::State& state, Solver& solver, int iterations) {
  const bench::ScopedOmpThreads threads(static_cast<int>(state.range(0)));
  const Problem& problem = fig19Cloth();
  solver.setup(problem);
  Budget budget;
  budget.max_iterations = iterations;
  budget.target_relative_residual = 0.0;
  budget.record_every = 1000;  // the yardstick at the start and the end only
  IterationLog log(solver.logColumns());
  for (auto _ : state) {
    State s = initialState(problem);
    advanceOneStep(solver, problem, s, budget, log);
  }
  state.counters["s_per_iteration"] =
      benchmark::Counter(iterations, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  const auto& columns = log.extraColumns();
  for (size_t k = 0; k < columns.size(); ++k)
    if (columns[k] == "fine_sweeps") state.counters["fine_sweeps"] = log.rows().back().extra[k];
}

void BM_PbngClothStep(benchmark::State& state) {
  PbngSolver pbng;
  timeSteps(state, pbng, 44);
}

void BM_MpbngClothStep(benchmark::State& state) {
  MpbngSolver mpbng;
  timeSteps(state, mpbng, 13);
}

BENCHMARK(BM_PbngClothSweep)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PbngClothStep)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MpbngClothStep)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace pbdlab

BENCHMARK_MAIN();
