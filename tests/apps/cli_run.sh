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
# The OpenMP wait policy (core/support/openmp_wait_policy.hpp): pbdlab chooses passive when the user
# set none, keeps the user's own choice, and records both in summary.json.
policy() {
  /usr/bin/python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["environment"]["threading"]
print(t["omp_wait_policy"], t["omp_wait_policy_set_by"])' "$out/summary.json"
}
env -u OMP_WAIT_POLICY "$pbdlab" run "$scene" --out "$out" 2>/dev/null
[[ $(policy) == "passive pbdlab" ]] || { echo "without OMP_WAIT_POLICY: recorded '$(policy)', expected 'passive pbdlab'"; exit 1; }
OMP_WAIT_POLICY=active "$pbdlab" run "$scene" --out "$out" 2>/dev/null
[[ $(policy) == "active user" ]] || { echo "with OMP_WAIT_POLICY=active: recorded '$(policy)', expected 'active user'"; exit 1; }
echo "cli_run: ok"
