#!/usr/bin/env bash
# Every body kind through the command line, with every registered solver (issue 24): a solid of
# each element type, plane strain (also with a binding into a triangle body), cloth (also bound
# into a cloth), bodies of mixed solid types and tet4 bodies embedded in a background grid (the
# grid-based scheme, issue 30). Each (scene, solver) run either
#  - completes or diverges (exit 0, 3 or 4): summary.json with finite probe displacements for
#    every step, iterations.csv, and final.vtu (or the diverged state) whose cells meshio reads as
#    the body's VTK cell types; or
#  - is refused before any work (exit 2): stderr names the scene file and /solver with the
#    solver's reason, and no output folder is left;
# anything else (an internal error, exit 1, or a hang) fails. Newton, the reference, must run
# every kind.
set -euo pipefail
pbdlab=$1 scenes=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
solvers=$({ "$pbdlab" run "$scenes/solid_tet4.json" --solver no_such_solver --out "$tmp/none" 2>&1 || true; } |
  sed -n 's/.*(known: \(.*\)).*/\1/p' | tr -d ',')
[[ -n $solvers ]] || { echo "could not read the solver list"; exit 1; }
echo "solvers: $solvers"
failures=0
: >"$tmp/ran.txt"
for scene in "$scenes"/*.json; do
  kind=$(basename "$scene" .json)
  for solver in $solvers; do
    out="$tmp/runs/$kind/$solver"
    rc=0
    timeout 120 "$pbdlab" run "$scene" --solver "$solver" --out "$out" >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
    case $rc in
      0 | 3 | 4)
        echo "$kind $solver ran (exit $rc)"
        echo "$kind $solver $out" >>"$tmp/ran.txt"
        ;;
      2)
        if ! grep -q "/solver" "$tmp/stderr" || ! grep -q "$(basename "$scene")" "$tmp/stderr"; then
          echo "FAIL $kind $solver: refused without naming the scene and /solver:"; cat "$tmp/stderr"; failures=$((failures + 1))
        elif [[ -e $out ]]; then
          echo "FAIL $kind $solver: refused but left $out behind"; failures=$((failures + 1))
        else
          echo "$kind $solver refused: $(grep -m1 '/solver' "$tmp/stderr" | cut -c1-160)"
        fi
        ;;
      *)
        echo "FAIL $kind $solver: exit $rc"; tail -n 3 "$tmp/stderr"; failures=$((failures + 1))
        ;;
    esac
    if [[ $solver == newton && $rc != 0 ]]; then
      echo "FAIL $kind: Newton (the reference) must run every body kind"; failures=$((failures + 1))
    fi
  done
done
# The outputs of every run, read by their real reader (meshio): the cells of the body's kind.
/usr/bin/python3 - "$tmp/ran.txt" <<'PY' || failures=$((failures + 1))
import json, math, os, sys
import meshio
expected = {
    "solid_tet4": {"tetra"}, "solid_tet10": {"tetra10"}, "solid_tet20": {"VTK_LAGRANGE_TETRAHEDRON"},
    "solid_hex8": {"hexahedron"}, "solid_prism6": {"wedge"}, "solid_pyramid5": {"pyramid"},
    "plane_strain": {"triangle"}, "plane_strain_bound": {"triangle"}, "cloth": {"triangle"},
    "cloth_bound": {"triangle"}, "mixed": {"tetra", "hexahedron"}, "grid_blocks": {"tetra"}, "grid_shapes": {"tetra"},
}
bad = 0
for line in open(sys.argv[1]):
    kind, solver, out = line.split()
    summary = json.load(open(os.path.join(out, "summary.json")))
    for step in summary["steps"]:
        for name, u in step["probe_displacements"].items():
            if not (len(u) == 3 and all(isinstance(c, (int, float)) and math.isfinite(c) for c in u)):
                print(f"FAIL {kind} {solver}: probe {name} of step {step['step']} is {u}"); bad += 1
    if not summary["totals"]["diverged"] and not summary["steps"][0]["probe_displacements"]:
        print(f"FAIL {kind} {solver}: no probe values"); bad += 1
    vtu = "diverged_last_finite_state.vtu" if summary["totals"]["diverged"] else "final.vtu"
    mesh = meshio.read(os.path.join(out, vtu))
    types = {c.type for c in mesh.cells}
    want = expected.get(kind)
    if want is not None and not (types == want or (want == {"VTK_LAGRANGE_TETRAHEDRON"} and len(types) == 1)):
        print(f"FAIL {kind} {solver}: {vtu} holds cells {sorted(types)}, expected {sorted(want)}"); bad += 1
    if "displacement" not in mesh.point_data:
        print(f"FAIL {kind} {solver}: {vtu} has no displacement field"); bad += 1
print(f"meshio read the outputs of {sum(1 for _ in open(sys.argv[1]))} runs")
sys.exit(1 if bad else 0)
PY
# `pbdlab report` over Newton's run folder of every kind (the validation cases plane_strain_beam and
# cloth_hanging take triangle bodies through `validate` in the fast tier).
# shellcheck disable=SC2046
if "$pbdlab" report $(awk '$2 == "newton" {print $3}' "$tmp/ran.txt") --out "$tmp/report" >"$tmp/report.log" 2>&1 &&
  [[ -s $tmp/report/report.html && -s $tmp/report/report.md ]]; then
  echo "report of every run: ok"
else
  echo "FAIL: pbdlab report over the runs"; tail -n 5 "$tmp/report.log"; failures=$((failures + 1))
fi
if ((failures)); then
  echo "body_kinds: $failures failure(s)"
  exit 1
fi
echo "body_kinds: ok"
