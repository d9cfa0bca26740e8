"""Tests of iterations.py: the step shown, substeps cut apart, and the iterations and seconds to
each threshold, from metrics.json where it records the step, else from iterations.csv."""
import unittest

from .iterations import chosen_step, convergence_row, split_substeps


def row(step, iteration, seconds, relative_residual, substep=None):
    values = {"step": step, "iteration": iteration, "solver_seconds": seconds, "relative_residual": relative_residual}
    if substep is not None:
        values["substep"] = substep
    return values


class IterationsTest(unittest.TestCase):
    def setUp(self):
        self.run = {"rows": [row(1, 0, 0.0, 1.0), row(1, 1, 0.1, 1e-5),
                             row(2, 0, 0.0, 1.0), row(2, 1, 0.1, 1e-3), row(2, 2, 0.2, 1e-7)],
                    "convergence": {"step": 2, "thresholds": [1e-2, 1e-4], "iterations_to": [1, -1],
                                    "seconds_to": [0.5, None]}}

    def test_the_step_shown_is_the_last_unless_one_is_asked_for(self):
        self.assertEqual(chosen_step(self.run, None), 2)
        self.assertEqual(chosen_step(self.run, 1), 1)
        self.assertIsNone(chosen_step(self.run, 9))
        self.assertIsNone(chosen_step({"rows": []}, None))

    def test_substeps_are_cut_where_the_substep_changes(self):
        rows = [row(1, i, 0.0, 1.0, substep) for i, substep in enumerate([1, 1, 2, 2, 1])]
        self.assertEqual([len(part) for part in split_substeps(rows)], [2, 2, 1])
        self.assertEqual(len(split_substeps([row(1, i, 0.0, 1.0) for i in range(3)])), 1)

    def test_thresholds_come_from_metrics_json_for_its_step_else_from_the_rows(self):
        # Step 2: 1e-2 and 1e-4 as recorded (-1 and null: never reached), 1e-6 from the rows.
        cells, source = convergence_row(self.run, 2)
        self.assertEqual(cells, [(1, 0.5), (None, None), (2, 0.2)])
        self.assertEqual(source, "iterations.csv + metrics.json")
        # Step 1 is not the recorded step: every threshold from the rows.
        cells, source = convergence_row(self.run, 1)
        self.assertEqual(cells, [(1, 0.1), (1, 0.1), (None, None)])
        self.assertEqual(source, "iterations.csv")


if __name__ == "__main__":
    unittest.main()
