#!/usr/bin/env bash
# After the fast tier has run (ctest's validate_fast/<case> tests, one output folder per case
# under FAST_OUT, their Newton references in FAST_OUT/references): compare finds nothing between that output and itself, and catches a
# deliberately degraded run (Newton capped at 2 iterations on one case).
# Usage: validate_and_compare.sh PBDLAB_BINARY FAST_OUT
set -uo pipefail
pbdlab=$1 fast=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ -d $fast ]] || { echo "FAIL: no fast-tier output in $fast"; exit 1; }
"$pbdlab" compare "$fast" "$fast" > "$work/same.txt" || { echo "FAIL: compare of a folder with itself"; cat "$work/same.txt"; exit 1; }
grep -q "^Total: [1-9][0-9]* runs" "$work/same.txt" || { echo "FAIL: no totals line"; cat "$work/same.txt"; exit 1; }
case=sagging_block
"$pbdlab" validate --case $case --solver newton --max-iterations 2 --out "$work/degraded" --no-report \
  --references "$fast/references"
[[ $? == 4 ]] || { echo "FAIL: Newton capped at 2 iterations should fail a metric (exit 4)"; exit 1; }
"$pbdlab" compare "$fast/$case" "$work/degraded" > "$work/degraded.txt"
status=$?
cat "$work/degraded.txt"
[[ $status == 4 ]] || { echo "FAIL: compare did not report the accuracy regression (exit $status)"; exit 1; }
grep -q "regression" "$work/degraded.txt" || { echo "FAIL: no regression row"; exit 1; }
echo "validate_and_compare: ok"
