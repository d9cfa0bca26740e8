#include "meshes/gmsh/gmsh_state.hpp"

#include <gmsh.h>
#include <omp.h>

#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>

namespace pbdlab::gmsh_state {

namespace {

std::recursive_mutex& sessionMutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

// Guarded by sessionMutex().
int g_depth = 0;
int g_saved_threads = 1;

}  // namespace

void beginSession() {
  sessionMutex().lock();
  if (g_depth > 0) {
    ++g_depth;
    return;
  }
  g_saved_threads = omp_get_max_threads();
  std::string failure;
  try {
    // No argv, and no gmshrc / gmsh-options: the meshes must not depend on a user's settings.
    gmsh::initialize(0, nullptr, false);
    gmsh::option::setNumber("General.Terminal", 0);
    gmsh::option::setNumber("General.Verbosity", 0);
  } catch (const std::exception& e) {
    failure = std::string("Gmsh initialization failed: ") + e.what();
  } catch (...) {
    failure = "Gmsh initialization failed";
  }
  // gmsh::initialize set the OpenMP thread count to General.NumThreads (1 by default).
  omp_set_num_threads(g_saved_threads);
  if (!failure.empty()) {
    sessionMutex().unlock();
    throw std::runtime_error(failure);
  }
  g_depth = 1;
}

void endSession() {
  if (--g_depth == 0) {
    try {
      gmsh::finalize();
    } catch (...) {
      // Called from destructors: must not throw; Gmsh's state is gone either way.
    }
    omp_set_num_threads(g_saved_threads);
  }
  sessionMutex().unlock();
}

int savedThreadCount() { return g_saved_threads; }

void restoreThreadCount() { omp_set_num_threads(g_saved_threads); }

}  // namespace pbdlab::gmsh_state
