"""Tests of case_figures.py: which figures a case gets, and what the volume-ratio figure draws
(its lines captured in-process before the figure is saved)."""
import json
import os
import unittest

from . import case_figures
from .drawing import colors_for
from .fake_runs import TwoRunsTestCase, capture_figures, summary, write
from .reading import load_run


class CaseFiguresTest(TwoRunsTestCase):
    def figures_dir(self):
        figures_dir = os.path.join(self.out, "figures")
        os.makedirs(figures_dir, exist_ok=True)
        return figures_dir

    def runs_and_colors(self):
        runs = [load_run(d) for d in (self.run_a, self.run_b)]
        return runs, colors_for([r["label"] for r in runs])

    def update_run_b_steps(self, *updates):
        """Merges updates[k] into step k of run B's summary.json."""
        path = os.path.join(self.run_b, "summary.json")
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
        for step, update in zip(document["steps"], updates):
            step.update(update)
        write(path, json.dumps(document))

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
        plotted = capture_figures(self, case_figures)
        os.makedirs(os.path.join(self.out, "figures"), exist_ok=True)
        runs = [load_run(d) for d in (self.run_a, self.run_b)]
        colors = colors_for([r["label"] for r in runs])
        made = case_figures.volume_ratio_figure("beam", runs, colors, os.path.join(self.out, "figures"))
        self.assertIsNotNone(made)
        self.assertIn("not drawn: slow_solver substeps=10", made.caption)
        self.assertEqual(plotted["beam_volume_ratio"]["slow_solver substeps=10"], ([0.01], [0.99]))
        self.assertNotIn("newton", plotted["beam_volume_ratio"])  # run A records no volume_ratio
        result = self.generate(self.run_a, self.run_b)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(os.path.isfile(figure))
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            self.assertIn("](figures/beam_volume_ratio.png)", f.read())

    def test_cloth_measures_figure_only_for_runs_that_record_them(self):
        figures_dir = self.figures_dir()
        runs, colors = self.runs_and_colors()
        self.assertIsNone(case_figures.cloth_measures_figure("beam", runs, colors, figures_dir))
        # Run B is a cloth: its two steps' measures are drawn against time, a null one left out.
        self.update_run_b_steps(
            dict(time=0.01, edge_stretch_mean=0.001, edge_stretch_max=0.01, area_ratio=1.001, lowest_point=-0.1),
            dict(time=0.02, edge_stretch_mean=0.002, edge_stretch_max=0.02, area_ratio=None, lowest_point=-0.2))
        plotted = capture_figures(self, case_figures)
        runs, colors = self.runs_and_colors()
        self.assertIsNotNone(case_figures.cloth_measures_figure("beam", runs, colors, figures_dir))
        # The first panel (mean stretch): run B only.
        self.assertEqual(plotted["beam_cloth_measures"], {"slow_solver substeps=10": ([0.01, 0.02], [0.001, 0.002])})
        result = self.generate(self.run_a, self.run_b)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            self.assertIn("](figures/beam_cloth_measures.png)", f.read())

    def test_probe_distances_are_the_rms_over_shared_probes_step_by_step(self):
        run = {"steps": [{"probe_displacements": {"a": [1.0, 0.0, 0.0], "b": [0.0, 0.0, 0.0], "c": [5.0, 5.0, 5.0]}},
                         {"probe_displacements": {}}, {"probe_displacements": {"a": [0.0, 0.0, 0.0]}}]}
        reference = {"steps": [{"probe_displacements": {"a": [0.0, 0.0, 0.0], "b": [0.0, 0.0, 1.0]}},
                               {"probe_displacements": {"a": [0.0, 0.0, 0.0]}}]}
        # Step 1: probes a and b (c only in the run): sqrt((1 + 1) / 2); step 2: no probes; step 3:
        # the reference has no third step.
        self.assertEqual(case_figures.probe_distances(run, reference), [1.0, None, None])

    def test_frame_time_histograms_only_when_a_run_stops_at_its_own_target(self):
        figures_dir = self.figures_dir()
        runs, colors = self.runs_and_colors()
        self.assertIsNone(case_figures.frame_time_figure("beam", runs, colors, figures_dir))
        # Run B's steps end at its frame stop: both runs' step times are drawn, in milliseconds.
        self.update_run_b_steps(dict(stop_reason="solver_target", solver_seconds=0.002), dict(solver_seconds=0.004))
        plotted = capture_figures(self, case_figures)
        runs, colors = self.runs_and_colors()
        self.assertIsNotNone(case_figures.frame_time_figure("beam", runs, colors, figures_dir))
        legend = plotted["beam_frame_time:legend"]
        self.assertIn("slow_solver substeps=10: mean 3 ms, 2 steps", legend)  # (2 + 4) / 2 ms
        self.assertIn("newton: mean 10 ms, 2 steps", legend)  # run A: 0.02 s over its 2 steps
        result = self.generate(self.run_a, self.run_b)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            self.assertIn("](figures/beam_frame_time.png)", f.read())

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


if __name__ == "__main__":
    unittest.main()
