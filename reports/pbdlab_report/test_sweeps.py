"""Tests of sweeps.py: the sweep tables (every value and solver, skipped and not run, diverged)
and the figure (one line per solver in parameter order, the x axis chosen from the values)."""
import os
import unittest

from . import sweeps
from .fake_runs import TwoRunsTestCase, capture_figures, sweep_runs
from .reading import load_run, read_skipped


class SweepsTest(TwoRunsTestCase):
    def test_sweep_tables_list_every_value_and_solver(self):
        run_dirs, skipped = sweep_runs(self.tmp.name)
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
        plotted = capture_figures(self, sweeps)
        os.makedirs(self.out)
        run_dirs, skipped = sweep_runs(self.tmp.name)
        runs = [load_run(d) for d in run_dirs]
        for name, sweep in sweeps.group_by_sweep(runs, read_skipped(skipped)).items():
            sweeps.sweep_figure(name, sweep, self.out)
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
        self.assertEqual(sweeps.sweep_axis([0.3, 0.45, 0.49, 0.499])[0], "even")
        self.assertEqual(sweeps.sweep_axis([0.3, 0.45, 0.49, 0.499])[1][0.499], 3)
        self.assertEqual(sweeps.sweep_axis([0.1, 0.2, 0.3])[0], "linear")


if __name__ == "__main__":
    unittest.main()
