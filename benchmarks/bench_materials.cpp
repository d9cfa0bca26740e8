// Material kernels per model: the old path (energyDensity + firstPiola + firstPiolaDerivative,
// three calls; the corotated models run three SVDs) against one evaluate() call with all three
// outputs (one SVD), and the PBNG approximate tangent, on a fixed set of 1024 random F
// (singular values in [0.4, 1.6], a third of them inverted; seeded). Reported per F
// (items_per_second). The muscle gets random unit fibres and activation 0.5. Run in Release:
//   ./build/benchmarks/bench_materials --benchmark_out=bench.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <Eigen/Geometry>
#include <memory>
#include <random>
#include <vector>

#include "core/material.hpp"

namespace pbdlab {
namespace {

constexpr int kNumF = 1024;

struct Sample {
  Mat3 F;
  MaterialPointData data;
};

const std::vector<Sample>& samples() {
  static const std::vector<Sample> set = [] {
    std::mt19937 rng(20240611u);
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> singular(0.4, 1.6);
    const auto rotation = [&] {
      Eigen::Quaterniond q(normal(rng), normal(rng), normal(rng), normal(rng));
      return Mat3(q.normalized().toRotationMatrix());
    };
    std::vector<Sample> out(kNumF);
    for (int n = 0; n < kNumF; ++n) {
      Vec3 s(singular(rng), singular(rng), singular(rng));
      if (n % 3 == 2) s(n % 2) = -s(n % 2);
      out[n].F = rotation() * s.asDiagonal() * rotation().transpose();
      out[n].data.fibre_direction = Vec3(normal(rng), normal(rng), normal(rng)).normalized();
      out[n].data.activation = 0.5;
    }
    return out;
  }();
  return set;
}

std::unique_ptr<Material> materialFor(MaterialModel model) {
  MaterialSpec spec;
  spec.model = model;
  spec.youngs_modulus = 1e5;
  spec.poisson_ratio = 0.4;
  return makeMaterial(spec);
}

void BM_SeparateCalls(benchmark::State& state) {
  const auto material = materialFor(static_cast<MaterialModel>(state.range(0)));
  const std::vector<Sample>& set = samples();
  for (auto _ : state) {
    for (const Sample& s : set) {
      double psi = material->energyDensity(s.F, s.data);
      Mat3 P = material->firstPiola(s.F, s.data);
      Mat9 K = material->firstPiolaDerivative(s.F, s.data);
      benchmark::DoNotOptimize(psi);
      benchmark::DoNotOptimize(P);
      benchmark::DoNotOptimize(K);
    }
  }
  state.SetItemsProcessed(state.iterations() * kNumF);
  state.SetLabel(material->name());
}

void BM_Evaluate(benchmark::State& state) {
  const auto material = materialFor(static_cast<MaterialModel>(state.range(0)));
  const std::vector<Sample>& set = samples();
  for (auto _ : state) {
    for (const Sample& s : set) {
      double psi;
      Mat3 P;
      Mat9 K;
      material->evaluate(s.F, s.data, &psi, &P, &K);
      benchmark::DoNotOptimize(psi);
      benchmark::DoNotOptimize(P);
      benchmark::DoNotOptimize(K);
    }
  }
  state.SetItemsProcessed(state.iterations() * kNumF);
  state.SetLabel(material->name());
}

// Psi and P from evaluate() plus the approximate tangent (PBNG's per-node Hessian).
void BM_EvaluateWithApproximateTangent(benchmark::State& state) {
  const auto material = materialFor(static_cast<MaterialModel>(state.range(0)));
  const std::vector<Sample>& set = samples();
  for (auto _ : state) {
    for (const Sample& s : set) {
      double psi;
      Mat3 P;
      material->evaluate(s.F, s.data, &psi, &P, nullptr);
      Mat9 K = material->approximateTangent(s.F, s.data);
      benchmark::DoNotOptimize(psi);
      benchmark::DoNotOptimize(P);
      benchmark::DoNotOptimize(K);
    }
  }
  state.SetItemsProcessed(state.iterations() * kNumF);
  state.SetLabel(material->name());
}

void allModels(benchmark::internal::Benchmark* b) {
  for (MaterialModel model : {MaterialModel::kFixedCorotated, MaterialModel::kNeoHookean,
                              MaterialModel::kStableNeoHookean, MaterialModel::kStVenantKirchhoff,
                              MaterialModel::kMuscle})
    b->Arg(static_cast<int>(model));
}

BENCHMARK(BM_SeparateCalls)->Apply(allModels);
BENCHMARK(BM_Evaluate)->Apply(allModels);
BENCHMARK(BM_EvaluateWithApproximateTangent)->Apply(allModels);

}  // namespace
}  // namespace pbdlab

BENCHMARK_MAIN();
