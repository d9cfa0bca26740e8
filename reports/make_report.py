#!/usr/bin/python3
"""Builds an HTML and a Markdown report from pbdlab run directories.

    /usr/bin/python3 reports/make_report.py --out OUT_DIR [--skipped skipped.json] [--cases CASES_DIR]
        RUN_DIR [RUN_DIR ...]

A run directory is what `pbdlab run` or `pbdlab validate` writes: iterations.csv,
summary.json and, from the validation runner, an optional metrics.json. The report reads
only these files (so it can be rebuilt without rerunning) and writes OUT_DIR/report.html
(self-contained, figures embedded), OUT_DIR/report.md and OUT_DIR/figures/*.png|svg, and prints
the verdict as its last line (`verdict: N runs, M metrics passed, ...`) for `pbdlab validate`.
--cases names the folder of the validation case files: each case's description and what its
metrics measure. A folder with sweep_times.json and no summary.json (benchmarks/scaling_table.py
--out-dir) is a benchmark folder: its table goes to the Sweep time section. docs/reports.md
describes the contents.

The code is the package pbdlab_report beside this file (its __init__ lists the modules). This
script stays, as the path pbdlab runs (<data dir>/reports/make_report.py).
"""
import os
import sys

# Python puts a script's folder on sys.path, but not under -P or PYTHONSAFEPATH: the package
# beside this file must be found however the script is started.
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

from pbdlab_report.cli import main  # noqa: E402  (the package's folder must be on sys.path first)

if __name__ == "__main__":
    sys.exit(main())
