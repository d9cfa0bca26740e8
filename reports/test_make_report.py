"""Tests of reports/make_report.py on two tiny hand-written run directories.

Run with: /usr/bin/python3 -m unittest discover -s reports -p "test_*.py"
The generator runs as a subprocess, as a user would run it, so its exit code and messages
are what is checked.
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_report.py")

CSV_HEADER = "step,substep,iteration,solver_seconds,residual,relative_residual,energy,line_search_steps\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


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


def load_module():
    spec = importlib.util.spec_from_file_location("make_report", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def capture_figures(module):
    """Makes `module` record each saved figure's lines (label -> (x, y)) and x scale, then save it."""
    plotted, save = {}, module.save_figure

    def capture(fig, figures_dir, name):
        ax = fig.axes[0]
        plotted[name] = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata()))
                         for line in ax.get_lines()}
        plotted[name + ":xscale"] = ax.get_xscale()
        return save(fig, figures_dir, name)

    module.save_figure = capture
    return plotted


class MakeReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        root = self.tmp.name
        # Run A: Newton-like, with a metrics.json from the validation runner (one PASS, one FAIL).
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
        # Run B: another solver, no metrics.json; step 2 stops above the target.
        self.run_b = os.path.join(root, "beam_slow")
        write(os.path.join(self.run_b, "summary.json"),
              json.dumps(summary("slow_solver", {"substeps": 10}, 40, 1.5,
                                 [(1, 5e-9, "converged"), (2, 3e-5, "iteration_budget")])))
        write(os.path.join(self.run_b, "iterations.csv"),
              iterations_csv([[1, 0.5, 0.1, 1e-3, 1e-6, 5e-9], [1, 0.3, 0.05, 3e-3, 3e-5]], 0.2))
        self.out = os.path.join(root, "report")

    def generate(self, *run_dirs, extra=()):
        return subprocess.run([sys.executable, SCRIPT, "--out", self.out, *extra, *run_dirs],
                              capture_output=True, text=True, timeout=240)

    def test_report_from_two_runs(self):
        result = self.generate(self.run_a, self.run_b)
        self.assertEqual(result.returncode, 0, result.stderr)
        html_path = os.path.join(self.out, "report.html")
        md_path = os.path.join(self.out, "report.md")
        self.assertTrue(os.path.isfile(html_path))
        self.assertTrue(os.path.isfile(md_path))
        with open(html_path, encoding="utf-8") as f:
            page = f.read()
        with open(md_path, encoding="utf-8") as f:
            markdown = f.read()

        self.assertIn('<img src="data:image/png;base64,', page)
        # Metric table: one row per metric, with the run's label and its verdict.
        rows = re.findall(r"<tr>(.*?)</tr>", page, flags=re.S)
        deflection = [r for r in rows if "tip_deflection_error" in r]
        volume = [r for r in rows if "volume_ratio_error" in r]
        self.assertEqual(len(deflection), 1)
        self.assertEqual(len(volume), 1)
        self.assertIn(">PASS<", deflection[0])
        self.assertIn(">newton<", deflection[0])
        self.assertIn(">FAIL<", volume[0])
        self.assertIn("| beam | newton | volume_ratio_error | 0.5 | 0.01 | — | FAIL |", markdown)
        # The run without metrics.json is labelled by solver and options, and its convergence
        # row is computed from iterations.csv (last step: 3e-3 at iteration 3, 3e-5 at 4, never 1e-6).
        self.assertIn("slow_solver substeps=10", page)
        self.assertIn("| beam | slow_solver substeps=10 | 2 | 3 | 4 | — | 0.6 | 0.8 | — | iterations.csv |", markdown)
        self.assertIn("| beam | newton | 2 | 1 | 2 | 3 | 0.002 | 0.004 | — | metrics.json |", markdown)
        # Machine section.
        for text in ("Test CPU 9000", "abc1234", "Release", "CHOLMOD 3.0.14"):
            self.assertIn(text, page)

        figures = os.path.join(self.out, "figures")
        # One run with error metrics: single dots on log-log axes are not drawn (the case's table has them).
        self.assertFalse(os.path.exists(os.path.join(figures, "beam_errors.png")))
        for name in ("beam_residual_history", "beam_final_residual_per_step"):
            for ext in ("png", "svg"):
                path = os.path.join(figures, f"{name}.{ext}")
                self.assertTrue(os.path.isfile(path), path)
                self.assertGreater(os.path.getsize(path), 1000, path)
            with open(os.path.join(figures, f"{name}.png"), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            self.assertIn(f"](figures/{name}.png)", markdown)
        self.assertEqual([n for n in os.listdir(self.out) if ".tmp" in n], [])
        # Runs without a series get no series section.
        self.assertNotIn("Series", markdown)
        self.assertEqual([n for n in os.listdir(figures) if n.startswith("series_")], [])

    def series_runs(self):
        """Three cases of series "bend" (two P1 meshes, one P2), given out of node order, and
        "single", a series of one case."""
        root = self.tmp.name
        return [series_run(root, "bend_p1_fine", "bend", "tet4", 1, 225, {"l2_error": 0.05, "max_error": 0.08}),
                series_run(root, "bend_p2_coarse", "bend", "tet10", 2, 153, {"l2_error": 0.01, "max_error": 0.02}),
                series_run(root, "bend_p1_coarse", "bend", "tet4", 1, 45, {"l2_error": 0.2, "max_error": 0.3}),
                series_run(root, "lonely", "single", "hex8", 1, 27, {"l2_error": 0.1})]

    def test_series_figures_and_tables(self):
        result = self.generate(*self.series_runs())
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            markdown = f.read()
        with open(os.path.join(self.out, "report.html"), encoding="utf-8") as f:
            page = f.read()
        figures = os.path.join(self.out, "figures")
        # One figure per metric named *error*; a series of one mesh size gets none.
        self.assertEqual(sorted(n for n in os.listdir(figures) if n.startswith("series_")),
                         ["series_bend_l2_error.png", "series_bend_l2_error.svg",
                          "series_bend_max_error.png", "series_bend_max_error.svg"])
        for name in ("series_bend_l2_error", "series_bend_max_error"):
            self.assertGreater(os.path.getsize(os.path.join(figures, f"{name}.png")), 1000)
            self.assertIn(f"](figures/{name}.png)", markdown)
        self.assertIn("### Series bend (cases bend_p1_fine, bend_p2_coarse, bend_p1_coarse)", markdown)
        self.assertIn("<h3>Series single (cases lonely)</h3>", page)
        self.assertIn("No figure", markdown)
        # The series table lists the runs coarsest first, with every metric's value.
        header = ("| case | mesh source | element type | nodes | run | l2_error | max_error "
                  "| final_relative_residual |")
        self.assertIn(header, markdown)
        rows = ["| bend_p1_coarse | box, 45 nodes | tet4 (order 1) | 45 | newton | 0.2 | 0.3 | 1e-12 |",
                "| bend_p2_coarse | box, 153 nodes | tet10 (order 2) | 153 | newton | 0.01 | 0.02 | 1e-12 |",
                "| bend_p1_fine | box, 225 nodes | tet4 (order 1) | 225 | newton | 0.05 | 0.08 | 1e-12 |"]
        positions = [markdown.find(row) for row in rows]
        self.assertTrue(all(p > markdown.find(header) for p in positions), positions)
        self.assertEqual(positions, sorted(positions))
        self.assertIn("| lonely | box, 27 nodes | hex8 (order 1) | 27 | newton | 0.1 | 1e-12 |", markdown)
        self.assertIn("<td>tet10 (order 2)</td>", page)

    def test_series_points_are_in_node_order(self):
        # In-process, to look at the plotted lines before the figure is saved and closed; only the
        # series figures are drawn (matplotlib is slow on a busy machine).
        spec = importlib.util.spec_from_file_location("make_report", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        plotted = capture_figures(module)
        os.makedirs(self.out)
        module.series_figures("bend", [module.load_run(d) for d in self.series_runs()[:3]], self.out)
        self.assertEqual(plotted["series_bend_l2_error"], {
            "tet4 (order 1) · newton": ([45, 225], [0.2, 0.05]),
            "tet10 (order 2) · newton": ([153], [0.01]),
        })
        self.assertEqual(plotted["series_bend_max_error"]["tet4 (order 1) · newton"], ([45, 225], [0.3, 0.08]))

    def test_series_profiles_are_drawn_per_run(self):
        # The torsion metric's curve (the high-order paper's Fig. 5): one line per run of the series,
        # in a figure of its own; a malformed profile stops the report naming the file.
        root = os.path.join(self.tmp.name, "profiles")

        def curve(scale):
            return [{"metric": "angle_deviation", "x": [0, 1, 2], "y": [0, scale, 0],
                     "x_label": "x [m]", "y_label": "deviation [degrees]"}]

        runs = [series_run(root, "twist_p1", "twist", "tet4", 1, 45, {"l2_error": 0.2}, curve(6.0)),
                series_run(root, "twist_p2", "twist", "tet10", 2, 153, {"l2_error": 0.01}, curve(0.7))]
        spec = importlib.util.spec_from_file_location("make_report", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        plotted = capture_figures(module)
        os.makedirs(self.out)
        figures = module.series_profile_figures("twist", [module.load_run(d) for d in runs], self.out)
        self.assertEqual([f.name for f in figures], ["series_twist_angle_deviation_profile"])
        lines = {k: v for k, v in plotted["series_twist_angle_deviation_profile"].items() if not k.startswith("_")}
        self.assertEqual(lines, {"tet4 (order 1) · twist_p1": ([0, 1, 2], [0, 6.0, 0]),
                                 "tet10 (order 2) · twist_p2": ([0, 1, 2], [0, 0.7, 0])})
        result = self.generate(*runs)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            self.assertIn("](figures/series_twist_angle_deviation_profile.png)", f.read())
        bad = series_run(root, "twist_bad", "twist", "tet4", 1, 45, {"l2_error": 0.2},
                         [{"metric": "angle_deviation", "x": [0, 1], "y": [0]}])
        result = self.generate(bad)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("twist_bad", result.stderr)
        self.assertIn("profiles[0]", result.stderr)

    def test_step_option_and_runs_without_metrics(self):
        result = self.generate(self.run_b, extra=("--step", "1"))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            markdown = f.read()
        self.assertIn("no metrics to show", markdown)
        # Step 1 reaches 1e-2 at iteration 3 and both 1e-4 and 1e-6 at iteration 4 (0.2 s each).
        self.assertIn("| beam | slow_solver substeps=10 | 1 | 3 | 4 | 4 | 0.6 | 0.8 | 0.8 | iterations.csv |", markdown)
        self.assertTrue(os.path.isfile(os.path.join(self.out, "figures", "beam_residual_history.png")))
        self.assertFalse(os.path.exists(os.path.join(self.out, "figures", "beam_errors.png")))

    def test_solvers_own_residuals_get_a_figure_when_logged(self):
        # Without primal/secondary columns: no figure. With them (an XPBD-like run): one.
        result = self.generate(self.run_a, self.run_b)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "figures", "beam_own_residuals.png")))
        run_c = os.path.join(self.tmp.name, "beam_xpbd")
        write(os.path.join(run_c, "summary.json"),
              json.dumps(summary("xpbd", {}, 40, 0.1, [(1, 0.2, "iteration_budget")])))
        rows = ["1,1,%d,%g,%g,%g,1.0,%g,%s" % (k, 0.01 * k, 0.2, 0.2, 10.0 ** -k, "" if k == 0 else 0.5)
                for k in range(5)]
        write(os.path.join(run_c, "iterations.csv"),
              "step,substep,iteration,solver_seconds,residual,relative_residual,energy,secondary_residual,"
              "primal_residual\n" + "\n".join(rows) + "\n")
        result = self.generate(self.run_a, run_c)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(os.path.isfile(os.path.join(self.out, "figures", "beam_own_residuals.png")))
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            self.assertIn("the solvers' own residuals", f.read())

    def test_skipped_runs_are_listed_with_their_reason(self):
        skipped = os.path.join(self.tmp.name, "skipped.json")
        write(skipped, json.dumps([{"case": "beam", "solver": "xpbd", "reason": "xpbd needs backward_euler"}]))
        result = self.generate(self.run_b, extra=("--skipped", skipped))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            markdown = f.read()
        self.assertIn("## Skipped", markdown)
        self.assertIn("| beam | xpbd | xpbd needs backward_euler |", markdown)
        write(skipped, json.dumps([{"case": "beam"}]))
        result = self.generate(self.run_b, extra=("--skipped", skipped))
        self.assertEqual(result.returncode, 2)
        self.assertIn("skipped.json: malformed", result.stderr)

    def sweep_runs(self):
        """Sweep "iters" over 160, 10, 40 (given out of order), the 40 case also the 0.3 point of
        sweep "nu" (a list of two sweeps), and nu 0.49 where xpbd diverges at step 2. newton and
        xpbd run everywhere, pbd only at 10 and 40 iterations; xpbd_qs is skipped (skipped.json)."""
        root = self.tmp.name

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

    def test_sweep_tables_list_every_value_and_solver(self):
        run_dirs, skipped = self.sweep_runs()
        result = self.generate(*run_dirs, extra=("--skipped", skipped))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            markdown = f.read()
        with open(os.path.join(self.out, "report.html"), encoding="utf-8") as f:
            page = f.read()
        self.assertIn("## Sweeps", markdown)
        self.assertIn("### Sweep iters: iterations per frame (cases it10, it40, it160)", markdown)
        self.assertIn("<h3>Sweep nu: Poisson ratio (cases it40, nu049)</h3>", page)
        quantities = ["distance to Newton", "volume error", "true residual"]
        header = "| iterations per frame | case | " + " | ".join(
            f"{s}: {q}" for s in ("newton", "xpbd", "pbd", "xpbd_qs") for q in quantities) + " |"
        self.assertIn(header, markdown)
        rows = ["| 10 | it10 | reference | 0.002 | 1e-12 | 0.2 | 0.03 | 0.5 FAIL | 0.4 | 0.05 | 0.9 "
                "| skipped | skipped | skipped |",
                "| 40 | it40 | reference | 0.002 | 1e-12 | 0.02 | 0.003 | 0.05 | 0.04 | 0.005 | 0.09 "
                "| skipped | skipped | skipped |",
                "| 160 | it160 | reference | 0.002 | 1e-12 | 0.002 | 0.0003 | 0.005 | not run | not run | not run "
                "| skipped | skipped | skipped |"]
        positions = [markdown.find(row) for row in rows]
        self.assertTrue(all(p > markdown.find(header) for p in positions), positions)
        self.assertEqual(positions, sorted(positions))
        self.assertIn("| 0.49 | nu049 | reference | 0.002 | 1e-12 | diverged (step 2) | diverged (step 2) | diverged (step 2) "
                      "| not run | not run | not run | skipped | skipped | skipped |", markdown)
        self.assertIn("xpbd_qs skipped (it10, it40, it160): quasistatic only", markdown)
        self.assertIn("<td>diverged (step 2)</td>", page)
        figures = os.path.join(self.out, "figures")
        self.assertEqual(sorted(n for n in os.listdir(figures) if n.startswith("sweep_")),
                         ["sweep_iters_distance_to_newton.png", "sweep_iters_distance_to_newton.svg",
                          "sweep_nu_distance_to_newton.png", "sweep_nu_distance_to_newton.svg"])
        self.assertIn("](figures/sweep_iters_distance_to_newton.png)", markdown)
        # Newton's zero distance is the reference itself: named, not counted as an undrawable value.
        self.assertIn("Not drawn: newton (the reference itself).", markdown)
        self.assertNotIn("cannot be drawn on a log axis (see the table)", markdown.split("## Sweeps")[1].split("## Metrics")[0])
        # Runs of a sweep are still reported per case as before.
        self.assertIn("## Case it10", markdown)

    def test_sweep_figure_draws_one_line_per_solver_in_parameter_order(self):
        module = load_module()
        plotted = capture_figures(module)
        os.makedirs(self.out)
        run_dirs, skipped = self.sweep_runs()
        runs = [module.load_run(d) for d in run_dirs]
        sweeps = module.group_by_sweep(runs, module.read_skipped(skipped))
        for name, sweep in sweeps.items():
            module.sweep_figure(name, sweep, self.out)
        # Newton's distance is 0 (not drawable on a log axis); iterations span 16x: log axis.
        lines = plotted["sweep_iters_distance_to_newton"]
        self.assertEqual(plotted["sweep_iters_distance_to_newton:xscale"], "log")
        self.assertEqual(lines["xpbd"], ([10, 40, 160], [0.2 * 1.0, 0.2 * 0.1, 0.2 * 0.01]))
        self.assertEqual(lines["pbd"], ([10, 40], [0.4 * 1.0, 0.4 * 0.1]))
        self.assertNotIn("newton", lines)
        # nu: xpbd diverged at 0.49: only its 0.3 point is a line point; the x is drawn apart.
        lines = plotted["sweep_nu_distance_to_newton"]
        self.assertEqual(lines["xpbd"], ([0.3], [0.2 * 0.1]))  # two values: a linear axis
        self.assertIn("diverged (colour: solver)", lines)
        # Uneven gaps (0.3, 0.45, 0.49, 0.499) go on evenly spaced ranks.
        self.assertEqual(module.sweep_axis([0.3, 0.45, 0.49, 0.499])[0], "even")
        self.assertEqual(module.sweep_axis([0.3, 0.45, 0.49, 0.499])[1][0.499], 3)
        self.assertEqual(module.sweep_axis([0.1, 0.2, 0.3])[0], "linear")

    def test_malformed_sweep_names_the_file(self):
        run_dirs, _ = self.sweep_runs()
        path = os.path.join(run_dirs[0], "metrics.json")
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
        document["sweep"] = {"name": "iters", "parameter": "iterations per frame", "value": "ten"}
        write(path, json.dumps(document))
        result = self.generate(*run_dirs)
        self.assertEqual(result.returncode, 2)
        self.assertIn(path, result.stderr)
        self.assertIn("sweep", result.stderr)

    def test_volume_ratio_figure_only_when_recorded(self):
        result = self.generate(self.run_a, self.run_b)
        self.assertEqual(result.returncode, 0, result.stderr)
        figure = os.path.join(self.out, "figures", "beam_volume_ratio.png")
        self.assertFalse(os.path.exists(figure))
        # Run B's steps carry volume_ratio (with time); a null (diverged) value is left out.
        path = os.path.join(self.run_b, "summary.json")
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
        document["steps"][0].update(time=0.01, volume_ratio=0.99)
        document["steps"][1].update(time=0.02, volume_ratio=None)
        write(path, json.dumps(document))
        module = load_module()
        plotted = capture_figures(module)
        os.makedirs(os.path.join(self.out, "figures"), exist_ok=True)
        runs = [module.load_run(d) for d in (self.run_a, self.run_b)]
        colors = module.colors_for([r["label"] for r in runs])
        made = module.volume_ratio_figure("beam", runs, colors, os.path.join(self.out, "figures"))
        self.assertIsNotNone(made)
        self.assertIn("not drawn: slow_solver substeps=10", made.caption)
        self.assertEqual(plotted["beam_volume_ratio"]["slow_solver substeps=10"], ([0.01], [0.99]))
        self.assertNotIn("newton", plotted["beam_volume_ratio"])  # run A records no volume_ratio
        result = self.generate(self.run_a, self.run_b)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(os.path.isfile(figure))
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            self.assertIn("](figures/beam_volume_ratio.png)", f.read())

    def test_missing_summary_names_the_directory(self):
        broken = os.path.join(self.tmp.name, "not_a_run")
        write(os.path.join(broken, "iterations.csv"), CSV_HEADER + "1,1,0,0,1,1,0,0\n")
        result = self.generate(self.run_a, broken)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn(broken, result.stderr)
        self.assertIn("summary.json", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "report.html")))

    def test_malformed_iterations_csv_names_the_file(self):
        write(os.path.join(self.run_b, "iterations.csv"), "step,iteration\n1,0\n")
        result = self.generate(self.run_a, self.run_b)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn(os.path.join(self.run_b, "iterations.csv"), result.stderr)
        self.assertIn("relative_residual", result.stderr)


class ReportContentTest(unittest.TestCase):
    """The verdict, the contents, the case descriptions and metric definitions, the stop reasons in
    words and the machine table, on one report built once (matplotlib is slow on a busy machine):
    run A passes one metric and fails one, run B stops step 2 at its iteration budget, run C ends at
    the round-off floor above its target, run D at the round-off floor below it; one pair is skipped;
    the case file of "beam" gives its description and its metrics' parameters."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = cls.tmp.name
        def summary_of(scene, *args):
            document = summary(*args)
            document["scene"] = scene
            document["environment"]["threading"] = {"omp_threads": 2, "omp_wait_policy": "passive",
                                                    "blas_threads": None}
            return json.dumps(document)

        run_a = os.path.join(root, "runs", "beam", "newton")
        write(os.path.join(run_a, "summary.json"),
              summary_of("beam", "newton", {}, 40, 0.02, [(1, 1e-12, "converged"), (2, 1e-13, "converged")]))
        write(os.path.join(run_a, "iterations.csv"), iterations_csv([[1, 1e-3, 1e-12], [1, 1e-5, 1e-13]], 0.002))
        write(os.path.join(run_a, "metrics.json"), json.dumps({
            "case": "beam", "solver": "newton", "label": "newton",
            "metrics": [
                {"name": "tip_error", "type": "probe_error", "value": 0.0123, "tolerance": 0.02, "unit": "relative",
                 "pass": True},
                {"name": "volume_change", "type": "volume_ratio_error", "value": 0.5, "tolerance": 0.01,
                 "unit": "absolute", "pass": False},
            ]}))
        run_b = os.path.join(root, "runs", "beam", "xpbd")
        write(os.path.join(run_b, "summary.json"),
              summary_of("beam", "xpbd", {}, 40, 1.5, [(1, 5e-9, "converged"), (2, 3e-5, "iteration_budget")]))
        write(os.path.join(run_b, "iterations.csv"), iterations_csv([[1, 0.1, 5e-9], [1, 0.05, 3e-5]], 0.2))
        write(os.path.join(run_b, "metrics.json"), json.dumps({
            "case": "beam", "solver": "xpbd", "label": 'xpbd {"compliance":1e-06,"sqrt_psi":true}', "metrics": []}))
        run_c = os.path.join(root, "runs", "cantilever", "newton")
        write(os.path.join(run_c, "summary.json"),
              summary_of("cantilever", "newton", {}, 945, 0.1, [(1, 2.35e-7, "roundoff_floor")]))
        write(os.path.join(run_c, "iterations.csv"), iterations_csv([[1, 1e-3, 2.35e-7]], 0.01))
        run_d = os.path.join(root, "runs", "cube", "newton")
        write(os.path.join(run_d, "summary.json"),
              summary_of("cube", "newton", {}, 27, 0.1, [(1, 1e-12, "converged"), (2, 5e-9, "roundoff_floor")]))
        write(os.path.join(run_d, "iterations.csv"), iterations_csv([[1, 1e-12], [1, 5e-9]], 0.01))
        cls.cases = os.path.join(root, "cases")
        write(os.path.join(cls.cases, "beam.json"), json.dumps({
            "name": "beam", "description": "A clamped beam sags under gravity; tip against Timoshenko.",
            "metrics": [{"name": "tip_error", "type": "probe_error", "probe": "tip", "component": 1,
                         "expected": -1.5e-3, "relative": True, "tolerance": 0.02, "measured": "x"},
                        {"name": "volume_change", "type": "volume_ratio_error", "tolerance": 0.01, "measured": "x"}]}))
        write(os.path.join(cls.cases, "README.txt"), "not a case")
        cls.skipped = os.path.join(root, "skipped.json")
        write(cls.skipped, json.dumps([{"case": "beam", "solver": "pbd", "reason": "pbd needs backward_euler"}]))
        cls.runs = [run_a, run_b, run_c, run_d]
        cls.out = os.path.join(root, "report")
        cls.result = subprocess.run([sys.executable, SCRIPT, "--out", cls.out, "--skipped", cls.skipped,
                                     "--cases", cls.cases, *cls.runs], capture_output=True, text=True, timeout=280)
        with open(os.path.join(cls.out, "report.html"), encoding="utf-8") as f:
            cls.page = f.read()
        with open(os.path.join(cls.out, "report.md"), encoding="utf-8") as f:
            cls.markdown = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)

    def test_verdict_counts_come_first_and_last(self):
        # The terminal: the last stdout line, for `pbdlab validate` to relay.
        self.assertEqual(self.result.stdout.strip().splitlines()[-1],
                         "verdict: 4 runs, 1 metrics passed, 1 failed, 1 skipped, 1 not converged, "
                         "1 at the round-off floor above the target, 0 not gated")
        # The page: the summary is the first section, before the contents and the runs.
        summary_at, contents_at, runs_at = (self.page.find(f'<h2 id="{a}">') for a in ("summary", "contents", "runs"))
        self.assertTrue(0 < summary_at < contents_at < runs_at, (summary_at, contents_at, runs_at))
        top = self.page[summary_at:contents_at]
        self.assertIn("FAIL: 1 of 2 gated metrics fail.", top)
        self.assertIn(">4 runs</a> of 3 cases.", top)
        self.assertIn('>1 skipped</a>', top)
        self.assertIn("1 run not converged", top)
        self.assertIn("1 run at the round-off floor above the target", top)
        # The failure is named and linked to its row in the case's metric table.
        self.assertIn('<a href="#metric-beam-newton-volume_change">volume_change</a> = 0.5 (tolerance 0.01 absolute)',
                      top)
        self.assertIn('<tr id="metric-beam-newton-volume_change">', self.page)
        self.assertIn('<a href="#case-beam">beam</a> · xpbd compliance=1e-06 sqrt_psi=true: 1 of 2 steps converged; '
                      "1 of 2 steps stopped at the iteration budget", top)
        self.assertIn("**FAIL: 1 of 2 gated metrics fail.**", self.markdown.split("## Contents")[0])

    def test_round_off_floor_above_the_target_is_said_in_words(self):
        rows = re.findall(r"<tr>(.*?)</tr>", self.page.split('<h2 id="runs">')[1].split("</table>")[0], flags=re.S)
        cantilever = [r for r in rows if "cantilever" in r]
        self.assertEqual(len(cantilever), 1)
        self.assertIn("its one step stopped at the round-off floor, above the target 1e-08 (relative residual "
                      "2.35e-07, absolute 2.35e-05): the target was not reached", cantilever[0])
        self.assertNotIn(">yes<", cantilever[0])
        cube = [r for r in rows if "cube" in r][0]
        self.assertIn("1 of 2 steps converged; 1 of 2 steps stopped at the round-off floor (at or below the target)",
                      cube)
        self.assertIn("all 2 steps converged (reached the target 1e-08)", [r for r in rows if "beam" in r][0])

    def test_contents_link_to_every_section(self):
        anchors = set(re.findall(r'id="([^"]+)"', self.page))
        links = re.findall(r'href="#([^"]+)"', self.page)
        self.assertTrue(links)
        self.assertEqual([l for l in links if l not in anchors], [])
        contents = self.page.split('<h2 id="contents">')[1].split("<h2")[0]
        for anchor in ("runs", "skipped", "case-beam", "case-cantilever", "case-cube", "metrics", "convergence",
                       "machine"):
            self.assertIn(f'href="#{anchor}"', contents)
        self.assertIn('<a id="case-beam"></a>\n\n## Case beam', self.markdown)
        self.assertIn("[Machine](#machine)", self.markdown)

    def test_case_description_and_metric_definitions(self):
        section = self.page.split('<h2 id="case-beam">')[1].split("<h2")[0]
        self.assertIn("<p>A clamped beam sags under gravity; tip against Timoshenko.</p>", section)
        self.assertIn("<th>definition</th><th>value</th><th>tolerance</th><th>unit</th>", section)
        self.assertIn("<td>tip_error</td><td>|u_y(tip) − expected| ÷ |expected|, u the displacement after the last "
                      "step, expected -0.0015</td><td>0.0123</td><td>0.02</td><td>relative</td>", section)
        self.assertIn("<td>|V(x) / V(X) − 1| after the last step (V: deformed volume, X: rest)</td><td>0.5</td>",
                      section)
        # No case file for "cantilever": said so.
        section = self.page.split('<h2 id="case-cantilever">')[1].split("<h2")[0]
        self.assertIn("No description", section)
        self.assertIn("--cases", section)

    def test_machine_table_has_one_header_and_the_threading(self):
        table = self.page.split('<h2 id="machine">')[1].split("</table>")[0]
        self.assertEqual(re.findall(r"<th>(.*?)</th>", table), ["", "value"])
        self.assertIn("<td>runs</td><td>all 4 runs</td>", table)
        self.assertIn("<td>OMP_WAIT_POLICY</td><td>passive</td>", table)
        self.assertIn("<td>BLAS threads</td><td>— (not OpenBLAS)</td>", table)
        self.assertIn("<td>Gmsh</td><td>not recorded</td>", table)
        self.assertIn("<td>memory</td><td>not recorded</td>", table)

    def test_readable_labels_and_broken_case_files(self):
        module = load_module()
        self.assertEqual(module.readable_label('b_pxpbd {"zeta":0.9}'), "b_pxpbd zeta=0.9")
        self.assertEqual(module.readable_label("newton"), "newton")
        self.assertEqual(module.readable_label("newton {}"), "newton")
        broken = os.path.join(self.tmp.name, "broken_cases")
        write(os.path.join(broken, "beam.json"), "{ not json")
        result = subprocess.run([sys.executable, SCRIPT, "--out", os.path.join(self.tmp.name, "r2"), "--cases", broken,
                                 os.path.join(self.tmp.name, "runs", "cube", "newton")],
                                capture_output=True, text=True, timeout=240)
        self.assertEqual(result.returncode, 2)
        self.assertIn(os.path.join(broken, "beam.json"), result.stderr)


class StepOutcomeInWords(unittest.TestCase):
    """How a run ended, as the report's run tables say it (in-process, no figures)."""

    def test_divergence_and_final_state_counts_are_said(self):
        module = load_module()
        document = summary("newton", {}, 45, 0.1, [(1, 2.2e14, "diverged")])
        document["totals"]["diverged"] = True
        document["divergence"] = {"step": 1, "substep": 1, "iteration": 1, "state_file": "diverged_last_finite_state.vtu",
                                  "reason": "the residual grew to 1.083e+22 at iteration 1"}
        document["final_state"] = {"inverted_elements": 22, "degenerate_elements": 0, "degenerate_below": 0.001}
        text, status = module.step_outcome({"summary": document, "steps": document["steps"]})
        self.assertEqual(status, "diverged")
        self.assertIn("diverged at step 1 (iteration 1: the residual grew to 1.083e+22 at iteration 1; its last "
                      "finite state is diverged_last_finite_state.vtu, not a result)", text)
        self.assertIn("final state: 22 inverted element(s)", text)
        # A clean converged state says nothing about element quality.
        clean = summary("newton", {}, 45, 0.1, [(1, 1e-9, "converged")])
        clean["final_state"] = {"inverted_elements": 0, "degenerate_elements": 0, "degenerate_below": 0.001}
        self.assertNotIn("final state", module.step_outcome({"summary": clean, "steps": clean["steps"]})[0])


if __name__ == "__main__":
    unittest.main()
