#!/usr/bin/env bash
# The fast validation tier passes, compare finds nothing between two identical outputs, and
# compare catches a deliberately degraded run (every solver capped at 2 iterations).
# Usage: validate_and_compare.sh PBDLAB_BINARY
set -uo pipefail
pbdlab=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$pbdlab" validate --label fast --out "$work/baseline" --no-report || { echo "FAIL: the fast tier does not pass"; exit 1; }
"$pbdlab" compare "$work/baseline" "$work/baseline" > "$work/same.txt" || { echo "FAIL: compare of a folder with itself"; cat "$work/same.txt"; exit 1; }
"$pbdlab" validate --label fast --solver newton --max-iterations 2 --out "$work/degraded" --no-report \
  --references "$work/baseline/references"
[[ $? == 4 ]] || { echo "FAIL: Newton capped at 2 iterations should fail a metric (exit 4)"; exit 1; }
"$pbdlab" compare "$work/baseline" "$work/degraded" > "$work/degraded.txt"
status=$?
cat "$work/degraded.txt"
[[ $status == 4 ]] || { echo "FAIL: compare did not report the accuracy regression (exit $status)"; exit 1; }
grep -q "regression" "$work/degraded.txt" || { echo "FAIL: no regression row"; exit 1; }
echo "validate_and_compare: ok"
