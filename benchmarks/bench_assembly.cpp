// Kernels of one Newton iteration on the Res N five-tet box (unit cube, x-min clamped,
// stable Neo-Hookean, a 30-degree twist applied to x-max): energy, gradient, Hessian
// assembly (true and SPD-projected) and CHOLMOD's supernodal numeric factorization with the
// symbolic analysis reused; and a sweep of PBNG's per-node blocks. Set-up is outside the
// timed region. Run in Release:
//   ./build/benchmarks/bench_assembly --benchmark_out=bench.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <Eigen/Geometry>
#include <Eigen/LU>
#include <map>
#include <memory>

#include "core/topology/coloring.hpp"
#include "meshes/box_mesh.hpp"
#include "reference/hessian_assembly.hpp"
#include "reference/newton.hpp"

namespace pbdlab {
namespace {

struct Case {
  Problem problem;
  std::unique_ptr<StepObjective> objective;
  Positions x;
  std::unique_ptr<FreeDofHessian> hessian;
};

// One case per resolution, built once and shared by the benchmarks.
Case& caseFor(int res) {
  static std::map<int, std::unique_ptr<Case>> cases;
  auto& slot = cases[res];
  if (!slot) {
    slot = std::make_unique<Case>();
    Problem& problem = slot->problem;
    problem.mesh = makeBoxMesh(resBox(res));
    problem.material.model = MaterialModel::kStableNeoHookean;
    problem.material.youngs_modulus = 1e5;
    problem.material.poisson_ratio = 0.3;
    MotionStage twist;
    twist.kind = MotionStage::Kind::kRotate;
    twist.axis_point = Vec3(1.0, 0.5, 0.5);
    twist.axis_direction = Vec3::UnitX();
    twist.angle = M_PI / 6;
    twist.t_end = 1.0;
    problem.dirichlet.push_back({"x-min", {true, true, true}, {}});
    problem.dirichlet.push_back({"x-max", {true, true, true}, {{twist}}});
    problem.time = {Integrator::kQuasistatic, 1.0, 1};
    problem.finalize("bench");
    const Positions x0 = problem.mesh.restPositionsFlat();
    slot->objective = std::make_unique<StepObjective>(problem, x0, VecX::Zero(x0.size()), 0);
    // A deformed interior: the twist interpolated linearly along x.
    slot->x = x0;
    for (int i = 0; i < problem.numNodes(); ++i) {
      const Vec3 X = problem.mesh.restPosition(i);
      slot->x.segment<3>(3 * i) =
          twist.axis_point + Eigen::AngleAxisd(X.x() * twist.angle, Vec3::UnitX()) *
                                                               (X - twist.axis_point);
    }
    slot->hessian = std::make_unique<FreeDofHessian>(*slot->objective);
  }
  return *slot;
}

void setCounters(benchmark::State& state, const Case& c) {
  state.counters["vertices"] = c.problem.numNodes();
  state.counters["tets"] = c.problem.mesh.numElements();
  state.counters["free_dofs"] = static_cast<double>(c.problem.freeDofs().size());
}

void BM_Energy(benchmark::State& state) {
  Case& c = caseFor(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(c.objective->energy(c.x));
  setCounters(state, c);
}

void BM_Gradient(benchmark::State& state) {
  Case& c = caseFor(static_cast<int>(state.range(0)));
  VecX g;
  for (auto _ : state) {
    c.objective->gradient(c.x, g);
    benchmark::DoNotOptimize(g.data());
  }
  setCounters(state, c);
}

void BM_HessianAssembly(benchmark::State& state) {
  Case& c = caseFor(static_cast<int>(state.range(0)));
  const HessianKind kind = state.range(1) ? HessianKind::kProjected : HessianKind::kTrue;
  for (auto _ : state) benchmark::DoNotOptimize(c.hessian->assemble(*c.objective, c.x, kind).valuePtr());
  setCounters(state, c);
  state.SetLabel(state.range(1) ? "projected" : "true");
}

void BM_CholmodFactorize(benchmark::State& state) {
  Case& c = caseFor(static_cast<int>(state.range(0)));
  const SparseMatrix& H = c.hessian->assemble(*c.objective, c.x, HessianKind::kProjected);
  Eigen::CholmodSupernodalLLT<SparseMatrix, Eigen::Lower> cholesky;
  cholesky.analyzePattern(H);
  for (auto _ : state) {
    cholesky.factorize(H);
    if (cholesky.info() != Eigen::Success) state.SkipWithError("CHOLMOD: matrix not positive definite");
  }
  setCounters(state, c);
  state.counters["nnz_lower"] = static_cast<double>(H.nonZeros());
  state.SetLabel(cholmodVersion() + ", " + blasLibrary());
}

// One Gauss-Seidel sweep's worth of per-node blocks (PBNG eq. 28-34): for every node, the
// gradient row and 3x3 diagonal block of each element it belongs to, with the approximate
// tangent (no SVD for the Hessian; the corotated stress still needs one). Reported per
// node-element visit.
void BM_NodeBlocks(benchmark::State& state) {
  Case& c = caseFor(static_cast<int>(state.range(0)));
  const ElasticEnergy& elastic = c.problem.elasticEnergy();
  const NodeAdjacency adjacency = nodeAdjacency(
      c.problem.numNodes(), {elastic.numStencils(), elastic.nodesPerStencil(), [&](int e) { return elastic.stencilNodes(e); }});
  const auto visits = static_cast<int64_t>(adjacency.stencil.size());
  for (auto _ : state) {
    Vec3 sum = Vec3::Zero();
    for (int i = 0; i < adjacency.numNodes(); ++i) {
      Vec3 g = Vec3::Zero();
      Mat3 H = Mat3::Zero();
      for (int p = adjacency.start[i]; p < adjacency.start[i + 1]; ++p)
        elastic.addNodeBlock(adjacency.stencil[p], adjacency.local[p], c.x, 0.0, HessianKind::kApproximate, g, H);
      sum += H.inverse() * g;
    }
    benchmark::DoNotOptimize(sum.data());
  }
  setCounters(state, c);
  state.counters["visits"] = static_cast<double>(visits);
  state.counters["ns_per_visit"] =
      benchmark::Counter(static_cast<double>(visits) * 1e-9, benchmark::Counter::kIsIterationInvariantRate |
                                                                   benchmark::Counter::kInvert);
}

BENCHMARK(BM_Energy)->Arg(16)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gradient)->Arg(16)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HessianAssembly)->Args({16, 0})->Args({16, 1})->Args({32, 0})->Args({32, 1})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CholmodFactorize)->Arg(16)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NodeBlocks)->Arg(32)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pbdlab

BENCHMARK_MAIN();
