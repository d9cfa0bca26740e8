// The main() of every unit test executable: GoogleTest's, after pbdlab's OpenMP wait policy.
// ctest sets OMP_WAIT_POLICY=passive (tests/CMakeLists.txt); a test binary run by hand on a busy
// machine would otherwise spin at every barrier (an XPBD-QS test took 208 s against 1.7 s).
#include <gtest/gtest.h>

#include "core/support/openmp_wait_policy.hpp"

int main(int argc, char** argv) {
  pbdlab::adoptPassiveOpenMpWaiting(argv);  // re-executes itself once with the policy set
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
