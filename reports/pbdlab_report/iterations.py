"""One run's iteration rows (iterations.csv) and per-step results (summary.json's steps): which
step is shown, where its substeps restart, its target, and when the relative residual first
reaches each threshold. Figures and tables read the iteration series through these."""
import math
from collections import OrderedDict

from .values import is_number, obj


THRESHOLDS = (1e-2, 1e-4, 1e-6)


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


def run_target(run):
    """The run's target relative residual (summary.json's scene_resolved.solver), or None."""
    target = obj(obj(run["summary"].get("scene_resolved")).get("solver")).get("target_relative_residual")
    return target if is_number(target) and target > 0 else None


def target_residual(case_runs):
    """The target relative residual if every run shares one, to draw as a reference line."""
    targets = {obj(obj(r["summary"].get("scene_resolved")).get("solver")).get("target_relative_residual")
               for r in case_runs}
    target = targets.pop() if len(targets) == 1 else None
    return target if is_number(target) and target > 0 else None


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
