"""Tests of reading.py: a broken or missing input stops the report naming the file (through the
script: exit code 2 and the message), and the run dictionaries' labels and grouping (in-process)."""
import json
import os
import re
import unittest

from .fake_runs import CSV_HEADER, TwoRunsTestCase, summary, sweep_runs, write
from .reading import ReportError, group_by_case, load_run, option_text, read_json


class ReadingTest(TwoRunsTestCase):
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

    def test_malformed_sweep_names_the_file(self):
        run_dirs, _ = sweep_runs(self.tmp.name)
        path = os.path.join(run_dirs[0], "metrics.json")
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
        document["sweep"] = {"name": "iters", "parameter": "iterations per frame", "value": "ten"}
        write(path, json.dumps(document))
        result = self.generate(*run_dirs)
        self.assertEqual(result.returncode, 2)
        self.assertIn(path, result.stderr)
        self.assertIn("sweep", result.stderr)

    def test_json_errors_say_what_is_wrong(self):
        path = os.path.join(self.tmp.name, "broken.json")
        write(path, '{"solver": "x", ')
        with self.assertRaisesRegex(ReportError, "^" + re.escape(path) + ": malformed JSON \\("):
            read_json(path, required=True)
        write(path, "[1, 2]")
        expected = "^" + re.escape(path) + ": malformed: expected an object at the top level$"
        with self.assertRaisesRegex(ReportError, expected):
            read_json(path, required=True)
        self.assertEqual(read_json(path, required=True, top_level=list), [1, 2])
        missing = os.path.join(self.tmp.name, "summary.json")
        self.assertIsNone(read_json(missing, required=False))
        expected = "^" + re.escape(self.tmp.name) + ": missing summary.json \\(not a pbdlab run directory\\?\\)$"
        with self.assertRaisesRegex(ReportError, expected):
            read_json(missing, required=True)

    def test_a_run_without_metrics_is_named_by_its_solver_and_options(self):
        run = load_run(self.run_b)
        self.assertEqual((run["case"], run["solver"], run["label"]), ("beam", "slow_solver", "slow_solver substeps=10"))
        self.assertEqual(run["metrics"], [])
        self.assertEqual(len(run["rows"]), 11)  # 6 iterations of step 1, 5 of step 2
        self.assertEqual(option_text({"a": [1, 0.5], "b": True, "c": "x"}), "{a=[1, 0.5], b=true, c=x}")

    def test_equal_labels_of_a_case_get_their_folder_names(self):
        first, second = (os.path.join(self.tmp.name, name) for name in ("coarse", "fine"))
        for run_dir in (first, second):
            document = summary("newton", {}, 8, 0.1, [(1, 1e-9, "converged")])
            write(os.path.join(run_dir, "summary.json"), json.dumps(document))
            write(os.path.join(run_dir, "iterations.csv"), CSV_HEADER + "1,1,0,0,1,1,0,0\n")
        cases = group_by_case([load_run(d) for d in (first, self.run_b, second)])
        self.assertEqual(list(cases), ["beam"])
        self.assertEqual([r["label"] for r in cases["beam"]],
                         ["newton (coarse)", "slow_solver substeps=10", "newton (fine)"])


if __name__ == "__main__":
    unittest.main()
