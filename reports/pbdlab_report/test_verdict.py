"""Tests of verdict.py: whether a metric passes, and how a run's steps ended, in words (in-process,
no figures)."""
import math
import unittest

from .fake_runs import summary
from .verdict import metric_pass, step_outcome, verdict_counts, verdict_line


class StepOutcomeInWords(unittest.TestCase):
    """How a run ended, as the report's run tables say it (in-process, no figures)."""

    def test_divergence_and_final_state_counts_are_said(self):
        document = summary("newton", {}, 45, 0.1, [(1, 2.2e14, "diverged")])
        document["totals"]["diverged"] = True
        document["divergence"] = {"step": 1, "substep": 1, "iteration": 1, "state_file": "diverged_last_finite_state.vtu",
                                  "reason": "the residual grew to 1.083e+22 at iteration 1"}
        document["final_state"] = {"inverted_elements": 22, "degenerate_elements": 0, "degenerate_below": 0.001}
        text, status = step_outcome({"summary": document, "steps": document["steps"]})
        self.assertEqual(status, "diverged")
        self.assertIn("diverged at step 1 (iteration 1: the residual grew to 1.083e+22 at iteration 1; its last "
                      "finite state is diverged_last_finite_state.vtu, not a result)", text)
        self.assertIn("final state: 22 inverted element(s)", text)
        # A clean converged state says nothing about element quality.
        clean = summary("newton", {}, 45, 0.1, [(1, 1e-9, "converged")])
        clean["final_state"] = {"inverted_elements": 0, "degenerate_elements": 0, "degenerate_below": 0.001}
        self.assertNotIn("final state", step_outcome({"summary": clean, "steps": clean["steps"]})[0])



class MetricVerdict(unittest.TestCase):
    def test_a_recorded_verdict_wins_else_the_value_against_its_tolerance(self):
        self.assertIs(metric_pass({"value": 5.0, "tolerance": 1.0, "pass": True}), True)
        # A recorded null (Newton against its own reference) is not gated, whatever the value.
        self.assertIsNone(metric_pass({"value": 0.0, "tolerance": 1.0, "pass": None}))
        self.assertIs(metric_pass({"value": 1.0, "tolerance": 1.0}), True)
        self.assertIs(metric_pass({"value": 1.5, "tolerance": 1.0}), False)
        self.assertIs(metric_pass({"value": math.nan, "tolerance": 1.0}), False)
        self.assertIsNone(metric_pass({"value": None, "tolerance": 1.0}))

    def test_the_verdict_line_counts_in_its_fixed_order(self):
        def run(case, steps, metrics):
            document = summary("newton", {}, 8, 0.1, steps)
            return {"case": case, "label": "newton", "summary": document, "steps": document["steps"],
                    "metrics": metrics}
        runs = [run("a", [(1, 1e-9, "converged")],
                    [{"name": "x", "pass": True}, {"name": "y", "pass": False}, {"name": "z", "pass": None}]),
                run("b", [(1, 1e-3, "iteration_budget")], []),
                run("b", [(1, 2e-7, "roundoff_floor")], [])]  # above the target 1e-8
        counts = verdict_counts({"a": runs[:1], "b": runs[1:]}, runs, [{"case": "c", "solver": "s", "reason": "r"}])
        # `pbdlab validate` relays this line: new fields go at the end.
        self.assertEqual(verdict_line(counts),
                         "verdict: 3 runs, 1 metrics passed, 1 failed, 1 skipped, 1 not converged, "
                         "1 at the round-off floor above the target, 1 not gated")


if __name__ == "__main__":
    unittest.main()
