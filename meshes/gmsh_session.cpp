#include "meshes/gmsh_session.hpp"

#include <gmsh.h>
#include <omp.h>

#include <exception>
#include <stdexcept>
#include <string>

namespace pbdlab {

namespace {

std::recursive_mutex& sessionMutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

// Guarded by sessionMutex().
int g_depth = 0;
int g_saved_threads = 1;

}  // namespace

GmshSession::GmshSession() : lock_(sessionMutex()) {
  if (g_depth > 0) {
    ++g_depth;
    return;
  }
  g_saved_threads = omp_get_max_threads();
  try {
    // No argv, and no gmshrc / gmsh-options: the meshes must not depend on a user's settings.
    gmsh::initialize(0, nullptr, false);
    gmsh::option::setNumber("General.Terminal", 0);
    gmsh::option::setNumber("General.Verbosity", 0);
  } catch (const std::exception& e) {
    omp_set_num_threads(g_saved_threads);
    throw std::runtime_error(std::string("Gmsh initialization failed: ") + e.what());
  } catch (...) {
    omp_set_num_threads(g_saved_threads);
    throw std::runtime_error("Gmsh initialization failed");
  }
  // gmsh::initialize set the OpenMP thread count to General.NumThreads (1 by default).
  omp_set_num_threads(g_saved_threads);
  g_depth = 1;
}

GmshSession::~GmshSession() {
  if (--g_depth > 0) return;
  try {
    gmsh::finalize();
  } catch (...) {
    // A destructor must not throw; Gmsh's state is gone either way.
  }
  omp_set_num_threads(g_saved_threads);
}

int GmshSession::savedThreadCount() const { return g_saved_threads; }

void GmshSession::restoreThreadCount() const { omp_set_num_threads(g_saved_threads); }

}  // namespace pbdlab
