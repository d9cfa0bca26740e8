#!/usr/bin/env bash
# Blow-up detection (issue 12): a run that diverges stops with exit code 3, says in which
# step and iteration and why, writes summary.json "divergence" and its last finite state as
# diverged_last_finite_state.vtu (never final.vtu, never a NaN); an earlier run's files in
# the same folder are removed first.
#   cli_diverged.sh PBDLAB DIVERGING_SCENE CONVERGING_SCENE
set -euo pipefail
pbdlab=$1 diverging=$2 converging=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/run
fail() { echo "cli_diverged: $*"; exit 1; }

# An earlier, converged run of another scene with a frame per step leaves its files.
sed -e 's/"vtu": "final"/"vtu": "every_step"/' "$converging" > "$tmp/converging.json"
"$pbdlab" run "$tmp/converging.json" --out "$out" 2>/dev/null
ls "$out"/step_*.vtu >/dev/null || fail "the converging scene wrote no step_*.vtu"
touch "$out/notes.txt"  # not pbdlab's: must stay

# The diverging run: exit 3.
set +e
"$pbdlab" run "$diverging" --out "$out" 2>"$tmp/stderr"
code=$?
set -e
cat "$tmp/stderr"
[[ $code == 3 ]] || fail "exit code $code, expected 3 (diverged)"
grep -Eq 'diverged in step 1/2 at iteration [0-9]+: the residual grew to' "$tmp/stderr" ||
  fail "stderr does not name the step, the iteration and the reason"
[[ -s $out/diverged_last_finite_state.vtu ]] || fail "no diverged_last_finite_state.vtu"
[[ ! -e $out/final.vtu ]] || fail "a diverged run wrote final.vtu"
if ls "$out" | grep -q '^step_'; then fail "the earlier run's step_*.vtu were not removed"; fi
[[ -e $out/notes.txt ]] || fail "a file that is not pbdlab's was removed"
if ls "$out" | grep -q '\.tmp'; then fail "temporary file left behind"; fi

/usr/bin/python3 - "$out" <<'PY'
import json, sys, xml.etree.ElementTree as ET, base64, zlib, struct, math
out = sys.argv[1]
s = json.load(open(out + "/summary.json"))
d = s["divergence"]
assert s["totals"]["diverged"] is True, s["totals"]
assert d["step"] == 1 and d["substep"] == 1 and d["iteration"] >= 1, d
assert d["state_file"] == "diverged_last_finite_state.vtu", d
assert "grew to" in d["reason"], d
assert len(s["steps"]) == 1 and s["steps"][0]["stop_reason"] == "diverged", s["steps"]
# Every number of the state file is finite (meshio reads the compressed binary .vtu).
import meshio
m = meshio.read(out + "/diverged_last_finite_state.vtu")
import numpy as np
assert np.isfinite(m.points).all()
for name, values in m.point_data.items():
    assert np.isfinite(values).all(), name
print("summary and state file: ok")
PY

# With the growth check off, the same run goes on until the residual is not finite and is
# still caught (no NaN written).
sed -e 's/"max_iterations": 300,/"max_iterations": 300, "divergence_factor": null,/' "$diverging" > "$tmp/unchecked.json"
grep -q '"divergence_factor": null' "$tmp/unchecked.json" || fail "could not turn the check off"
set +e
"$pbdlab" run "$tmp/unchecked.json" --out "$tmp/unchecked" 2>"$tmp/stderr2"
code=$?
set -e
[[ $code == 3 ]] || { cat "$tmp/stderr2"; fail "unchecked: exit code $code, expected 3"; }
grep -Eq 'diverged in step 1/2 at iteration [0-9]+: the residual is not finite' "$tmp/stderr2" ||
  { cat "$tmp/stderr2"; fail "unchecked: not reported as a non-finite residual"; }
/usr/bin/python3 -c '
import sys, meshio, numpy as np
m = meshio.read(sys.argv[1])
assert all(np.isfinite(v).all() for v in m.point_data.values()) and np.isfinite(m.points).all()
' "$tmp/unchecked/diverged_last_finite_state.vtu"
echo "cli_diverged: ok"
