#include "core/support/openmp_wait_policy.hpp"

#include <unistd.h>

#include <cstdlib>

namespace pbdlab {

namespace {
// Set together with OMP_WAIT_POLICY before the re-execution: says who chose the policy and
// keeps the program from re-executing itself again.
constexpr const char* kMarker = "PBDLAB_OMP_WAIT_POLICY_SET";
}  // namespace

void adoptPassiveOpenMpWaiting(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv(kMarker) != nullptr) return;
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0 || setenv(kMarker, "1", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Still here: the re-execution failed; carry on with the runtime as it was loaded.
  unsetenv("OMP_WAIT_POLICY");
  unsetenv(kMarker);
}

const char* openMpWaitPolicySource() {
  if (std::getenv(kMarker) != nullptr) return "pbdlab";
  return std::getenv("OMP_WAIT_POLICY") != nullptr ? "user" : "unset";
}

}  // namespace pbdlab
