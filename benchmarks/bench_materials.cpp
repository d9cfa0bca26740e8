// Material kernels per model: the old path (energyDensity + firstPiola + firstPiolaDerivative,
// three calls; the corotated models run three SVDs) against one evaluate() call with all three
// outputs (one SVD), and the PBNG approximate tangent, on a fixed set of 1024 random F
// (singular values in [0.4, 1.6], a third of them inverted; seeded). Reported per F
// (items_per_second). The muscle gets random unit fibres and activation 0.5. Also the
// inversion-safe SVD alone against Eigen::JacobiSVD on the same 4096 F (BM_*Svd*). Run in Release:
//   ./build/benchmarks/bench_materials --benchmark_out=bench.json --benchmark_out_format=json
//   ./build/benchmarks/bench_materials --benchmark_filter=Svd
#include <benchmark/benchmark.h>

#include <Eigen/Geometry>
#include <Eigen/SVD>
#include <memory>
#include <random>
#include <vector>

#include "core/materials/material.hpp"
#include "core/materials/polar_svd.hpp"

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

// ---- The 3x3 SVD alone (polar_svd.hpp), per call. ----

constexpr int kNumSvdF = 4096;

// Arg 0: singular values in [0.4, 1.6], a third inverted (one negative value), random
// rotations; arg 1: near-rest F = R (I + E), |E_ij| ~ 1e-3, a solver's typical input.
const std::vector<Mat3>& svdInputs(int set) {
  static const std::vector<Mat3> sets[2] = {[] {
    std::mt19937 rng(20240612u);
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> singular(0.4, 1.6);
    std::vector<Mat3> out(kNumSvdF);
    for (int n = 0; n < kNumSvdF; ++n) {
      Vec3 s(singular(rng), singular(rng), singular(rng));
      if (n % 3 == 2) s(n % 2) = -s(n % 2);
      const Mat3 U = Eigen::Quaterniond(normal(rng), normal(rng), normal(rng), normal(rng)).normalized().toRotationMatrix();
      const Mat3 V = Eigen::Quaterniond(normal(rng), normal(rng), normal(rng), normal(rng)).normalized().toRotationMatrix();
      out[n] = U * s.asDiagonal() * V.transpose();
    }
    return out;
  }(), [] {
    std::mt19937 rng(20240613u);
    std::normal_distribution<double> normal;
    std::vector<Mat3> out(kNumSvdF);
    for (int n = 0; n < kNumSvdF; ++n) {
      Mat3 E;
      for (int k = 0; k < 9; ++k) E.data()[k] = 1e-3 * normal(rng);
      const Mat3 R = Eigen::Quaterniond(normal(rng), normal(rng), normal(rng), normal(rng)).normalized().toRotationMatrix();
      out[n] = R * (Mat3::Identity() + E);
    }
    return out;
  }()};
  return sets[set];
}

const char* svdSetName(int set) { return set == 0 ? "random, 1/3 inverted" : "near rest"; }

void BM_RotationVariantSvd(benchmark::State& state) {
  const std::vector<Mat3>& set = svdInputs(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    for (const Mat3& F : set) {
      RotationVariantSvd svd = rotationVariantSvd(F);
      benchmark::DoNotOptimize(svd);
    }
  }
  state.SetItemsProcessed(state.iterations() * kNumSvdF);
  state.counters["ns_per_svd"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kNumSvdF), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(svdSetName(static_cast<int>(state.range(0))));
}

void BM_RotationVariantSingularValues(benchmark::State& state) {
  const std::vector<Mat3>& set = svdInputs(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    for (const Mat3& F : set) {
      Vec3 sigma = rotationVariantSingularValues(F);
      benchmark::DoNotOptimize(sigma);
    }
  }
  state.SetItemsProcessed(state.iterations() * kNumSvdF);
  state.counters["ns_per_svd"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kNumSvdF), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(svdSetName(static_cast<int>(state.range(0))));
}

// What rotationVariantSvd cost before (JacobiSVD with full U and V, without the sign fix-up).
void BM_JacobiSvdBaseline(benchmark::State& state) {
  const std::vector<Mat3>& set = svdInputs(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    for (const Mat3& F : set) {
      const Eigen::JacobiSVD<Mat3, Eigen::NoQRPreconditioner> svd(F, Eigen::ComputeFullU | Eigen::ComputeFullV);
      Mat3 U = svd.matrixU();
      Vec3 sigma = svd.singularValues();
      Mat3 V = svd.matrixV();
      benchmark::DoNotOptimize(U);
      benchmark::DoNotOptimize(sigma);
      benchmark::DoNotOptimize(V);
    }
  }
  state.SetItemsProcessed(state.iterations() * kNumSvdF);
  state.counters["ns_per_svd"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kNumSvdF), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(svdSetName(static_cast<int>(state.range(0))));
}

BENCHMARK(BM_RotationVariantSvd)->Arg(0)->Arg(1);
BENCHMARK(BM_RotationVariantSingularValues)->Arg(0)->Arg(1);
BENCHMARK(BM_JacobiSvdBaseline)->Arg(0)->Arg(1);

BENCHMARK(BM_SeparateCalls)->Apply(allModels);
BENCHMARK(BM_Evaluate)->Apply(allModels);
BENCHMARK(BM_EvaluateWithApproximateTangent)->Apply(allModels);

}  // namespace
}  // namespace pbdlab

BENCHMARK_MAIN();
