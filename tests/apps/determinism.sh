#!/usr/bin/env bash
# Determinism (issue 12, docs/determinism.md): for every solver that `pbdlab run --help` lists,
#   - two runs of the same scene with OMP_NUM_THREADS=2 give bitwise-identical outputs:
#     final.vtu (ASCII, 17 significant digits: the text is equal exactly when every double
#     is), iterations.csv without its timing columns (*_seconds), summary.json without its
#     timing fields (*_seconds, and a grid scene's preprocessing_share of them) and its
#     environment block (date);
#   - a run with OMP_NUM_THREADS=1 agrees with the 2-thread run to the solver's target:
#     max |u1 - u2| <= tau max |u2| over the final displacements, and every step's relative
#     residual within tau, tau = the scene's target_relative_residual (1e-8 here; why this
#     scale: docs/determinism.md).
# Each solver runs the scene SCENES_DIR/<solver>.json if there is one, else
# backward_euler_block.json with --solver, else (a solver that refuses it, exit 2: quasistatic
# only) quasistatic_block.json with --solver. Every scene has an iteration budget and no
# max_seconds: a time budget makes the iteration count depend on the machine's load.
# The mesh cache starts empty, so the first run of each scene meshes and the second reads the
# cache: a cached mesh that differed from a generated one would show as a difference too.
#   determinism.sh PBDLAB SCENES_DIR [SOLVER...]   (no SOLVER: every listed solver)
# DETERMINISM_THREADS=N (default 2) sets the thread count of the pair of runs compared bit for
# bit (to measure 3 or 4 threads by hand; ctest uses 2).
set -euo pipefail
pbdlab=$1 scenes=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "determinism: $*"; exit 1; }

export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
threads=${DETERMINISM_THREADS:-2}
export PBDLAB_CACHE_DIR=$tmp/cache
# OpenBLAS (CHOLMOD's BLAS) follows OMP_NUM_THREADS when its own variables are unset.
unset OPENBLAS_NUM_THREADS GOTO_NUM_THREADS OMP_DYNAMIC

if [[ $# -gt 0 ]]; then
  solvers=("$@")
else
  read -r -a solvers <<<"$("$pbdlab" run --help | sed -n 's/.*Known: //p')"
fi
[[ ${#solvers[@]} -gt 0 ]] || fail "no solver list in 'pbdlab run --help'"
echo "solvers: ${solvers[*]}"

# run THREADS SOLVER SCENE OUT [--solver NAME]: exit code of pbdlab, stderr kept in OUT.stderr
run() {
  local threads=$1 out=$3
  shift 3
  set +e
  OMP_NUM_THREADS=$threads "$pbdlab" run "$@" --out "$out" 2>"$out.stderr" >/dev/null
  local code=$?
  set -e
  return $code
}

compare() {
  /usr/bin/python3 - "$@" <<'PY'
import csv, json, math, sys

mode, a, b, solver = sys.argv[1:5]

def fail(message):
    print(f"determinism: {solver}: {message}")
    sys.exit(1)

def displacements(folder):
    # The ASCII final.vtu's "displacement" array (x - X at every node), as written.
    text = open(folder + "/final.vtu").read()
    start = text.index('Name="displacement"')
    start = text.index(">", start) + 1
    end = text.index("</DataArray>", start)
    return [float(v) for v in text[start:end].split()]

def log_rows(folder):
    # iterations.csv without the timing columns.
    with open(folder + "/iterations.csv", newline="") as f:
        rows = list(csv.reader(f))
    keep = [k for k, name in enumerate(rows[0]) if not name.endswith("_seconds")]
    return [[row[k] for k in keep] for row in rows]

def without_timing(value):
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items()
                if not k.endswith("_seconds") and k != "preprocessing_share"}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value

def summary(folder, threads):
    s = json.load(open(folder + "/summary.json"))
    t = s["environment"]["threading"]
    if t["omp_threads"] != threads:
        fail(f"{folder}: ran with {t['omp_threads']} OpenMP threads, not {threads}")
    # OpenBLAS follows OMP_NUM_THREADS up to the number of cores (-1: not OpenBLAS).
    if not t["blas_threads"] <= threads:
        fail(f"{folder}: OpenBLAS ran {t['blas_threads']} threads, more than {threads}")
    blas_threads = t["blas_threads"]
    del s["environment"]  # the date; the rest is the same machine's
    s = without_timing(s)
    s["blas_threads"] = blas_threads
    return s

def first_difference(x, y):
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y)):
            if k not in x or k not in y:
                return f"/{k}: only in one"
            d = first_difference(x[k], y[k])
            if d:
                return f"/{k}{d}"
        return None
    if isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            return f": {len(x)} against {len(y)} entries"
        for k, (u, v) in enumerate(zip(x, y)):
            d = first_difference(u, v)
            if d:
                return f"/{k}{d}"
        return None
    return None if x == y and type(x) == type(y) else f": {x!r} against {y!r}"

ua, ub = displacements(a), displacements(b)
if len(ua) != len(ub):
    fail(f"final.vtu: {len(ua)} against {len(ub)} displacement values")
if not all(math.isfinite(v) for v in ua + ub):
    fail("final.vtu holds a value that is not finite")
max_difference = max(abs(p - q) for p, q in zip(ua, ub))
scale = max(abs(p) for p in ua)

if mode == "bitwise":
    messages = []
    if open(a + "/final.vtu", "rb").read() != open(b + "/final.vtu", "rb").read():
        messages.append(f"final.vtu differs (max |du| = {max_difference:.3e}, max |u| = {scale:.3e})")
    la, lb = log_rows(a), log_rows(b)
    if la != lb:
        where = next((k for k, (p, q) in enumerate(zip(la, lb)) if p != q), min(len(la), len(lb)))
        messages.append(f"iterations.csv differs from line {where + 1}: "
                        f"{la[where] if where < len(la) else None} against {lb[where] if where < len(lb) else None}")
    threads = int(sys.argv[5])
    d = first_difference(summary(a, threads), summary(b, threads))
    if d:
        messages.append(f"summary.json differs at {d}")
    if messages:
        fail("two runs with the same thread count differ:\n  " + "\n  ".join(messages))
    print(f"  {solver}: bitwise identical (final.vtu, {len(la) - 1} log rows, summary.json)")
else:
    sa, sb = json.load(open(a + "/summary.json")), json.load(open(b + "/summary.json"))
    tau = sa["scene_resolved"]["solver"]["target_relative_residual"]
    steps_a, steps_b = sa["steps"], sb["steps"]
    if len(steps_a) != len(steps_b):
        fail(f"{len(steps_a)} against {len(steps_b)} steps")
    residual_difference = max(abs(p["relative_residual"] - q["relative_residual"])
                              for p, q in zip(steps_a, steps_b))
    bitwise = open(a + "/final.vtu", "rb").read() == open(b + "/final.vtu", "rb").read()
    print(f"  {solver}: 1 against {sys.argv[5]} threads: max |du| = {max_difference:.3e} (max |u| = {scale:.3e}, "
          f"relative {max_difference / scale if scale else 0.0:.3e}), max step relative residual "
          f"difference {residual_difference:.3e}; tolerance tau = {tau:g}"
          f"{'; final.vtu bitwise identical' if bitwise else ''}")
    if not max_difference <= tau * scale:
        fail(f"1 and {sys.argv[5]} threads differ by max |du| = {max_difference:.3e} > tau max |u| = {tau * scale:.3e}")
    if not residual_difference <= tau:
        fail(f"1 and {sys.argv[5]} threads' step relative residuals differ by {residual_difference:.3e} > tau = {tau:g}")
PY
}

for solver in "${solvers[@]}"; do
  if [[ -f $scenes/$solver.json ]]; then
    candidates=("$scenes/$solver.json")
  else
    candidates=("$scenes/backward_euler_block.json" "$scenes/quasistatic_block.json")
  fi
  chosen=""
  for scene in "${candidates[@]}"; do
    args=("$scene")
    [[ $scene == "$scenes/$solver.json" ]] || args+=(--solver "$solver")
    a=$tmp/$solver-a
    code=0
    run "$threads" "$solver" "$a" "${args[@]}" || code=$?
    if [[ $code == 0 ]]; then
      chosen=$scene
      break
    fi
    # Exit 2: the solver cannot run this scene (says why before the run); try the next.
    [[ $code == 2 ]] || { cat "$a.stderr"; fail "$solver on $(basename "$scene"): exit code $code"; }
  done
  [[ -n $chosen ]] || { cat "$a.stderr"; fail "$solver can run none of: ${candidates[*]##*/}"; }
  echo "$solver: $(basename "$chosen")"
  run "$threads" "$solver" "$tmp/$solver-b" "${args[@]}" || { cat "$tmp/$solver-b.stderr"; fail "$solver: second run failed"; }
  run 1 "$solver" "$tmp/$solver-one" "${args[@]}" || { cat "$tmp/$solver-one.stderr"; fail "$solver: 1-thread run failed"; }
  compare bitwise "$tmp/$solver-a" "$tmp/$solver-b" "$solver" "$threads"
  compare tolerance "$tmp/$solver-a" "$tmp/$solver-one" "$solver" "$threads"
done
echo "determinism: ok (${#solvers[@]} solvers)"
