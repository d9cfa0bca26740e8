"""Tests of machine.py: one column per distinct machine (a run's date does not make a machine),
and memory in GiB."""
import unittest

from .machine import format_memory, machine_table


def run(case, cpu, date):
    return {"case": case, "dir": "/nowhere", "summary": {},
            "environment": {"cpu": cpu, "date": date, "memory_bytes": 8 * 2 ** 30}}


class MachineTableTest(unittest.TestCase):
    def test_runs_on_one_machine_share_its_column_whatever_their_dates(self):
        header, rows, _ = machine_table([run("a", "CPU 1", "2026-01-02"), run("b", "CPU 1", "2026-01-01")])
        self.assertEqual(header, ["", "value"])
        cells = {r[0]: r[1:] for r in rows}
        self.assertEqual(cells["runs"], ["all 2 runs"])
        self.assertEqual(cells["date"], ["2026-01-01 to 2026-01-02"])
        self.assertEqual(cells["memory"], ["8.0 GiB"])
        self.assertEqual(cells["git commit"], ["not recorded"])

    def test_two_machines_get_two_columns(self):
        header, rows, _ = machine_table([run("a", "CPU 1", "2026-01-01"), run("b", "CPU 2", "2026-01-01"),
                                         run("c", "CPU 1", "2026-01-01")])
        self.assertEqual(header, ["", "machine 1", "machine 2"])
        cells = {r[0]: r[1:] for r in rows}
        self.assertEqual(cells["runs"], ["2 runs: a, c", "1 runs: b"])
        self.assertEqual(cells["CPU"], ["CPU 1", "CPU 2"])

    def test_memory_in_gib_unless_it_is_not_bytes(self):
        self.assertEqual(format_memory(16 * 2 ** 30), "16.0 GiB")
        self.assertEqual(format_memory("16 GB"), "16 GB")


if __name__ == "__main__":
    unittest.main()
