"""The verdict: whether a metric passes, how a run's steps ended (in words and as a status), and
the counts behind the report's summary and its last printed line, `verdict: ...`, which
`pbdlab validate` relays (apps/validation_commands.cpp). The line's field order is fixed; new
fields are appended."""
import math
from collections import OrderedDict

from .iterations import run_target
from .values import fmt_number, is_number, obj


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


def verdict(p):
    return {True: "PASS", False: "FAIL", None: "n/a"}[p]


# How a step ended (summary.json's stop_reason), in words. "converged" is the only reason that
# means the target relative residual was reached.
STOP_WORDS = OrderedDict([("converged", "converged"), ("roundoff_floor", "stopped at the round-off floor"),
                          ("iteration_budget", "stopped at the iteration budget"),
                          ("time_budget", "stopped at the time budget"),
                          ("solver_target", "stopped at the solver's own target (not the true residual's)"),
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
