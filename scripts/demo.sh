#!/usr/bin/env bash
# The main job: set up, build, and run a small torsion case with the Newton reference.
# Writes runs/torsion_small/{iterations.csv,summary.json,final.vtu}.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
# Passive OpenMP waiting: robust when other processes share the cores (see README).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
./build/apps/pbdlab run scenes/torsion_small.json --solver newton --out runs/torsion_small
