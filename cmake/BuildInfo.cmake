# Writes build_info.hpp with the current git commit at build time (not only at configure
# time), so every run summary names the commit it was built from; "-dirty" marks
# uncommitted changes. configure_file leaves the file untouched when nothing changed.
execute_process(COMMAND git describe --always --dirty --abbrev=10
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE PBDLAB_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
if(NOT PBDLAB_GIT_COMMIT)
  set(PBDLAB_GIT_COMMIT "unknown")
endif()
configure_file(${INPUT} ${OUTPUT} @ONLY)
