"""The figures of one case, its runs side by side: residual history, the solvers' own residuals,
final residual per step, volume ratio over time and the error metrics. Each returns a Figure,
or None when there is nothing worth drawing."""
import math

from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from .document import Figure
from .drawing import (MARKERS, STOP_LABELS, STOP_MARKERS, label_short_log_axis, plt, positive_pairs, save_figure,
                      set_step_ticks, spread_is_large)
from .iterations import (chosen_step, final_residual_per_step, rows_of_step, split_substeps, step_stop_reason,
                         target_residual)
from .metrics import error_metric_names, metric_value
from .values import is_number, slug


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


CLOTH_MEASURES = (("edge_stretch_mean", "mean edge stretch l/L - 1"), ("edge_stretch_max", "largest edge stretch"),
                  ("area_ratio", "area ratio A(x) / A(X)"), ("lowest_point", "lowest point [m]"))


def probe_distances(run, reference):
    """Per step of `run`, the RMS over the probes of |u - u_ref| against `reference`'s step of the
    same index (summary.json's probe_displacements); None where either lacks the probes."""
    distances = []
    for k, step in enumerate(run["steps"]):
        ours = step.get("probe_displacements") or {}
        theirs = reference["steps"][k].get("probe_displacements") if k < len(reference["steps"]) else None
        names = [n for n in ours if theirs and n in theirs]
        values = [(ours[n], theirs[n]) for n in names
                  if all(is_number(v) for v in list(ours[n]) + list(theirs[n]))]
        if not values:
            distances.append(None)
            continue
        squares = [sum((a - b) ** 2 for a, b in zip(u, r)) for u, r in values]
        distances.append(math.sqrt(sum(squares) / len(squares)))
    return distances


def cloth_measures_figure(case, case_runs, colors, figures_dir):
    """A cloth's measures at the end of every step (summary.json's edge_stretch_mean,
    edge_stretch_max, area_ratio, lowest_point; PBNG's Fig. 19), one panel each, one line per run,
    with the true relative residual of every step (the original problem's yardstick, whatever the
    solver iterates inside: MPBNG's levels) and, when the case has a run labelled "newton", the
    RMS distance of the probes to Newton's at the same step. Drawn only when some run records the
    measures for two or more steps."""
    recorded = [r for r in case_runs if sum(1 for s in r["steps"] if "edge_stretch_mean" in s) >= 2]
    if not recorded:
        return None
    use_time = all(is_number(s.get("time")) for r in recorded for s in r["steps"])
    reference = next((r for r in recorded if r["label"] == "newton"), None)
    fig, axes = plt.subplots(3, 2, figsize=(11, 9.0), sharex=True)
    panels = list(CLOTH_MEASURES) + [("relative_residual", "true relative residual (original problem)"),
                                     ("probe_distance", "probe RMS distance to newton [m]")]
    for ax, (key, label) in zip(axes.flat, panels):
        for run in recorded:
            if key == "probe_distance":
                if reference is None or run is reference:
                    continue
                values = probe_distances(run, reference)
            else:
                values = [s.get(key) for s in run["steps"]]
            pairs = [((s["time"] if use_time else s.get("step")), v) for s, v in zip(run["steps"], values)]
            pairs = [(x, v) for x, v in pairs if is_number(x) and is_number(v) and math.isfinite(v)]
            if key in ("relative_residual", "probe_distance"):
                pairs = [(x, v) for x, v in pairs if v > 0]
            if pairs:
                ax.plot([x for x, _ in pairs], [v for _, v in pairs], marker="o" if len(pairs) <= 60 else None,
                        ms=3, color=colors[run["label"]], label=run["label"])
        if key in ("relative_residual", "probe_distance") and ax.lines:
            ax.set_yscale("log")
        ax.set_ylabel(label)
        ax.grid(True, which="major", alpha=0.35)
    for ax in axes[-1]:
        ax.set_xlabel("time [s]" if use_time else "time step")
    fig.suptitle(f"{case}: cloth measures over time")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout()
    name = f"{slug(case)}_cloth_measures"
    caption = ("The cloth at the end of every step (summary.json): the mean and the largest stretch l/L - 1 over "
               "its edges, its area over the rest area, its lowest point along -gravity, the step's true relative "
               "residual (the original cloth's, for every solver), and the RMS over the output probes of the "
               "distance to Newton's probes at the same step (when the case runs Newton); one line per run. "
               "Steps without a finite value (a diverged state) are not drawn.")
    return Figure(name, f"{case}: cloth measures over time", caption, save_figure(fig, figures_dir, name))


def frame_time_figure(case, case_runs, colors, figures_dir):
    """Histograms of the solver time of every step, one per run, on shared bins (the multi-layer
    paper's Figs. 9-10: time per frame to a frame stop). Drawn when some run ended steps at its
    own target (stop reason solver_target), where the time per step is what is compared."""
    if not any(s.get("stop_reason") == "solver_target" for r in case_runs for s in r["steps"]):
        return None
    timed = [r for r in case_runs if sum(1 for s in r["steps"] if is_number(s.get("solver_seconds"))) >= 2]
    if not timed:
        return None
    values = {r["label"]: [1e3 * s["solver_seconds"] for s in r["steps"] if is_number(s.get("solver_seconds"))]
              for r in timed}
    largest = max(max(v) for v in values.values())
    bins = [largest * k / 40 for k in range(41)] if largest > 0 else 40
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for run in timed:
        ms = values[run["label"]]
        mean = sum(ms) / len(ms)
        ax.hist(ms, bins=bins, alpha=0.45, color=colors[run["label"]],
                label=f"{run['label']}: mean {mean:.3g} ms, {len(ms)} steps")
    ax.grid(True, which="major", alpha=0.35)
    ax.set_xlabel("solver time of a step [ms]")
    ax.set_ylabel("steps [-]")
    ax.set_title(f"{case}: solver time per step")
    # Below the axes: run labels carry their options and are long.
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    fig.tight_layout()
    name = f"{slug(case)}_frame_time"
    caption = ("How long each step's solve took (summary.json's solver_seconds), one histogram per run on "
               "shared bins: where steps end at the solver's own target (a frame stop), the time a frame "
               "takes is what the runs are compared by. Each run's mean is in the legend.")
    return Figure(name, f"{case}: solver time per step", caption, save_figure(fig, figures_dir, name))


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
