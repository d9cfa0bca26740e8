#!/usr/bin/env bash
# The command line on bad input: every bad scene makes `pbdlab run` fail with a non-zero exit
# (not a crash), an error on stderr naming the file and the offending field (a JSON pointer),
# and no output left behind.
#
#   bash cli_bad_input.sh PBDLAB_BINARY BAD_SCENES_DIR
#
# Prints one line per case; exits 1 at the first failure.
set -u

if [ $# -ne 2 ]; then
  echo "usage: bash $0 PBDLAB_BINARY BAD_SCENES_DIR" >&2
  exit 2
fi
PBDLAB=$1
BAD_DIR=$2
if [ ! -x "$PBDLAB" ]; then
  echo "FAIL: $PBDLAB is not an executable" >&2
  exit 1
fi
if [ ! -d "$BAD_DIR" ]; then
  echo "FAIL: $BAD_DIR is not a folder" >&2
  exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pbdlab_cli_bad_input.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# file:expected field. Every *.json in BAD_DIR must be listed here.
CASES=(
  "nu_half.json:/material/poisson_ratio"
  "negative_E.json:/material/youngs_modulus"
  "nan_string.json:/material/poisson_ratio"
  "unknown_key.json:/material/youngs_modulos"
  "infinite_value.json:/gravity/2"
  "zero_cells.json:/mesh/cells/0"
  "zero_dt.json:/time/dt"
  "unknown_node_set.json:/dirichlet/1/node_set"
  "bad_components.json:/dirichlet/1/components"
  "unknown_motion.json:/dirichlet/1/motion/0/type"
  "unknown_solver.json:/solver/name"
  "unknown_option.json:/solver/options/line_serch"
  "malformed.json:(file)"
  "frame_budget_below_substeps.json:/solver/max_iterations"
  "collisions_without_stiffness.json:/collisions"
  "collisions_one_body.json:/collisions"
  "load_unknown_boundary.json:/loads/0/boundary"
  "load_both_forms.json:/loads/0/total_force"
  "unknown_split.json:/solver/options/split"
  "absurd_pseudo_step_sweeps.json:/solver/options/iterations_per_pseudo_step"
  "absurd_substeps.json:/solver/options/substeps"
  "grid_zero_spacing.json:/grid/spacing"
  "grid_unknown_kernel.json:/grid/kernel"
  "grid_box_misses_bodies.json:/grid/box"
  "grid_wall_too_thick.json:/grid/walls/y-min/thickness"
  "grid_unknown_face.json:/grid/walls/y-bottom"
  "grid_with_dirichlet.json:/dirichlet"
  "grid_quasistatic.json:/time/integrator"
  "grid_spacing_below_elements.json:/grid/spacing"
)

CASE=""
fail() {
  echo "FAIL $CASE: $1"
  if [ -s "$WORK/stderr" ]; then sed 's/^/    stderr: /' "$WORK/stderr"; fi
  exit 1
}

# Runs pbdlab with the given arguments; sets RC, leaves stderr in $WORK/stderr.
RC=0
invoke() {
  rm -f "$WORK/stdout" "$WORK/stderr"
  timeout 300 "$PBDLAB" "$@" >"$WORK/stdout" 2>"$WORK/stderr"
  RC=$?
}

# A bad-input failure: non-zero exit that is neither a timeout nor a signal.
expect_clean_failure() {
  if [ "$RC" -eq 0 ]; then fail "exit code 0, expected a failure"; fi
  if [ "$RC" -eq 124 ]; then fail "timed out"; fi
  if [ "$RC" -ge 128 ]; then fail "crashed (exit code $RC, signal $((RC - 128)))"; fi
}

expect_stderr_has() {
  if ! grep -qF -- "$1" "$WORK/stderr"; then fail "stderr does not mention '$1'"; fi
}

# Bad input is found before any work: no run banner ("... steps) -> OUT") and no step line.
expect_no_work() {
  if grep -qF " steps) -> " "$WORK/stderr"; then fail "the run banner was printed before the error"; fi
  if grep -q "step 1/" "$WORK/stderr"; then fail "a step was solved before the error"; fi
}

expect_no_output() {
  if [ -e "$1" ] && [ -n "$(ls -A "$1" 2>/dev/null)" ]; then
    fail "left output behind in $1: $(ls -A "$1" | tr '\n' ' ')"
  fi
}

# Every bad scene is in the table, and every table entry is a file.
for path in "$BAD_DIR"/*.json; do
  [ -e "$path" ] || continue
  name=$(basename "$path")
  listed=0
  for entry in "${CASES[@]}"; do
    [ "${entry%%:*}" = "$name" ] && listed=1
  done
  CASE=$name
  [ "$listed" -eq 1 ] || fail "not in the case table of $0 (add its expected field)"
done

for entry in "${CASES[@]}"; do
  name=${entry%%:*}
  field=${entry#*:}
  CASE=$name
  [ -f "$BAD_DIR/$name" ] || fail "missing from $BAD_DIR"
  out="$WORK/out_${name%.json}"
  invoke run "$BAD_DIR/$name" --out "$out"
  expect_clean_failure
  expect_stderr_has "$name"
  expect_stderr_has "$field"
  if [ "$field" = "(file)" ]; then
    # A parse error says where: the parser's line and column.
    expect_stderr_has "line"
  elif ! grep -qE '/[A-Za-z_]' "$WORK/stderr"; then
    fail "stderr names no JSON pointer field"
  fi
  expect_no_work
  expect_no_output "$out"
  echo "ok   $name: exit $RC, names $field"
done

# A scene file that does not exist.
CASE="missing file"
out="$WORK/out_missing"
invoke run "$WORK/missing.json" --out "$out"
expect_clean_failure
expect_stderr_has "missing.json"
expect_no_output "$out"
echo "ok   missing file: exit $RC"

# A valid scene with an unknown solver given on the command line.
CASE="--solver nosuch"
cat >"$WORK/good.json" <<'EOF'
{
  "mesh": {"type": "box", "origin": [0, 0, 0], "size": [1, 1, 1], "cells": [2, 2, 2], "split": "five"},
  "material": {"model": "stable_neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.3},
  "dirichlet": [{"node_set": "x-min"},
                {"node_set": "x-max", "components": "x",
                 "motion": [{"type": "translate", "by": [0.1, 0, 0], "t_start": 0, "t_end": 1}]}],
  "time": {"integrator": "quasistatic", "dt": 0.5, "steps": 2},
  "solver": {"name": "newton", "max_iterations": 20},
  "output": {"vtu": "none"}
}
EOF
out="$WORK/out_nosuch"
invoke run "$WORK/good.json" --solver nosuch --out "$out"
expect_clean_failure
if ! grep -qF -e "/solver/name" -e "nosuch" "$WORK/stderr"; then
  fail "stderr names neither /solver/name nor nosuch"
fi
expect_no_output "$out"
echo "ok   --solver nosuch: exit $RC"

# A grid scene with a solver that cannot solve the grid step's problem (XPBD builds its
# constraints from a solid body's elements; the grid problem has none): refused at /solver
# before any step, exit 2, no output.
CASE="grid scene with --solver xpbd"
cat >"$WORK/grid.json" <<'EOF'
{
  "mesh": {"type": "box", "origin": [0.05, 0.35, 0.05], "size": [0.4, 0.2, 0.4], "cells": [2, 1, 2]},
  "material": {"model": "fixed_corotated", "youngs_modulus": 1e4, "poisson_ratio": 0.3, "density": 100},
  "gravity": [0, -9.81, 0],
  "grid": {"spacing": 0.3, "walls": {"y-min": {"type": "sticky", "thickness": 2}}},
  "time": {"integrator": "backward_euler", "dt": 0.01, "steps": 2},
  "output": {"vtu": "none"}
}
EOF
out="$WORK/out_grid_xpbd"
invoke run "$WORK/grid.json" --solver xpbd --out "$out"
[ "$RC" -eq 2 ] || fail "exit $RC, expected 2 (bad input)"
expect_stderr_has "grid.json"
expect_stderr_has "/solver"
expect_stderr_has "grid problem"
if grep -q "step 1/" "$WORK/stderr"; then fail "a step was solved before the refusal"; fi
expect_no_output "$out"
echo "ok   grid scene with --solver xpbd: exit $RC, refused at /solver"

# An unknown command.
CASE="unknown command"
invoke frobnicate
expect_clean_failure
[ -s "$WORK/stderr" ] || fail "nothing on stderr"
echo "ok   unknown command: exit $RC"

# compare on folders that hold no validation output: bad input (exit 2) saying what a valid
# folder holds, not an internal error.
mkdir -p "$WORK/empty" "$WORK/not_metrics/a/b"
echo '{"x": 1}' >"$WORK/not_metrics/a/b/metrics.json"
for pair in "empty:$WORK/empty" "no folder:$WORK/nothing_here" "foreign metrics.json:$WORK/not_metrics"; do
  CASE="compare on $(echo "${pair%%:*}")"
  invoke compare "${pair#*:}" "${pair#*:}"
  [ "$RC" -eq 2 ] || fail "exit $RC, expected 2 (bad input)"
  expect_stderr_has "metrics.json"
  expect_stderr_has "pbdlab validate --out"
  echo "ok   $CASE: exit $RC"
done

# An output place that cannot be written is bad input (exit 2), found before any work: no step
# is solved (no "step 1/" line) and nothing is written. Permission bits do not tell (root
# passes them; /proc refuses new folders whatever they say): the place is created and a file
# written in it first. Root can write anywhere else, so the read-only folder is checked only
# for other users; /proc refuses everyone.
touch "$WORK/a_file"
places=("an existing file:$WORK/a_file" "a path under a file:$WORK/a_file/run"
        "a folder /proc does not let anyone create:/proc/pbdlab_cli_test_$$"
        "a folder under a parent that cannot be created:/proc/pbdlab_cli_test_$$/run")
mkdir -p "$WORK/read_only"
chmod a-w "$WORK/read_only"
[ "$(id -u)" -ne 0 ] && places+=("a read-only folder:$WORK/read_only/run")
for pair in "${places[@]}"; do
  CASE="--out at ${pair%%:*}"
  place=${pair#*:}
  invoke run "$WORK/good.json" --out "$place"
  [ "$RC" -eq 2 ] || fail "exit $RC, expected 2 (bad input)"
  expect_stderr_has "--out"
  expect_stderr_has "$place"
  expect_no_work
  invoke validate --case sagging_block --out "$place"
  [ "$RC" -eq 2 ] || fail "validate: exit $RC, expected 2 (bad input)"
  expect_stderr_has "$place"
  if grep -q "\[1/" "$WORK/stderr"; then fail "validate ran a case before the output place was checked"; fi
  invoke report "$WORK" --out "$place"
  [ "$RC" -eq 2 ] || fail "report: exit $RC, expected 2 (bad input)"
  expect_stderr_has "$place"
  invoke table nosuch_table --out "$place"
  [ "$RC" -eq 2 ] || fail "table: exit $RC, expected 2 (bad input)"
  expect_stderr_has "$place"
  echo "ok   $CASE: exit 2 before any work (run, validate, report, table)"
done
chmod u+w "$WORK/read_only"

# mesh --out FILE: the folder must exist and take a file.
CASE="mesh --out in /proc"
invoke mesh '{"type": "box", "cells": [1, 1, 1]}' --no-cache --out /proc/pbdlab_cli_test_$$.vtu
[ "$RC" -eq 2 ] || fail "exit $RC, expected 2 (bad input)"
expect_stderr_has "/proc/pbdlab_cli_test_$$.vtu"
echo "ok   $CASE: exit 2"

# A run that fails on bad input leaves no folder it created behind.
CASE="bad scene with --out in new folders"
invoke run "$BAD_DIR/nu_half.json" --out "$WORK/new_parent/new_run"
[ "$RC" -eq 2 ] || fail "exit $RC, expected 2 (bad input)"
[ ! -e "$WORK/new_parent" ] || fail "left the folders it created: $(find "$WORK/new_parent" | tr '\n' ' ')"
echo "ok   $CASE: exit 2, no folder left"

# compare's margin and time threshold: a number that compares with nothing (NaN) or a
# negative margin would hide every regression; refused as bad input.
for args in "--margin nan" "--margin -0.1" "--time-threshold nan" "--time-threshold 0"; do
  CASE="compare $args"
  # shellcheck disable=SC2086
  invoke compare "$WORK" "$WORK" $args
  [ "$RC" -eq 2 ] || fail "exit $RC, expected 2 (bad input)"
  expect_stderr_has "${args%% *}"
  echo "ok   $CASE: exit 2"
done

echo "all $((${#CASES[@]} + 6 + ${#places[@]} + 2 + 4)) cases passed"
