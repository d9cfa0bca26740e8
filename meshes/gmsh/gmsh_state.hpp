#pragma once
// Gmsh's process-wide state, owned by the Gmsh module: one gmsh::initialize for the outermost
// session, nested sessions counted, gmsh::finalize when the outermost ends, and the OpenMP
// thread count that gmsh::initialize resets (to General.NumThreads) restored each time. The
// rules for callers are GmshSession's (meshes/gmsh_session.hpp), which calls these through the
// module's table.
namespace pbdlab::gmsh_state {

// Locks the process-wide session mutex (held until endSession in the same thread) and, for the
// outermost session, initializes Gmsh. Throws std::runtime_error (mutex released) on failure.
void beginSession();
void endSession();  // never throws
int savedThreadCount();
void restoreThreadCount();

// The generators' own guard.
class Session {
 public:
  Session() { beginSession(); }
  ~Session() { endSession(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

}  // namespace pbdlab::gmsh_state
