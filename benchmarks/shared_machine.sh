#!/usr/bin/env bash
# How pbdlab runs when other processes keep every core busy (a shared machine, a CI runner,
# a build beside it): the same scene by default, with OMP_WAIT_POLICY=passive and with
# OMP_WAIT_POLICY=active (libgomp's spinning, pbdlab's default before it chose passive
# itself: core/support/openmp_wait_policy.hpp). Prints the median wall time of each and the ratio
# default / passive, which should stay at or below 1.5; exits 1 if it does not.
#
#   bash benchmarks/shared_machine.sh [PBDLAB] [SCENE] [REPEATS]
# defaults: build/apps/pbdlab, scenes/torsion_small.json, 3.
set -euo pipefail
cd "$(dirname "$0")/.."
pbdlab=${1:-build/apps/pbdlab}
scene=${2:-scenes/torsion_small.json}
repeats=${3:-3}
[[ -x $pbdlab ]] || { echo "shared_machine: no pbdlab at $pbdlab (build it first: bash scripts/build.sh)" >&2; exit 2; }
[[ -f $scene ]] || { echo "shared_machine: no scene $scene" >&2; exit 2; }
work=$(mktemp -d)
busy=()
cleanup() { ((${#busy[@]})) && kill "${busy[@]}" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

cores=$(nproc)
echo "shared_machine: $scene, $repeats runs each, $cores busy processes beside it" >&2
for ((i = 0; i < cores; ++i)); do
  (while :; do :; done) &
  busy+=($!)
done

# Median wall seconds of `repeats` runs of the scene under the environment given as arguments.
median_seconds() {
  local times=()
  for ((r = 0; r < repeats; ++r)); do
    local start end
    start=$(date +%s.%N)
    env -u OMP_WAIT_POLICY "$@" "$pbdlab" run "$scene" --out "$work/run" >/dev/null 2>"$work/stderr" ||
      { cat "$work/stderr" >&2; exit 1; }
    end=$(date +%s.%N)
    times+=("$(awk -v a="$end" -v b="$start" 'BEGIN { print a - b }')")
  done
  printf '%s\n' "${times[@]}" | sort -g | sed -n "$(((repeats + 1) / 2))p"
}

default=$(median_seconds)
passive=$(median_seconds OMP_WAIT_POLICY=passive)
active=$(median_seconds OMP_WAIT_POLICY=active)
ratio=$(awk -v a="$default" -v b="$passive" 'BEGIN { print a / b }')
printf '%-32s %8.2f s\n' "default (pbdlab's choice)" "$default" "OMP_WAIT_POLICY=passive" "$passive" \
  "OMP_WAIT_POLICY=active" "$active"
printf 'default / passive: %.2f (at most 1.5 expected); active / passive: %.2f\n' "$ratio" \
  "$(awk -v a="$active" -v b="$passive" 'BEGIN { print a / b }')"
awk -v r="$ratio" 'BEGIN { exit !(r <= 1.5) }' || { echo "shared_machine: default is more than 1.5x slower than passive" >&2; exit 1; }
