# Blow-up detection: exit 3, step and iteration named, last finite state written, an earlier
# run's files cleared (tests/apps/cli_diverged.sh).
add_test(NAME cli_diverged
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/apps/cli_diverged.sh $<TARGET_FILE:pbdlab>
          ${CMAKE_CURRENT_SOURCE_DIR}/apps/divergence_scenes/newton_no_line_search_huge_load.json
          ${PROJECT_SOURCE_DIR}/scenes/torsion_small.json)
set_tests_properties(cli_diverged PROPERTIES LABELS "unit;apps" TIMEOUT 300 ENVIRONMENT "${PBDLAB_TEST_ENVIRONMENT}")
