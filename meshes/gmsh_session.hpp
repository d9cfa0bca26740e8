#pragma once
// RAII guard around the Gmsh SDK's global state (TOOLCHAIN.md, "Gmsh 4.8 pitfalls").
//
// The outermost guard calls gmsh::initialize without reading the user's config files, turns
// Gmsh's terminal output off (General.Terminal 0, General.Verbosity 0), and restores the
// OpenMP thread count that gmsh::initialize resets to General.NumThreads; its destructor calls
// gmsh::finalize and restores the thread count again.
//
// Gmsh is one process-wide singleton, so this is not a re-entrant or concurrent API:
// - a guard holds a process-wide recursive mutex for its whole lifetime, so guards in other
//   threads wait (they serialize) instead of racing on Gmsh's state;
// - nested guards in one thread are counted and the inner ones do nothing, but they share the
//   outer guard's Gmsh state: code inside an inner guard must not assume a fresh model and
//   must not call gmsh::initialize/finalize itself.
// Do not call gmsh::initialize/finalize directly anywhere else in pbdlab.
//
// The state lives in the Gmsh module (meshes/gmsh_module.hpp): a guard opens the module, so a
// program that calls gmsh:: itself (the Gmsh tests) and the module's generators share one
// session count and one libgmsh.

namespace pbdlab {

class GmshSession {
 public:
  GmshSession();  // throws std::runtime_error if Gmsh cannot be initialized
  ~GmshSession();
  GmshSession(const GmshSession&) = delete;
  GmshSession& operator=(const GmshSession&) = delete;

  // The OpenMP thread count (omp_get_max_threads) saved when the outermost guard opened.
  int savedThreadCount() const;
  // Sets the OpenMP thread count back to savedThreadCount(), for Gmsh calls that change it.
  void restoreThreadCount() const;
};

}  // namespace pbdlab
