#!/usr/bin/env bash
# `pbdlab table` with the "time_to_tolerance" layout: per (row, solver) the solver seconds of the
# first step to each threshold and the baseline's seconds over this solver's (the baseline's line
# first, its own ratio 1.00; a threshold a run never reaches says so); a bad table is refused
# naming its field (exit 2).
# Usage: table_time_to_tolerance.sh PBDLAB
set -euo pipefail
pbdlab=$1
source "$(dirname "$0")/table_test_support.sh"
cat > "$data/scenes/twist.json" <<'JSON'
{"name": "twist", "mesh": {"type": "box", "size": [1, 1, 1], "cells": [3, 3, 3]},
 "material": {"model": "fixed_corotated", "youngs_modulus": 1e5, "poisson_ratio": 0.3, "density": 10},
 "dirichlet": [{"node_set": "x-min"},
               {"node_set": "x-max", "motion": [{"type": "rotate", "axis_point": [1, 0.5, 0.5], "axis_direction": [1, 0, 0],
                                                 "angle_degrees": 30, "t_start": 0, "t_end": 1}]}],
 "time": {"integrator": "quasistatic", "dt": 1, "steps": 1},
 "solver": {"name": "newton", "max_iterations": 400, "target_relative_residual": 1e-5},
 "output": {"vtu": "none"}}
JSON
cat > "$data/benchmarks/tables/ttt.json" <<'JSON'
{"id": "ttt", "title": "time to tolerance", "layout": "time_to_tolerance", "baseline": "newton",
 "thresholds": [1e-2, 1e-4],
 "rows": [{"label": "Twist", "scene": "../../scenes/twist.json",
           "solvers": {"pbng": {"omega": 1.7}, "newton": {}, "xpbd_qs": {}}}]}
JSON
"$pbdlab" table ttt --data-dir "$data" --out "$data/runs" > "$data/table.md"
cat "$data/table.md"
grep -q '^| example | solver | vertices | iterations | ours: s to 0.01 | ours: s to 0.0001 | newton s ÷ this, at 0.01 | newton s ÷ this, at 0.0001 |$' "$data/table.md" || fail "header"
# The baseline runs first whatever the row's order.
grep -A1 '^|---' "$data/table.md" | grep -q '^| Twist | newton | 64 | [0-9]* | [0-9.]* | [0-9.]* | 1.00 | 1.00 |$' || fail "newton line (first, ratio 1)"
grep -q '^| Twist | pbng | 64 | [0-9]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* |$' "$data/table.md" || fail "pbng line"
# XPBD-QS at its default pseudo-step does not reach 1e-4 in 400 iterations: said, no ratio.
grep -q '^| Twist | xpbd_qs | 64 | 400 | .* not reached | .* – |$' "$data/table.md" || fail "xpbd_qs line (never reaches 1e-4)"

# Bad input: a threshold of 1, no baseline, a row without the baseline, thresholds in another layout.
sed 's/"thresholds": \[1e-2, 1e-4\]/"thresholds": [1e-2, 1]/' "$data/benchmarks/tables/ttt.json" > "$data/benchmarks/tables/bad1.json"
sed 's/"baseline": "newton",//' "$data/benchmarks/tables/ttt.json" > "$data/benchmarks/tables/bad2.json"
sed 's/"newton": {}, //' "$data/benchmarks/tables/ttt.json" > "$data/benchmarks/tables/bad3.json"
sed 's/"layout": "time_to_tolerance"/"layout": "solvers"/' "$data/benchmarks/tables/ttt.json" > "$data/benchmarks/tables/bad4.json"
expect_bad_table bad1 /thresholds/1
expect_bad_table bad2 /baseline
expect_bad_table bad3 /rows/0/solvers
expect_bad_table bad4 /thresholds
echo "table_time_to_tolerance: ok"
