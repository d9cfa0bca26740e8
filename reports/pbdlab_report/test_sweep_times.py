"""Tests of sweep_times.py: a benchmark folder (sweep_times.json of benchmarks/scaling_table.py
--out-dir) is read and checked (in-process), a malformed one stops the report naming the file and
the field (through the script: exit 2), and the Sweep time section shows every row, alone and
beside a run, in both the HTML and the Markdown. The report's table is also checked against the
script's own Markdown table built from the same rows, so the script and the report print the
same numbers."""
import copy
import importlib.util
import json
import os
import re
import statistics
import tempfile
import unittest

from .fake_runs import TwoRunsTestCase, read, write
from .reading import ReportError
from .sweep_times import HEADER, caption, is_benchmark_folder, read_sweep_times, sweep_time_rows
from .writers import md_table

SCALING_TABLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                             "benchmarks", "scaling_table.py")


def pbdlab_row(solver, res, threads, samples, ns, fallbacks, gb):
    return {"solver": solver, "res": res, "threads": threads, "samples_ms": samples, "min_ms": min(samples),
            "median_ms": statistics.median(samples), "ns_per_element_visit": ns, "svd_fallbacks": fallbacks,
            "peak_memory_gb": gb}


def document(rows=None):
    """A sweep_times.json as the script writes it: three rounds, two pbdlab rows and a peer row."""
    rows = rows if rows is not None else [
        pbdlab_row("pbdlab PBNG corotated", 16, 1, [5.5, 4.92, 5.2], 77.4, 0.0, 0.0612),
        pbdlab_row("pbdlab XPBD corotated", 16, 2, [2.05, 1.91, 2.5], 121.6, 2.0, 0.058),
        dict(pbdlab_row("peer, as stored", 16, 1, [4.1, 5.4, 6.0], None, None, None),
             peer_harness="/opt/peer/harness", peer_mesh="/opt/peer/res16.msh", peer_order="stored")]
    return {"kind": "sweep_times", "command": ["/usr/bin/python3", "benchmarks/scaling_table.py", "--res", "16",
                                               "--rounds", "3", "--out-dir", "/tmp/my dir"],
            "cwd": "/work", "date": "2026-11-28T10:00:00+00:00", "git_commit": "0123abc", "git_modified": False,
            "bench": "/work/build/benchmarks/bench_scaling", "bench_built": "2026-11-28T09:00:48+00:00",
            "machine": {"cpu_count": 2, "cpu_model": "Test CPU 9000", "omp_wait_policy": "passive",
                        "load_average_at_start": [0.5, 0.25, 0.125]},
            "rounds": 3, "rows": rows}


def benchmark_folder(root, name="sweep_res16", doc=None):
    folder = os.path.join(root, name)
    write(os.path.join(folder, "sweep_times.json"), json.dumps(document() if doc is None else doc))
    return folder


def table_rows(text, anchor):
    """The body rows of the first table after the heading with `anchor` (HTML), as lists of cells."""
    section = text.split(f'<h2 id="{anchor}">')[1]
    body = section.split("<tbody>")[1].split("</tbody>")[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", body, flags=re.S)]


class ReadSweepTimesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def test_a_folder_with_summary_json_is_a_run(self):
        folder = benchmark_folder(self.tmp.name)
        self.assertTrue(is_benchmark_folder(folder))
        write(os.path.join(folder, "summary.json"), "{}")
        self.assertFalse(is_benchmark_folder(folder))
        self.assertFalse(is_benchmark_folder(os.path.join(self.tmp.name, "nowhere")))

    def test_rows_formatted_as_the_script_formats_them(self):
        benchmark = read_sweep_times(benchmark_folder(self.tmp.name))
        self.assertEqual(sweep_time_rows(benchmark), [
            ["pbdlab PBNG corotated", "16", "1", "4.92", "5.20", "77", "0", "0.06"],
            ["pbdlab XPBD corotated", "16", "2", "1.91", "2.05", "122", "2", "0.06"],
            ["peer, as stored", "16", "1", "4.10", "5.40", "—", "—", "—"]])

    def test_caption_names_commit_date_machine_rounds_and_command(self):
        doc = document()
        doc["git_modified"] = True
        text = caption(read_sweep_times(benchmark_folder(self.tmp.name, doc=doc)))
        for piece in ("Commit 0123abc (tracked files modified", "benchmark binary built 2026-11-28T09:00:48+00:00",
                      "2026-11-28T10:00:00+00:00", "Test CPU 9000",
                      "2 hardware threads", "OMP_WAIT_POLICY passive", "load average 0.50 at the start", "3 rounds",
                      "command: /usr/bin/python3 benchmarks/scaling_table.py --res 16 --rounds 3 "
                      "--out-dir '/tmp/my dir'"):
            self.assertIn(piece, text)

    def test_each_malformed_field_is_named(self):
        def broken(change):
            doc = document()
            change(doc)
            return doc

        cases = [
            (broken(lambda d: d.update(kind="runs")), "'kind'"),
            (broken(lambda d: d.update(command="python3 x.py")), "'command'"),
            (broken(lambda d: d.pop("git_commit")), "'git_commit'"),
            (broken(lambda d: d.update(bench_built=1700000000)), "'bench_built'"),
            (broken(lambda d: d["machine"].update(cpu_count="two")), "machine.cpu_count"),
            (broken(lambda d: d["machine"].update(load_average_at_start=[1.0])), "machine.load_average_at_start"),
            (broken(lambda d: d.update(rounds=0)), "'rounds'"),
            (broken(lambda d: d.update(rows=[])), "'rows'"),
            (broken(lambda d: d["rows"][1].update(res="16")), "rows[1].res"),
            (broken(lambda d: d["rows"][0]["samples_ms"].append(9.0)),
             "rows[0].samples_ms: 4 samples, but 'rounds' is 3"),
            (broken(lambda d: d["rows"][2].update(median_ms=4.1)), "rows[2].median_ms: 4.1 is not the median"),
            (broken(lambda d: d["rows"][0].update(min_ms=None)), "rows[0].min_ms"),
            (broken(lambda d: d["rows"][1].update(peak_memory_gb="0.06")), "rows[1].peak_memory_gb"),
        ]
        for k, (doc, field) in enumerate(cases):
            folder = benchmark_folder(self.tmp.name, f"broken{k}", doc)
            path = os.path.join(folder, "sweep_times.json")
            with self.subTest(field=field):
                with self.assertRaises(ReportError) as raised:
                    read_sweep_times(folder)
                self.assertTrue(str(raised.exception).startswith(f"{path}: malformed"), str(raised.exception))
                self.assertIn(field, str(raised.exception))

    @unittest.skipUnless(os.path.isfile(SCALING_TABLE), "benchmarks/scaling_table.py is not beside the reports")
    def test_the_report_table_is_the_scripts_table(self):
        spec = importlib.util.spec_from_file_location("scaling_table", SCALING_TABLE)
        script = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(script)
        self.assertEqual(HEADER, script.TABLE_HEADER)
        configs = [("Pbng", 16, 1), ("Xpbd", 16, 2), ("peer:colour:meshes/res16.msh", 16, 2)]
        times = {configs[0]: [5.25, 4.5, 4.875], configs[1]: [3.0, 2.125, 2.5], configs[2]: [3.6, 3.3, 3.9]}
        extra = {configs[0]: [(77.0, 0.05, 0.0), (78.5, 0.06, 0.0), (80.0, 0.055, 1.0)],
                 configs[1]: [(120.0, 0.06, 3.0), (122.0, 0.06, 2.0), (121.0, 0.07, 2.0)]}
        rows = script.build_rows(configs, times, extra, "peer/harness")
        # The script's own file, through JSON: what the reader gets is what the script writes.
        doc = script.sweep_times_document(rows, ["python3", "scaling_table.py", "--rounds", "3"],
                                          "2026-11-28T10:00:00+00:00", "bench_scaling", 3)
        doc = json.loads(json.dumps(doc, allow_nan=False))
        self.assertEqual((doc["kind"], doc["rounds"], doc["machine"]["cpu_count"]), ("sweep_times", 3, os.cpu_count()))
        self.assertIsInstance(doc["git_commit"], str)
        benchmark = read_sweep_times(benchmark_folder(self.tmp.name, doc=doc))
        self.assertEqual(md_table(HEADER, sweep_time_rows(benchmark)), script.markdown_table(rows))
        self.assertEqual([r["samples_ms"] for r in benchmark["rows"]], [times[c] for c in configs])
        self.assertEqual(rows[2]["peer_mesh"], os.path.abspath("meshes/res16.msh"))
        self.assertEqual(sweep_time_rows(benchmark)[0][3:], ["4.50", "4.88", "78", "0", "0.06"])


class SweepTimeReportTest(TwoRunsTestCase):
    def test_a_report_of_benchmark_folders_only(self):
        first = benchmark_folder(self.tmp.name, "sweep_a")
        doc = document()
        doc["git_commit"] = "4567def"
        doc["rows"] = copy.deepcopy(doc["rows"][:2])
        second = benchmark_folder(self.tmp.name, "sweep_b", doc)
        result = self.generate(first, second)
        self.assertEqual(result.returncode, 0, result.stderr)
        page = read(os.path.join(self.out, "report.html"))
        markdown = read(os.path.join(self.out, "report.md"))
        # No run sections (no runs), the summary says why there is no verdict, the contents link here.
        self.assertEqual(re.findall(r'<h2 id="([^"]+)">', page), ["summary", "contents", "sweep-time"])
        self.assertIn("No verdict: no run folders, only benchmark folders.", page)
        contents = page.split('<h2 id="contents">')[1].split("<h2")[0]
        self.assertIn('<a href="#sweep-time">Sweep time</a>', contents)
        anchors = set(re.findall(r'id="([^"]+)"', page))
        self.assertEqual([l for l in re.findall(r'href="#([^"]+)"', page) if l not in anchors], [])
        # One caption and one table per folder, every row of each file.
        section = page.split('<h2 id="sweep-time">')[1]
        self.assertEqual(re.findall(r"<h3>(.*?)</h3>", section),
                         [f"Sweep times from {first}", f"Sweep times from {second}"])
        self.assertEqual(re.findall(r"<th>(.*?)</th>", section.split("</thead>")[0]), HEADER)
        self.assertEqual(section.count("<table"), 2)
        self.assertEqual(table_rows(page, "sweep-time"), [
            ["pbdlab PBNG corotated", "16", "1", "4.92", "5.20", "77", "0", "0.06"],
            ["pbdlab XPBD corotated", "16", "2", "1.91", "2.05", "122", "2", "0.06"],
            ["peer, as stored", "16", "1", "4.10", "5.40", "—", "—", "—"]])
        self.assertIn("Commit 0123abc", section.split("<h3>")[1])
        self.assertIn("Commit 4567def", section.split("<h3>")[2])
        self.assertIn('<a id="sweep-time"></a>\n\n## Sweep time', markdown)
        md_section = markdown.split("\n## Sweep time\n")[1]
        self.assertEqual(md_section.count("| pbdlab PBNG corotated | 16 | 1 | 4.92 | 5.20 | 77 | 0 | 0.06 |"), 2)
        self.assertEqual(md_section.count("| peer, as stored | 16 | 1 | 4.10 | 5.40 | — | — | — |"), 1)
        self.assertIn("command: /usr/bin/python3 benchmarks/scaling_table.py --res 16", md_section)
        self.assertEqual(result.stdout.strip().splitlines()[-1].split(",")[0], "verdict: 0 runs")

    def test_beside_a_run_the_section_comes_last(self):
        folder = benchmark_folder(self.tmp.name)
        result = self.generate(self.run_b, folder)
        self.assertEqual(result.returncode, 0, result.stderr)
        page = read(os.path.join(self.out, "report.html"))
        headings = re.findall(r'<h2 id="([^"]+)">', page)
        self.assertEqual(headings[-2:], ["machine", "sweep-time"])
        self.assertIn('<a href="#sweep-time">1 benchmark folder</a>', page.split('<h2 id="contents">')[0])
        self.assertIn('<a href="#sweep-time">Sweep time</a>', page.split('<h2 id="contents">')[1].split("<h2")[0])
        # The benchmark folder is not a run: one row in the runs table, the run's.
        self.assertEqual(len(table_rows(page, "runs")), 1)
        self.assertEqual(len(table_rows(page, "sweep-time")), 3)
        self.assertEqual(result.stdout.strip().splitlines()[-1].split(",")[0], "verdict: 1 runs")

    def test_a_malformed_file_stops_the_report_naming_it(self):
        doc = document()
        doc["rows"][1]["threads"] = 0
        folder = benchmark_folder(self.tmp.name, doc=doc)
        result = self.generate(self.run_b, folder)
        self.assertEqual(result.returncode, 2)
        path = os.path.join(folder, "sweep_times.json")
        self.assertIn(f"make_report: error: {path}: malformed: rows[1].threads", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "report.html")))
        write(path, '{"kind": "sweep_times", ')
        result = self.generate(folder)
        self.assertEqual(result.returncode, 2)
        self.assertIn(f"{path}: malformed JSON", result.stderr)


if __name__ == "__main__":
    unittest.main()
