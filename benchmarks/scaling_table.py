#!/usr/bin/env python3
"""The solver x resolution x threads sweep-time table (docs/performance.md, "Sweep time from
Res 16 to Res 128"), measured the way the issue asks: every configuration in its own process,
the configurations alternating over `--rounds` rounds (so a slow minute of the machine spreads
over all of them), min and median of the rounds' means.

  python3 benchmarks/scaling_table.py [--bench build/benchmarks/bench_scaling] [--res 16 32 64 128]
      [--rounds 5] [--peer HARNESS --peer-meshes DIR] [--out table.md]

Res 128 runs only when asked (--res ... 128): its set-up takes minutes and several GB a
process. --peer: a timing harness of another library, built outside this repository (never
committed; docs/performance.md says how the published peer row was made), called as
`HARNESS MESH ORDER SWEEPS` with OMP_NUM_THREADS set, printing one line with median_ms=M (or
whose last number is the median ms per sweep); its meshes are DIR/res{N}.msh.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run_pbdlab(bench, solver, res, threads):
    """One process, one configuration: (ms per sweep, ns per visit, peak RSS GB)."""
    env = dict(os.environ, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "passive"))
    if res >= 128:
        env["PBDLAB_BENCH_RES128"] = "1"
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([bench, f"--benchmark_filter=^BM_{solver}/res:{res}/threads:{threads}/",
                        f"--benchmark_out={out.name}", "--benchmark_out_format=json"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        data = json.load(open(out.name))
    rows = [b for b in data["benchmarks"] if b.get("run_type") == "iteration"]
    if len(rows) != 1 or "error_message" in rows[0]:
        sys.exit(f"scaling_table: {solver} res {res} threads {threads}: {rows}")
    row = rows[0]
    # Google Benchmark writes an inverted rate (ns_per_visit) in seconds.
    return row["real_time"], row["ns_per_visit"] * 1e9, row["peak_rss_gb"], row.get("fallbacks", 0.0)


def run_peer(harness, mesh, order, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "passive"))
    line = subprocess.run([harness, mesh, order, "20"], env=env, check=True, capture_output=True,
                          text=True).stdout.strip().splitlines()[-1]
    fields = dict(token.split("=", 1) for token in line.split() if "=" in token)
    if "median_ms" in fields:  # key=value output
        return float(fields["median_ms"])
    numbers = [float(x) for x in line.replace(",", " ").split() if _is_number(x)]
    return numbers[-1]  # its median of 20 sweeps: one measurement of this round


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", default="build/benchmarks/bench_scaling")
    parser.add_argument("--res", type=int, nargs="+", default=[16, 32, 64])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--peer")
    parser.add_argument("--peer-meshes")
    parser.add_argument("--out")
    args = parser.parse_args()
    if not os.access(args.bench, os.X_OK):
        sys.exit(f"scaling_table: no benchmark at {args.bench} (build it: cmake --build build --target bench_scaling)")

    configs = [("Pbng", r, t) for r in args.res for t in args.threads] + \
              [("Xpbd", r, t) for r in args.res for t in args.threads]
    if args.peer:
        for r in args.res:
            meshes = glob.glob(os.path.join(args.peer_meshes or "", f"res{r}.msh"))
            if meshes:
                configs += [("peer:" + order + ":" + meshes[0], r, t) for order in ("stored", "colour")
                            for t in args.threads]
    times = {c: [] for c in configs}
    extra = {}
    for round_index in range(args.rounds):
        for config in configs:
            solver, res, threads = config
            if solver.startswith("peer:"):
                _, order, mesh = solver.split(":", 2)
                times[config].append(run_peer(args.peer, mesh, order, threads))
            else:
                ms, ns, rss, fallbacks = run_pbdlab(args.bench, solver, res, threads)
                times[config].append(ms)
                extra.setdefault(config, []).append((ns, rss, fallbacks))
            print(f"round {round_index + 1}/{args.rounds}: {solver.split(':')[0:2]} res {res} threads {threads}: "
                  f"{times[config][-1]:.2f} ms", file=sys.stderr, flush=True)

    names = {"Pbng": "pbdlab PBNG corotated", "Xpbd": "pbdlab XPBD corotated"}
    lines = ["| solver | Res | threads | min ms | median ms | ns per element visit | SVD fallbacks a sweep | peak memory GB |",
             "|---|---|---|---|---|---|---|---|"]
    for config in configs:
        solver, res, threads = config
        samples = times[config]
        if solver.startswith("peer:"):
            name = "peer, " + ("as stored" if solver.split(":")[1] == "stored" else "colour order")
            ns = rss = fallbacks = "—"
        else:
            name = names[solver]
            ns = f"{statistics.median(e[0] for e in extra[config]):.0f}"
            rss = f"{max(e[1] for e in extra[config]):.2f}"
            fallbacks = f"{statistics.median(e[2] for e in extra[config]):.0f}"
        lines.append(f"| {name} | {res} | {threads} | {min(samples):.2f} | {statistics.median(samples):.2f} | {ns} | {fallbacks} | {rss} |")
    table = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out + ".tmp", "w") as out:
            out.write(table)
        os.replace(args.out + ".tmp", args.out)
    print(table)


if __name__ == "__main__":
    main()
