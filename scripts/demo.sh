#!/usr/bin/env bash
# The main job: set up, build, run the fast validation tier with every registered solver
# (it includes a small torsion run with Newton, which writes its iteration log, summary and
# .vtu), and print the path of the HTML report it wrote.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
# Passive OpenMP waiting: robust when other processes share the cores (see README).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
./build/apps/pbdlab validate --label fast --out runs/validation
