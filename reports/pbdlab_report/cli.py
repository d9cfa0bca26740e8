"""The command: make_report reads every input, draws the figures, builds the sections and writes
both reports; main parses the command line, turns a ReportError into exit code 2 and prints
the verdict as its last line. reports/make_report.py calls main."""
import argparse
import datetime
import os
import sys
import time

from .case_figures import (cloth_measures_figure, error_figure, final_residual_figure, frame_time_figure,
                           own_residuals_figure, residual_history_figure, volume_ratio_figure)
from .document import write_atomically
from .drawing import colors_for
from .reading import ReportError, group_by_case, load_run, read_cases, read_skipped
from .sections import build_sections
from .sweep_times import is_benchmark_folder, read_sweep_times
from .series import group_by_series, series_figures, series_profile_figures
from .sweeps import group_by_sweep, sweep_figure
from .verdict import verdict_line
from .writers import render_html, render_markdown


def make_report(run_dirs, out_dir, step=None, skipped_path=None, cases_dir=None):
    """Reads every run and benchmark folder first (so a broken input stops before anything is
    written), then writes. Returns the HTML's path and the verdict counts."""
    runs, benchmarks = [], []
    for d in run_dirs:
        if is_benchmark_folder(d):
            benchmarks.append(read_sweep_times(d))
        else:
            runs.append(load_run(d))
    skipped = read_skipped(skipped_path)
    case_files = read_cases(cases_dir)
    cases = group_by_case(runs)
    figures_dir = os.path.join(out_dir, "figures")
    os.makedirs(figures_dir, exist_ok=True)
    figures = {}
    started = time.monotonic()
    last_said = started
    for index, (case, case_runs) in enumerate(cases.items()):
        # Drawing every case's figures takes about a minute for the fast tier: say where it is.
        if time.monotonic() - last_said >= 5.0:
            last_said = time.monotonic()
            print(f"make_report: figures of case {index + 1}/{len(cases)} ({case}), "
                  f"{last_said - started:.0f} s so far", file=sys.stderr, flush=True)
        colors = colors_for([r["label"] for r in case_runs])
        made = [residual_history_figure(case, case_runs, step, colors, figures_dir),
                own_residuals_figure(case, case_runs, step, colors, figures_dir),
                final_residual_figure(case, case_runs, colors, figures_dir),
                volume_ratio_figure(case, case_runs, colors, figures_dir),
                cloth_measures_figure(case, case_runs, colors, figures_dir),
                frame_time_figure(case, case_runs, colors, figures_dir),
                error_figure(case, case_runs, colors, figures_dir)]
        figures[case] = [f for f in made if f is not None]
    series = group_by_series(runs)
    series_figs = {name: series_figures(name, series_runs, figures_dir) + series_profile_figures(name, series_runs, figures_dir)
                   for name, series_runs in series.items()}
    sweeps = group_by_sweep(runs, skipped)
    sweep_figs = {name: sweep_figure(name, sweep, figures_dir) for name, sweep in sweeps.items()}
    items, counts = build_sections(cases, runs, figures, series, series_figs, step, skipped, sweeps, sweep_figs,
                                   case_files, benchmarks)
    generated = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    write_atomically(os.path.join(out_dir, "report.html"), render_html(items, generated).encode("utf-8"))
    write_atomically(os.path.join(out_dir, "report.md"), render_markdown(items, generated).encode("utf-8"))
    return os.path.join(out_dir, "report.html"), counts


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Build report.html (self-contained) and report.md from pbdlab run directories.")
    parser.add_argument("--out", required=True, help="output directory (created if needed)")
    parser.add_argument("--step", type=int, default=None,
                        help="time step whose iterations are plotted and tabulated (default: each run's last)")
    parser.add_argument("--skipped", default=None, metavar="FILE",
                        help="skipped.json of `pbdlab validate`: runs not made, listed with their reasons")
    parser.add_argument("--cases", default=None, metavar="DIR",
                        help="folder of the validation case files (*.json): each case's description and what "
                             "its metrics measure")
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR",
                        help="directory written by `pbdlab run`, or by benchmarks/scaling_table.py --out-dir "
                             "(sweep_times.json: the Sweep time section)")
    args = parser.parse_args(argv)
    try:
        path, counts = make_report(args.run_dirs, args.out, args.step, args.skipped, args.cases)
    except ReportError as e:
        print(f"make_report: error: {e}", file=sys.stderr)
        return 2
    print(f"make_report: wrote {path} and {os.path.join(args.out, 'report.md')}")
    print(verdict_line(counts))  # the last line: `pbdlab validate` relays it
    return 0
