"""Tests of series.py: a mesh series' figures (one per error metric, its points in node order),
its profiles and its table, coarsest mesh first."""
import os
import unittest

from . import series
from .fake_runs import TwoRunsTestCase, capture_figures, series_run, series_runs
from .reading import load_run


class SeriesTest(TwoRunsTestCase):
    def test_series_figures_and_tables(self):
        result = self.generate(*series_runs(self.tmp.name))
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
        plotted = capture_figures(self, series)
        os.makedirs(self.out)
        series.series_figures("bend", [load_run(d) for d in series_runs(self.tmp.name)[:3]], self.out)
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
        plotted = capture_figures(self, series)
        os.makedirs(self.out)
        figures = series.series_profile_figures("twist", [load_run(d) for d in runs], self.out)
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


if __name__ == "__main__":
    unittest.main()
