#!/usr/bin/env bash
# `pbdlab table` with the "probe" layout (the high-order paper's Table 1): one line per row with
# the probe's final displacement and its distance to each reference of the table, beside the
# paper's error; a probe the scene lacks, a bad reference and references in another layout are
# refused naming the file and the field (exit 2).
# Usage: table_probe.sh PBDLAB
set -euo pipefail
pbdlab=$1
source "$(dirname "$0")/table_test_support.sh"
cat > "$data/scenes/sag.json" <<'JSON'
{"name": "sag", "mesh": {"type": "box", "size": [2, 1, 1], "cells": [4, 2, 2]},
 "material": {"model": "neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.3, "density": 1000},
 "gravity": [0, -9.8, 0], "dirichlet": [{"node_set": "x-min"}],
 "time": {"integrator": "quasistatic", "dt": 1, "steps": 1},
 "solver": {"name": "newton", "max_iterations": 50, "target_relative_residual": 1e-10},
 "output": {"vtu": "none", "probes": {"tip": [2, 0.5, 0.5]}}}
JSON
cat > "$data/benchmarks/tables/tip.json" <<'JSON'
{"id": "tip", "title": "a tip table", "layout": "probe", "note": "a note",
 "references": {"zero": [0, 0, 0], "one down": [0, -1, 0]},
 "rows": [{"label": "Sag", "scene": "../../scenes/sag.json", "probe": "tip"}],
 "theirs": {"source": "a paper", "machine": "theirs", "values": {"Sag": {"error": 0.25}}}}
JSON
"$pbdlab" table tip --data-dir "$data" --out "$data/runs" > "$data/table.md"
cat "$data/table.md"
grep -qF '| example | element | vertices | elements | solver | ours: probe displacement (m) | ours: distance to one down (m) | ours: distance to zero (m) | theirs: error (m) | ours: solver s |' \
  "$data/table.md" || fail "header"
line=$(grep '^| Sag |' "$data/table.md") || fail "no Sag line"
[[ $line =~ ^\|\ Sag\ \|\ tet4\ \|\ 45\ \|\ 80\ \|\ newton\ \|\ \((-?[0-9.]+),\ (-?[0-9.]+),\ (-?[0-9.]+)\)\ \|\ ([0-9.]+)\ \|\ ([0-9.]+)\ \|\ 0.25\ \|\ [0-9.]+\ \|$ ]] ||
  fail "Sag line: $line"
# The distances are those of the printed displacement (4 decimals each: 1e-3 slack).
python3 - "${BASH_REMATCH[@]:1}" <<'PY' || fail "distances do not match the displacement"
import math, sys
ux, uy, uz, d_down, d_zero = map(float, sys.argv[1:])
assert uy < -1e-3, "the tip did not sag"
assert abs(d_zero - math.sqrt(ux*ux + uy*uy + uz*uz)) < 1e-3, (d_zero, ux, uy, uz)
assert abs(d_down - math.sqrt(ux*ux + (uy + 1)**2 + uz*uz)) < 1e-3, (d_down, ux, uy, uz)
PY

# Bad input: a probe the scene lacks (in the second row: refused before the first row runs), a
# reference that is not 3 numbers, references in another layout.
sed 's|"probe": "tip"}]|"probe": "tip"}, {"label": "Toe", "scene": "../../scenes/sag.json", "probe": "toe"}]|' \
  "$data/benchmarks/tables/tip.json" > "$data/benchmarks/tables/bad1.json"
grep -qF '"probe": "toe"' "$data/benchmarks/tables/bad1.json" || fail "bad1 was not made"
sed 's/"zero": \[0, 0, 0\]/"zero": [0, 0]/' "$data/benchmarks/tables/tip.json" > "$data/benchmarks/tables/bad2.json"
sed 's/"layout": "probe"/"layout": "newton"/' "$data/benchmarks/tables/tip.json" > "$data/benchmarks/tables/bad3.json"
rm -rf "$data/runs"
expect_bad_table bad1 /rows/1/probe
[[ ! -e $data/runs ]] || fail "bad1: a row ran before its table's probes were checked"
expect_bad_table bad2 /references/zero
expect_bad_table bad3 /references
echo "table_probe: ok"
