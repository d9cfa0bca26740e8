"""pbdlab's report generator: an HTML page and its Markdown twin from pbdlab run directories.

reports/make_report.py, beside this folder, is the command (`pbdlab report` and `pbdlab
validate` run it by that path); it calls cli.main. docs/reports.md describes the report. The
modules, lowest first; each imports only modules above it in this list, so reading an input
never pulls in matplotlib and a figure never depends on how the page is written:

    values        how numbers and names are tested and written; knows nothing of runs
    reading       run directories, case files and skipped.json, read and checked (ReportError)
    iterations    one run's iteration rows and steps: the step shown, substeps, thresholds reached
    metrics       metrics.json's metrics: what each measures, found by name or type
    verdict       a metric's pass or fail, how a run's steps ended, the `verdict: ...` line
    document      the pieces both writers render (links, headings, figures); atomic writes
    drawing       matplotlib (Agg) and what every figure shares
    case_figures  the figures of one case
    series        mesh series: grouping, figures, table
    sweeps        parameter sweeps: grouping, figure, table, section
    tables        the runs, metrics, convergence and skipped tables
    machine       the hardware, threading and build table
    sweep_times   benchmark folders (sweep_times.json of benchmarks/scaling_table.py): read, checked, tabled
    sections      the report as (heading, kind, content) items, the verdict first
    writers       those items as HTML and as Markdown
    cli           make_report and main: read everything, draw, write, print the verdict

Each module's tests are beside it (test_<module>.py); fake_runs.py builds the run directories
they read. Neither is installed (apps/CMakeLists.txt).
"""
