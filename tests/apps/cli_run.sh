#!/usr/bin/env bash
# `pbdlab run SCENE` writes its log, summary and .vtu, and every step converges.
set -euo pipefail
pbdlab=$1 scene=$2
out=$(mktemp -d)/run
trap 'rm -rf "$(dirname "$out")"' EXIT
"$pbdlab" --version
"$pbdlab" --help >/dev/null
"$pbdlab" run "$scene" --out "$out"
for f in iterations.csv summary.json final.vtu; do
  [[ -s $out/$f ]] || { echo "missing $out/$f"; exit 1; }
done
grep -q '"all_steps_converged": true' "$out/summary.json" || { echo "not every step converged"; cat "$out/summary.json"; exit 1; }
head -1 "$out/iterations.csv" | grep -q '^step,substep,iteration,solver_seconds,residual,relative_residual,energy' \
  || { echo "bad CSV header"; exit 1; }
if ls "$out" | grep -q '\.tmp'; then echo "temporary file left behind"; exit 1; fi
echo "cli_run: ok"
