"""Reading the report's inputs: run directories (summary.json, iterations.csv, metrics.json),
the validation case files of --cases and validate's skipped.json. Everything is checked here, so
a broken input stops the report with a ReportError naming the file before anything is drawn or
written; the rest of the report reads the run dictionaries load_run returns."""
import csv
import json
import math
import os
import re
from collections import OrderedDict

from .values import fmt_number, is_number, obj


class ReportError(Exception):
    """An input the report cannot be built from; the message names the file or directory."""


REQUIRED_COLUMNS = ("step", "iteration", "solver_seconds", "relative_residual")


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
            "paper": document.get("paper") if isinstance(document.get("paper"), str) else "model",
            "claim": document.get("claim") if isinstance(document.get("claim"), dict) else None,
        }
    return cases


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
