"""Tiny hand-written run directories for the tests of the report (not installed): the files
`pbdlab run` and the validation runner write, trimmed to what the report reads, and the
helpers the tests share (running the script as a user would, capturing a figure's lines).

The generator runs as a subprocess where the exit code and messages are what is checked; the
tests that look at a figure's lines call the figure functions in-process."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "make_report.py")

CSV_HEADER = "step,substep,iteration,solver_seconds,residual,relative_residual,energy,line_search_steps\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def summary(solver, options, nodes, seconds, steps):
    """A summary.json with the fields pbdlab run writes (trimmed to what the report reads)."""
    return {
        "scene": "beam",
        "solver": solver,
        "mesh": {"nodes": nodes, "elements": 10, "free_dofs": 3 * nodes},
        "steps": [{"step": s, "iterations": 3, "stop_reason": reason, "relative_residual": rel,
                   "residual": rel * 100, "solver_seconds": seconds / len(steps), "probe_displacements": {}}
                  for s, rel, reason in steps],
        "totals": {"iterations": 3 * len(steps), "solver_seconds": seconds, "all_steps_converged": True},
        "environment": {"cpu": "Test CPU 9000", "omp_threads": 2, "git_commit": "abc1234", "build_type": "Release",
                        "dependencies": {"eigen": "3.4.0", "cholmod": "CHOLMOD 3.0.14"}},
        "scene_resolved": {"solver": {"name": solver, "options": options, "target_relative_residual": 1e-8}},
    }


def iterations_csv(residuals_per_step, dt):
    lines = [CSV_HEADER]
    for step, residuals in enumerate(residuals_per_step, start=1):
        for i, rel in enumerate(residuals):
            # The solver's own column is empty at iteration 0 (a value not given there).
            lines.append(f"{step},1,{i},{i * dt + 1e-6},{rel * 100},{rel},{-i},{'' if i == 0 else 0}\n")
    return "".join(lines)


def series_run(root, case, series, element_type, order, nodes, errors, profiles=None):
    """A validation run of one case of a mesh series: summary.json with the mesh's element type
    and order, metrics.json with the series name, the given metric values and, if given, the
    metrics.json "profiles" (curves behind metrics)."""
    run_dir = os.path.join(root, case)
    document = summary("newton", {}, nodes, 0.1, [(1, 1e-12, "converged")])
    document["mesh"].update(source=f"box, {nodes} nodes", element_type=element_type, order=order)
    write(os.path.join(run_dir, "summary.json"), json.dumps(document))
    write(os.path.join(run_dir, "iterations.csv"), iterations_csv([[1, 1e-3, 1e-12]], 0.01))
    metrics = [{"name": n, "value": v, "tolerance": 1, "unit": "relative"} for n, v in errors.items()]
    metrics.append({"name": "final_relative_residual", "value": 1e-12, "tolerance": 1e-8})
    document = {"case": case, "solver": "newton", "label": "newton", "metrics": metrics}
    if series:
        document["series"] = series
    if profiles is not None:
        document["profiles"] = profiles
    write(os.path.join(run_dir, "metrics.json"), json.dumps(document))
    return run_dir


def series_runs(root):
    """Three cases of series "bend" (two P1 meshes, one P2), given out of node order, and
    "single", a series of one case."""
    return [series_run(root, "bend_p1_fine", "bend", "tet4", 1, 225, {"l2_error": 0.05, "max_error": 0.08}),
            series_run(root, "bend_p2_coarse", "bend", "tet10", 2, 153, {"l2_error": 0.01, "max_error": 0.02}),
            series_run(root, "bend_p1_coarse", "bend", "tet4", 1, 45, {"l2_error": 0.2, "max_error": 0.3}),
            series_run(root, "lonely", "single", "hex8", 1, 27, {"l2_error": 0.1})]


def sweep_run(root, case, solver, sweep, values, diverged_at=None, fail=(), reference=False):
    """A validation run of one sweep point: metrics.json with the case's `sweep` and the three
    quantities of the sweep tables (by metric type), summary.json with a diverged step if asked."""
    run_dir = os.path.join(root, "sweep_runs", case, solver)
    steps = [(1, 0.1, "iteration_budget"), (2, 0.2, "iteration_budget")]
    if diverged_at:
        steps = steps[:diverged_at - 1] + [(diverged_at, 1e3, "diverged")]
    document = summary(solver, {}, 4096, 0.5, steps)
    document["totals"]["diverged"] = diverged_at is not None
    write(os.path.join(run_dir, "summary.json"), json.dumps(document))
    write(os.path.join(run_dir, "iterations.csv"), iterations_csv([[1, 0.5, 0.1], [1, 0.5, 0.2]], 0.01))
    types = {"distance": "reference_rms_error", "volume": "volume_ratio_error", "residual": "final_relative_residual"}
    metrics = [{"name": f"my_{key}", "type": types[key], "value": None if diverged_at else value, "tolerance": 1.0,
                "pass": key not in fail and not diverged_at}
               for key, value in values.items()]
    if reference:  # Newton against its own solution, as the runner writes it
        metrics[0].update({"pass": None, "note": "not applicable: the reference is this solver's own solution"})
    write(os.path.join(run_dir, "metrics.json"),
          json.dumps({"case": case, "solver": solver, "label": solver, "sweep": sweep, "metrics": metrics}))
    return run_dir


def sweep_runs(root):
    """Sweep "iters" over 160, 10, 40 (given out of order), the 40 case also the 0.3 point of
    sweep "nu" (a list of two sweeps), and nu 0.49 where xpbd diverges at step 2. newton and
    xpbd run everywhere, pbd only at 10 and 40 iterations; xpbd_qs is skipped (skipped.json).
    Returns the run directories and the skipped.json path."""
    def it(n):
        return {"name": "iters", "parameter": "iterations per frame", "value": n}
    nu = {"name": "nu", "parameter": "Poisson ratio", "value": 0.3}
    run_dirs = []
    for case, sweep, scale in (("it160", it(160), 0.01), ("it10", it(10), 1.0), ("it40", [it(40), nu], 0.1),
                               ("nu049", {"name": "nu", "parameter": "Poisson ratio", "value": 0.49}, 0.5)):
        run_dirs.append(sweep_run(root, case, "newton", sweep,
                                  {"distance": 0.0, "volume": 0.002, "residual": 1e-12}, reference=True))
        run_dirs.append(sweep_run(root, case, "xpbd", sweep,
                                  {"distance": 0.2 * scale, "volume": 0.03 * scale, "residual": 0.5 * scale},
                                  diverged_at=2 if case == "nu049" else None,
                                  fail=("residual",) if case == "it10" else ()))
        if case in ("it10", "it40"):
            run_dirs.append(sweep_run(root, case, "pbd", sweep,
                                      {"distance": 0.4 * scale, "volume": 0.05 * scale, "residual": 0.9 * scale}))
    skipped = os.path.join(root, "skipped.json")
    write(skipped, json.dumps([{"case": c, "solver": "xpbd_qs", "reason": "quasistatic only"}
                               for c in ("it160", "it10", "it40", "nu049")]))
    return run_dirs, skipped


def capture_figures(test, module):
    """Makes `module` (a figure module) record each saved figure's lines (label -> (x, y)), x
    scale and legend texts, then save it; undone when `test` ends, as the modules are shared between tests."""
    plotted, save = {}, module.save_figure

    def capture(fig, figures_dir, name):
        ax = fig.axes[0]
        plotted[name] = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata()))
                         for line in ax.get_lines()}
        plotted[name + ":xscale"] = ax.get_xscale()
        legend = ax.get_legend()
        plotted[name + ":legend"] = [t.get_text() for t in legend.get_texts()] if legend else []
        return save(fig, figures_dir, name)

    module.save_figure = capture
    test.addCleanup(setattr, module, "save_figure", save)
    return plotted


def run_script(*args, cwd=None, env=None, timeout=240):
    """reports/make_report.py run as pbdlab runs it: its exit code, stdout and stderr."""
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env=env)


class TwoRunsTestCase(unittest.TestCase):
    """Two runs of case "beam": run A (Newton-like) with a metrics.json from the validation runner
    (one PASS, one FAIL, recorded convergence); run B (another solver, options, no metrics.json),
    whose step 2 stops above the target at its iteration budget. self.out is the report folder."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        root = self.tmp.name
        self.run_a = os.path.join(root, "beam_newton")
        write(os.path.join(self.run_a, "summary.json"),
              json.dumps(summary("newton", {}, 40, 0.02, [(1, 1e-12, "converged"), (2, 1e-13, "converged")])))
        write(os.path.join(self.run_a, "iterations.csv"),
              iterations_csv([[1, 1e-1, 1e-3, 1e-7, 1e-12], [1, 1e-2, 1e-5, 1e-9, 1e-13]], 0.002))
        write(os.path.join(self.run_a, "metrics.json"), json.dumps({
            "case": "beam", "solver": "newton", "label": "newton",
            "metrics": [
                {"name": "tip_deflection_error", "value": 0.0123, "tolerance": 0.02, "kind": "accuracy",
                 "unit": "relative", "pass": True, "description": "tip vs analytic"},
                {"name": "volume_ratio_error", "value": 0.5, "tolerance": 0.01, "pass": False},
            ],
            "convergence": {"step": 2, "thresholds": [1e-2, 1e-4, 1e-6],
                            "iterations_to": [1, 2, 3], "seconds_to": [0.002, 0.004, None]},
        }))
        self.run_b = os.path.join(root, "beam_slow")
        write(os.path.join(self.run_b, "summary.json"),
              json.dumps(summary("slow_solver", {"substeps": 10}, 40, 1.5,
                                 [(1, 5e-9, "converged"), (2, 3e-5, "iteration_budget")])))
        write(os.path.join(self.run_b, "iterations.csv"),
              iterations_csv([[1, 0.5, 0.1, 1e-3, 1e-6, 5e-9], [1, 0.3, 0.05, 3e-3, 3e-5]], 0.2))
        self.out = os.path.join(root, "report")

    def generate(self, *run_dirs, extra=()):
        return run_script("--out", self.out, *extra, *run_dirs)
