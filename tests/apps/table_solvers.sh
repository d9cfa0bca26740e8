#!/usr/bin/env bash
# `pbdlab table` with the "solvers" layout: one line per (row, solver) with our time and
# iterations per step beside the paper's, a solver that rejects the scene listed as skipped,
# the row's scene_patch applied; a bad table file is refused naming its field (exit 2).
# Usage: table_solvers.sh PBDLAB
set -euo pipefail
pbdlab=$1
source "$(dirname "$0")/table_test_support.sh"
cat > "$data/scenes/block.json" <<'JSON'
{"name": "block", "mesh": {"type": "box", "size": [2, 1, 1], "cells": [4, 2, 2]},
 "material": {"model": "fixed_corotated", "youngs_modulus": 1000, "poisson_ratio": 0.3, "density": 10},
 "gravity": [0, -9.8, 0], "dirichlet": [{"node_set": "x-min"}],
 "time": {"integrator": "backward_euler", "dt": 0.01, "steps": 20},
 "solver": {"name": "xpbd", "max_iterations": 7, "target_relative_residual": 1e-12},
 "output": {"vtu": "none"}}
JSON
cat > "$data/benchmarks/tables/tiny.json" <<'JSON'
{"id": "tiny", "title": "a tiny table", "layout": "solvers", "note": "a note",
 "rows": [{"label": "Block", "scene": "../../scenes/block.json", "scene_patch": {"/time/steps": 3},
           "solvers": {"xpbd": {}, "fp_pxpbd": {}, "xpbd_qs": {}}}],
 "theirs": {"source": "a paper", "machine": "theirs", "values": {"Block": {"xpbd": {"ms_per_frame": 123, "iterations_per_frame": 7, "ms_per_iteration": 0.5, "colors": 39}}}}}
JSON
"$pbdlab" table tiny --data-dir "$data" --out "$data/runs" > "$data/table.md"
cat "$data/table.md"
# ... | ms / iteration ours, theirs | colors ours (the solver's log), theirs |
grep -q '^| Block | xpbd | 45 | 80 | 0.01 | 3 | [0-9.]* | 123 | 7.0 | 7 | [0-9.]* | 0.5 | [0-9][0-9]* | 39 |$' "$data/table.md" || fail "xpbd line"
grep -q '^| Block | fp_pxpbd | 45 | 80 | 0.01 | 3 | [0-9.]* | – | 7.0 | – | [0-9.]* | – | [0-9–]* | – |$' "$data/table.md" || fail "fp_pxpbd line"
grep -q '^| Block | xpbd_qs | .* skipped: .*quasistatic' "$data/table.md" || fail "xpbd_qs is not listed as skipped"
grep -q '^Theirs: a paper (theirs)' "$data/table.md" || fail "no source line"
[[ -s $data/runs/tiny/Block/xpbd/summary.json ]] || fail "no run folder per solver"
grep -q '"steps": 3' "$data/runs/tiny/Block/xpbd/summary.json" || fail "scene_patch not applied to the resolved scene"

# A row running newton adds Newton's breakdown; solver_max_iterations gives one solver its budget.
cat > "$data/benchmarks/tables/withnewton.json" <<'JSON'
{"id": "withnewton", "title": "newton beside", "layout": "solvers",
 "rows": [{"label": "Block", "scene": "../../scenes/block.json", "scene_patch": {"/time/steps": 2},
           "solver_max_iterations": {"newton": 2},
           "solvers": {"xpbd": {}, "newton": {"linear_solver": "gauss_seidel", "linear_iterations": 3, "line_search": false}}}],
 "theirs": {"values": {"Block": {"newton": {"newton_overhead_ms_per_iteration": 620, "ms_per_linear_iteration": 35}}}}}
JSON
"$pbdlab" table withnewton --data-dir "$data" --out "$data/runs" > "$data/table2.md"
cat "$data/table2.md"
grep -q 'ours: Newton assembly ms / iteration | theirs: Newton overhead ms / iteration | ours: linear solve ms / linear iteration | theirs: ms / linear iteration |$' "$data/table2.md" || fail "newton columns in the header"
grep -q '^| Block | newton | 45 | 80 | 0.01 | 2 | [0-9.]* | – | 2.0 | – | [0-9.]* | – | – | – | [0-9.]* | 620 | [0-9.]* | 35 |$' "$data/table2.md" || fail "newton line (2 iterations a step, its breakdown)"
grep -q '^| Block | xpbd | 45 | 80 | 0.01 | 2 | [0-9.]* | – | 7.0 | – | [0-9.]* | – | [0-9]* | – | – | – | – | – |$' "$data/table2.md" || fail "xpbd line (the scene's 7 iterations, no Newton breakdown)"
sed 's/"solver_max_iterations": {"newton": 2}/"solver_max_iterations": {"pbng": 2}/' "$data/benchmarks/tables/withnewton.json" > "$data/benchmarks/tables/bad5.json"
expect_bad_table bad5 /rows/0/solver_max_iterations/pbng

# Bad input: an unknown solver and a patch of a value the scene does not have.
sed 's/"fp_pxpbd": {}/"nosuch": {}/' "$data/benchmarks/tables/tiny.json" > "$data/benchmarks/tables/bad1.json"
sed 's|"/time/steps"|"/time/frames"|' "$data/benchmarks/tables/tiny.json" > "$data/benchmarks/tables/bad2.json"
expect_bad_table bad1 /rows/0/solvers
expect_bad_table bad2 /rows/0/scene_patch/~1time~1frames
echo "table_solvers: ok"
