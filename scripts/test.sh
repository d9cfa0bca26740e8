#!/usr/bin/env bash
# Set up, build, and pass the default test tier (long paper-size cases are registered only
# with -DPBDLAB_FULL_TESTS=ON, so a plain ctest never runs them).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
cd build
ctest --output-on-failure --parallel 2 --timeout 900
