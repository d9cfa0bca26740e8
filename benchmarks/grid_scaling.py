#!/usr/bin/env python3
"""Time a frame and peak memory of the grid-based scheme against the number of vertices (issue 30,
docs/grid.md "Scaling"): a grid scene refined by whole factors (every box body's cells times the
factor, every target_size and the grid spacing divided by it, so the element-to-cell ratio stays
the scene's; the walls' node layers times the factor, so they keep their depth), each solver at
1 and 2 threads, every configuration `pbdlab run` in its own process under /usr/bin/time (peak
resident memory).

  python3 benchmarks/grid_scaling.py [--pbdlab build/apps/pbdlab] [--scene scenes/grid_two_blocks.json]
      [--factors 1 2 4] [--solvers grid_b_pxpbd newton] [--threads 1 2] [--steps 38] [--last 8]
      [--max-iterations 100] [--target 1e-6] [--record-every 1] [--constant-ratio]
      [--memory-limit-gb 20] [--out-dir DIR]

A frame's numbers are the mean over the last `--last` frames (with the two blocks: in contact):
solver seconds (the solver's own clock, without the yardstick), the step's preprocessing (grid
weights + P2G, the grid problem, the solver's setup with the Fig. 6 colouring), iterations and the
largest relative residual reached. --record-every k evaluates the yardstick (and tests the
target) every k-th iteration only (the scene's solver.record_every): at large sizes its cost a
record rivals an iteration's; iteration counts then round up to a multiple of k.
--constant-ratio divides every body's Young's modulus by factor^2, so that dt^2 E / (rho h^2),
which decides B-PXPBD's stability (docs/pxpbd.md, "B-PXPBD's zeta: a stability map"), stays the
scene's at every size (a softer material, not the same physics). Each run's progress lines
(pbdlab's, on stderr) pass through. A configuration whose memory, extrapolated from the solver's
previous factor (peak times the ratio of vertices), would pass --memory-limit-gb is not run and
says so. --out-dir DIR writes DIR/grid_scaling.json (every run's numbers, the command, the
commit, the machine) and DIR/grid_scaling.md (the table); without it the table is printed.
"""
import argparse
import copy
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

HEADER = ["solver", "factor", "vertices", "tets", "grid nodes", "threads", "iterations a frame",
          "largest relative residual", "solver s a frame", "preprocessing s a frame", "wall s a frame",
          "peak memory MB"]


def refined_scene(scene, factor, steps, max_iterations, target, record_every, constant_ratio=False):
    """The scene with its meshes and grid refined `factor` times, `steps` frames, the budget;
    with `constant_ratio` every Young's modulus over factor^2 (dt^2 E / (rho h^2) kept)."""
    out = copy.deepcopy(scene)
    bodies = out["bodies"] if "bodies" in out else [out]
    for body in bodies:
        if constant_ratio:
            body["material"]["youngs_modulus"] = body["material"]["youngs_modulus"] / factor ** 2
        mesh = body["mesh"]
        if "cells" in mesh:
            mesh["cells"] = [c * factor for c in mesh["cells"]]
        elif "target_size" in mesh:
            mesh["target_size"] = mesh["target_size"] / factor
        else:
            sys.exit(f"grid_scaling: body mesh {mesh} has neither cells nor target_size to refine")
    out["grid"]["spacing"] = out["grid"]["spacing"] / factor
    # The walls keep their depth in metres: factor times the node layers (before 2026-12-02 they
    # kept their layer counts, so a refined floor was thinner; the first table was run so).
    for wall in out["grid"].get("walls", {}).values():
        if wall.get("type", "none") != "none":
            wall["thickness"] = wall.get("thickness", 1) * factor
    out["time"]["steps"] = steps
    out["solver"]["max_iterations"] = max_iterations
    out["solver"]["target_relative_residual"] = target
    out["solver"]["record_every"] = record_every
    out["output"] = {"vtu": "none"}
    return out


def run_one(pbdlab, scene_path, solver, threads, last):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    env.setdefault("OMP_WAIT_POLICY", "passive")
    with tempfile.TemporaryDirectory() as folder:
        timing = os.path.join(folder, "time.txt")
        command = ["/usr/bin/time", "-f", "%M %e", "-o", timing, pbdlab, "run", scene_path, "--solver", solver,
                   "--out", os.path.join(folder, "run")]
        done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL)
        if done.returncode not in (0, 3):
            sys.exit(f"grid_scaling: {' '.join(command)} exited {done.returncode} (its messages above)")
        peak_kb, wall = open(timing).read().split()[-2:]
        summary = json.load(open(os.path.join(folder, "run", "summary.json")))
    steps = summary["steps"][-last:]
    mean = lambda values: sum(values) / len(values)
    grid = lambda step, key: step["grid"][key]
    return {
        "solver": solver, "threads": threads,
        "vertices": summary["mesh"]["nodes"], "tets": summary["mesh"]["elements"],
        "grid_nodes": summary["grid"]["nodes"],
        "diverged": bool(summary["totals"]["diverged"]),
        "frames": len(summary["steps"]), "frames_averaged": len(steps),
        "iterations": mean([s["iterations"] for s in steps]),
        "largest_relative_residual": max(s["relative_residual"] for s in steps),
        "solver_seconds": mean([s["solver_seconds"] for s in steps]),
        "preprocessing_seconds": mean([grid(s, "weights_p2g_seconds") + grid(s, "problem_seconds")
                                       + grid(s, "setup_seconds") for s in steps]),
        "wall_seconds": mean([grid(s, "weights_p2g_seconds") + grid(s, "problem_seconds") + grid(s, "setup_seconds")
                              + grid(s, "solve_seconds") + grid(s, "g2p_seconds") for s in steps]),
        "max_inverted_elements": max(s["inverted_elements"] for s in summary["steps"]),
        "peak_memory_mb": int(peak_kb) / 1024.0, "process_seconds": float(wall),
    }


def table(rows):
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['solver']} | {r['factor']} | {r.get('vertices', '')} | | | {r['threads']} | "
                         f"not run: {r['skipped']} | | | | | |")
            continue
        lines.append("| " + " | ".join([
            r["solver"], str(r["factor"]), f"{r['vertices']:,}", f"{r['tets']:,}", f"{r['grid_nodes']:,}",
            str(r["threads"]), f"{r['iterations']:.1f}", f"{r['largest_relative_residual']:.1e}"
            + (" (diverged)" if r["diverged"] else ""),
            f"{r['solver_seconds']:.3g}", f"{r['preprocessing_seconds']:.3g}", f"{r['wall_seconds']:.3g}",
            f"{r['peak_memory_mb']:.0f}"]) + " |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pbdlab", default="build/apps/pbdlab")
    parser.add_argument("--scene", default="scenes/grid_two_blocks.json")
    parser.add_argument("--factors", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--solvers", nargs="+", default=["grid_b_pxpbd", "newton"])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=38)
    parser.add_argument("--last", type=int, default=8)
    parser.add_argument("--max-iterations", type=int, default=100)
    parser.add_argument("--target", type=float, default=1e-6)
    parser.add_argument("--record-every", type=int, default=1)
    parser.add_argument("--constant-ratio", action="store_true")
    parser.add_argument("--memory-limit-gb", type=float, default=20.0)
    parser.add_argument("--out-dir")
    args = parser.parse_args()
    if args.record_every < 1:
        sys.exit(f"grid_scaling: --record-every {args.record_every}: must be >= 1")
    if not os.access(args.pbdlab, os.X_OK):
        sys.exit(f"grid_scaling: --pbdlab {args.pbdlab} is not an executable (build first: bash scripts/build.sh)")
    scene = json.load(open(args.scene))
    if "grid" not in scene:
        sys.exit(f"grid_scaling: --scene {args.scene} has no \"grid\": not a grid scene")
    rows, last_peak = [], {}
    with tempfile.TemporaryDirectory() as folder:
        for factor in sorted(args.factors):
            path = os.path.join(folder, f"factor{factor}.json")
            refined = refined_scene(scene, factor, args.steps, args.max_iterations, args.target, args.record_every,
                                    args.constant_ratio)
            # Relative mesh paths (stl, msh) resolve against the scene's own folder.
            scene_dir = os.path.dirname(os.path.abspath(args.scene))
            for body in refined["bodies"] if "bodies" in refined else [refined]:
                if "file" in body["mesh"] and not os.path.isabs(body["mesh"]["file"]):
                    body["mesh"]["file"] = os.path.join(scene_dir, body["mesh"]["file"])
            json.dump(refined, open(path, "w"), indent=1)
            for solver in args.solvers:
                for threads in args.threads:
                    previous = last_peak.get(solver)
                    if previous:
                        estimate_gb = previous["peak_memory_mb"] / 1024.0 * (factor / previous["factor"]) ** 3
                        if estimate_gb > args.memory_limit_gb:
                            rows.append({"solver": solver, "factor": factor, "threads": threads,
                                         "skipped": f"about {estimate_gb:.0f} GB extrapolated from factor "
                                                    f"{previous['factor']}, over --memory-limit-gb"})
                            print(f"grid_scaling: {solver} factor {factor}: skipped ({rows[-1]['skipped']})",
                                  file=sys.stderr)
                            continue
                    print(f"grid_scaling: {solver} factor {factor} threads {threads} ...", file=sys.stderr, flush=True)
                    row = dict(run_one(args.pbdlab, path, solver, threads, args.last), factor=factor)
                    print(f"grid_scaling:   {row['vertices']} vertices, {row['solver_seconds']:.3g} s solver a frame, "
                          f"{row['peak_memory_mb']:.0f} MB", file=sys.stderr, flush=True)
                    rows.append(row)
                    last_peak[solver] = row
    text = table(rows)
    if not args.out_dir:
        print(text, end="")
        return
    os.makedirs(args.out_dir, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    record = {"command": " ".join([sys.executable] + sys.argv), "date": datetime.datetime.now().isoformat(timespec="seconds"),
              "commit": commit, "machine": {"node": platform.node(), "cpus": os.cpu_count(),
                                            "load_average": os.getloadavg()},
              "scene": args.scene, "rows": rows}
    for name, content in (("grid_scaling.json", json.dumps(record, indent=1) + "\n"), ("grid_scaling.md", text)):
        target = os.path.join(args.out_dir, name)
        with open(target + ".tmp", "w") as out:
            out.write(content)
        os.replace(target + ".tmp", target)
    print(text, end="")


if __name__ == "__main__":
    main()
