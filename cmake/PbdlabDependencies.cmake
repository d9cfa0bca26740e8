# Finds every dependency of pbdlab. A missing one stops the configure step with the name of
# the Debian 12 package that provides it (scripts/setup.sh installs them all).

function(pbdlab_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "pbdlab: ${what} not found. Install the Debian package '${package}' "
                        "(or run scripts/setup.sh, which installs every dependency).")
  endif()
endfunction()

find_package(Eigen3 3.3 QUIET NO_MODULE)
pbdlab_require(Eigen3_FOUND "Eigen 3" libeigen3-dev)

# SuiteSparse 5.12 ships no CMake config: find CHOLMOD by hand. Eigen's CholmodSupport
# includes <cholmod.h>, so the suitesparse folder goes on the include path.
find_path(CHOLMOD_INCLUDE_DIR cholmod.h PATH_SUFFIXES suitesparse)
find_library(CHOLMOD_LIBRARY cholmod)
if(CHOLMOD_INCLUDE_DIR AND CHOLMOD_LIBRARY)
  set(CHOLMOD_FOUND TRUE)
endif()
pbdlab_require(CHOLMOD_FOUND "SuiteSparse CHOLMOD" libsuitesparse-dev)
add_library(pbdlab_cholmod INTERFACE)
target_include_directories(pbdlab_cholmod SYSTEM INTERFACE ${CHOLMOD_INCLUDE_DIR})
target_link_libraries(pbdlab_cholmod INTERFACE ${CHOLMOD_LIBRARY})

# The Gmsh SDK (libgmsh-dev) ships gmsh.h and libgmsh.so but no CMake config.
find_path(GMSH_INCLUDE_DIR gmsh.h)
find_library(GMSH_LIBRARY gmsh)
if(GMSH_INCLUDE_DIR AND GMSH_LIBRARY)
  set(GMSH_FOUND TRUE)
endif()
pbdlab_require(GMSH_FOUND "Gmsh SDK (gmsh.h, libgmsh)" libgmsh-dev)
# gmsh.h alone (its version macros), and gmsh.h with libgmsh: only the Gmsh module
# (meshes/gmsh/) and the tests that call Gmsh themselves link libgmsh.
add_library(pbdlab_gmsh_headers INTERFACE)
target_include_directories(pbdlab_gmsh_headers SYSTEM INTERFACE ${GMSH_INCLUDE_DIR})
add_library(pbdlab_gmsh INTERFACE)
target_link_libraries(pbdlab_gmsh INTERFACE pbdlab_gmsh_headers ${GMSH_LIBRARY})

find_package(OpenMP QUIET)
pbdlab_require(OpenMP_CXX_FOUND "OpenMP for C++" "g++ (libgomp)")

find_package(nlohmann_json 3 QUIET)
pbdlab_require(nlohmann_json_FOUND "nlohmann-json" nlohmann-json3-dev)

find_package(CLI11 QUIET)
if(NOT CLI11_FOUND)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp)
  if(CLI11_INCLUDE_DIR)
    set(CLI11_FOUND TRUE)
    add_library(CLI11::CLI11 INTERFACE IMPORTED)
    target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
  endif()
endif()
pbdlab_require(CLI11_FOUND "CLI11" libcli11-dev)

find_package(fmt QUIET)
pbdlab_require(fmt_FOUND "fmt" libfmt-dev)

if(PBDLAB_BUILD_TESTS)
  find_package(GTest QUIET)
  pbdlab_require(GTest_FOUND "GoogleTest" libgtest-dev)
endif()
if(PBDLAB_BUILD_BENCHMARKS)
  find_package(benchmark QUIET)
  pbdlab_require(benchmark_FOUND "Google Benchmark" libbenchmark-dev)
endif()
