"""Benchmark folders: a folder holding sweep_times.json (written by benchmarks/scaling_table.py
--out-dir) and no summary.json is a measurement of ms per sweep, not a run. Its file is read and
checked here (a malformed one stops the report naming the file and the field), and the Sweep time
section shows each folder's table: solver, Res, threads, min and median ms per sweep over the
rounds, ns per element visit, SVD fallbacks a sweep and peak memory, formatted as the script's
own Markdown table (its stdout and --out, what docs/performance.md copies), so both print the
same numbers."""
import math
import os
import shlex
import statistics

from .document import Heading
from .reading import ReportError, read_json
from .values import is_number

FILE = "sweep_times.json"

# The script's table header (benchmarks/scaling_table.py TABLE_HEADER); test_sweep_times checks they agree.
HEADER = ["solver", "Res", "threads", "min ms", "median ms", "ns per element visit", "SVD fallbacks a sweep",
          "peak memory GB"]

# Measured values a row may lack (None: not measured; the peer's harness reports only times).
OPTIONAL_NUMBERS = ("ns_per_element_visit", "svd_fallbacks", "peak_memory_gb")


def is_benchmark_folder(folder):
    """A folder with sweep_times.json and without summary.json; with summary.json it is a run."""
    return (os.path.isfile(os.path.join(folder, FILE))
            and not os.path.exists(os.path.join(folder, "summary.json")))


def _positive_int(value):
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _finite(value):
    return is_number(value) and math.isfinite(value)


def _same(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _check_row(row, k, rounds, path):
    def bad(field, what):
        raise ReportError(f"{path}: malformed: rows[{k}].{field}: {what}")

    if not isinstance(row, dict):
        raise ReportError(f"{path}: malformed: rows[{k}]: expected an object")
    if not isinstance(row.get("solver"), str) or not row["solver"]:
        bad("solver", "expected a non-empty string")
    for field in ("res", "threads"):
        if not _positive_int(row.get(field)):
            bad(field, "expected a positive integer")
    samples = row.get("samples_ms")
    if not isinstance(samples, list) or not samples or not all(_finite(v) and v >= 0 for v in samples):
        bad("samples_ms", "expected a list of finite numbers >= 0, one per round")
    if len(samples) != rounds:
        bad("samples_ms", f"{len(samples)} samples, but 'rounds' is {rounds}")
    # min and median are stored for readers of the file; the report shows them only when they are
    # those of the raw samples beside them (an edited or mixed-up file must not pass unnoticed).
    for field, expected in (("min_ms", min(samples)), ("median_ms", statistics.median(samples))):
        if not _finite(row.get(field)):
            bad(field, "expected a finite number")
        if not _same(row[field], expected):
            bad(field, f"{row[field]!r} is not the {field[:-3]} of samples_ms ({expected!r})")
    for field in OPTIONAL_NUMBERS:
        if row.get(field) is not None and not _finite(row[field]):
            bad(field, "expected a finite number or null")
    for field in ("peer_harness", "peer_mesh"):
        if field in row and not isinstance(row[field], str):
            bad(field, "expected a string")


def read_sweep_times(folder):
    """The folder's sweep_times.json, checked: {"dir", "path", "command", "date", "git_commit",
    "git_modified", "bench_built", "machine", "rounds", "rows"}. Raises ReportError naming the file and field."""
    path = os.path.join(folder, FILE)
    document = read_json(path, required=True)
    if document.get("kind") != "sweep_times":
        raise ReportError(f"{path}: malformed: 'kind' must be \"sweep_times\" (got {document.get('kind')!r})")
    command = document.get("command")
    if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
        raise ReportError(f"{path}: malformed: 'command' must be a non-empty list of strings (the command line)")
    for field in ("date", "git_commit"):
        if not isinstance(document.get(field), str) or not document[field]:
            raise ReportError(f"{path}: malformed: '{field}' must be a non-empty string")
    if document.get("git_modified") not in (True, False, None):
        raise ReportError(f"{path}: malformed: 'git_modified' must be true, false or null")
    if document.get("bench_built") is not None and not isinstance(document["bench_built"], str):
        raise ReportError(f"{path}: malformed: 'bench_built' must be a string or null")
    machine = document.get("machine")
    if not isinstance(machine, dict):
        raise ReportError(f"{path}: malformed: 'machine' must be an object")
    if machine.get("cpu_count") is not None and not _positive_int(machine["cpu_count"]):
        raise ReportError(f"{path}: malformed: machine.cpu_count must be a positive integer or null")
    for field in ("cpu_model", "omp_wait_policy"):
        if machine.get(field) is not None and not isinstance(machine[field], str):
            raise ReportError(f"{path}: malformed: machine.{field} must be a string or null")
    load = machine.get("load_average_at_start")
    if load is not None and not (isinstance(load, list) and len(load) == 3 and all(_finite(x) for x in load)):
        raise ReportError(f"{path}: malformed: machine.load_average_at_start must be 3 numbers (1, 5, 15 min) or null")
    rounds = document.get("rounds")
    if not _positive_int(rounds):
        raise ReportError(f"{path}: malformed: 'rounds' must be a positive integer")
    rows = document.get("rows")
    if not isinstance(rows, list) or not rows:
        raise ReportError(f"{path}: malformed: 'rows' must be a non-empty list")
    for k, row in enumerate(rows):
        _check_row(row, k, rounds, path)
    return {"dir": folder, "path": path, "command": command, "date": document["date"],
            "git_commit": document["git_commit"], "git_modified": document.get("git_modified"),
            "bench_built": document.get("bench_built"),
            "machine": machine, "rounds": rounds, "rows": rows}


def _cell(value, spec):
    return "—" if value is None else format(value, spec)


def sweep_time_rows(benchmark):
    """The table's cells, formatted as benchmarks/scaling_table.py's Markdown table."""
    return [[r["solver"], str(r["res"]), str(r["threads"]), f"{r['min_ms']:.2f}", f"{r['median_ms']:.2f}",
             _cell(r.get("ns_per_element_visit"), ".0f"), _cell(r.get("svd_fallbacks"), ".0f"),
             _cell(r.get("peak_memory_gb"), ".2f")] for r in benchmark["rows"]]


def caption(benchmark):
    """Where the table's numbers come from: the commit, the date, the machine, the rounds, the command."""
    machine = benchmark["machine"]
    commit = benchmark["git_commit"]
    if benchmark["git_modified"]:
        commit += " (tracked files modified: not exactly this commit)"
    # The script times the binary it finds, last linked at its file time, maybe before the commit.
    if benchmark["bench_built"]:
        commit += f", benchmark binary built {benchmark['bench_built']}"
    cpu = machine.get("cpu_model") or "CPU not recorded"
    cores = machine.get("cpu_count")
    threads = f"{cores} hardware threads" if cores else "hardware threads not recorded"
    policy = machine.get("omp_wait_policy") or "not recorded"
    load = machine.get("load_average_at_start")
    # The 1-minute load beside the core count tells a quiet machine's times from a busy one's.
    load_text = f", load average {load[0]:.2f} at the start" if load else ""
    rounds = benchmark["rounds"]
    return (f"Commit {commit}, started {benchmark['date']}; machine: {cpu}, {threads}, OMP_WAIT_POLICY {policy}"
            f"{load_text}; {rounds} round{'s' if rounds != 1 else ''} (each configuration in its own process, "
            f"alternating); command: {shlex.join(benchmark['command'])}")


def sweep_time_sections(benchmarks):
    """The Sweep time section's items: what the columns mean, then per benchmark folder its caption
    and table. No benchmark folder: no section."""
    if not benchmarks:
        return []
    items = [(Heading("Sweep time", "sweep-time"), "text",
              "Milliseconds per sweep of pbdlab's solvers on the Res N box (fixed corotated, "
              "benchmarks/bench_scaling), measured by benchmarks/scaling_table.py --out-dir DIR "
              "(DIR/sweep_times.json): "
              "every configuration in its own process, the configurations alternating over the rounds; min and "
              "median ms over the rounds' samples (each one process's mean ms per sweep; a peer library's harness: "
              "its median of 20 sweeps). An element visit is "
              "one element evaluated for one of its nodes (PBNG: 4 a tet) or one element's constraints projected "
              "(XPBD: 1 a tet); ns per visit is wall time (median over the rounds; with 2 threads, half the "
              "per-thread cost). SVD fallbacks a sweep: the median over the rounds. Peak memory: the benchmark "
              "process's peak resident set, the largest over the rounds. — : not measured (a peer library's "
              "harness reports times only).")]
    for b in benchmarks:
        items.append((None, "subheading", f"Sweep times from {b['dir']}"))
        items.append((None, "text", caption(b)))
        items.append((None, "table", (HEADER, sweep_time_rows(b), {"numbers": True})))
    return items
