#include "meshes/gmsh_session.hpp"

#include "meshes/gmsh_module.hpp"

namespace pbdlab {

GmshSession::GmshSession() { gmshModule().begin_session(); }

GmshSession::~GmshSession() { gmshModule().end_session(); }

int GmshSession::savedThreadCount() const { return gmshModule().saved_thread_count(); }

void GmshSession::restoreThreadCount() const { gmshModule().restore_thread_count(); }

}  // namespace pbdlab
