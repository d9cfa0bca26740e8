#pragma once
// A benchmark argument "threads": OpenMP runs with that many threads while the benchmark
// lives, and with the previous count afterwards (so the next benchmark is not affected).
#include <omp.h>

namespace pbdlab::bench {

class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int threads) : previous_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ScopedOmpThreads() { omp_set_num_threads(previous_); }
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int previous_;
};

}  // namespace pbdlab::bench
