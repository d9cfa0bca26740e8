#include "core/support/thread_settings.hpp"

#include <dlfcn.h>
#include <omp.h>

#include <cstdlib>

#include "core/support/openmp_wait_policy.hpp"

namespace pbdlab {

ThreadSettings currentThreadSettings() {
  ThreadSettings settings;
  settings.omp_threads = omp_get_max_threads();
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  settings.omp_wait_policy = policy != nullptr ? policy : "unset";
  settings.omp_wait_policy_source = openMpWaitPolicySource();
  // OpenBLAS (Debian's libblas.so.3 alternative when installed) says how many threads it
  // runs; found by name so that pbdlab does not link OpenBLAS itself.
  using GetThreads = int (*)();
  if (auto get = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"))) settings.blas_threads = get();
  return settings;
}

}  // namespace pbdlab
