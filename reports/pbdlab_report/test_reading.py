"""Tests of reading.py: a broken or missing input stops the report naming the file (through the
script: exit code 2 and the message)."""
import json
import os
import unittest

from .fake_runs import CSV_HEADER, TwoRunsTestCase, sweep_runs, write


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



if __name__ == "__main__":
    unittest.main()
