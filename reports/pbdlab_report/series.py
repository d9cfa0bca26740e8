"""Mesh series: validation cases that run one problem on different meshes (the case file's
`series`). Their runs are grouped by series, each error metric is drawn against the node count
(one line per element type and run), profiles behind a metric are drawn on one axes, and the
series table lists every run coarsest first."""
import math
from collections import OrderedDict

from .document import Figure
from .drawing import MARKERS, colors_for, label_short_log_axis, plt, positive_pairs, save_figure
from .metrics import error_metric_names, metric_value
from .values import fmt_number, is_number, slug


def group_by_series(runs):
    """Series in the order they first appear; runs without a series are left out."""
    series = OrderedDict()
    for run in runs:
        if run["series"]:
            series.setdefault(run["series"], []).append(run)
    return series


def element_label(run):
    """The mesh's element type and order (summary.json's mesh), which tell a series' lines apart."""
    kind, order = run["mesh"].get("element_type"), run["mesh"].get("order")
    if kind and is_number(order):
        return f"{kind} (order {order})"
    if kind:
        return str(kind)
    return f"order {order}" if is_number(order) else "element type unknown"


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
