# Mesh generation and cache benchmarks (meshes issue), included from benchmarks/CMakeLists.txt.
add_executable(bench_meshes ${CMAKE_CURRENT_LIST_DIR}/bench_meshes.cpp)
target_link_libraries(bench_meshes PRIVATE pbdlab_meshes benchmark::benchmark)
