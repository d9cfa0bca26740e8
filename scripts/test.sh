#!/usr/bin/env bash
# Set up, build (Release, build/), and pass a test tier (README, "Tests"):
#   bash scripts/test.sh           the default tier, what CI runs (.ci/run): the unit tier, the
#                                  integration tests (reports, every body kind, determinism,
#                                  kill-safety) and the fast validation cases (ctest labels
#                                  unit, integration, fast)
#   bash scripts/test.sh --quick   the unit tier only (ctest -L unit): after each change
#   bash scripts/test.sh --full    everything, the paper-size cases too (configures with
#                                  -DPBDLAB_FULL_TESTS=ON; hours on 2 cores)
# Extra arguments after the tier go to ctest (e.g. -L pbng: one paper's gates of that tier).
set -euo pipefail
cd "$(dirname "$0")/.."
tier=default
case ${1:-} in
  --quick) tier=quick; shift ;;
  --full) tier=full; shift ;;
  -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
esac
bash scripts/setup.sh
if [[ $tier == full ]]; then
  bash scripts/build.sh -DPBDLAB_FULL_TESTS=ON
else
  # A build tree configured for the full tier before keeps its long tests registered: switch
  # them off again, so the default tier is what CI runs. Only what ctest runs is built (target
  # test_programs, tests/CMakeLists.txt): the benchmarks come with scripts/build.sh.
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPBDLAB_FULL_TESTS=OFF >/dev/null
  cmake --build build --parallel 2 --target test_programs
fi
cd build
labels=()
[[ $tier == quick ]] && labels=(-L unit)
ctest --output-on-failure --parallel 2 --timeout 900 "${labels[@]}" "$@"
