"""The report's tables of runs: how each run's steps ended, every metric (per case with its
definition, and all together), the iterations and seconds to each threshold, and the skipped
pairs. A table is (header, rows[, meta]); the writers render it."""
import os

from .document import Link, Path, case_anchor, metric_anchor
from .iterations import THRESHOLDS, chosen_step, convergence_row
from .metrics import metric_definition
from .values import fmt_number, fmt_seconds, obj
from .verdict import metric_pass, step_outcome, verdict


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


def skipped_table(skipped):
    return (["case", "solver", "why it was not run"], [[e["case"], e["solver"], e["reason"]] for e in skipped])
