#!/usr/bin/env bash
# The high-order paper's bending reference (Fig. 7, Table 1: 4x1x1 beam under gravity),
# computed here quasistatically with Newton on Q1 hexahedra (the paper's kind of reference,
# 64x16x16 at the finest) and on P2 tetrahedra (five-tet, two refinements) to show how far
# the Q1 reference is from a converged one. Prints a Markdown table of the tip-centre
# displacement. Usage: bash validation/references/bending_study.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
out=${2:-runs/bending_study}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
cases=(q1_16x4x4 q1_32x8x8 q1_64x16x16 p2_8x2x2 p2_16x4x4 p2_32x8x8 p2_48x12x12)
for c in "${cases[@]}"; do
  [[ -s $out/$c/summary.json ]] || "$build/apps/pbdlab" run "$here/bending_$c.json" --out "$out/$c" >/dev/null
done
/usr/bin/python3 - "$out" "${cases[@]}" <<'PY'
import json, sys, math
out, cases = sys.argv[1], sys.argv[2:]
rows = {}
for c in cases:
    s = json.load(open(f"{out}/{c}/summary.json"))
    step = s["steps"][-1]
    u = step["probe_displacements"]["tip_centre"]
    rows[c] = (s["mesh"]["nodes"], s["mesh"]["elements"], step["iterations"], step["relative_residual"],
               step["solver_seconds"], u)
ref = rows["p2_48x12x12"][5]
print("| mesh | nodes | elements | Newton it. | rel. residual | solver s | tip u_x (m) | tip u_y (m) | distance to P2 48x12x12 (m) |")
print("|---|---|---|---|---|---|---|---|---|")
for c in cases:
    n, e, it, rr, sec, u = rows[c]
    d = math.dist(u, ref)
    print(f"| {c} | {n} | {e} | {it} | {rr:.1e} | {sec:.1f} | {u[0]:.4f} | {u[1]:.4f} | {d:.4f} |")
PY
