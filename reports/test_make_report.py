"""Tests of reports/make_report.py as pbdlab runs it: the whole report from hand-written run
directories (pbdlab_report/fake_runs.py), through the script, as a subprocess, so its exit code,
messages and files are what is checked. The package's modules have their own tests beside them
(pbdlab_report/test_*.py).

Run with: /usr/bin/python3 -m unittest discover -s reports -p "test_*.py"
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from pbdlab_report.fake_runs import SCRIPT, TwoRunsTestCase, iterations_csv, run_script, summary, write
from pbdlab_report.reading import readable_label


class MakeReportTest(TwoRunsTestCase):
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

    def test_the_script_finds_its_package_from_any_folder(self):
        # pbdlab runs the script by its absolute path from the user's folder; a user may give a
        # relative one; under -P (PYTHONSAFEPATH) Python does not put the script's folder on sys.path.
        elsewhere = tempfile.mkdtemp(dir=self.tmp.name)
        for script in (SCRIPT, os.path.relpath(SCRIPT, elsewhere)):
            for safe_path in ((), ("-P",)):
                result = subprocess.run([sys.executable, *safe_path, script, "--help"], cwd=elsewhere,
                                        capture_output=True, text=True, timeout=60)
                self.assertEqual(result.returncode, 0, (script, safe_path, result.stderr))
                self.assertIn("--cases DIR", result.stdout)

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
        cls.result = run_script("--out", cls.out, "--skipped", cls.skipped, "--cases", cls.cases, *cls.runs,
                                timeout=280)
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
        self.assertEqual(readable_label('b_pxpbd {"zeta":0.9}'), "b_pxpbd zeta=0.9")
        self.assertEqual(readable_label("newton"), "newton")
        self.assertEqual(readable_label("newton {}"), "newton")
        broken = os.path.join(self.tmp.name, "broken_cases")
        write(os.path.join(broken, "beam.json"), "{ not json")
        result = run_script("--out", os.path.join(self.tmp.name, "r2"), "--cases", broken,
                            os.path.join(self.tmp.name, "runs", "cube", "newton"))
        self.assertEqual(result.returncode, 2)
        self.assertIn(os.path.join(broken, "beam.json"), result.stderr)


if __name__ == "__main__":
    unittest.main()
