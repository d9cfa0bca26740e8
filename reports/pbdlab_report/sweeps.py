"""Parameter sweeps: validation cases that are points of one sweep (the case file's `sweep`).
Their runs are grouped by sweep, the distance to Newton is drawn against the swept value (one
line per solver), and the Sweeps section gives per value and solver the distance, the volume
error and the true residual, with the skipped pairs and why."""
import math
from collections import OrderedDict

from matplotlib.ticker import FuncFormatter, NullFormatter

from .document import Figure
from .drawing import MARKERS, colors_for, label_short_log_axis, plt, save_figure
from .metrics import is_reference, metric_of_type
from .values import fmt_number, is_number, slug
from .verdict import metric_pass


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


# The sweep tables' three columns per solver: the first metric of these types (metrics.json's
# `type`, else its name) in each run.
SWEEP_QUANTITIES = (("distance to Newton", ("reference_rms_error", "reference_max_error")),
                    ("volume error", ("volume_ratio_error",)),
                    ("true residual", ("final_relative_residual",)))


SWEEP_SHORT = {"distance to Newton": "distance", "volume error": "volume", "true residual": "residual"}


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
