# Crash-safe outputs (issue 12, docs/crash-safety.md; tests/apps/cli_kill.sh): `pbdlab run`
# killed with SIGKILL while meshing, mid-step and while writing each output (exactly, with
# strace when it can trace), `pbdlab validate` killed mid-run and while computing its
# reference, and a full disk (a file-size limit; as root also a small tmpfs). After each: every
# file is complete or absent, the mesh cache loads, a rerun completes. Each part has its own
# temporary cache folder (entries are killed mid-write), not the shared test cache.
foreach(part run validate full_disk)
  add_test(NAME cli_kill_${part}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/apps/cli_kill.sh ${part} $<TARGET_FILE:pbdlab>)
  set_tests_properties(cli_kill_${part} PROPERTIES LABELS "integration;apps" TIMEOUT 240 COST 15 ENVIRONMENT "${PBDLAB_TEST_ENVIRONMENT}")
endforeach()
