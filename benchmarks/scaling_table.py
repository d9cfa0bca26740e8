#!/usr/bin/env python3
"""The solver x resolution x threads sweep-time table (docs/performance.md, "From Res 16 to Res
128, beside a peer"), measured the way the issue asks: every configuration in its own process,
the configurations alternating over `--rounds` rounds (so a slow minute of the machine spreads
over all of them), min and median of the rounds' means.

  python3 benchmarks/scaling_table.py [--bench build/benchmarks/bench_scaling] [--res 16 32 64 128]
      [--rounds 5] [--peer HARNESS --peer-meshes DIR] [--out table.md] [--out-dir DIR]

Res 128 runs only when asked (--res ... 128): its set-up takes minutes and several GB a
process. --peer: a timing harness of another library, built outside this repository (never
committed; docs/performance.md says how the published peer row was made), called as
`HARNESS MESH ORDER SWEEPS` with OMP_NUM_THREADS set, printing one line with median_ms=M (or
whose last number is the median ms per sweep); its meshes are DIR/res{N}.msh.
--out-dir DIR: also DIR/sweep_times.json, the rows with every round's sample, the command, the
date, the commit and the machine; `pbdlab report DIR --out REPORT` shows it (docs/reports.md,
"Sweep time").
"""
import argparse
import datetime
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

SOLVER_NAMES = {"Pbng": "pbdlab PBNG corotated", "Xpbd": "pbdlab XPBD corotated"}
PEER_NAMES = {"stored": "peer, as stored", "colour": "peer, colour order"}
TABLE_HEADER = ["solver", "Res", "threads", "min ms", "median ms", "ns per element visit", "SVD fallbacks a sweep",
                "peak memory GB"]


def wait_policy():
    """The OMP_WAIT_POLICY every measured process gets: the caller's, else passive (pbdlab's default)."""
    return os.environ.get("OMP_WAIT_POLICY", "passive")


def run_pbdlab(bench, solver, res, threads):
    """One process, one configuration: (ms per sweep, ns per visit, peak RSS GB, SVD fallbacks a sweep)."""
    env = dict(os.environ, OMP_WAIT_POLICY=wait_policy())
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
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY=wait_policy())
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


def build_rows(configs, times, extra, peer_harness=None):
    """One row per configuration, the only place the measurements become the table: the Markdown
    table and sweep_times.json are both written from these rows. None: not measured (peer rows
    have no counters)."""
    rows = []
    for config in configs:
        solver, res, threads = config
        samples = times[config]
        row = {"solver": None, "res": res, "threads": threads, "samples_ms": list(samples),
               "min_ms": min(samples), "median_ms": statistics.median(samples),
               "ns_per_element_visit": None, "svd_fallbacks": None, "peak_memory_gb": None}
        if solver.startswith("peer:"):
            _, order, mesh = solver.split(":", 2)
            row.update(solver=PEER_NAMES[order], peer_harness=os.path.abspath(peer_harness),
                       peer_mesh=os.path.abspath(mesh), peer_order=order)
        else:
            # Counters: the median over the rounds; memory: the largest any round's process reached.
            row.update(solver=SOLVER_NAMES[solver],
                       ns_per_element_visit=statistics.median(e[0] for e in extra[config]),
                       peak_memory_gb=max(e[1] for e in extra[config]),
                       svd_fallbacks=statistics.median(e[2] for e in extra[config]))
        rows.append(row)
    return rows


def _cell(value, spec):
    return "—" if value is None else format(value, spec)


def markdown_table(rows):
    """The table of docs/performance.md (and of the report's Sweep time section, which formats
    sweep_times.json's rows the same way)."""
    lines = ["| " + " | ".join(TABLE_HEADER) + " |", "|" + "---|" * len(TABLE_HEADER)]
    for r in rows:
        lines.append(f"| {r['solver']} | {r['res']} | {r['threads']} | {r['min_ms']:.2f} | {r['median_ms']:.2f} | "
                     f"{_cell(r['ns_per_element_visit'], '.0f')} | {_cell(r['svd_fallbacks'], '.0f')} | "
                     f"{_cell(r['peak_memory_gb'], '.2f')} |")
    return "\n".join(lines) + "\n"


def git_facts():
    """The commit of this script's repository and whether its tracked files differ from it (a table
    measured on a modified tree is not that commit's); "unknown" / None when git cannot say."""
    repo = os.path.dirname(os.path.abspath(__file__))
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                                check=True, timeout=30).stdout.strip() or "unknown"
        modified = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                                       capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return "unknown", None
    return commit, modified


def cpu_model():
    """/proc/cpuinfo's first "model name" (Linux), else None."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    return value.strip()
    except OSError:
        pass
    return None


def load_average():
    """The 1, 5 and 15 minute load averages, or None: a busy machine's times are not a quiet one's."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def file_time(path):
    """A file's modification time, UTC ISO, or None."""
    try:
        return datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.timezone.utc).isoformat(
            timespec="seconds")
    except OSError:
        return None


def sweep_times_document(rows, argv, started, bench, rounds, load_at_start=None):
    commit, modified = git_facts()
    return {"kind": "sweep_times",
            "command": list(argv),
            "cwd": os.getcwd(),  # the command's relative paths are relative to it
            "date": started,
            "git_commit": commit,
            "git_modified": modified,
            "bench": os.path.abspath(bench),
            # The binary is not rebuilt here: its file time says when it was last linked, maybe before the commit.
            "bench_built": file_time(bench),
            "machine": {"cpu_count": os.cpu_count(), "cpu_model": cpu_model(), "omp_wait_policy": wait_policy(),
                        "load_average_at_start": load_at_start},
            "rounds": rounds,
            "rows": rows}


def write_atomically(path, text):
    """Temp name in the same folder, then rename: a reader never sees half a file."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)


def prepare_out_dir(out_dir):
    """Made and tried before the measurements, so an unwritable folder fails now, not after them."""
    try:
        os.makedirs(out_dir, exist_ok=True)
        write_atomically(os.path.join(out_dir, ".scaling_table_probe"), "")
        os.remove(os.path.join(out_dir, ".scaling_table_probe"))
    except OSError as e:
        sys.exit(f"scaling_table: --out-dir {out_dir}: cannot write there ({e})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", default="build/benchmarks/bench_scaling")
    parser.add_argument("--res", type=int, nargs="+", default=[16, 32, 64])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--peer")
    parser.add_argument("--peer-meshes")
    parser.add_argument("--out")
    parser.add_argument("--out-dir", metavar="DIR", help="also write DIR/sweep_times.json (every sample, command, commit, machine)")
    args = parser.parse_args()
    if not os.access(args.bench, os.X_OK):
        sys.exit(f"scaling_table: no benchmark at {args.bench} (build it: cmake --build build --target bench_scaling)")
    if args.rounds < 1:
        sys.exit("scaling_table: --rounds must be at least 1")
    if args.out_dir:
        prepare_out_dir(args.out_dir)
    command = [sys.executable] + sys.argv
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    load_at_start = load_average()

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

    rows = build_rows(configs, times, extra, args.peer)
    table = markdown_table(rows)
    if args.out:
        write_atomically(args.out, table)
    print(table, flush=True)  # before the JSON: should that fail, the measurements are still shown
    if args.out_dir:
        # allow_nan=False: a NaN sample would make a file no JSON reader accepts; fail loudly instead.
        document = json.dumps(sweep_times_document(rows, command, started, args.bench, args.rounds, load_at_start),
                              indent=1, allow_nan=False)
        write_atomically(os.path.join(args.out_dir, "sweep_times.json"), document + "\n")


if __name__ == "__main__":
    main()
