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


def series_run(root, case, series, element_type, order, nodes, errors):
    """A validation run of one case of a mesh series: summary.json with the mesh's element type
    and order, metrics.json with the series name and the given metric values."""
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
    write(os.path.join(run_dir, "metrics.json"), json.dumps(document))
    return run_dir


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
        for name in ("beam_residual_history", "beam_final_residual_per_step", "beam_errors"):
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
        plotted, save = {}, module.save_figure

        def capture(fig, figures_dir, name):
            plotted[name] = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata()))
                             for line in fig.axes[0].get_lines()}
            return save(fig, figures_dir, name)

        module.save_figure = capture
        os.makedirs(self.out)
        module.series_figures("bend", [module.load_run(d) for d in self.series_runs()[:3]], self.out)
        self.assertEqual(plotted["series_bend_l2_error"], {
            "tet4 (order 1) · newton": ([45, 225], [0.2, 0.05]),
            "tet10 (order 2) · newton": ([153], [0.01]),
        })
        self.assertEqual(plotted["series_bend_max_error"]["tet4 (order 1) · newton"], ([45, 225], [0.3, 0.08]))

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


if __name__ == "__main__":
    unittest.main()
