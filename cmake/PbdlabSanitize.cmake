# AddressSanitizer + UndefinedBehaviorSanitizer for every target (PBDLAB_SANITIZE=ON;
# scripts/sanitize.sh configures, builds and runs the default test tier; docs/sanitizers.md).
# Included from the top-level CMakeLists.txt after add_compile_options(-Wall -Wextra), so the
# flags reach every library, executable, test and fuzz target added below it.
if(NOT PBDLAB_SANITIZE)
  return()
endif()

if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang|GNU")
  message(FATAL_ERROR "pbdlab: PBDLAB_SANITIZE needs clang or g++ (got ${CMAKE_CXX_COMPILER_ID})")
endif()

# -fno-sanitize-recover=undefined: a UBSan finding aborts the process (non-zero exit), so a
# test that triggers one fails instead of printing a line nobody reads.
# -fno-omit-frame-pointer and -g: whole stack traces with file:line in every report.
set(PBDLAB_SANITIZE_FLAGS
  -fsanitize=address,undefined
  -fno-sanitize-recover=undefined
  -fno-omit-frame-pointer
  -g)
add_compile_options(${PBDLAB_SANITIZE_FLAGS})
add_link_options(-fsanitize=address,undefined)

if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  # Clang's OpenMP is LLVM's libomp (Debian: libomp-14-dev), found by FindOpenMP as
  # OpenMP::OpenMP_CXX. libgmsh.so still brings g++'s libgomp; libomp provides the GOMP_*
  # entry points libgomp does and is loaded first, so Gmsh's parallel regions run on libomp.
  if(NOT OpenMP_CXX_FOUND)
    message(FATAL_ERROR "pbdlab: clang found no OpenMP runtime: install libomp-dev "
                        "(Debian 12: libomp-14-dev)")
  endif()
  # UBSan's vptr check follows the dynamic type through libraries built without RTTI
  # information for it (Gmsh); function-type checks are not in clang 14's default set.
endif()

# A sanitized executable must not fail on LeakSanitizer reports from third-party libraries:
# the suppression file and options live beside this module; scripts/sanitize.sh exports them
# for the build and for ctest alike.
set(PBDLAB_LSAN_SUPPRESSIONS ${CMAKE_CURRENT_LIST_DIR}/lsan.supp)
message(STATUS "pbdlab: sanitizers on (${PBDLAB_SANITIZE_FLAGS}); "
               "LeakSanitizer suppressions ${PBDLAB_LSAN_SUPPRESSIONS}")
