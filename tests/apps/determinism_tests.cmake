# Determinism (issue 12, docs/determinism.md): every solver of `pbdlab run --help` on a small
# scene, twice on 2 threads (bitwise-identical final.vtu, iterations.csv without timing
# columns, summary.json without timing fields) and once on 1 thread (agreement to the scene's
# target relative residual). The script sets OMP_NUM_THREADS itself.
add_test(NAME determinism
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/apps/determinism.sh $<TARGET_FILE:pbdlab>
          ${CMAKE_CURRENT_SOURCE_DIR}/apps/determinism_scenes)
set_tests_properties(determinism PROPERTIES LABELS "integration;apps" TIMEOUT 600 COST 25 ENVIRONMENT "${PBDLAB_TEST_ENVIRONMENT}")
