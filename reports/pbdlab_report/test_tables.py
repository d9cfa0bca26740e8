"""Tests of tables.py: the runs table leaves out the directory column for validate's layout,
and where a case's description comes from."""
import os
import unittest

from .tables import case_description, common_root, validate_layout


def run(directory, case, solver, summary=None):
    return {"dir": directory, "case": case, "solver": solver, "summary": summary or {}}


class TablesTest(unittest.TestCase):
    def test_validate_layout_is_root_case_solver(self):
        runs = [run("/r/runs/beam/newton", "beam", "newton"), run("/r/runs/cube/xpbd", "cube", "xpbd")]
        root = common_root(runs)
        self.assertEqual(root, os.path.normpath("/r/runs"))
        self.assertTrue(validate_layout(runs, root))
        runs.append(run("/r/references/beam", "beam", "newton"))
        self.assertFalse(validate_layout(runs, common_root(runs)))
        self.assertIsNone(common_root(runs[:1]))

    def test_the_case_file_describes_a_case_else_its_scene(self):
        scene = run("/r/beam", "beam", "newton", {"scene_resolved": {"description": "A beam."}})
        self.assertEqual(case_description("beam", [scene], {"description": "The case."}), "The case.")
        self.assertEqual(case_description("beam", [scene], None),
                         "(The scene's description; no case file was given.) A beam.")
        self.assertIn("--cases DIR", case_description("beam", [run("/r/beam", "beam", "newton")], None))


if __name__ == "__main__":
    unittest.main()
