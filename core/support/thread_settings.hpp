#pragma once
// The threading a run uses, as it is recorded in summary.json and the report, and when a loop
// is worth a team of threads.
#include <string>

namespace pbdlab {

struct ThreadSettings {
  int omp_threads = 1;                 // omp_get_max_threads()
  std::string omp_wait_policy;         // OMP_WAIT_POLICY, or "unset" (libgomp: spin, then sleep)
  std::string omp_wait_policy_source;  // core/support/openmp_wait_policy.hpp: "user", "pbdlab" or "unset"
  int blas_threads = -1;               // OpenBLAS's thread count; -1 if the BLAS is not OpenBLAS
};
ThreadSettings currentThreadSettings();

// Loops over fewer items run on one thread (`#pragma omp parallel for if(worthThreads(n))`):
// waking a sleeping team (passive waiting, core/support/openmp_wait_policy.hpp) costs tens of
// microseconds per parallel region, more than a small loop's work. Measured on a 45-node box
// with explicit_relaxation (thousands of tiny regions): 7.55 s on 2 threads against 0.073 s on
// one, before this threshold. One element kernel costs about 0.3-2 us, so 256 items are some
// 100-500 us of work: well above the wake-up cost.
constexpr int kMinItemsForThreads = 256;
constexpr bool worthThreads(long items) { return items >= kMinItemsForThreads; }

}  // namespace pbdlab
