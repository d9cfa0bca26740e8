#!/usr/bin/python3
"""Builds an HTML and a Markdown report from pbdlab run directories.

    /usr/bin/python3 reports/make_report.py --out OUT_DIR [--skipped skipped.json] [--cases CASES_DIR]
        RUN_DIR [RUN_DIR ...]

A run directory is what `pbdlab run` or `pbdlab validate` writes: iterations.csv,
summary.json and, from the validation runner, an optional metrics.json. The report reads
only these files (so it can be rebuilt without rerunning) and writes OUT_DIR/report.html
(self-contained, figures embedded), OUT_DIR/report.md and OUT_DIR/figures/*.png|svg, and prints
the verdict as its last line (`verdict: N runs, M metrics passed, ...`) for `pbdlab validate`.
--cases names the folder of the validation case files: each case's description and what its
metrics measure. docs/reports.md describes the contents.
"""
import argparse
import base64
import csv
import datetime
import html
import io
import json
import math
import os
import re
import sys
import time
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, MaxNLocator, NullFormatter  # noqa: E402

THRESHOLDS = (1e-2, 1e-4, 1e-6)
REQUIRED_COLUMNS = ("step", "iteration", "solver_seconds", "relative_residual")
# Beyond this ratio between the slowest and the fastest run, a linear axis squeezes the fast
# runs against zero, so iterations and seconds go on a logarithmic axis instead.
SPREAD_FOR_LOG_AXIS = 20.0
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


class ReportError(Exception):
    """An input the report cannot be built from; the message names the file or directory."""


# ----------------------------------------------------------------------------- reading runs

def read_json(path, required, top_level=dict):
    """Parses one JSON object (or `top_level`); a broken file must stop the report, not silently
    drop a run."""
    if not os.path.isfile(path):
        if required:
            raise ReportError(f"{os.path.dirname(path) or '.'}: missing {os.path.basename(path)} "
                              "(not a pbdlab run directory?)")
        return None
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError(f"{path}: malformed JSON ({e})") from e
    if not isinstance(document, top_level):
        kind = "an object" if top_level is dict else "a list"
        raise ReportError(f"{path}: malformed: expected {kind} at the top level")
    return document


def read_iterations(path):
    """Reads iterations.csv as a list of {column: float}; all columns are numeric in pbdlab (an
    empty field is a solver value not given at that iteration: NaN)."""
    if not os.path.isfile(path):
        raise ReportError(f"{os.path.dirname(path) or '.'}: missing iterations.csv "
                          "(not a pbdlab run directory?)")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise ReportError(f"{path}: malformed: missing column(s) {', '.join(missing)}")
            rows = []
            for line, record in enumerate(reader, start=2):
                try:
                    row = {k: float(v) if v != "" else math.nan for k, v in record.items() if k is not None}
                except (TypeError, ValueError) as e:
                    raise ReportError(f"{path}:{line}: malformed row ({e})") from e
                if not all(math.isfinite(row[c]) for c in ("step", "iteration", "solver_seconds")):
                    raise ReportError(f"{path}:{line}: malformed row (step, iteration, solver_seconds must be finite)")
                rows.append(row)
    except OSError as e:
        raise ReportError(f"{path}: cannot read ({e})") from e
    return rows


def obj(x):
    """x if it is a JSON object, else {}: optional sections of a run's files may be absent."""
    return x if isinstance(x, dict) else {}


def default_label(summary, run_dir):
    """Solver name plus its options, so two runs of one solver with different options differ."""
    solver = summary.get("solver") or os.path.basename(os.path.normpath(run_dir))
    options = obj(obj(obj(summary.get("scene_resolved")).get("solver")).get("options"))
    if not options:
        return str(solver)
    return f"{solver} " + " ".join(f"{k}={option_text(v)}" for k, v in sorted(options.items()))


def option_text(value):
    """One option value as a reader writes it: strings bare, lists and objects compact."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "[" + ", ".join(option_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={option_text(v)}" for k, v in value.items()) + "}"
    return fmt_number(value, 6)


def readable_label(label):
    """The validation runner labels a run `solver {"zeta":0.9}` (its options as JSON); the report
    writes `solver zeta=0.9`. Any other label is kept as it is."""
    match = re.fullmatch(r"(\S+) (\{.*\})", label.strip(), flags=re.S)
    if not match:
        return label
    try:
        options = json.loads(match.group(2))
    except ValueError:
        return label
    if not isinstance(options, dict):
        return label
    if not options:
        return match.group(1)
    return match.group(1) + " " + " ".join(f"{k}={option_text(v)}" for k, v in options.items())


def read_sweeps(value, path):
    """metrics.json's `sweep`: the validation case's sweep points, a list of {name, parameter,
    value} (one object is read as a list of one)."""
    if value is None:
        return []
    entries = value if isinstance(value, list) else [value]
    for e in entries:
        if not (isinstance(e, dict) and isinstance(e.get("name"), str) and e["name"]
                and isinstance(e.get("parameter"), str) and is_number(e.get("value"))):
            raise ReportError(f"{path}: malformed: 'sweep' must hold {{name, parameter, value (a number)}} objects")
    return [{"name": e["name"], "parameter": e["parameter"], "value": e["value"]} for e in entries]


def diverged_step(summary, steps):
    """The first step that diverged (summary.json's stop_reason), else 0 when the totals say the
    run diverged without naming a step, else None."""
    for s in steps:
        if s.get("stop_reason") == "diverged":
            return s.get("step") if is_number(s.get("step")) else 0
    return 0 if obj(summary.get("totals")).get("diverged") is True else None


def read_profiles(value, path):
    """metrics.json's "profiles": curves behind some metrics (the torsion metric's angle
    deviation per cross-section), each {"metric", "x", "y", "x_label", "y_label"} with x and y
    lists of numbers of one length. Absent: none; malformed: an error naming the file."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ReportError(f"{path}: malformed: 'profiles' is not a list")
    profiles = []
    for k, entry in enumerate(value):
        xs = entry.get("x") if isinstance(entry, dict) else None
        ys = entry.get("y") if isinstance(entry, dict) else None
        if (not isinstance(entry, dict) or not isinstance(entry.get("metric"), str) or not isinstance(xs, list)
                or not isinstance(ys, list) or len(xs) != len(ys) or not all(is_number(v) for v in xs + ys)):
            raise ReportError(f"{path}: malformed: profiles[{k}] needs 'metric' and lists 'x' and 'y' of numbers "
                              "of one length")
        profiles.append({"metric": entry["metric"], "x": xs, "y": ys,
                         "x_label": str(entry.get("x_label") or "x"), "y_label": str(entry.get("y_label") or "y")})
    return profiles


def load_run(run_dir):
    """Everything the report needs from one run directory, with the fallbacks in one place."""
    if not os.path.isdir(run_dir):
        raise ReportError(f"{run_dir}: not a directory")
    summary = read_json(os.path.join(run_dir, "summary.json"), required=True)
    if not isinstance(summary.get("steps", []), list):
        raise ReportError(f"{os.path.join(run_dir, 'summary.json')}: malformed: 'steps' is not a list")
    rows = read_iterations(os.path.join(run_dir, "iterations.csv"))
    metrics = read_json(os.path.join(run_dir, "metrics.json"), required=False) or {}
    if not isinstance(metrics.get("metrics", []), list):
        raise ReportError(f"{os.path.join(run_dir, 'metrics.json')}: malformed: 'metrics' is not a list")
    totals = obj(summary.get("totals")) or obj(metrics.get("totals"))
    steps = [s for s in summary.get("steps", []) if isinstance(s, dict)]
    seconds = totals.get("solver_seconds")
    if seconds is None and steps:
        seconds = sum(s["solver_seconds"] for s in steps if is_number(s.get("solver_seconds")))
    return {
        "dir": run_dir,
        "case": str(metrics.get("case") or summary.get("scene") or os.path.basename(os.path.normpath(run_dir))),
        "series": str(metrics["series"]) if metrics.get("series") else None,
        "sweeps": read_sweeps(metrics.get("sweep"), os.path.join(run_dir, "metrics.json")),
        # The run's name: the solver's, or a case's named variant of it (its folder's name).
        "solver": str(metrics.get("run") or summary.get("solver") or metrics.get("solver") or "—"),
        "diverged_step": diverged_step(summary, steps),
        "label": readable_label(str(metrics.get("label") or default_label(summary, run_dir))),
        "summary": summary,
        "rows": rows,
        "steps": steps,
        "metrics": [m for m in metrics.get("metrics", []) if isinstance(m, dict)],
        "profiles": read_profiles(metrics.get("profiles"), os.path.join(run_dir, "metrics.json")),
        "convergence": metrics.get("convergence") if isinstance(metrics.get("convergence"), dict) else None,
        "nodes": obj(summary.get("mesh")).get("nodes"),
        "mesh": obj(summary.get("mesh")),
        "solver_seconds": seconds,
        "environment": obj(summary.get("environment")),
    }


def read_cases(cases_dir):
    """The validation case files of `--cases DIR` (every *.json), by case name: what the report
    says a case and its metrics mean. A file without a name is ignored; a broken one stops the
    report, naming it."""
    if cases_dir is None:
        return {}
    if not os.path.isdir(cases_dir):
        raise ReportError(f"{cases_dir}: not a directory (--cases)")
    cases = {}
    for name in sorted(os.listdir(cases_dir)):
        path = os.path.join(cases_dir, name)
        if not name.endswith(".json") or not os.path.isfile(path):
            continue
        document = read_json(path, required=True)
        if not isinstance(document.get("name"), str):
            continue
        metrics = document.get("metrics") if isinstance(document.get("metrics"), list) else []
        cases[document["name"]] = {
            "description": document.get("description") if isinstance(document.get("description"), str) else None,
            "metrics": {m["name"]: m for m in metrics if isinstance(m, dict) and isinstance(m.get("name"), str)},
            "path": path,
        }
    return cases


AXES = {0: "x", 1: "y", 2: "z"}


def metric_definition(metric, spec=None):
    """What a metric measures, in words: from the case file's metric (`spec`: its type and
    parameters) when given, else from metrics.json's `type` (the runner's own rows included)."""
    spec = spec or {}
    kind = spec.get("type") or metric.get("type") or metric.get("name")
    relative = spec["relative"] if isinstance(spec.get("relative"), bool) else metric.get("unit") == "relative"
    scene = os.path.splitext(os.path.basename(str(spec.get("reference_scene", ""))))[0]
    if kind == "probe_error":
        probe, component, expected = spec.get("probe"), spec.get("component"), spec.get("expected")
        u = ("|u|" if component == -1 else f"u_{AXES[component]}" if component in AXES else "u")
        text = f"|{u}({probe or 'probe'}) − expected|" + (" ÷ |expected|" if relative else "")
        return (text + ", u the displacement after the last step"
                + (f", expected {fmt_number(expected, 5)}" if is_number(expected) else ""))
    if kind == "final_relative_residual":
        return "relative residual |r| / |r(x_ref)| at the end of the last step"
    if kind == "max_penetration":
        return "deepest penetration at the end of any frame (into a collider or another body)"
    if kind == "volume_ratio_error":
        expected = spec.get("expected", 1)
        return f"|V(x) / V(X) − {fmt_number(expected, 5)}| after the last step (V: deformed volume, X: rest)"
    if kind in ("reference_max_error", "reference_rms_error"):
        which = "largest" if kind == "reference_max_error" else "RMS"
        return (f"{which} |x − x_ref| over the nodes, x_ref the Newton solution of the same scene"
                + (" ÷ the reference's largest displacement" if relative else ""))
    if kind in ("mesh_reference_max_error", "mesh_reference_l2_error"):
        which = "largest" if kind == "mesh_reference_max_error" else "volume-weighted L2 norm of"
        return (f"{which} |u − u_ref| at the nodes of the Newton solution of "
                + (scene if scene else "a reference scene") + " (a finer mesh; u interpolated there)"
                + (" ÷ the reference's largest displacement" if relative else ""))
    if kind == "torsion_angle_deviation":
        sections = spec.get("sections")
        return ("largest |deviation| of the cross-sections' rotation angle about x from the linear interpolation "
                "between the end sections" + (f", over {sections} sections" if is_number(sections) else ""))
    if kind == "steps_converged":
        rule = metric.get("measured")
        return "steps that reached neither the target nor the round-off floor" + (f" ({rule})" if rule else "")
    if kind == "expected_divergence":
        return "0 when the run diverged, as the case expects of this solver; 1 when it did not"
    return "—"


def group_by_case(runs):
    """Cases in the order they first appear; labels made unique within a case by the folder name."""
    cases = OrderedDict()
    for run in runs:
        cases.setdefault(run["case"], []).append(run)
    for case_runs in cases.values():
        counts = {}
        for run in case_runs:
            counts[run["label"]] = counts.get(run["label"], 0) + 1
        for run in case_runs:
            if counts[run["label"]] > 1:
                run["label"] = f"{run['label']} ({os.path.basename(os.path.normpath(run['dir']))})"
    return cases


def group_by_series(runs):
    """Series in the order they first appear; runs without a series are left out."""
    series = OrderedDict()
    for run in runs:
        if run["series"]:
            series.setdefault(run["series"], []).append(run)
    return series


def group_by_sweep(runs, skipped=()):
    """Sweeps in the order they first appear: {name: {"parameter", "points": {case: value},
    "runs": [...], "skipped": {(case, solver): reason}}}. A skipped (case, solver) pair joins the
    sweeps of its case's other runs."""
    sweeps = OrderedDict()
    for run in runs:
        for point in run["sweeps"]:
            sweep = sweeps.setdefault(point["name"], {"parameter": point["parameter"], "points": OrderedDict(),
                                                      "runs": [], "skipped": OrderedDict()})
            sweep["points"].setdefault(run["case"], point["value"])
            sweep["runs"].append(run)
    for sweep in sweeps.values():
        for e in skipped:
            if e["case"] in sweep["points"]:
                sweep["skipped"][(e["case"], e["solver"])] = e["reason"]
    return sweeps


# ----------------------------------------------------------------------------- derived data

def chosen_step(run, step):
    """The step whose iterations are plotted: --step if given, else the run's last step."""
    present = sorted({int(r["step"]) for r in run["rows"]})
    if not present:
        return None
    if step is None:
        return present[-1]
    return step if step in present else None


def rows_of_step(run, step):
    """The iteration rows of one step (none when the run has no such step)."""
    return [r for r in run["rows"] if int(r["step"]) == step]


def final_residual_per_step(run):
    """(step, final relative residual, stop reason) from summary.json, else the CSV's last rows
    (stop reason None: not recorded)."""
    if run["steps"]:
        return [(s.get("step"), s.get("relative_residual"), s.get("stop_reason"))
                for s in run["steps"] if s.get("step") is not None]
    last = OrderedDict()
    for r in run["rows"]:
        last[int(r["step"])] = r["relative_residual"]
    return [(k, v, None) for k, v in last.items()]


def split_substeps(rows):
    """The rows of one step, cut where the substep column changes (one part when there is none)."""
    def key(r):
        value = r.get("substep")
        return value if is_number(value) and math.isfinite(value) else None
    parts = []
    for r in rows:
        if parts and key(r) == key(parts[-1][-1]):
            parts[-1].append(r)
        else:
            parts.append([r])
    return parts


def step_stop_reason(run, step):
    """summary.json's stop_reason of one step, or None."""
    return next((s.get("stop_reason") for s in run["steps"] if s.get("step") == step), None)


# How a figure marks a step that did not converge (the target was not reached).
STOP_MARKERS = {"roundoff_floor": dict(marker="s", ms=10, mew=1.5, mfc="none"),
                "other": dict(marker="x", ms=9, mew=2)}
STOP_LABELS = {"roundoff_floor": "stopped at the round-off floor", "other": "budget / stalled / diverged"}


def set_step_ticks(axis, steps):
    """Step numbers are integers: the steps themselves when there are few, else integer ticks."""
    steps = sorted({int(s) for s in steps if is_number(s)})
    if 0 < len(steps) <= 12:
        axis.set_major_locator(FixedLocator(steps))
    else:
        axis.set_major_locator(MaxNLocator(integer=True))


def run_target(run):
    """The run's target relative residual (summary.json's scene_resolved.solver), or None."""
    target = obj(obj(run["summary"].get("scene_resolved")).get("solver")).get("target_relative_residual")
    return target if is_number(target) and target > 0 else None


# How a step ended (summary.json's stop_reason), in words. "converged" is the only reason that
# means the target relative residual was reached.
STOP_WORDS = OrderedDict([("converged", "converged"), ("roundoff_floor", "stopped at the round-off floor"),
                          ("iteration_budget", "stopped at the iteration budget"),
                          ("time_budget", "stopped at the time budget"),
                          ("stalled", "stalled"), ("diverged", "diverged"), ("none", "no stop reason")])


def step_outcome(run):
    """The run's steps in words and a status: "converged" (every step reached its target),
    "roundoff" (the rest stopped at the round-off floor above the target), "not converged" (some
    step stopped at a budget or stalled), "diverged", or "unknown" (summary.json has no steps)."""
    steps = [s for s in run["steps"] if isinstance(s.get("stop_reason"), str)]
    if not steps:
        flag = obj(run["summary"].get("totals")).get("all_steps_converged")
        if flag is True:
            return "all converged (totals; no per-step stop reasons)", "converged"
        if flag is False:
            return "not all converged (totals; no per-step stop reasons)", "not converged"
        return "—", "unknown"
    target = run_target(run)
    counts = OrderedDict()
    for s in steps:
        counts[s["stop_reason"]] = counts.get(s["stop_reason"], 0) + 1
    total = len(steps)
    floor = [s for s in steps if s["stop_reason"] == "roundoff_floor"]
    above = [s for s in floor if target is None or not is_number(s.get("relative_residual"))
             or s["relative_residual"] > target]
    parts = []
    for reason, n in sorted(counts.items(), key=lambda item: list(STOP_WORDS).index(item[0])
                            if item[0] in STOP_WORDS else len(STOP_WORDS)):
        words = STOP_WORDS.get(reason, reason)
        if reason == "diverged":
            at = [s.get("step") for s in steps if s["stop_reason"] == "diverged"]
            why = obj(run["summary"].get("divergence"))
            detail = (f" (iteration {why['iteration']}: {why['reason']}; its last finite state is "
                      f"{why.get('state_file', 'written')}, not a result)"
                      if isinstance(why.get("reason"), str) and "iteration" in why else "")
            parts.append(f"diverged at step {fmt_number(at[0])}{detail}")
            continue
        text = (f"{n} of {total} steps {words}" if n < total
                else f"all {n} steps {words}" if n > 1 else f"its one step {words}")
        if reason == "converged" and target:
            text += f" (reached the target {target:g})" if n == total else ""
        if reason == "roundoff_floor":
            if above:
                worst = max((s for s in above if is_number(s.get("relative_residual"))),
                            key=lambda s: s["relative_residual"], default=None)
                # The absolute residual too: a step that starts at equilibrium has relative residual 1.
                absolute = f", absolute {worst['residual']:.3g}" if worst and is_number(worst.get("residual")) else ""
                text += (", above the target" + (f" {target:g}" if target else "")
                         + (f" (relative residual {worst['relative_residual']:.3g}{absolute})" if worst else "")
                         + ": the target was not reached")
            else:
                text += " (at or below the target)"
        parts.append(text)
    # A converged state can still hold inverted or collapsed elements (summary.json final_state).
    quality = obj(run["summary"].get("final_state"))
    inverted, degenerate = quality.get("inverted_elements"), quality.get("degenerate_elements")
    if (isinstance(inverted, int) and inverted > 0) or (isinstance(degenerate, int) and degenerate > 0):
        parts.append(f"final state: {inverted} inverted element(s) (det F ≤ 0) and {degenerate} degenerate "
                     f"(0 < det F < {quality.get('degenerate_below', '?')})")
    if "diverged" in counts:
        status = "diverged"
    elif any(r not in ("converged", "roundoff_floor") for r in counts):
        status = "not converged"
    elif above:
        status = "roundoff"
    else:
        status = "converged"
    return "; ".join(parts), status


def first_reaching(rows, threshold):
    """(iteration, seconds) of the first row at or below the threshold, as the C++ runner does."""
    for r in rows:
        if r["relative_residual"] <= threshold:
            return int(r["iteration"]), r["solver_seconds"]
    return None, None


def convergence_row(run, step):
    """Iterations and seconds to each threshold: metrics.json's numbers when they describe the
    chosen step (they come from the run itself), else computed from iterations.csv."""
    conv = run["convergence"]
    recorded = {}
    if conv and step is not None and conv.get("step", step) == step:
        def column(key):
            values = conv.get(key)
            return values if isinstance(values, list) else []
        thresholds, iterations, seconds = column("thresholds"), column("iterations_to"), column("seconds_to")
        for i, t in enumerate(thresholds):
            if is_number(t):
                # The runner writes null where a threshold is never reached; -1 means the same.
                recorded[float(t)] = tuple(v[i] if i < len(v) and is_number(v[i]) and v[i] >= 0 else None
                                           for v in (iterations, seconds))
    rows = rows_of_step(run, step) if step is not None else []
    cells, sources = [], set()
    for t in THRESHOLDS:
        match = [v for k, v in recorded.items() if math.isclose(k, t, rel_tol=1e-9)]
        if match:
            cells.append(match[0])
            sources.add("metrics.json")
        else:
            cells.append(first_reaching(rows, t))
            sources.add("iterations.csv")
    return cells, " + ".join(sorted(sources))


def element_label(run):
    """The mesh's element type and order (summary.json's mesh), which tell a series' lines apart."""
    kind, order = run["mesh"].get("element_type"), run["mesh"].get("order")
    if kind and is_number(order):
        return f"{kind} (order {order})"
    if kind:
        return str(kind)
    return f"order {order}" if is_number(order) else "element type unknown"


def error_metric_names(runs):
    """Metrics named *error*, the ones plotted, in sorted order."""
    return sorted({m["name"] for r in runs for m in r["metrics"]
                   if isinstance(m.get("name"), str) and "error" in m["name"]})


def metric_value(run, name):
    """The first value recorded for the metric `name` (None when the run has no such metric)."""
    return next((m.get("value") for m in run["metrics"] if m.get("name") == name), None)


# The sweep tables' three columns per solver: the first metric of these types (metrics.json's
# `type`, else its name) in each run.
SWEEP_QUANTITIES = (("distance to Newton", ("reference_rms_error", "reference_max_error")),
                    ("volume error", ("volume_ratio_error",)),
                    ("true residual", ("final_relative_residual",)))


SWEEP_SHORT = {"distance to Newton": "distance", "volume error": "volume", "true residual": "residual"}


def metric_of_type(run, types):
    """The run's first metric of one of `types` (its `type`, or its name when it has no type)."""
    for t in types:
        for m in run["metrics"]:
            if m.get("type", m.get("name")) == t:
                return m
    return None


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def metric_pass(metric):
    """The recorded verdict, else value <= tolerance (finite), else unknown. A recorded null
    verdict (e.g. Newton against its own reference) stays unknown: it is not a pass."""
    if isinstance(metric.get("pass"), bool):
        return metric["pass"]
    if "pass" in metric and metric["pass"] is None:
        return None
    value, tolerance = metric.get("value"), metric.get("tolerance")
    if is_number(value) and is_number(tolerance):
        return math.isfinite(value) and value <= tolerance
    return None


def fmt_number(x, digits=3):
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, int):
        return str(x)
    if not math.isfinite(x):
        return str(x)
    return f"{x:.{digits}g}"


def fmt_seconds(x):
    return f"{x:.3g} s" if is_number(x) else fmt_number(x)


def verdict(p):
    return {True: "PASS", False: "FAIL", None: "n/a"}[p]


# ----------------------------------------------------------------------------- figures

class Figure:
    """One saved figure: its files and the PNG bytes to embed in the HTML."""

    def __init__(self, name, title, caption, png):
        self.name, self.title, self.caption, self.png = name, title, caption, png


def write_atomically(path, data):
    """Temp name + rename, so a reader never sees a half-written report or figure."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def save_figure(fig, figures_dir, name):
    """Writes name.png and name.svg; returns the PNG bytes for embedding."""
    outputs = {}
    for fmt in ("png", "svg"):
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, dpi=110, bbox_inches="tight")
        outputs[fmt] = buffer.getvalue()
        write_atomically(os.path.join(figures_dir, f"{name}.{fmt}"), outputs[fmt])
    plt.close(fig)
    return outputs["png"]


def slug(text):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "case"


def colors_for(labels):
    """One colour per label (a run, or a series' line), the same in every figure of the group."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {label: cycle[i % len(cycle)] for i, label in enumerate(labels)}


def spread_is_large(values):
    positive = [v for v in values if v and v > 0]
    return len(positive) > 1 and max(positive) / min(positive) > SPREAD_FOR_LOG_AXIS


def positive_pairs(xs, ys):
    """Points a log axis can show (a zero residual or error would be silently dropped anyway)."""
    pairs = [(x, y) for x, y in zip(xs, ys)
             if x is not None and y is not None and math.isfinite(y) and y > 0]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def label_short_log_axis(axis):
    """A log axis spanning under three decades gets at most one labelled power of ten; label
    1, 2, 5 x 10^k in plain numbers instead, so the values can be read off."""
    low, high = sorted(axis.get_view_interval())
    if low <= 0 or math.log10(high / low) >= 3:
        return
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def target_residual(case_runs):
    """The target relative residual if every run shares one, to draw as a reference line."""
    targets = {obj(obj(r["summary"].get("scene_resolved")).get("solver")).get("target_relative_residual")
               for r in case_runs}
    target = targets.pop() if len(targets) == 1 else None
    return target if is_number(target) and target > 0 else None


def residual_history_figure(case, case_runs, step, colors, figures_dir):
    """Residual vs iteration and vs solver time side by side: the two ways solvers are compared."""
    histories = [(run, rows_of_step(run, chosen_step(run, step))) for run in case_runs]
    histories = [(run, rows) for run, rows in histories if rows]
    if not histories:
        return None
    steps_shown = {int(rows[0]["step"]) for _, rows in histories}
    log_iterations = spread_is_large([rows[-1]["iteration"] for _, rows in histories])
    log_time = spread_is_large([rows[-1]["solver_seconds"] for _, rows in histories])
    fig, (ax_it, ax_t) = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    stops, substep_note = set(), set()
    for run, rows in histories:
        style = dict(marker="o" if len(rows) <= 60 else None, ms=3.5, color=colors[run["label"]], label=run["label"])
        # A step of several substeps restarts its iterations (and seconds) in each: one line per
        # substep, in the run's colour, so the line does not jump back.
        for part in split_substeps(rows):
            ax_it.plot(*positive_pairs([r["iteration"] for r in part], [r["relative_residual"] for r in part]),
                       **style)
            # Iteration 0 costs microseconds: on a log time axis it would open decades of empty space.
            timed = [r for r in part if r["iteration"] >= 1 or not log_time]
            ax_t.plot(*positive_pairs([r["solver_seconds"] for r in timed], [r["relative_residual"] for r in timed]),
                      **style)
            style["label"] = None
        substeps = len(split_substeps(rows))
        if substeps > 1:
            substep_note.add(substeps)
        reason = step_stop_reason(run, int(rows[-1]["step"]))
        last = rows[-1]
        if reason not in (None, "converged") and is_number(last["relative_residual"]) and last["relative_residual"] > 0:
            marker = STOP_MARKERS["roundoff_floor" if reason == "roundoff_floor" else "other"]
            for ax, x in ((ax_it, last["iteration"]), (ax_t, last["solver_seconds"])):
                ax.plot([x], [last["relative_residual"]], ls="none", color="black", **marker)
            stops.add("roundoff_floor" if reason == "roundoff_floor" else "other")
    if log_iterations:
        ax_it.set_xscale("symlog", linthresh=1)  # keeps iteration 0 on the axis
    else:
        ax_it.xaxis.set_major_locator(MaxNLocator(integer=True))
    time_note = ""
    if log_time:
        ax_t.set_xscale("log")
        label_short_log_axis(ax_t.xaxis)
        time_note = " The log time axis starts at iteration 1."
    target = target_residual(case_runs)
    for ax in (ax_it, ax_t):
        ax.set_yscale("log")
        ax.grid(True, which="major", alpha=0.35)
        if target:
            ax.axhline(target, color="0.4", ls="--", lw=1, label=f"target {target:g}")
    ax_it.set_xlabel("iteration")
    ax_t.set_xlabel("solver time within the step [s]")
    ax_it.set_ylabel("relative residual |r| / |r(x_ref)| [-]")
    ax_it.set_title("vs iteration")
    ax_t.set_title("vs solver time")
    for key in ("roundoff_floor", "other"):
        if key in stops:
            ax_t.plot([], [], ls="none", color="black", label=STOP_LABELS[key], **STOP_MARKERS[key])
    ax_t.legend(fontsize=8, loc="best")
    which = (f"step {steps_shown.pop()}" if len(steps_shown) == 1
             else "last step of each run" if step is None else f"step {step}")
    fig.suptitle(f"{case}: relative residual during {which}")
    fig.tight_layout()
    name = f"{slug(case)}_residual_history"
    caption = (f"Relative residual (the yardstick, log scale) during {which}, one line per run; "
               "left against iterations, right against solver seconds (yardstick excluded)." + time_note)
    if substep_note:
        caption += " A step of several substeps is drawn as one line per substep (each restarts at iteration 0)."
    if "roundoff_floor" in stops:
        caption += (" □: the step stopped at the round-off floor (the update fell below the positions' round-off); "
                    "above the dashed target line, the target was not reached.")
    if "other" in stops:
        caption += " ×: the step stopped at its iteration or time budget, stalled or diverged."
    return Figure(name, f"{case}: residual history", caption, save_figure(fig, figures_dir, name))


OWN_RESIDUALS = (("secondary_residual", "--", "secondary |h|"), ("primal_residual", ":", "primal |g|"))


def own_residuals_figure(case, case_runs, step, colors, figures_dir):
    """The solvers' own residuals (the papers' g and h, log columns primal_residual and
    secondary_residual) beside the true one, each divided by its largest value in the step
    (FP-PXPBD's |g| starts at zero, so a first value would not do): PXPBD Fig. 3's point is that a falling |h| does not mean a falling true residual."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    drawn = False
    for run in case_runs:
        rows = rows_of_step(run, chosen_step(run, step))
        own = [(column, ls, text) for column, ls, text in OWN_RESIDUALS
               if any(is_number(r.get(column)) and math.isfinite(r[column]) and r[column] > 0 for r in rows)]
        if not own:
            continue
        color = colors[run["label"]]
        ax.plot(*positive_pairs([r["iteration"] for r in rows], [r["relative_residual"] for r in rows]),
                color=color, ls="-", label=f"{run['label']}: true (relative)")
        for column, ls, text in own:
            pairs = [(r["iteration"], r[column]) for r in rows
                     if is_number(r.get(column)) and math.isfinite(r[column]) and r[column] > 0]
            peak = max(p[1] for p in pairs)
            ax.plot([p[0] for p in pairs], [p[1] / peak for p in pairs], color=color, ls=ls,
                    label=f"{run['label']}: {text} / its largest")
        drawn = True
    if not drawn:
        plt.close(fig)
        return None
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(True, which="major", alpha=0.35)
    ax.set_xlabel("iteration")
    ax.set_ylabel("residual, relative [-]")
    ax.legend(fontsize=7, loc="best")
    steps = {chosen_step(run, step) for run in case_runs} - {None}
    which = f"step {steps.pop()}" if len(steps) == 1 else "last step of each run" if step is None else f"step {step}"
    ax.set_title(f"{case}: the solvers' own residuals during {which}")
    fig.tight_layout()
    name = f"{slug(case)}_own_residuals"
    caption = (f"Solid: the true relative residual (the yardstick). Dashed: the solver's secondary residual |h| "
               f"(e.g. XPBD's |C + alpha~ lambda|), dotted: its primal residual |g|, each divided by its "
               f"largest value in {which}. Runs that log neither are not drawn.")
    return Figure(name, f"{case}: the solvers' own residuals", caption, save_figure(fig, figures_dir, name))


def final_residual_figure(case, case_runs, colors, figures_dir):
    """Final relative residual of every step: shows whether a solver holds up over the whole run."""
    # Runs of one step: a single dot per run, and the residual history shows that step already.
    if max((len(final_residual_per_step(r)) for r in case_runs), default=0) < 2:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    any_line, any_floor, any_failed = False, False, False
    steps_drawn = set()
    for run in case_runs:
        data = [(s, v, reason) for s, v, reason in final_residual_per_step(run)
                if is_number(v) and math.isfinite(v) and v > 0]
        if not data:
            continue
        any_line = True
        steps_drawn.update(d[0] for d in data)
        ax.plot([d[0] for d in data], [d[1] for d in data], marker="o", ms=4,
                color=colors[run["label"]], label=run["label"])
        floor = [d for d in data if d[2] == "roundoff_floor"]
        failed = [d for d in data if d[2] not in (None, "converged", "roundoff_floor")]
        if floor:
            any_floor = True
            ax.plot([d[0] for d in floor], [d[1] for d in floor], ls="none", color="black",
                    **STOP_MARKERS["roundoff_floor"])
        if failed:
            any_failed = True
            ax.plot([d[0] for d in failed], [d[1] for d in failed], ls="none", color="black",
                    **STOP_MARKERS["other"])
    if not any_line:
        plt.close(fig)
        return None
    target = target_residual(case_runs)
    if target:
        ax.axhline(target, color="0.4", ls="--", lw=1, label=f"target {target:g}")
    if any_floor:
        ax.plot([], [], ls="none", color="black", label=STOP_LABELS["roundoff_floor"], **STOP_MARKERS["roundoff_floor"])
    if any_failed:
        ax.plot([], [], ls="none", color="black", label=STOP_LABELS["other"], **STOP_MARKERS["other"])
    ax.set_yscale("log")
    set_step_ticks(ax.xaxis, steps_drawn)
    ax.grid(True, which="major", alpha=0.35)
    ax.set_xlabel("time step")
    ax.set_ylabel("final relative residual [-]")
    ax.set_title(f"{case}: final relative residual per step")
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    name = f"{slug(case)}_final_residual_per_step"
    caption = "Relative residual at the end of each time step (log scale). Unmarked: the step converged (reached the target)."
    if any_floor:
        caption += (" □: the step stopped at the round-off floor (the update fell below the positions' round-off); "
                    "above the dashed target line that means the target was not reached.")
    if any_failed:
        caption += " ×: the step stopped at its iteration or time budget, stalled or diverged."
    return Figure(name, f"{case}: final residual per step", caption, save_figure(fig, figures_dir, name))


def error_figure(case, case_runs, colors, figures_dir):
    """Work-precision (error vs solver time) and resolution (error vs node count) views of every
    metric named *error*; colour tells the run, marker shape tells the metric."""
    names = error_metric_names(case_runs)
    # A metric with one drawable value is a single dot on log-log axes: it says nothing a table does
    # not (the case's metric table shows it). Draw only when some metric has values of two runs.
    drawable = {n: sum(1 for r in case_runs if is_number(metric_value(r, n)) and math.isfinite(metric_value(r, n))
                       and metric_value(r, n) > 0) for n in names}
    if not names or max(drawable.values()) < 2:
        return None
    # Runs on one mesh would stack on one vertical line of the node-count view: it is left out then.
    by_nodes = len({r["nodes"] for r in case_runs if is_number(r["nodes"]) and r["nodes"] > 0}) > 1
    if by_nodes:
        fig, (ax_t, ax_n) = plt.subplots(1, 2, figsize=(13, 4.6), sharey=True)
    else:
        fig, ax_t = plt.subplots(figsize=(8.5, 4.6))
        ax_n = None
    axes = [ax for ax in (ax_t, ax_n) if ax is not None]
    shown, hidden = set(), 0
    for run in case_runs:
        for m in run["metrics"]:
            if m.get("name") not in names:
                continue
            value = m.get("value")
            if not is_number(value) or not math.isfinite(value) or value <= 0:
                hidden += 1
                continue
            style = dict(ls="none", ms=8, marker=MARKERS[names.index(m["name"]) % len(MARKERS)],
                         color=colors[run["label"]], alpha=0.85)
            for ax, x in ((ax_t, run["solver_seconds"]), (ax_n, run["nodes"])):
                if ax is not None and is_number(x) and x > 0:
                    ax.plot([x], [value], **style)
                    shown.add((run["label"], m["name"]))
    if not shown:
        plt.close(fig)
        return None
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.25)
    ax_t.set_xlabel("total solver time [s]")
    ax_t.set_ylabel("error metric value [unit in legend]")
    ax_t.set_title("error vs solver time")
    if ax_n is not None:
        ax_n.set_xlabel("mesh nodes (midside nodes included)")
        ax_n.set_title("error vs node count")
    run_handles = [Line2D([], [], ls="none", marker="o", ms=8, color=colors[r["label"]], label=r["label"])
                   for r in case_runs if any(lbl == r["label"] for lbl, _ in shown)]
    units = {m.get("name"): m.get("unit") for r in case_runs for m in r["metrics"] if m.get("unit")}
    metric_handles = [Line2D([], [], ls="none", marker=MARKERS[i % len(MARKERS)], ms=8, color="0.3",
                             label=f"{n} [{units[n]}]" if n in units else n)
                      for i, n in enumerate(names) if any(n == mn for _, mn in shown)]
    for ax in axes:
        for axis in (ax.xaxis, ax.yaxis):
            label_short_log_axis(axis)
    right = 0.8 if by_nodes else 0.68
    fig.tight_layout(rect=(0, 0, right, 0.95))
    # Figure legends (not axes legends) so that bbox_inches="tight" keeps them whole.
    fig.legend(handles=run_handles, title="run", fontsize=8, loc="upper left", bbox_to_anchor=(right, 0.88))
    fig.legend(handles=metric_handles, title="metric", fontsize=8, loc="lower left", bbox_to_anchor=(right, 0.12))
    fig.suptitle(f"{case}: error metrics")
    name = f"{slug(case)}_errors"
    caption = ("Metrics named *error* (log-log) against total solver seconds and the mesh's node count."
               if by_nodes else "Metrics named *error* (log-log) against total solver seconds (every run of the "
               "case is on one mesh, so there is no node-count view).")
    if hidden:
        caption += f" {hidden} value(s) that are zero or not finite cannot be drawn on a log axis (see the table)."
    return Figure(name, f"{case}: error metrics", caption, save_figure(fig, figures_dir, name))


def series_line(run):
    """A series' line: runs on the same element type and order with the same run label."""
    return f"{element_label(run)} · {run['label']}"


def series_figures(series, series_runs, figures_dir):
    """Per metric named *error*: its value against node count, one line per element type and run,
    so the rate at which each discretisation converges under refinement can be read off."""
    lines = list(OrderedDict.fromkeys(series_line(r) for r in series_runs))
    colors = colors_for(lines)
    # Marker shape tells the element type, so lines of one discretisation look alike.
    elements = list(OrderedDict.fromkeys(element_label(r) for r in series_runs))
    markers = {series_line(r): MARKERS[elements.index(element_label(r)) % len(MARKERS)] for r in series_runs}
    figures = []
    for name in error_metric_names(series_runs):
        points = [(r["nodes"], metric_value(r, name), series_line(r)) for r in series_runs]
        points = [p for p in points if is_number(p[0]) and p[0] > 0 and is_number(p[1])]
        if len({p[0] for p in points}) < 2:
            continue  # a single mesh size has no trend to show
        fig, ax = plt.subplots(figsize=(7.5, 4.6))
        hidden = 0
        for line in lines:
            data = sorted((p[0], p[1]) for p in points if p[2] == line)
            xs, ys = positive_pairs([d[0] for d in data], [d[1] for d in data])
            hidden += len(data) - len(xs)
            if xs:
                ax.plot(xs, ys, marker=markers[line], ms=6, color=colors[line], label=line)
        if not ax.lines:
            plt.close(fig)
            continue
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.25)
        for axis in (ax.xaxis, ax.yaxis):
            label_short_log_axis(axis)
        unit = next((m.get("unit") for r in series_runs for m in r["metrics"]
                     if m.get("name") == name and m.get("unit")), None)
        ax.set_xlabel("mesh nodes (midside nodes included)")
        ax.set_ylabel(f"{name} [{unit}]" if unit else name)
        ax.set_title(f"{series}: {name} vs node count")
        ax.legend(title="element type · run", fontsize=8, loc="best")
        fig.tight_layout()
        figure_name = f"series_{slug(series)}_{slug(name)}"
        caption = (f"{name} (log) against the mesh's node count (log), one line per element type and run, "
                   "points in node order.")
        if hidden:
            caption += f" {hidden} value(s) that are zero or not finite cannot be drawn on a log axis (see the table)."
        figures.append(Figure(figure_name, f"{series}: {name} vs node count", caption,
                              save_figure(fig, figures_dir, figure_name)))
    return figures


def series_profile_figures(series, series_runs, figures_dir):
    """Per metric with a profile (metrics.json "profiles"): the curves of the series' runs on one
    axes, one line per element type and run (the high-order paper's Fig. 5: the cross-sections'
    rotation minus the linear interpolation along the beam)."""
    lines = list(OrderedDict.fromkeys(series_line(r) for r in series_runs))
    colors = colors_for(lines)
    elements = list(OrderedDict.fromkeys(element_label(r) for r in series_runs))
    markers = {series_line(r): MARKERS[elements.index(element_label(r)) % len(MARKERS)] for r in series_runs}
    names = list(OrderedDict.fromkeys(p["metric"] for r in series_runs for p in r["profiles"]))
    figures = []
    for name in names:
        fig, ax = plt.subplots(figsize=(7.5, 5.4))
        x_label = y_label = None
        for run in sorted(series_runs, key=lambda r: (lines.index(series_line(r)), r["case"])):
            for profile in run["profiles"]:
                if profile["metric"] != name:
                    continue
                x_label, y_label = profile["x_label"], profile["y_label"]
                # Element type and case: run labels (solver options) are long and the case names them.
                ax.plot(profile["x"], profile["y"], marker=markers[series_line(run)], ms=4,
                        color=colors[series_line(run)], label=f"{element_label(run)} · {run['case']}")
        ax.axhline(0.0, color="0.4", lw=0.8)
        ax.grid(True, which="major", alpha=0.35)
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        ax.set_title(f"{series}: {name} along the body")
        ax.legend(title="element type · case", fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
        fig.tight_layout()
        figure_name = f"series_{slug(series)}_{slug(name)}_profile"
        caption = (f"The curve behind {name}, one line per run of the series (element type and case; the "
                   f"runs' labels are in the series table): {name} is its largest magnitude. The y axis: "
                   f"{y_label}.")
        figures.append(Figure(figure_name, f"{series}: {name} along the body", caption,
                              save_figure(fig, figures_dir, figure_name)))
    return figures


def volume_ratio_figure(case, case_runs, colors, figures_dir):
    """V(x)/V(X) at the end of every step (summary.json's steps[k].volume_ratio), one line per run:
    how much volume a solver loses or gains over the run. Drawn only when some run records it."""
    recorded = [r for r in case_runs if any("volume_ratio" in s for s in r["steps"])]
    # A run of one step is one dot: its volume change is in the case's metrics (volume_ratio_error).
    if not recorded or max(sum(1 for s in r["steps"] if "volume_ratio" in s) for r in recorded) < 2:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    use_time = all(is_number(s.get("time")) for r in recorded for s in r["steps"])
    gaps = []
    for run in recorded:
        data = [((s["time"] if use_time else s.get("step")), s.get("volume_ratio")) for s in run["steps"]
                if "volume_ratio" in s]
        xs = [x for x, v in data if is_number(x) and is_number(v) and math.isfinite(v)]
        ys = [v for x, v in data if is_number(x) and is_number(v) and math.isfinite(v)]
        if len(xs) < len(data):
            gaps.append(run["label"])
        if xs:
            ax.plot(xs, ys, marker="o", ms=3.5, color=colors[run["label"]], label=run["label"])
    if not ax.lines:
        plt.close(fig)
        return None
    ax.axhline(1.0, color="0.4", ls="--", lw=1, label="rest volume")
    ax.ticklabel_format(axis="y", useOffset=False)  # 1.0010, not 0.0010 and "+1" in the corner
    if not use_time:
        set_step_ticks(ax.xaxis, [s.get("step") for r in recorded for s in r["steps"]])
    ax.grid(True, which="major", alpha=0.35)
    ax.set_xlabel("time [s]" if use_time else "time step")
    ax.set_ylabel("volume ratio V(x) / V(X) [-]")
    ax.set_title(f"{case}: volume ratio over time")
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    name = f"{slug(case)}_volume_ratio"
    caption = ("Volume of the deformed mesh over its rest volume at the end of every step (summary.json's "
               "volume_ratio), one line per run that records it.")
    if gaps:
        caption += (" Steps without a finite value (a diverged state) are not drawn: "
                    + ", ".join(gaps) + ".")
    return Figure(name, f"{case}: volume ratio over time", caption, save_figure(fig, figures_dir, name))


def sweep_columns(sweep):
    """The sweep's solvers in order of appearance (skipped ones last), keyed by solver name, or by
    run label when a case runs one solver twice (two option sets)."""
    by_case = {}
    for r in sweep["runs"]:
        by_case.setdefault(r["case"], []).append(r["solver"])
    by_label = any(len(v) != len(set(v)) for v in by_case.values())
    key = (lambda r: r["label"]) if by_label else (lambda r: r["solver"])
    columns = list(OrderedDict.fromkeys([key(r) for r in sweep["runs"]]
                                        + [solver for _, solver in sweep["skipped"]]))
    return columns, key


def sweep_axis(values):
    """How the swept values go on the x axis: "log" when they span a decade or more (iterations
    10, 40, 160), "even" (ranks, labelled with the values) when their gaps differ more than 5x
    (Poisson ratios 0.3 ... 0.499 would crowd at the right end), else "linear"."""
    distinct = sorted(set(values))
    if len(distinct) >= 2 and distinct[0] > 0 and distinct[-1] / distinct[0] >= 10:
        return "log", {v: v for v in distinct}
    gaps = [b - a for a, b in zip(distinct, distinct[1:])]
    if len(gaps) >= 2 and max(gaps) > 5 * min(gaps):
        return "even", {v: i for i, v in enumerate(distinct)}
    return "linear", {v: v for v in distinct}


def sweep_figure(name, sweep, figures_dir):
    """Distance to the Newton solution against the swept parameter, one line per solver; a
    diverged run is an x at the top of the axes, not a point."""
    columns, key = sweep_columns(sweep)
    mode, position = sweep_axis(list(sweep["points"].values()))
    colors = colors_for(columns)
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    hidden, diverged, references = 0, [], set()
    for i, column in enumerate(columns):
        points = []
        for r in sweep["runs"]:
            if key(r) != column:
                continue
            x = position[sweep["points"][r["case"]]]
            if r["diverged_step"] is not None:
                diverged.append((x, column))
                continue
            m = metric_of_type(r, SWEEP_QUANTITIES[0][1])
            value = m.get("value") if m else None
            if m is not None and is_reference(m):
                references.add(column)
                continue
            if is_number(value) and math.isfinite(value) and value > 0:
                points.append((x, value))
            elif m is not None:
                hidden += 1
        points.sort()
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], marker=MARKERS[i % len(MARKERS)], ms=6,
                    color=colors[column], label=column)
    for x, column in diverged:
        ax.plot([x], [0.96], ls="none", marker="x", ms=10, mew=2, color=colors[column],
                transform=ax.get_xaxis_transform(), clip_on=False)
    if not ax.lines:
        plt.close(fig)
        return None
    if diverged:
        ax.plot([], [], ls="none", marker="x", ms=10, mew=2, color="0.3", label="diverged (colour: solver)")
    ax.set_yscale("log")
    label_short_log_axis(ax.yaxis)
    values = sorted(position)
    if mode == "log":
        ax.set_xscale("log")
        ax.set_xticks(values)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        ax.set_xticks([position[v] for v in values])
        ax.set_xticklabels([f"{v:g}" for v in values])
    ax.grid(True, which="major", alpha=0.35)
    metric_names = sorted({m["name"] for r in sweep["runs"] for m in [metric_of_type(r, SWEEP_QUANTITIES[0][1])]
                           if m and isinstance(m.get("name"), str)})
    ax.set_xlabel(sweep["parameter"] + (" (points evenly spaced; the values are not)" if mode == "even" else ""))
    ax.set_ylabel("distance to Newton" + (f" ({', '.join(metric_names)})" if metric_names else ""))
    ax.set_title(f"{name}: distance to Newton vs {sweep['parameter']}")
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    figure_name = f"sweep_{slug(name)}_distance_to_newton"
    caption = (f"Distance to the Newton solution of the same scene ({', '.join(metric_names) or 'no metric'}; log) "
               f"against {sweep['parameter']}, one line per solver. x at the top: the run diverged.")
    if references:
        caption += f" Not drawn: {', '.join(sorted(references))} (the reference itself)."
    if hidden:
        caption += f" {hidden} value(s) that are zero or not finite cannot be drawn on a log axis (see the table)."
    return Figure(figure_name, f"{name}: distance to Newton vs {sweep['parameter']}", caption,
                  save_figure(fig, figures_dir, figure_name))


# ----------------------------------------------------------------------------- tables

class Link:
    """A table cell or text piece that links to an anchor of the report."""

    def __init__(self, text, anchor):
        self.text, self.anchor = str(text), anchor

    def __str__(self):
        return self.text


class Path:
    """A file path in a table cell: the HTML lets it wrap after a slash, nowhere else."""

    def __init__(self, text):
        self.text = str(text)

    def __str__(self):
        return self.text


class Bold:
    """A piece of text set in bold."""

    def __init__(self, text):
        self.text = str(text)

    def __str__(self):
        return self.text


class Heading:
    """A section heading with its anchor (the id the summary and the contents link to)."""

    def __init__(self, text, anchor):
        self.text, self.anchor = text, anchor

    def __str__(self):
        return self.text


def case_anchor(case):
    return f"case-{slug(case)}"


def metric_anchor(case, label, metric_name):
    return f"metric-{slug(case)}-{slug(label)}-{slug(str(metric_name))}"


def common_root(runs):
    """The folder all run directories share (shown once above the runs table), or None."""
    if len(runs) < 2:
        return None
    try:
        root = os.path.commonpath([os.path.abspath(r["dir"]) for r in runs])
    except ValueError:
        return None
    return root if root not in ("", os.sep) else None


def validate_layout(runs, root):
    """True when every run folder is ROOT/<case>/<solver> (what `pbdlab validate` writes): the runs
    table then leaves out the directory column."""
    return bool(root) and all(os.path.relpath(os.path.abspath(r["dir"]), root) == os.path.join(r["case"], r["solver"])
                              for r in runs)


def runs_table(cases, root=None, directories=True):
    header = (["case", "run"] + (["directory"] if directories else [])
              + ["nodes", "steps", "iterations", "solver time", "how the steps ended"])
    rows = []
    for case, case_runs in cases.items():
        for r in case_runs:
            totals = obj(r["summary"].get("totals"))
            directory = os.path.relpath(os.path.abspath(r["dir"]), root) if root else r["dir"]
            rows.append([Link(case, case_anchor(case)), r["label"]] + ([Path(directory)] if directories else [])
                        + [fmt_number(r["nodes"]), fmt_number(len(r["steps"])), fmt_number(totals.get("iterations")),
                           fmt_seconds(r["solver_seconds"]), step_outcome(r)[0]])
    return header, rows, {"class": "runs" if directories else "runs nodir"}


def metric_table(cases):
    header = ["case", "run", "metric", "value", "tolerance", "unit", "result"]
    rows = []
    for case, case_runs in cases.items():
        for r in case_runs:
            for m in r["metrics"]:
                rows.append([case, r["label"], str(m.get("name", "—")), fmt_number(m.get("value")),
                             fmt_number(m.get("tolerance")), str(m.get("unit", "—")), verdict(metric_pass(m))])
    return header, rows


def case_metric_table(case, case_runs, case_info):
    """The metrics of one case's runs with what each measures (the case file's metric, else its
    type), beside its value, tolerance, unit and verdict; each row has an anchor."""
    specs = obj(case_info).get("metrics", {})
    header = ["run", "metric", "definition", "value", "tolerance", "unit", "result"]
    rows, ids = [], []
    for r in case_runs:
        for m in r["metrics"]:
            name = str(m.get("name", "—"))
            rows.append([r["label"], name, metric_definition(m, specs.get(name)), fmt_number(m.get("value")),
                         fmt_number(m.get("tolerance")), str(m.get("unit", "—")), verdict(metric_pass(m))])
            ids.append(metric_anchor(case, r["label"], name))
    return header, rows, {"ids": ids, "class": "metrics"}


def case_description(case, case_runs, case_info):
    """The case file's description, else the scene's (summary.json), else a note on --cases."""
    if obj(case_info).get("description"):
        return case_info["description"]
    for r in case_runs:
        text = obj(r["summary"].get("scene_resolved")).get("description")
        if isinstance(text, str) and text:
            return f"(The scene's description; no case file was given.) {text}"
    return "No description: the report was not given this case's file (make_report.py --cases DIR)."


def format_memory(value):
    """Bytes as GiB; any other recorded form as it is."""
    if is_number(value) and value > 1e6:
        return f"{value / 2 ** 30:.1f} GiB"
    return fmt_number(value)


def run_date(run):
    """When the run was made: summary.json's (or its environment's) date, else when summary.json was
    written (its modification time)."""
    for holder in (run["environment"], run["summary"]):
        for key in ("date", "started", "finished", "timestamp"):
            if isinstance(holder.get(key), str) and holder[key]:
                return holder[key]
    try:
        return os.path.getmtime(os.path.join(run["dir"], "summary.json"))  # a number: a file time
    except OSError:
        return None


THREADING_TITLES = OrderedDict([("omp_threads", "OpenMP threads"), ("omp_num_threads", "OpenMP threads"),
                                ("omp_wait_policy", "OMP_WAIT_POLICY"),
                                ("omp_wait_policy_set_by", "OMP_WAIT_POLICY set by"),
                                ("blas_threads", "BLAS threads")])


def machine_table(runs):
    """One column per distinct environment, so a report mixing machines or commits shows it; the
    runs of each column are counted in the first row, not listed in the header."""
    # The date is the run's, not the machine's: runs differing only in it share a column.
    def machine(environment):
        return {k: v for k, v in environment.items() if k not in ("date", "started", "finished", "timestamp")}

    environments = []
    for r in runs:
        for env in environments:
            if machine(env["env"]) == machine(r["environment"]):
                env["runs"].append(r)
                break
        else:
            environments.append({"env": r["environment"], "runs": [r]})
    if len(environments) == 1:
        header = ["", "value"]
    else:
        header = [""] + [f"machine {i + 1}" for i in range(len(environments))]

    def runs_cell(e):
        if len(environments) == 1:
            return f"all {len(e['runs'])} runs" if len(e["runs"]) > 1 else "the one run"
        cases = list(OrderedDict.fromkeys(r["case"] for r in e["runs"]))
        return f"{len(e['runs'])} runs: " + ", ".join(cases[:6]) + (f" and {len(cases) - 6} more" if len(cases) > 6 else "")

    def dates_cell(e):
        dates = [d for d in (run_date(r) for r in e["runs"]) if d is not None]
        recorded = sorted(d for d in dates if isinstance(d, str))
        stamps = sorted(d for d in dates if not isinstance(d, str))
        if recorded:
            return recorded[0] if recorded[0] == recorded[-1] else f"{recorded[0]} to {recorded[-1]}"
        if not stamps:
            return "not recorded"
        first, last = (datetime.datetime.fromtimestamp(t).astimezone() for t in (stamps[0], stamps[-1]))
        text = first.strftime("%Y-%m-%d %H:%M")
        if last.strftime("%Y-%m-%d %H:%M") != text:
            text += " to " + last.strftime("%H:%M" if last.date() == first.date() else "%Y-%m-%d %H:%M")
        return text + first.strftime(" %Z") + " (when summary.json was written)"

    def env_value(e, *keys, formatter=fmt_number):
        for key in keys:
            if key in e["env"]:
                return formatter(e["env"][key])
        return "not recorded"

    def dependency(e, *names):
        deps = obj(e["env"].get("dependencies"))
        for n in names:
            if n in deps:
                return fmt_number(deps[n])
        return "not recorded"

    rows = [["runs"] + [runs_cell(e) for e in environments],
            ["date"] + [dates_cell(e) for e in environments],
            ["CPU"] + [env_value(e, "cpu") for e in environments],
            ["hardware threads"] + [env_value(e, "hardware_threads") for e in environments],
            ["memory"] + [env_value(e, "memory_bytes", "memory", "total_memory", "memory_total_bytes",
                                    formatter=format_memory) for e in environments]]
    threading_keys = list(OrderedDict.fromkeys(k for e in environments for k in obj(e["env"].get("threading"))))
    if threading_keys:
        titles = OrderedDict()
        for k in threading_keys:
            titles.setdefault(THREADING_TITLES.get(k, f"threading: {k}"), []).append(k)
        for title, keys in titles.items():
            cells = []
            for e in environments:
                threading = obj(e["env"].get("threading"))
                present = [k for k in keys if k in threading]
                if not present:
                    cells.append(env_value(e, "omp_threads") if title == "OpenMP threads" else "not recorded")
                elif threading[present[0]] is None and title == "BLAS threads":
                    cells.append("— (not OpenBLAS)")
                else:
                    cells.append(fmt_number(threading[present[0]]))
            rows.append([title] + cells)
    else:
        rows.append(["OpenMP threads"] + [env_value(e, "omp_threads") for e in environments])
        rows.append(["threading settings"] + ["not recorded" for e in environments])
    rows += [["Gmsh"] + [dependency(e, "gmsh", "Gmsh") for e in environments],
             ["git commit"] + [env_value(e, "git_commit") for e in environments],
             ["build type"] + [env_value(e, "build_type") for e in environments],
             ["compiler"] + [env_value(e, "compiler") for e in environments],
             ["OS"] + [env_value(e, "os") for e in environments],
             ["pbdlab version"] + [env_value(e, "pbdlab_version") for e in environments]]
    dependencies = sorted({d for e in environments for d in obj(e["env"].get("dependencies"))} - {"gmsh", "Gmsh"})
    rows += [[f"dependency: {d}"] + [fmt_number(obj(e["env"].get("dependencies")).get(d)) for e in environments]
             for d in dependencies]
    return header, rows, {"class": "machine"}


def convergence_table(cases, step):
    header = (["case", "run", "step"] + [f"iterations to {t:g}" for t in THRESHOLDS]
              + [f"seconds to {t:g}" for t in THRESHOLDS] + ["source"])
    rows = []
    for case, case_runs in cases.items():
        for r in case_runs:
            s = chosen_step(r, step)
            cells, source = convergence_row(r, s)
            rows.append([case, r["label"], fmt_number(s)] + [fmt_number(c[0]) for c in cells]
                        + [fmt_number(c[1]) for c in cells] + [source])
    return header, rows


def series_table(series_runs):
    """Every run of a series, coarsest mesh first, with the value of each of its metrics."""
    names = list(OrderedDict.fromkeys(m["name"] for r in series_runs for m in r["metrics"]
                                      if isinstance(m.get("name"), str)))
    header = ["case", "mesh source", "element type", "nodes", "run"] + names
    ordered = sorted(series_runs, key=lambda r: (r["nodes"] if is_number(r["nodes"]) else math.inf, r["case"],
                                                 r["label"]))
    rows = [[r["case"], fmt_number(r["mesh"].get("source")), element_label(r), fmt_number(r["nodes"]), r["label"]]
            + [fmt_number(metric_value(r, n)) for n in names] for r in ordered]
    return header, rows


def sweep_cell(run, types):
    """One value of a sweep table: the metric's value (FAIL appended when it fails its gate), or
    "diverged (step k)" for a run that diverged."""
    if run["diverged_step"] is not None:
        return f"diverged (step {run['diverged_step']})" if run["diverged_step"] else "diverged"
    m = metric_of_type(run, types)
    if m is None:
        return "—"
    if is_reference(m):
        return "reference"
    return fmt_number(m.get("value")) + (" FAIL" if metric_pass(m) is False else "")


def is_reference(metric):
    """A distance metric of the reference solver against its own solution (the runner writes
    pass null and a note saying so): not a measurement."""
    return metric.get("pass", False) is None and "own solution" in str(metric.get("note", ""))


def sweep_table(sweep):
    """One row per swept value (ascending), per solver the distance to Newton, the volume error
    and the true residual reached; "skipped" for a pair the solver rejected, "not run" for a
    solver the case does not list."""
    columns, key = sweep_columns(sweep)
    header = [sweep["parameter"], "case"] + [f"{c}: {q}" for c in columns for q, _ in SWEEP_QUANTITIES]
    ordered = sorted(sweep["points"].items(), key=lambda item: (item[1], item[0]))
    rows = []
    for case, value in ordered:
        row = [fmt_number(value, 6), case]
        for column in columns:
            run = next((r for r in sweep["runs"] if r["case"] == case and key(r) == column), None)
            if run is not None:
                row += [sweep_cell(run, types) for _, types in SWEEP_QUANTITIES]
            elif (case, column) in sweep["skipped"]:
                row += ["skipped"] * len(SWEEP_QUANTITIES)
            else:
                row += ["not run"] * len(SWEEP_QUANTITIES)
        rows.append(row)
    # The HTML groups the columns under their solver (one header cell per solver, short quantity
    # names) and gives a solver skipped or not run at every point one column, so the table fits a
    # 1400 px window; the Markdown keeps "solver: quantity" and every column.
    n = len(SWEEP_QUANTITIES)
    groups, short, keep = [("", 2)], [sweep["parameter"], "case"], [0, 1]
    for i, column in enumerate(columns):
        cells = {cell for row in rows for cell in row[2 + i * n: 2 + (i + 1) * n]}
        if len(cells) == 1 and cells <= {"skipped", "not run"}:
            groups.append((column, 1))
            short.append("")
            keep.append(2 + i * n)
        else:
            groups.append((column, n))
            short += [SWEEP_SHORT[q] for q, _ in SWEEP_QUANTITIES]
            keep += range(2 + i * n, 2 + (i + 1) * n)
    html_rows = [[row[k] for k in keep] for row in rows]
    return header, rows, {"groups": groups, "short": short, "html_rows": html_rows, "class": "sweep", "numbers": True}


# ----------------------------------------------------------------------------- writers

CSS = """body{font-family:sans-serif;max-width:1320px;margin:1.5em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:0.85em}
th,td{border:1px solid #bbb;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#eee}td.PASS{background:#d9f2d9}td.FAIL{background:#f7d4d4;font-weight:bold}td.na{color:#777}
table.runs td:nth-child(8),table.nodir td:nth-child(7){max-width:28em}
table.metrics td:nth-child(3){max-width:34em}table.machine td{overflow-wrap:anywhere;max-width:60em}
tr:target{outline:3px solid #e0a000}table.sweep{font-size:0.8em}td.num{white-space:nowrap}
div.verdict{border:2px solid #888;border-radius:6px;padding:0.3em 1em;margin:1em 0;background:#fafafa}
div.verdict.pass{border-color:#3a3}div.verdict.fail{border-color:#c33}
p.headline{font-size:1.25em;margin:0.4em 0}ul.contents li{margin:0.15em 0}
figure{margin:1em 0}img{max-width:100%}figcaption{font-size:0.9em;color:#555}code{background:#f3f3f3}"""


NUMBER = re.compile(r"-?[0-9.]+(e[-+]?[0-9]+)?( FAIL)?")


def html_cell(c):
    if isinstance(c, Link):
        return f'<td><a href="#{html.escape(c.anchor)}">{html.escape(c.text)}</a></td>'
    if isinstance(c, Path):
        return "<td>" + "/<wbr>".join(html.escape(part) for part in c.text.split("/")) + "</td>"
    if c in ("PASS", "FAIL"):
        return f'<td class="{c}">{html.escape(c)}</td>'
    if c == "n/a":
        return f'<td class="na">{html.escape(c)}</td>'
    return f"<td>{html.escape(str(c))}</td>"


def html_table(header, rows, meta=None):
    meta = meta or {}
    rows = meta.get("html_rows", rows)
    ids = meta.get("ids") or [None] * len(rows)
    if meta.get("groups"):
        head = "".join(f'<th colspan="{n}">{html.escape(g)}</th>' for g, n in meta["groups"])
        head += "</tr><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in meta["short"])
    else:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    def cell(c):
        if meta.get("numbers") and isinstance(c, str) and NUMBER.fullmatch(c):
            return f'<td class="num">{html.escape(c)}</td>'  # never broken at the exponent's minus
        return html_cell(c)
    body = "".join((f'<tr id="{html.escape(i)}">' if i else "<tr>") + "".join(cell(c) for c in row)
                   + "</tr>\n" for row, i in zip(rows, ids))
    css = f' class="{meta["class"]}"' if meta.get("class") else ""
    return f"<table{css}><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>\n"


def md_table(header, rows, meta=None):
    def cell(c):
        text = f"[{c.text}](#{c.anchor})" if isinstance(c, Link) else str(c)
        return text.replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def html_pieces(pieces):
    out = []
    for p in pieces:
        if isinstance(p, Link):
            out.append(f'<a href="#{html.escape(p.anchor)}">{html.escape(p.text)}</a>')
        elif isinstance(p, Bold):
            out.append(f"<b>{html.escape(p.text)}</b>")
        else:
            out.append(html.escape(str(p)))
    return "".join(out)


def md_pieces(pieces):
    out = []
    for p in pieces:
        if isinstance(p, Link):
            out.append(f"[{p.text}](#{p.anchor})")
        elif isinstance(p, Bold):
            out.append(f"**{p.text}**")
        else:
            out.append(str(p))
    return "".join(out)


def read_skipped(path):
    """skipped.json of `pbdlab validate`: the (case, solver) pairs not run, each with its reason."""
    if path is None:
        return []
    if not os.path.isfile(path):
        raise ReportError(f"{path}: no such file")
    entries = read_json(path, required=True, top_level=list)
    if not all(
            isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("case", "solver", "reason"))
            for e in entries):
        raise ReportError(f"{path}: malformed: expected a list of {{case, solver, reason}} objects")
    return entries


def skipped_table(skipped):
    return (["case", "solver", "why it was not run"], [[e["case"], e["solver"], e["reason"]] for e in skipped])


def sweep_sections(sweeps, sweep_figs):
    """The Sweeps section: per sweep a figure (distance to Newton vs the parameter), the table, and
    why the skipped pairs were not run."""
    if not sweeps:
        return []
    items = [("Sweeps", "text",
              "Validation cases that are points of a parameter sweep (the case file's `sweep`: the same scene "
              "with one value changed by its `scene_patch`). Per sweep, one row per value and, per solver, the "
              "distance to the Newton solution of the same patched scene, the volume error |V(x)/V(X) − 1| and "
              "the true relative residual reached after the last step (Newton's volume error is the volume change of "
              "the converged solution, the one to match); \"reference\" for Newton against its own solution, "
              "\"diverged (step k)\" where the run diverged, \"skipped\" where the solver rejects the scene, FAIL where a value fails its gate. "
              "Columns per solver: distance (to Newton), volume (error), residual (true, relative).")]
    for name, sweep in sweeps.items():
        in_order = [case for case, _ in sorted(sweep["points"].items(), key=lambda item: (item[1], item[0]))]
        items.append((None, "subheading", f"Sweep {name}: {sweep['parameter']} (cases {', '.join(in_order)})"))
        if sweep_figs.get(name):
            items.append((None, "figures", [sweep_figs[name]]))
        else:
            items.append((None, "text", "No figure: no run of this sweep has a distance to Newton to draw."))
        items.append((None, "table", sweep_table(sweep)))
        reasons = OrderedDict()
        for (case, solver), reason in sorted(sweep["skipped"].items(), key=lambda item: in_order.index(item[0][0])):
            reasons.setdefault((solver, reason), []).append(case)
        for (solver, reason), skipped_cases in reasons.items():
            items.append((None, "text", f"{solver} skipped ({', '.join(skipped_cases)}): {reason}"))
    return items


def gate_metric(run):
    """The runner's row that judges how the steps ended: steps_converged, or expected_divergence."""
    return next((m for m in run["metrics"] if m.get("type", m.get("name")) in ("steps_converged", "expected_divergence")),
                None)


def verdict_counts(cases, runs, skipped):
    """The report's verdict: runs, metric verdicts, skipped pairs and how the steps ended."""
    verdicts = [(case, r, m, metric_pass(m)) for case, case_runs in cases.items() for r in case_runs
                for m in r["metrics"]]
    outcomes = [(r, *step_outcome(r)) for r in runs]
    return {
        "runs": len(runs),
        "cases": len(cases),
        "passed": sum(1 for v in verdicts if v[3] is True),
        "failed": [v for v in verdicts if v[3] is False],
        "not_gated": sum(1 for v in verdicts if v[3] is None),
        "skipped": len(skipped),
        "not_converged": [(r, text, status) for r, text, status in outcomes if status in ("not converged", "diverged")],
        "roundoff": [(r, text) for r, text, status in outcomes if status == "roundoff"],
    }


def verdict_line(counts):
    """The last line make_report.py prints, for `pbdlab validate` to relay."""
    return (f"verdict: {counts['runs']} runs, {counts['passed']} metrics passed, {len(counts['failed'])} failed, "
            f"{counts['skipped']} skipped, {len(counts['not_converged'])} not converged, "
            f"{len(counts['roundoff'])} at the round-off floor above the target, {counts['not_gated']} not gated")


def plural(n, word, words=None):
    return f"{n} {word if n == 1 else (words or word + 's')}"


def summary_blocks(counts, has_metrics):
    """The verdict at the top of the report: the counts, then every failure, every run that did not
    reach its target, each linked to where the report shows it."""
    failed, not_converged, roundoff = counts["failed"], counts["not_converged"], counts["roundoff"]
    gated = counts["passed"] + len(failed)
    if failed:
        headline = [Bold(f"FAIL: {len(failed)} of {gated} gated metrics fail.")]
    elif has_metrics:
        headline = [Bold(f"PASS: all {gated} gated metrics pass.")]
    else:
        headline = [Bold("No verdict: no run has a metrics.json (written by the validation runner).")]
    allowed = [(r, t) for r, t, _ in not_converged if (gate_metric(r) or {}).get("pass") is True]
    unexpected = [(r, t) for r, t, _ in not_converged if (gate_metric(r) or {}).get("pass") is not True]
    items = [[Link(plural(counts["runs"], "run"), "runs"), f" of {plural(counts['cases'], 'case')}."],
             [Link(f"{plural(counts['passed'], 'metric')} passed", "metrics"), f", {len(failed)} failed, "
              f"{counts['not_gated']} not gated (shown, not judged: a solver against its own reference, or a "
              "run expected to diverge)."],
             [Link(f"{counts['skipped']} skipped", "skipped") if counts["skipped"] else "0 skipped",
              " (case, solver) " + ("pair" if counts["skipped"] == 1 else "pairs")
              + ": the solver rejects the scene; neither passes nor failures."],
             [f"{plural(len(not_converged), 'run')} not converged (some step stopped at its iteration or time budget, stalled "
              f"or diverged): {len(allowed)} as their case allows (a fixed iteration budget per step, or an "
              f"expected divergence), {len(unexpected)} not allowed."],
             [f"{plural(len(roundoff), 'run')} at the round-off floor above the target: the update fell below the positions' "
              "round-off before the relative residual reached the target (the gates accept it; the target was not "
              "reached)."]]
    blocks = [("p", headline, "headline"), ("ul", items, None)]
    if failed:
        blocks.append(("p", [Bold("Failed metrics:")], None))
        blocks.append(("ul", [[Link(case, case_anchor(case)), f" · {r['label']} · ",
                               Link(str(m.get("name", "—")), metric_anchor(case, r["label"], m.get("name", "—"))),
                               f" = {fmt_number(m.get('value'))} (tolerance {fmt_number(m.get('tolerance'))}"
                               + (f" {m['unit']}" if m.get("unit") else "") + ")"]
                              for case, r, m, _ in failed], None))
    if unexpected:
        blocks.append(("p", [Bold("Not converged, and their case does not allow it:")], None))
        blocks.append(("ul", [[Link(r["case"], case_anchor(r["case"])), f" · {r['label']}: {text}"]
                              for r, text in unexpected], None))
    if roundoff:
        blocks.append(("p", [Bold("At the round-off floor above the target:")], None))
        blocks.append(("ul", [[Link(r["case"], case_anchor(r["case"])), f" · {r['label']}: {text}"]
                              for r, text in roundoff], None))
    if allowed:
        by_case = OrderedDict()
        for r, text in allowed:
            by_case.setdefault(r["case"], []).append(r["label"])
        blocks.append(("p", [Bold("Not converged as their case allows"),
                             " (the Runs table says how each run's steps ended):"], None))
        blocks.append(("ul", [[Link(case, case_anchor(case)), ": " + ", ".join(labels)]
                              for case, labels in by_case.items()], None))
    return blocks


def contents_blocks(items):
    """The table of contents: every section, the cases in one line."""
    entries, case_links = [], []
    for heading, _, _ in items:
        if not isinstance(heading, Heading) or heading.anchor in ("summary", "contents"):
            continue
        if heading.anchor.startswith("case-"):
            if not case_links:
                entries.append(None)  # the cases' place in the list
            case_links.append(Link(heading.text[len("Case "):], heading.anchor))
        else:
            entries.append([Link(heading.text, heading.anchor)])
    listed = []
    for e in entries:
        if e is None:
            pieces = [f"Cases ({len(case_links)}): "]
            for i, link in enumerate(case_links):
                pieces += ([", "] if i else []) + [link]
            listed.append(pieces)
        else:
            listed.append(e)
    return [("ul", listed, "contents")]


def build_sections(cases, runs, figures, series, series_figs, step, skipped=(), sweeps=None, sweep_figs=None,
                   case_files=None):
    """The report as (heading, kind, content) items that both writers render the same way; the
    verdict and the contents come first."""
    case_files = case_files or {}
    metric_rows = metric_table(cases)
    counts = verdict_counts(cases, runs, skipped)
    root = common_root(runs)
    layout = validate_layout(runs, root)
    where = (f" Run folders: {root}/<case>/<solver>." if layout
             else f" Directories are relative to {root}." if root else "")
    items = [(Heading("Runs", "runs"), "text",
              "How the steps ended (summary.json's stop_reason): converged = the relative residual reached the "
              "target; stopped at the round-off floor = the update fell below the positions' round-off first (said "
              "when that was above the target: the target was not reached); stopped at the iteration or time "
              "budget; stalled; diverged. Nodes include P2/P3 midside nodes." + where),
             (None, "table", runs_table(cases, root, directories=not layout))]
    if skipped:
        items.append((Heading("Skipped", "skipped"), "text",
                      f"{len(skipped)} (case, solver) pairs were not run: the solver rejects the case's scene "
                      "(Solver::rejectionReason). They are neither passes nor failures."))
        items.append((None, "table", skipped_table(skipped)))
    for case, case_runs in cases.items():
        info = case_files.get(case)
        items.append((Heading(f"Case {case}", case_anchor(case)), "text", case_description(case, case_runs, info)))
        if any(r["metrics"] for r in case_runs):
            items.append((None, "table", case_metric_table(case, case_runs, info)))
        items.append((None, "figures", figures.get(case, [])))
    if series:
        items.append((Heading("Series", "series"), "text",
                      "Validation cases that run one problem on different meshes share a series (the case file's "
                      "`series`). Per metric named *error*: its value against the mesh's node count; each series "
                      "also lists all of its runs' metrics."))
    for name, series_runs in series.items():
        cases_in = ", ".join(OrderedDict.fromkeys(r["case"] for r in series_runs))
        items.append((None, "subheading", f"Series {name} (cases {cases_in})"))
        if series_figs.get(name):
            items.append((None, "figures", series_figs[name]))
        else:
            items.append((None, "text", "No figure: no metric named *error* has values on two or more node counts."))
        items.append((None, "table", series_table(series_runs)))
    sweep_items = sweep_sections(sweeps or {}, sweep_figs or {})
    if sweep_items:
        sweep_items[0] = (Heading("Sweeps", "sweeps"),) + sweep_items[0][1:]
    items += sweep_items
    note = (f"{counts['passed']} passed, {len(counts['failed'])} failed, {counts['not_gated']} not gated. "
            "Every metric of every run; each case's section says what they measure."
            if metric_rows[1] else "No run has a metrics.json (written by the validation runner); no metrics to show.")
    items.append((Heading("Metrics", "metrics"), "text", note))
    if metric_rows[1]:
        items.append((None, "table", metric_rows))
    items.append((Heading("Convergence", "convergence"), "text",
                  "Iterations and solver seconds until the relative residual first reaches each threshold "
                  f"in {'step ' + str(step) if step is not None else 'the last step'} "
                  "(from metrics.json when it records that step, else from iterations.csv). — : never reached."))
    items.append((None, "table", convergence_table(cases, step)))
    items.append((Heading("Machine", "machine"), "table", machine_table(runs)))
    verdict_class = "fail" if counts["failed"] else "pass" if metric_rows[1] else ""
    head = [(Heading("Summary", "summary"), "blocks",
             {"class": f"verdict {verdict_class}".strip(), "blocks": summary_blocks(counts, bool(metric_rows[1]))}),
            (Heading("Contents", "contents"), "blocks", {"class": None, "blocks": contents_blocks(items)})]
    return head + items, counts


def html_blocks(content):
    parts = []
    for kind, body, css in content["blocks"]:
        cls = f' class="{css}"' if css else ""
        if kind == "p":
            parts.append(f"<p{cls}>{html_pieces(body)}</p>\n")
        else:
            parts.append(f"<ul{cls}>" + "".join(f"<li>{html_pieces(li)}</li>" for li in body) + "</ul>\n")
    if content.get("class"):
        return f'<div class="{content["class"]}">\n' + "".join(parts) + "</div>\n"
    return "".join(parts)


def md_blocks(content):
    parts = []
    for kind, body, _ in content["blocks"]:
        if kind == "p":
            parts.append(f"\n{md_pieces(body)}\n")
        else:
            parts.append("\n" + "".join(f"- {md_pieces(li)}\n" for li in body))
    return "".join(parts)


def render_html(items, generated):
    parts = ["<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>pbdlab report</title>",
             f"<style>{CSS}</style></head><body>\n<h1>pbdlab report</h1>\n<p>Generated {generated}.</p>\n"]
    for heading, kind, content in items:
        if heading:
            anchor = f' id="{html.escape(heading.anchor)}"' if isinstance(heading, Heading) else ""
            parts.append(f"<h2{anchor}>{html.escape(str(heading))}</h2>\n")
        if kind == "table":
            parts.append(html_table(*content))
        elif kind == "text":
            parts.append(f"<p>{html.escape(content)}</p>\n")
        elif kind == "blocks":
            parts.append(html_blocks(content))
        elif kind == "subheading":
            parts.append(f"<h3>{html.escape(content)}</h3>\n")
        else:
            if not content:
                parts.append("<p>No iteration data to plot.</p>\n")
            for f in content:
                data = base64.b64encode(f.png).decode("ascii")
                parts.append(f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(f.title)}">'
                             f"<figcaption>{html.escape(f.caption)} "
                             f'(<code>figures/{f.name}.svg</code>)</figcaption></figure>\n')
    parts.append("</body></html>\n")
    return "".join(parts)


def render_markdown(items, generated):
    parts = [f"# pbdlab report\n\nGenerated {generated}.\n"]
    for heading, kind, content in items:
        if heading:
            anchor = f'<a id="{heading.anchor}"></a>\n\n' if isinstance(heading, Heading) else ""
            parts.append(f"\n{anchor}## {heading}\n")
        if kind == "table":
            parts.append("\n" + md_table(*content))
        elif kind == "text":
            parts.append(f"\n{content}\n")
        elif kind == "blocks":
            parts.append(md_blocks(content))
        elif kind == "subheading":
            parts.append(f"\n### {content}\n")
        else:
            if not content:
                parts.append("\nNo iteration data to plot.\n")
            for f in content:
                parts.append(f"\n![{f.title}](figures/{f.name}.png)\n\n{f.caption} "
                             f"([SVG](figures/{f.name}.svg))\n")
    return "".join(parts)


def make_report(run_dirs, out_dir, step=None, skipped_path=None, cases_dir=None):
    """Reads every run first (so a broken input stops before anything is written), then writes.
    Returns the HTML's path and the verdict counts."""
    runs = [load_run(d) for d in run_dirs]
    skipped = read_skipped(skipped_path)
    case_files = read_cases(cases_dir)
    cases = group_by_case(runs)
    figures_dir = os.path.join(out_dir, "figures")
    os.makedirs(figures_dir, exist_ok=True)
    figures = {}
    started = time.monotonic()
    last_said = started
    for index, (case, case_runs) in enumerate(cases.items()):
        # Drawing every case's figures takes about a minute for the fast tier: say where it is.
        if time.monotonic() - last_said >= 5.0:
            last_said = time.monotonic()
            print(f"make_report: figures of case {index + 1}/{len(cases)} ({case}), "
                  f"{last_said - started:.0f} s so far", file=sys.stderr, flush=True)
        colors = colors_for([r["label"] for r in case_runs])
        made = [residual_history_figure(case, case_runs, step, colors, figures_dir),
                own_residuals_figure(case, case_runs, step, colors, figures_dir),
                final_residual_figure(case, case_runs, colors, figures_dir),
                volume_ratio_figure(case, case_runs, colors, figures_dir),
                error_figure(case, case_runs, colors, figures_dir)]
        figures[case] = [f for f in made if f is not None]
    series = group_by_series(runs)
    series_figs = {name: series_figures(name, series_runs, figures_dir) + series_profile_figures(name, series_runs, figures_dir)
                   for name, series_runs in series.items()}
    sweeps = group_by_sweep(runs, skipped)
    sweep_figs = {name: sweep_figure(name, sweep, figures_dir) for name, sweep in sweeps.items()}
    items, counts = build_sections(cases, runs, figures, series, series_figs, step, skipped, sweeps, sweep_figs,
                                   case_files)
    generated = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    write_atomically(os.path.join(out_dir, "report.html"), render_html(items, generated).encode("utf-8"))
    write_atomically(os.path.join(out_dir, "report.md"), render_markdown(items, generated).encode("utf-8"))
    return os.path.join(out_dir, "report.html"), counts


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Build report.html (self-contained) and report.md from pbdlab run directories.")
    parser.add_argument("--out", required=True, help="output directory (created if needed)")
    parser.add_argument("--step", type=int, default=None,
                        help="time step whose iterations are plotted and tabulated (default: each run's last)")
    parser.add_argument("--skipped", default=None, metavar="FILE",
                        help="skipped.json of `pbdlab validate`: runs not made, listed with their reasons")
    parser.add_argument("--cases", default=None, metavar="DIR",
                        help="folder of the validation case files (*.json): each case's description and what "
                             "its metrics measure")
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="directory written by `pbdlab run`")
    args = parser.parse_args(argv)
    try:
        path, counts = make_report(args.run_dirs, args.out, args.step, args.skipped, args.cases)
    except ReportError as e:
        print(f"make_report: error: {e}", file=sys.stderr)
        return 2
    print(f"make_report: wrote {path} and {os.path.join(args.out, 'report.md')}")
    print(verdict_line(counts))  # the last line: `pbdlab validate` relays it
    return 0


if __name__ == "__main__":
    sys.exit(main())
