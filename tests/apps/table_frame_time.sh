#!/usr/bin/env bash
# `pbdlab table` with the "frame_time" layout: one solver in several configurations per row
# (multi-layer XPBD's layers against [0]), each run's mean ms and iterations per frame, the frames
# its own target ended, the true residual at the frame ends and the improvement against the run
# it compares to (100 t_against / t - 100, "–" for the run itself); a bad table is refused naming
# its field (exit 2). Replayed (replay_from): every run starts each frame from one run's state,
# with the distance to Newton's step from that state (newton_distance).
# Usage: table_frame_time.sh PBDLAB
set -euo pipefail
pbdlab=$1
source "$(dirname "$0")/table_test_support.sh"
cat > "$data/scenes/box.json" <<'JSON'
{"name": "box", "mesh": {"type": "rectangle", "size": [3, 1], "cells": [6, 2]},
 "material": {"model": "stvk", "youngs_modulus": 1e4, "poisson_ratio": 0.3, "density": 1},
 "gravity": [0, 0, 0],
 "initial_state": {"linear_map": [[1.1, 0, 0], [0, 1, 0], [0, 0, 1]], "fixed_point": [1.5, 0.5, 0]},
 "time": {"integrator": "backward_euler", "dt": 0.005, "steps": 3},
 "solver": {"name": "ml_xpbd", "max_iterations": 50},
 "output": {"vtu": "none"}}
JSON
cat > "$data/benchmarks/tables/ft.json" <<'JSON'
{"id": "ft", "title": "frame time", "layout": "frame_time", "baseline": "XPBD",
 "rows": [{"label": "Box", "scene": "../../scenes/box.json",
           "runs": [{"label": "ML", "solver": "ml_xpbd", "max_iterations": 200,
                     "options": {"layers": [50, 0], "iterations_per_layer": [2, 8], "frame_stop_reduction": 0.9}},
                    {"label": "XPBD", "solver": "ml_xpbd", "max_iterations": 200,
                     "options": {"frame_stop_reduction": 0.9}},
                    {"label": "XPBD 10", "solver": "ml_xpbd", "max_iterations": 10, "compare_to": "ML"}]}],
 "theirs": {"values": {"Box": {"ML": {"improvement_percent": 5.8}}}}}
JSON
"$pbdlab" table ft --data-dir "$data" --out "$data/runs" > "$data/table.md"
cat "$data/table.md"
grep -q '^| example | run | vertices | elements | frames | ours: ms / frame | ours: iterations / frame | frames ended by the solver.s target | .* | ours: improvement, % (against) | theirs: % |$' "$data/table.md" || fail "header"
# Lines in the row's order; the plain XPBD run with the frame stop ends every frame at its own target.
grep -q '^| Box | ML | 21 | 24 | 3 | [0-9.]* | [0-9.]* | [0-3] of 3 | .* | [-+][0-9.]* (XPBD) | 5.8 |$' "$data/table.md" || fail "ML line"
grep -q '^| Box | XPBD | 21 | 24 | 3 | [0-9.]* | [0-9.]* | 3 of 3 | .* | – | – |$' "$data/table.md" || fail "XPBD line (its own baseline)"
grep -q '^| Box | XPBD 10 | 21 | 24 | 3 | [0-9.]* | 10.0 | 0 of 3 | .* | [-+][0-9.]* (ML) | – |$' "$data/table.md" || fail "XPBD 10 line (no frame stop, compares to ML)"

# Replayed: every run starts each frame from XPBD's state. XPBD itself runs as free-running (the
# same residuals as in the table above), the others do not; the distances to Newton's step from
# the common state are positive numbers.
sed 's/"rows": \[{"label": "Box", "scene": "..\/..\/scenes\/box.json",/"rows": [{"label": "Box", "scene": "..\/..\/scenes\/box.json", "replay_from": "XPBD", "newton_distance": true,/' \
  "$data/benchmarks/tables/ft.json" > "$data/benchmarks/tables/replay.json"
sed -i 's/"id": "ft"/"id": "replay"/' "$data/benchmarks/tables/replay.json"
"$pbdlab" table replay --data-dir "$data" --out "$data/runs" > "$data/replay.md"
cat "$data/replay.md"
grep -q "distance to Newton's step, median (max)" "$data/replay.md" || fail "replay: no Newton column"
grep -q '^| Box | ML | 21 | 24 | 3 (from XPBD.s states) | .* | [0-9.e-]* ([0-9.e-]*) | – | ' "$data/replay.md" || fail "replay: ML line"
grep -q '^| Box | XPBD | 21 | 24 | 3 (replayed by the others) | ' "$data/replay.md" || fail "replay: XPBD line"
residual_cell() { grep "^| Box | $2 |" "$1" | awk -F'|' '{print $10}'; }
[[ "$(residual_cell "$data/table.md" XPBD)" == "$(residual_cell "$data/replay.md" XPBD)" ]] || fail "replay: XPBD's own frames changed"
[[ "$(residual_cell "$data/table.md" "XPBD 10")" != "$(residual_cell "$data/replay.md" "XPBD 10")" ]] || fail "replay: XPBD 10 not replayed"
xpbd_distance=$(grep '^| Box | XPBD |' "$data/replay.md" | awk -F'|' '{print $12}' | awk '{print $1}')
few_distance=$(grep '^| Box | XPBD 10 |' "$data/replay.md" | awk -F'|' '{print $12}' | awk '{print $1}')
awk -v a="$xpbd_distance" -v b="$few_distance" 'BEGIN {exit !(a > 0 && b > 0 && a == a + 0 && b == b + 0)}' || fail "replay: distances $xpbd_distance, $few_distance"

# Bad input: no baseline, a baseline no row runs, two runs with one label, compare_to naming no
# run, an unknown solver, a frame stop of 1, thresholds in this layout.
sed 's/"baseline": "XPBD",//' "$data/benchmarks/tables/ft.json" > "$data/benchmarks/tables/bad1.json"
sed 's/"baseline": "XPBD"/"baseline": "Newton"/' "$data/benchmarks/tables/ft.json" > "$data/benchmarks/tables/bad2.json"
sed 's/"label": "XPBD 10"/"label": "ML"/' "$data/benchmarks/tables/ft.json" > "$data/benchmarks/tables/bad3.json"
sed 's/"compare_to": "ML"/"compare_to": "MLX"/' "$data/benchmarks/tables/ft.json" > "$data/benchmarks/tables/bad4.json"
sed 's/"solver": "ml_xpbd", "max_iterations": 10/"solver": "ml_xpdb", "max_iterations": 10/' "$data/benchmarks/tables/ft.json" > "$data/benchmarks/tables/bad5.json"
sed 's/"options": {"frame_stop_reduction": 0.9}/"options": {"frame_stop_reduction": 1}/' "$data/benchmarks/tables/ft.json" > "$data/benchmarks/tables/bad6.json"
sed 's/"layout": "frame_time",/"layout": "frame_time", "thresholds": [0.1],/' "$data/benchmarks/tables/ft.json" > "$data/benchmarks/tables/bad7.json"
sed 's/"replay_from": "XPBD"/"replay_from": "Newton"/' "$data/benchmarks/tables/replay.json" > "$data/benchmarks/tables/bad8.json"
sed 's/"replay_from": "XPBD", //' "$data/benchmarks/tables/replay.json" > "$data/benchmarks/tables/bad9.json"
expect_bad_table bad1 /baseline
expect_bad_table bad2 /rows/0/runs
expect_bad_table bad3 /rows/0/runs/2/label
expect_bad_table bad4 /rows/0/runs/2/compare_to
expect_bad_table bad5 /rows/0/runs/2/solver
expect_bad_table bad6 /rows/0/runs/1/options/frame_stop_reduction
expect_bad_table bad7 /thresholds
expect_bad_table bad8 /rows/0/replay_from
expect_bad_table bad9 /rows/0/newton_distance

# Labels are one folder each: a '/' in a row or run label ("pi/4 rad/s") becomes '_'.
sed -e 's/"label": "Box"/"label": "Box 1\/2"/' -e 's/"label": "ML"/"label": "ML 1\/2"/' -e 's/"compare_to": "ML"/"compare_to": "ML 1\/2"/' \
    -e 's/"id": "ft"/"id": "slash"/' -e 's/"Box": {"ML"/"Box 1\/2": {"ML 1\/2"/' \
  "$data/benchmarks/tables/ft.json" > "$data/benchmarks/tables/slash.json"
"$pbdlab" table slash --data-dir "$data" --out "$data/runs" > /dev/null
[[ -s "$data/runs/slash/Box 1_2/ML 1_2/summary.json" && ! -e "$data/runs/slash/Box 1" ]] \
  || { find "$data/runs/slash" -maxdepth 3; fail "a label with '/' made nested folders"; }
echo "table_frame_time: ok"
