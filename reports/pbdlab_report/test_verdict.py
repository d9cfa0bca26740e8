"""Tests of verdict.py: how a run's steps ended, in words (in-process, no figures)."""
import unittest

from .fake_runs import summary
from .verdict import step_outcome


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



if __name__ == "__main__":
    unittest.main()
