#!/usr/bin/env bash
# Crash-safe outputs (issue 12, docs/crash-safety.md): pbdlab is killed with SIGKILL at many
# moments, or runs into a full disk, and every file it leaves is complete and readable or
# absent; the mesh cache is never left corrupt; a rerun completes.
#
#   cli_kill.sh run       PBDLAB   `pbdlab run` killed while meshing, mid-step and while writing
#   cli_kill.sh validate  PBDLAB   `pbdlab validate` killed mid-run and while computing its reference
#   cli_kill.sh full_disk PBDLAB   a file-size limit (ulimit -f) and, as root, a small tmpfs
#
# After every kill the run folder and the cache are checked ($tmp/check.py below): .json
# parses, .csv has a header and whole rows, .vtu decodes to the sizes its header declares,
# .pvd names only existing frames, a summary.json comes with every file it implies (and no
# frame of another run), a metrics.json belongs to the summary.json beside it, a cache entry
# loads ("hit"). Temporary files (NAME.tmp.<pid>) of a killed process may stay until the next
# run writes NAME; after a rerun none is left.
#
# "While writing" kills are made exact with strace when it can trace (strace -D: pbdlab keeps
# the pid the test knows): its first write of the chosen file (its temporary, or the file
# itself if it were written in place) is delayed, and pbdlab is killed during the delay.
# Without strace the test falls back to watching stderr for the write phase's first line,
# which lands a kill in the write phase only by chance (the output says how often). Other moments: sleep, or watch stderr, then kill -9.
set -euo pipefail
part=$1 pbdlab=$2
python=/usr/bin/python3
here=$(cd "$(dirname "$0")" && pwd)
if [[ $part == full_disk_tmpfs ]]; then tmp=$3 own_tmp=false; else tmp=$(mktemp -d) own_tmp=true; fi
started=()  # pids this script started in the background (killed on exit)
cleanup() {
  for p in "${started[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  if $own_tmp; then rm -rf "$tmp"; fi
}
trap cleanup EXIT
export PBDLAB_CACHE_DIR=$tmp/cache  # never the shared test cache: entries are killed mid-write
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
fail() { echo "cli_kill $part: FAIL: $*" >&2; exit 1; }
say() { echo "cli_kill $part: $*"; }
SECONDS=0
what="the first run"  # what the last kill was, for the messages

# ------------------------------------------------------------------------------ the checker
cat > "$tmp/check.py" <<'PY'
"""check.py FOLDER [--complete] [--no-leftovers] [--max-frame N] [--validate] [--recursive]
Exit 1 with a reason when a file in FOLDER is incomplete or the folder mixes runs."""
import json, os, re, struct, sys, zlib
import xml.etree.ElementTree as ET

args = sys.argv[1:]
folder = args[0]
complete = "--complete" in args
no_leftovers = "--no-leftovers" in args
validate = "--validate" in args
recursive = "--recursive" in args
max_frame = int(args[args.index("--max-frame") + 1]) if "--max-frame" in args else None
TEMP = re.compile(r".+\.tmp\.\d+$")
FRAME = re.compile(r"^step_(\d+)\.vtu$")
problems, leftovers = [], []

def bad(path, why):
    problems.append(f"{path}: {why}")

SIZES = {"Float64": 8, "Float32": 4, "Int64": 8, "Int32": 4, "UInt64": 8, "UInt32": 4, "UInt8": 1, "Int8": 1}

def check_vtu(path):
    data = open(path, "rb").read()
    marker = b'<AppendedData encoding="raw">'
    if marker not in data:  # ascii or base64: plain XML
        root = ET.fromstring(data)
    else:
        head, rest = data.split(marker, 1)
        closing = b"\n  </AppendedData>\n</VTKFile>\n"
        if not rest.endswith(closing):
            raise ValueError("does not end with </AppendedData></VTKFile>")
        underscore = rest.index(b"_")
        appended = rest[underscore + 1:len(rest) - len(closing)]
        root = ET.fromstring(head + marker + b"</AppendedData></VTKFile>")
        header = root.get("header_type", "UInt32")
        hsize, hfmt = (8, "<Q") if header == "UInt64" else (4, "<I")
        compressed = root.get("compressor") is not None
        piece = root.find(".//Piece")
        points, cells = int(piece.get("NumberOfPoints")), int(piece.get("NumberOfCells"))
        for parent in root.iter():
            for array in parent.findall("DataArray"):
                if array.get("format") != "appended":
                    continue
                at = int(array.get("offset"))
                if compressed:
                    n_blocks = struct.unpack_from(hfmt, appended, at)[0]
                    block, last = struct.unpack_from(hfmt, appended, at + hsize)[0], struct.unpack_from(hfmt, appended, at + 2 * hsize)[0]
                    sizes = [struct.unpack_from(hfmt, appended, at + (3 + k) * hsize)[0] for k in range(n_blocks)]
                    start = at + (3 + n_blocks) * hsize
                    raw = b""
                    for size in sizes:
                        if start + size > len(appended):
                            raise ValueError(f"array {array.get('Name')} runs past the end")
                        raw += zlib.decompress(appended[start:start + size])
                        start += size
                    expected = (n_blocks - 1) * block + last if n_blocks else 0
                else:
                    n = struct.unpack_from(hfmt, appended, at)[0]
                    raw = appended[at + hsize:at + hsize + n]
                    expected = n
                if len(raw) != expected:
                    raise ValueError(f"array {array.get('Name')} holds {len(raw)} bytes, its header says {expected}")
                item = SIZES[array.get("type")] * int(array.get("NumberOfComponents", "1"))
                name = array.get("Name")
                want = {"Points": points, "types": cells, "offsets": cells}.get(name)
                if parent.tag == "PointData":
                    want = points
                if want is not None and len(raw) != want * item:
                    raise ValueError(f"array {name} holds {len(raw)} bytes, expected {want * item}")
    piece = root.find(".//Piece")
    if piece is None or int(piece.get("NumberOfPoints", "0")) <= 0:
        raise ValueError("no Piece with points")

def check_csv(path):
    data = open(path, "rb").read().decode()
    if not data.endswith("\n"):
        raise ValueError("the last row is cut")
    lines = data.splitlines()
    if not lines or not lines[0].startswith("step,"):
        raise ValueError("no header")
    width = len(lines[0].split(","))
    for k, line in enumerate(lines[1:], 2):
        if len(line.split(",")) != width:
            raise ValueError(f"row {k} has {len(line.split(','))} fields, the header {width}")
    return lines

def check_pvd(path):
    root = ET.parse(path).getroot()
    for dataset in root.iter("DataSet"):
        if not os.path.isfile(os.path.join(os.path.dirname(path), dataset.get("file"))):
            raise ValueError(f"names {dataset.get('file')}, which is missing")

def check_folder(folder):
    names = sorted(os.listdir(folder))
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isdir(path):
            if recursive:
                check_folder(path)
            continue
        if TEMP.match(name):
            leftovers.append(path)
            continue
        try:
            if name.endswith(".json"):
                json.load(open(path))
            elif name.endswith(".csv"):
                check_csv(path)
            elif name.endswith(".vtu"):
                check_vtu(path)
            elif name.endswith(".pvd"):
                check_pvd(path)
        except Exception as error:  # any parse error is a finding
            bad(path, f"incomplete or unreadable: {type(error).__name__}: {error}")
    frames = sorted(int(FRAME.match(n).group(1)) for n in names if FRAME.match(n))
    if max_frame is not None and frames and frames[-1] > max_frame:
        bad(folder, f"holds step_{frames[-1]:04d}.vtu of an earlier run (this run writes {max_frame} frames)")
    summary_path = os.path.join(folder, "summary.json")
    if os.path.isfile(summary_path) and not problems:
        s = json.load(open(summary_path))
        steps = len(s["steps"])
        vtu = s["scene_resolved"]["output"]["vtu"]
        if not os.path.isfile(os.path.join(folder, "iterations.csv")):
            bad(folder, "summary.json without iterations.csv")
        else:
            rows = check_csv(os.path.join(folder, "iterations.csv"))[1:]
            last_step = int(rows[-1].split(",")[0]) if rows else 0
            if last_step != steps or len(rows) < s["totals"]["iterations"]:
                bad(folder, f"iterations.csv (last step {last_step}, {len(rows)} rows) is not the summary's run "
                            f"({steps} steps, {s['totals']['iterations']} iterations)")
        # validate's Newton references write no frames, but their summary keeps the case
        # scene's "output" (validation_case.cpp sets output.vtu to none after resolving).
        if os.path.basename(os.path.dirname(os.path.abspath(folder))) == "references":
            vtu = "none"
        if s["totals"]["diverged"]:
            wanted = ["diverged_last_finite_state.vtu"]
        elif vtu == "every_step":
            wanted = [f"step_{k:04d}.vtu" for k in range(1, steps + 1)] + ["steps.pvd"]
            if frames != list(range(1, steps + 1)):
                bad(folder, f"summary.json has {steps} steps, the folder frames {frames[:3]}..{frames[-3:]}")
        elif vtu == "final":
            wanted = ["final.vtu"]
        else:
            wanted = []
        for name in wanted:
            if not os.path.isfile(os.path.join(folder, name)):
                bad(folder, f"summary.json without {name}")
        metrics_path = os.path.join(folder, "metrics.json")
        if validate and os.path.isfile(metrics_path):
            m = json.load(open(metrics_path))
            if m.get("totals") != s["totals"]:
                bad(folder, f"metrics.json is another run's than summary.json: totals {m.get('totals')} vs {s['totals']}")
    elif complete and not os.path.isfile(summary_path) and any(n.endswith(".csv") or n.endswith(".vtu") for n in names):
        bad(folder, "no summary.json: the run is not complete")
    if validate and os.path.isfile(os.path.join(folder, "metrics.json")) and not os.path.isfile(summary_path):
        bad(folder, "metrics.json without summary.json")

check_folder(folder)
if complete and not os.path.isfile(os.path.join(folder, "summary.json")) and not recursive:
    bad(folder, "no summary.json: the run is not complete")
if no_leftovers and leftovers:
    bad(folder, f"temporary files left: {leftovers}")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"ok: {folder}" + (f" ({len(leftovers)} temporary file(s) of killed processes)" if leftovers else ""))
PY
check() { "$python" "$tmp/check.py" "$@" || fail "after: $what"; }

# --------------------------------------------------------------------------- the scenes
# A twisted bar (scenes/torsion_small.json's), CELLS and STEPS and VTU as given.
bar_scene() {  # bar_scene FILE NAME "nx, ny, nz" STEPS VTU
  cat > "$1" <<EOF
{
  "name": "$2",
  "mesh": {"type": "box", "origin": [0, 0, 0], "size": [4, 1, 1], "cells": [$3]},
  "material": {"model": "stable_neo_hookean", "youngs_modulus": 1e6, "poisson_ratio": 0.35,
               "lame_mapping": "matched", "density": 1000},
  "gravity": [0, 0, 0],
  "dirichlet": [
    {"node_set": "x-min"},
    {"node_set": "x-max", "motion": [{"type": "rotate", "axis_point": [4, 0.5, 0.5], "axis_direction": [1, 0, 0],
                                      "angle_degrees": 180, "t_start": 0, "t_end": 1}]}
  ],
  "time": {"integrator": "quasistatic", "dt": $(awk "BEGIN{print 1/$4}"), "steps": $4},
  "solver": {"name": "newton", "max_iterations": 50, "target_relative_residual": 1e-8},
  "output": {"vtu": "$5"}
}
EOF
}

# ----------------------------------------------------------------------- process helpers
# start OUTFILE CMD...: runs CMD in the background (stdout to /dev/null, stderr to OUTFILE);
# $pid is its pid (bash execs a simple command, so it is pbdlab's own).
start() {
  local err=$1; shift
  "$@" >/dev/null 2>"$err" &
  pid=$!
  started+=("$pid")
}
# kill9: SIGKILL $pid; $status is its exit status (137 if the kill hit it, its own otherwise).
kill9() {
  kill -9 "$pid" 2>/dev/null || true
  status=0
  { wait "$pid"; } 2>/dev/null || status=$?
}
alive() { kill -0 "$pid" 2>/dev/null; }
# wait_for CONDITION-COMMAND...: polls every 20 ms while $pid lives, at most 60 s.
wait_for() {
  local k
  for ((k = 0; k < 3000; ++k)); do
    "$@" && return 0
    alive || { "$@" && return 0; return 1; }
    sleep 0.02
  done
  return 1
}
in_file() { grep -q -- "$1" "$2" 2>/dev/null; }
exists_like() { compgen -G "$1" >/dev/null; }

# strace -D keeps pbdlab on the pid the shell started (the tracer is a grandchild);
# --seccomp-bpf stops pbdlab only at the traced calls (without it every system call of every
# OpenMP thread stops, and a run takes minutes).
# CLI_KILL_NO_STRACE=1 tries the fallback.
can_strace=false
if [[ -z ${CLI_KILL_NO_STRACE:-} ]] && command -v strace >/dev/null && strace -D -f -qq --seccomp-bpf -o /dev/null -e trace=write true 2>/dev/null; then can_strace=true; fi
# start_paused_on TARGET ERR CMD...: like start, but pbdlab's first write to TARGET (or to its
# temporary TARGET.tmp.<pid>) is delayed by $delay_s seconds. Then kill_paused TARGET: waits
# until pbdlab sits in that write and kills it there (status 137), or returns 1.
# A process killed in a traced system call is reaped only when strace's delay ends, so it is
# not waited for here (its files cannot change any more: SIGKILL is pending): wait_paused_all
# before a rerun, which must see it gone to remove its temporary file.
delay_s=3
paused=()
traces=0
start_paused_on() {
  local target=$1 err=$2; shift 2
  touch "$tmp/mark"
  sleep 0.01  # a file written from now on is newer than the mark
  traces=$((traces + 1))
  sh -c 'target=$1 log=$2; shift 2; exec strace -D -f -qq --seccomp-bpf -o "$log" -P "$target" -P "$target.tmp.$$" \
           -e trace=write,writev,pwrite64 -e inject=write,writev,pwrite64:delay_enter='"$delay_s"'s -- "$@"' \
    sh "$target" "$tmp/strace.$traces.log" "$@" >/dev/null 2>"$err" &
  pid=$!
  disown "$pid"  # reaped by bash without a "Killed" line; waited for by polling
  started+=("$pid")
  paused+=("$pid")
}
# (Its temporary, or the file itself if written in place, appears just before the write.)
opened() { exists_like "$1.tmp.*" || [[ $1 -nt $tmp/mark ]]; }
kill_paused() {
  wait_for opened "$1" || return 1
  sleep 0.2
  kill -9 "$pid" 2>/dev/null || return 1
  status=137
  # The delayed write must not have completed (else the kill came too late to mean anything).
  sleep 0.1
  if grep -Eq '(write|writev|pwrite64)\(.*= [0-9]+$' "$tmp/strace.$traces.log"; then return 1; fi
}
wait_paused_all() {
  local p k
  for p in "${paused[@]}"; do
    for ((k = 0; k < 50 * (delay_s + 5); ++k)); do kill -0 "$p" 2>/dev/null || break; sleep 0.02; done
  done
  paused=()
}
# run_ok CMD...: the command completes with exit 0.
run_ok() {
  local code=0
  "$@" >/dev/null 2>"$tmp/last.err" || code=$?
  [[ $code == 0 ]] || { cat "$tmp/last.err" >&2; fail "rerun '$*' exited $code (after: $what)"; }
}

# ------------------------------------------------------------------------------- run
part_run() {
  # The checker itself must catch a cut file of each kind (else the test could not fail).
  bar_scene "$tmp/small.json" kill_small "4, 1, 1" 3 every_step
  run_ok "$pbdlab" run "$tmp/small.json" --out "$tmp/good"
  what="the checker's own test" check "$tmp/good" --complete --no-leftovers
  for f in iterations.csv summary.json step_0002.vtu steps.pvd; do
    rm -rf "$tmp/cut" && cp -r "$tmp/good" "$tmp/cut"
    size=$(stat -c %s "$tmp/cut/$f")
    truncate -s $((size * 2 / 3)) "$tmp/cut/$f"
    if "$python" "$tmp/check.py" "$tmp/cut" >/dev/null; then fail "the checker passes a cut $f"; fi
  done
  rm "$tmp/cut/steps.pvd" "$tmp/cut/step_0002.vtu" && cp "$tmp/good/steps.pvd" "$tmp/cut/"
  if "$python" "$tmp/check.py" "$tmp/cut" >/dev/null; then fail "the checker passes a pvd naming a missing frame"; fi
  say "checker catches cut files ($SECONDS s)"

  # An earlier, complete run in the folder: 16 frames, and a file that is not pbdlab's.
  out=$tmp/run
  bar_scene "$tmp/old.json" kill_old "8, 2, 2" 16 every_step
  bar_scene "$tmp/new.json" kill_new "12, 3, 3" 12 every_step
  run_ok "$pbdlab" run "$tmp/old.json" --out "$out"
  echo "mine" > "$out/notes.txt"
  what="the earlier run" check "$out" --complete --no-leftovers

  # Mid-step: killed as soon as stderr says step K ended (pbdlab is in step K+1), and at
  # fixed delays. Nothing is written before the last step: the earlier run stays whole.
  hits=0
  for k in 1 5; do
    start "$tmp/err" "$pbdlab" run "$tmp/new.json" --out "$out"
    wait_for in_file "step $k/12" "$tmp/err" || true
    kill9
    what="a kill after step $k/12 (exit $status)" check "$out" --max-frame 16
    if [[ $status == 137 ]] && "$python" -c 'import json,sys; sys.exit(len(json.load(open(sys.argv[1]))["steps"]) != 16)' "$out/summary.json" 2>/dev/null; then
      hits=$((hits + 1))
    fi
  done
  for delay in 0.1 0.5; do
    start "$tmp/err" "$pbdlab" run "$tmp/new.json" --out "$out"
    sleep "$delay"
    kill9
    what="a kill after $delay s (exit $status)" check "$out" --max-frame 16
  done
  ((hits > 0)) || fail "no kill landed mid-run with the earlier run intact"
  say "mid-step kills: $hits of 2 left the earlier run whole ($SECONDS s)"

  # While writing: killed in the first write of each file in turn, the earlier run's files
  # already removed. iterations.csv is written first, summary.json last.
  if $can_strace; then
    for target in iterations.csv step_0007.vtu summary.json; do
      start_paused_on "$out/$target" "$tmp/err" "$pbdlab" run "$tmp/new.json" --out "$out"
      kill_paused "$out/$target" || { cat "$tmp/err" >&2; fail "pbdlab was not killed in its first write of $target"; }
      what="a kill while writing $target" check "$out" --max-frame 12
      [[ ! -e $out/summary.json ]] || fail "summary.json exists after a kill while writing $target"
      [[ ! -e $out/$target ]] || fail "$target exists after a kill in its first write (written in place?)"
      [[ -e $out/notes.txt ]] || fail "notes.txt (not pbdlab's) was removed"
    done
    say "kills while writing each output (strace): folder consistent, no summary.json ($SECONDS s)"
  else
    say "strace cannot trace here: kills while writing depend on timing (watching stderr)"
    landed=0
    for k in 1 2 3; do
      start "$tmp/err" "$pbdlab" run "$tmp/new.json" --out "$out"
      wait_for in_file "removed" "$tmp/err" || true
      kill9
      what="a kill in the write phase (attempt $k, exit $status)" check "$out" --max-frame 16
      [[ $status != 137 || -e $out/summary.json ]] || landed=$((landed + 1))
    done
    say "$landed of 3 kills landed in the write phase ($SECONDS s)"
  fi

  # The rerun completes, in the same folder; the killed runs' temporary files are gone.
  what="the rerun after the kills"
  wait_paused_all
  run_ok "$pbdlab" run "$tmp/new.json" --out "$out"
  check "$out" --complete --no-leftovers --max-frame 12
  [[ $(cat "$out/notes.txt") == mine ]] || fail "notes.txt (not pbdlab's) was changed"

  # During meshing (Gmsh, an unstructured box; the cache is empty), then while the cache entry
  # is written. The entry is either absent or loads; the run folder gets nothing.
  cat > "$tmp/meshing.json" <<'EOF'
{
  "name": "kill_meshing",
  "mesh": {"type": "box", "family": "unstructured", "size": [1, 1, 1], "target_size": 0.1},
  "material": {"model": "stable_neo_hookean", "youngs_modulus": 1e6, "poisson_ratio": 0.3, "density": 1000},
  "gravity": [0, 0, 0],
  "dirichlet": [{"node_set": "x-min"},
                {"node_set": "x-max", "motion": [{"type": "translate", "by": [0.001, 0, 0], "t_start": 0, "t_end": 1}]}],
  "time": {"integrator": "quasistatic", "dt": 1, "steps": 1},
  "solver": {"name": "newton", "max_iterations": 1},
  "output": {"vtu": "final"}
}
EOF
  mout=$tmp/meshing-run
  export PBDLAB_CACHE_DIR=$tmp/meshing-cache  # holds this recipe's entry only
  entry_hit() {  # every cache entry loads: `pbdlab mesh` says hit
    local e
    for e in "$PBDLAB_CACHE_DIR"/meshes/*.pbdmesh; do
      [[ -e $e ]] || continue
      "$pbdlab" mesh "$tmp/meshing.json" --json 2>/dev/null | grep -q '"cache":"hit"' ||
        fail "the cache entry $e does not load after: $what"
    done
  }
  for delay in 0.3 0.8; do
    start "$tmp/err" "$pbdlab" run "$tmp/meshing.json" --out "$mout"
    sleep "$delay"
    kill9
    what="a kill after $delay s of meshing (exit $status)"
    if in_file " -> " "$tmp/err"; then say "note: meshing was over after $delay s"; fi
    [[ ! -d $mout ]] || [[ -z $(ls -A "$mout") ]] || check "$mout"
    entry_hit
  done
  if $can_strace; then
    # Learn the entry's name from a complete run, remove it, and kill while it is written.
    run_ok "$pbdlab" run "$tmp/meshing.json" --out "$mout"
    entry=$(ls "$PBDLAB_CACHE_DIR"/meshes/*.pbdmesh)
    rm -f "$entry"
    start_paused_on "$entry" "$tmp/err" "$pbdlab" run "$tmp/meshing.json" --out "$tmp/meshing-run2"
    kill_paused "$entry" || { cat "$tmp/err" >&2; fail "pbdlab was not killed in its write of the cache entry"; }
    [[ ! -e $entry ]] || fail "the cache entry exists after a kill in its first write (written in place?)"
    exists_like "$entry.tmp.*" || fail "no temporary cache entry: the kill did not land in the write"
    [[ ! -e $tmp/meshing-run2 ]] || [[ -z $(ls -A "$tmp/meshing-run2") ]] || fail "files written before the mesh was made"
    say "killed while writing the cache entry: entry absent, temporary left ($SECONDS s)"
  fi
  what="the rerun after the meshing kills"
  wait_paused_all
  run_ok "$pbdlab" run "$tmp/meshing.json" --out "$mout"
  check "$mout" --complete --no-leftovers
  entry_hit
  ls "$PBDLAB_CACHE_DIR"/meshes/*.pbdmesh >/dev/null || fail "the rerun stored no cache entry"
  if exists_like "$PBDLAB_CACHE_DIR/meshes/*.tmp.*"; then fail "temporary cache entries left after the rerun"; fi
  say "meshing kills: cache entry absent or loading; rerun stored it and removed the temporaries ($SECONDS s)"
}

# -------------------------------------------------------------------------- validate
part_validate() {
  mkdir -p "$tmp/cases" "$tmp/scenes"
  bar_scene "$tmp/scenes/kill_validate.json" kill_validate "12, 3, 3" 8 final
  cat > "$tmp/cases/kill_validate.json" <<'EOF'
{
  "name": "kill_validate",
  "description": "cli_kill.sh: a small twisted bar, killed at several moments.",
  "label": "fast",
  "scene": "../scenes/kill_validate.json",
  "solvers": ["newton"],
  "metrics": [
    {"name": "final_relative_residual", "type": "final_relative_residual", "tolerance": 1e-8, "measured_value": 1e-12, "measured": "cli_kill.sh"},
    {"name": "max_error_vs_newton", "type": "reference_max_error", "tolerance": 1e-6, "measured": "cli_kill.sh"}
  ]
}
EOF
  vout=$tmp/validate
  validate=("$pbdlab" validate --cases "$tmp/cases" --out "$vout" --no-report)
  run_dir=$vout/runs/kill_validate/newton
  ref_dir=$vout/references/kill_validate
  run_ok "${validate[@]}"
  what="the first validate" check "$vout" --recursive --validate --no-leftovers
  [[ -s $run_dir/metrics.json && -s $ref_dir/final_positions.json ]] || fail "the first validate wrote no metrics or reference"

  # Mid-run, at fixed delays, with another iteration budget (so another run's totals).
  for delay in 0.2 0.6 1.0; do
    start "$tmp/err" "${validate[@]}" --max-iterations 3
    sleep "$delay"
    kill9
    what="validate killed after $delay s (exit $status)" check "$vout" --recursive --validate
  done
  # While the Newton reference is computed, after the run's own files are written and before
  # its metrics.json: the earlier run's metrics.json must not stay beside this run's summary.
  rm -rf "$vout/references"
  start "$tmp/err" "${validate[@]}" --max-iterations 3
  wait_for in_file "reference for case kill_validate: Newton" "$tmp/err" || { cat "$tmp/err" >&2; fail "validate did not start its reference"; }
  kill9
  [[ $status == 137 ]] || fail "validate was not killed while computing its reference (exit $status)"
  what="validate killed while computing the reference" check "$vout" --recursive --validate
  [[ ! -e $run_dir/metrics.json ]] || fail "metrics.json of the earlier validate stayed beside the killed run's summary.json"
  if $can_strace; then
    start_paused_on "$run_dir/metrics.json" "$tmp/err" "${validate[@]}"
    kill_paused "$run_dir/metrics.json" || { cat "$tmp/err" >&2; fail "validate was not killed in its write of metrics.json"; }
    what="validate killed while writing metrics.json" check "$vout" --recursive --validate
    [[ ! -e $run_dir/metrics.json ]] || fail "metrics.json exists after a kill in its first write"
  fi
  say "validate kills: run folders and references consistent, no stale metrics.json ($SECONDS s)"

  what="the validate rerun"
  wait_paused_all
  run_ok "${validate[@]}"
  check "$vout" --recursive --validate --no-leftovers
  [[ -s $run_dir/metrics.json ]] || fail "the rerun wrote no metrics.json"
  run_ok "$pbdlab" compare "$vout" "$vout"
  say "validate rerun completes, compare reads it ($SECONDS s)"
}

# ------------------------------------------------------------------------- full disk
# full_disk_expect DESCRIPTION FILE-NAMED ERRNO-TEXT CODE: pbdlab (stderr in $tmp/err, exit
# code CODE) failed with a message naming FILE and the reason, not as an internal error.
full_disk_expect() {
  local what=$1 file=$2 reason=$3 code=$4
  [[ $code == 1 ]] || { cat "$tmp/err" >&2; fail "$what: exit $code, expected 1 (an output that cannot be written)"; }
  grep -q "pbdlab: error: cannot write '$file'" "$tmp/err" || { cat "$tmp/err" >&2; fail "$what: the error does not name $file"; }
  grep -q "$reason" "$tmp/err" || { cat "$tmp/err" >&2; fail "$what: the error does not say '$reason'"; }
  say "$what: $(grep 'pbdlab: error' "$tmp/err")"
}

# limited KIB CMD...: CMD under `ulimit -f KIB` (1024-byte blocks); its exit code in $code, its
# stderr in $tmp/err through a pipe (a file would be under the limit too), stdout in $tmp/out.
limited() {
  local kib=$1; shift
  set +o pipefail
  (ulimit -f "$kib" && exec "$@" 2>&1 >"$tmp/out") | cat > "$tmp/err"
  code=${PIPESTATUS[0]}
  set -o pipefail
}

part_full_disk() {
  bar_scene "$tmp/bar.json" kill_disk "12, 3, 3" 2 final
  out=$tmp/limited
  # ulimit -f counts 1024-byte blocks; iterations.csv of this run is about 2 KiB: the first
  # output fails. Without SIGXFSZ ignored, pbdlab would be killed (exit 153) with no message.
  mkdir -p "$out" && echo "mine" > "$out/notes.txt"
  limited 1 "$pbdlab" run "$tmp/bar.json" --out "$out"
  full_disk_expect "file-size limit, pbdlab run" "$out/iterations.csv" "File too large" "$code"
  [[ $(ls -A "$out") == notes.txt ]] || fail "files left under a file-size limit: $(ls -A "$out")"

  # A limit that lets the small files through but not final.vtu (about 5 KiB): the earlier
  # files are whole, final.vtu is absent, summary.json (written last) is absent.
  run_ok "$pbdlab" run "$tmp/bar.json" --out "$tmp/unlimited"
  vtu_kib=$(( $(stat -c %s "$tmp/unlimited/final.vtu") / 1024 ))
  csv_kib=$(( $(stat -c %s "$tmp/unlimited/iterations.csv") / 1024 + 1 ))
  ((csv_kib <= vtu_kib)) || fail "this test needs final.vtu larger than iterations.csv"
  limited "$csv_kib" "$pbdlab" run "$tmp/bar.json" --out "$out"
  full_disk_expect "file-size limit at final.vtu" "$out/final.vtu" "File too large" "$code"
  [[ ! -e $out/final.vtu && ! -e $out/summary.json ]] || fail "final.vtu or summary.json written past the limit"
  what="a file-size limit at final.vtu" check "$out" --no-leftovers

  # stderr itself a file past the limit (a log on the full disk): pbdlab must still end with
  # an exit code (no abort from a failing error message) and leave no partial file.
  rm -rf "$out"
  code=0
  (ulimit -f 1 && exec "$pbdlab" run "$tmp/bar.json" --out "$out" 2>"$tmp/limited-stderr.txt" >/dev/null) 2>/dev/null || code=$?
  [[ $code == 0 || $code == 1 ]] || fail "with stderr past a file-size limit pbdlab exited $code (134: aborted)"
  [[ ! -d $out ]] || what="stderr past the limit" check "$out" --no-leftovers
  say "stderr past the file-size limit: exit $code, no partial file"

  # The mesh cache past the limit: not stored (the cache only saves time), nothing partial;
  # `pbdlab mesh --out` past the limit fails naming its file.
  recipe='{"type": "box", "family": "unstructured", "size": [1, 1, 1], "target_size": 0.25}'
  PBDLAB_CACHE_DIR=$tmp/limited-cache limited 4 "$pbdlab" mesh "$recipe" --json
  [[ $code == 0 ]] || { cat "$tmp/err" >&2; fail "pbdlab mesh exits $code when the cache cannot be written"; }
  grep -q '"cache":"miss (not stored)"' "$tmp/out" || fail "the cache entry was stored past the limit: $(cat "$tmp/out")"
  if ls -A "$tmp/limited-cache/meshes" | grep -q .; then fail "files left in the cache: $(ls -A "$tmp/limited-cache/meshes")"; fi
  limited 4 "$pbdlab" mesh "$recipe" --no-cache --out "$tmp/mesh.vtu"
  full_disk_expect "file-size limit, pbdlab mesh --out" "$tmp/mesh.vtu" "File too large" "$code"
  if exists_like "$tmp/mesh.vtu*"; then fail "a partial mesh.vtu was left"; fi

  # A full file system: a small tmpfs, in a private mount namespace (root only).
  if [[ $(id -u) == 0 ]] && unshare -m true 2>/dev/null; then
    unshare -m bash "$here/cli_kill.sh" full_disk_tmpfs "$pbdlab" "$tmp"
  else
    say "not root or no unshare: the tmpfs part is skipped (the file-size limit is tested above)"
  fi
}

# Inside `unshare -m`: a 16 KiB tmpfs takes the first files, then is full.
part_full_disk_tmpfs() {  # $tmp is the parent's folder (its scenes and cases); the parent removes it
  disk=$tmp/tmpfs
  mkdir -p "$disk"
  mount -t tmpfs -o size=16k tmpfs "$disk" || { say "tmpfs cannot be mounted here: skipped"; return 0; }
  bar_scene "$tmp/big.json" kill_disk_big "16, 4, 4" 2 final
  code=0
  "$pbdlab" run "$tmp/big.json" --out "$disk/run" >/dev/null 2>"$tmp/err" || code=$?
  grep -q "No space left on device" "$tmp/err" || { cat "$tmp/err" >&2; fail "full tmpfs: no 'No space left on device'"; }
  file=$(sed -n "s/^pbdlab: error: cannot write '\([^']*\)'.*/\1/p" "$tmp/err")
  full_disk_expect "full tmpfs, pbdlab run" "$file" "No space left on device" "$code"
  [[ ! -e $file && ! -e $disk/run/summary.json ]] || fail "full tmpfs: $file or summary.json exists"
  what="a full tmpfs" check "$disk/run" --no-leftovers
  code=0
  "$pbdlab" validate --cases "$tmp/cases" --out "$disk/validate" --no-report >/dev/null 2>"$tmp/err" || code=$?
  file=$(sed -n "s/^pbdlab: error: cannot write '\([^']*\)'.*/\1/p" "$tmp/err")
  full_disk_expect "full tmpfs, pbdlab validate" "$file" "No space left on device" "$code"
  what="validate on a full tmpfs" check "$disk/validate" --recursive --validate --no-leftovers
  umount "$disk"
}

case $part in
  run) part_run ;;
  validate) part_validate ;;
  full_disk)
    # validate on the tmpfs needs a case: the validate part's.
    mkdir -p "$tmp/cases" "$tmp/scenes"
    bar_scene "$tmp/scenes/kill_validate.json" kill_validate "12, 3, 3" 8 final
    printf '%s\n' '{"name": "kill_validate", "description": "cli_kill.sh", "label": "fast",' \
      '"scene": "../scenes/kill_validate.json", "solvers": ["newton"], "metrics": [' \
      '{"name": "r", "type": "final_relative_residual", "tolerance": 1e-8, "measured_value": 1e-12, "measured": "cli_kill.sh"}]}' \
      > "$tmp/cases/kill_validate.json"
    part_full_disk ;;
  full_disk_tmpfs) part_full_disk_tmpfs ;;
  *) fail "unknown part '$part' (run, validate, full_disk)" ;;
esac
say "ok ($SECONDS s)"
