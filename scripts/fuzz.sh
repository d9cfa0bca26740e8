#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of fuzz/ (docs/fuzzing.md) and reports, per target,
# executions, coverage and what was found. Exit status 0 only when no target found anything.
set -uo pipefail

usage() {
  cat <<'USAGE'
Usage: bash scripts/fuzz.sh [options] [TARGET...]

Runs every libFuzzer target of fuzz/ (or the TARGETs named, e.g. fuzz_msh) under
AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer, one after another, each for a
time or a number of executions, and prints per target: executions, coverage (libFuzzer's
final cov: edges and ft: features), crashes, leaks, timeouts and out-of-memory inputs found.
The corpus grows in CORPUS_DIR/<target> (seeded from BUILD_DIR/fuzz/seeds/<target>, made
from the repository's files by fuzz/make_seeds.py); every input that crashed, leaked, timed
out or ran out of memory is kept in CRASH_DIR as <target>-crash-<sha1> (leak-, timeout-,
oom-), and each target's full log in CRASH_DIR/../logs/<target>.log.

Options:
  --build-dir DIR    build folder (default: build-fuzz in the repository's top folder);
                     configured with clang, PBDLAB_FUZZ=ON, benchmarks off, and
                     CMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined so the
                     libraries carry coverage instrumentation
  --no-build         use BUILD_DIR as it is
  --jobs N           build parallelism (default 2)
  --time S           seconds per target (default 60)
  --runs N           executions per target instead of a time (e.g. 100000)
  --timeout S        an input running longer than S seconds is a timeout (default 25)
  --rss-limit MB     memory limit per target (default 4096)
  --corpus-dir DIR   where the corpora grow (default BUILD_DIR/fuzz/corpus)
  --crash-dir DIR    where found inputs are kept (default BUILD_DIR/fuzz/crashes)
  --list             list the targets and exit
  -h, --help         this text

Rerun one found input: BUILD_DIR/fuzz/<target> CRASH_DIR/<file>
Environment: ASAN_OPTIONS, UBSAN_OPTIONS and LSAN_OPTIONS are appended to (yours win);
OMP_WAIT_POLICY=passive unless set.
USAGE
}

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-fuzz"
do_build=1
jobs=2
seconds=60
runs=""
timeout=25
rss=4096
corpus=""
crashes=""
list=0
targets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build="$(realpath -m "$2")"; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    --time) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --rss-limit) rss="$2"; shift 2 ;;
    --corpus-dir) corpus="$(realpath -m "$2")"; shift 2 ;;
    --crash-dir) crashes="$(realpath -m "$2")"; shift 2 ;;
    --list) list=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
corpus="${corpus:-$build/fuzz/corpus}"
crashes="${crashes:-$build/fuzz/crashes}"
all_targets=(fuzz_json_reader fuzz_msh fuzz_stl fuzz_mesh_cache fuzz_mesh_recipe fuzz_scene fuzz_validation_case fuzz_table)
if [[ $list -eq 1 ]]; then printf '%s\n' "${all_targets[@]}"; exit 0; fi
[[ ${#targets[@]} -eq 0 ]] && targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target $t (--list)" >&2; exit 2; }
done

export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$root/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

if [[ $do_build -eq 1 ]]; then
  command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (Debian 12: apt-get install clang libclang-rt-14-dev libomp-14-dev)" >&2; exit 2; }
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPBDLAB_FUZZ=ON -DPBDLAB_BUILD_BENCHMARKS=OFF -DPBDLAB_BUILD_TESTS=ON \
    "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null || { echo "fuzz.sh: configure failed" >&2; exit 2; }
  cmake --build "$build" -j "$jobs" --target pbdlab_fuzz_seeds "${targets[@]}" || { echo "fuzz.sh: build failed" >&2; exit 2; }
fi

logs="$(dirname "$crashes")/logs"
mkdir -p "$crashes" "$logs"
limit=(-max_total_time="$seconds")
[[ -n "$runs" ]] && limit=(-runs="$runs")
what="${runs:+$runs executions}"; what="${what:-$seconds s}"
echo "fuzz.sh: ${#targets[@]} target(s), $what each; corpora in $corpus, found inputs in $crashes"

status=0
rows=()
for t in "${targets[@]}"; do
  bin="$build/fuzz/$t"
  seeds="$build/fuzz/seeds/${t#fuzz_}"
  [[ -x "$bin" ]] || { echo "fuzz.sh: $bin not built" >&2; status=1; rows+=("$t|-|-|-|not built"); continue; }
  mkdir -p "$corpus/$t"
  log="$logs/$t.log"
  before=$(ls "$crashes" | grep -c "^$t-" || true)
  echo "fuzz.sh: $t ..."
  start=$(date +%s)
  "$bin" "${limit[@]}" -timeout="$timeout" -rss_limit_mb="$rss" -print_final_stats=1 \
    -artifact_prefix="$crashes/$t-" "$corpus/$t" "$seeds" >"$log" 2>&1
  rc=$?
  elapsed=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$last")
  found() { ls "$crashes" | grep -c "^$t-$1-" || true; }
  crash=$(found crash); leak=$(found leak); tmo=$(found timeout); oom=$(found oom)
  sanitizer=$(grep -c -E '^(==[0-9]+==ERROR|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer)' "$log" || true)
  note="ok"
  if [[ $rc -ne 0 || $(( $(ls "$crashes" | grep -c "^$t-" || true) - before )) -gt 0 || $sanitizer -gt 0 ]]; then
    note="FOUND (exit $rc; see $log)"
    status=1
  fi
  rows+=("$t|${execs:-?}|${cov:-?}/${ft:-?}|$crash/$leak/$tmo/$oom|${elapsed}s|$note")
done

echo
printf '%-22s %12s %14s %26s %8s  %s\n' target executions "cov/ft" "crash/leak/timeout/oom" time result
for r in "${rows[@]}"; do
  IFS='|' read -r t e c f s n <<<"$r"
  printf '%-22s %12s %14s %26s %8s  %s\n' "$t" "$e" "$c" "$f" "$s" "$n"
done
echo
echo "crash/leak/timeout/oom: inputs kept in $crashes (all runs so far); logs in $logs"
exit $status
