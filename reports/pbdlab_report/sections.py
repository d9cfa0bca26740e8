"""The report as a list of (heading, kind, content) items, in order: the verdict summary and the
contents first, then runs, skipped pairs, cases, series, sweeps, metrics, convergence, the
machine and the benchmark folders' sweep times. Both writers render the same items, so the HTML
and the Markdown say the same."""
from collections import OrderedDict

from .claims import ledger_sections
from .document import Bold, Heading, Link, case_anchor, metric_anchor
from .machine import machine_table
from .series import series_table
from .sweep_times import sweep_time_sections
from .sweeps import sweep_sections
from .tables import (case_description, case_metric_table, common_root, convergence_table, metric_table,
                     runs_table, skipped_table, validate_layout)
from .values import fmt_number, plural
from .verdict import gate_metric, verdict_counts


def summary_blocks(counts, has_metrics, benchmarks=0):
    """The verdict at the top of the report: the counts, then every failure, every run that did not
    reach its target, each linked to where the report shows it. Benchmark folders are counted,
    never judged."""
    measured = [Link(plural(benchmarks, "benchmark folder"), "sweep-time"), ": ms per sweep, measured, not judged."]
    if not counts["runs"]:
        # Only benchmark folders: run counts of zero would say nothing.
        return [("p", [Bold("No verdict: no run folders, only benchmark folders.")], "headline"),
                ("ul", [measured], None)]
    failed, not_converged, roundoff = counts["failed"], counts["not_converged"], counts["roundoff"]
    gated = counts["passed"] + len(failed)
    if failed:
        headline = [Bold(f"FAIL: {len(failed)} of {gated} gated metrics fail.")]
    elif has_metrics:
        headline = [Bold(f"PASS: all {gated} gated metrics pass.")]
    else:
        headline = [Bold("No verdict: no run has a metrics.json (written by the validation runner).")]
    allowed = [(r, t) for r, t, _ in not_converged if (gate_metric(r) or {}).get("pass") is True]
    unexpected = [(r, t) for r, t, _ in not_converged if (gate_metric(r) or {}).get("pass") is not True]
    items = [[Link(plural(counts["runs"], "run"), "runs"), f" of {plural(counts['cases'], 'case')}."],
             [Link(f"{plural(counts['passed'], 'metric')} passed", "metrics"), f", {len(failed)} failed, "
              f"{counts['not_gated']} not gated (shown, not judged: a solver against its own reference, or a "
              "run expected to diverge)."],
             [Link(f"{counts['skipped']} skipped", "skipped") if counts["skipped"] else "0 skipped",
              " (case, solver) " + ("pair" if counts["skipped"] == 1 else "pairs")
              + ": the solver rejects the scene; neither passes nor failures."],
             [f"{plural(len(not_converged), 'run')} not converged (some step stopped at its iteration or time budget, stalled "
              f"or diverged): {len(allowed)} as their case allows (a fixed iteration budget per step, or an "
              f"expected divergence), {len(unexpected)} not allowed."],
             [f"{plural(len(roundoff), 'run')} at the round-off floor above the target: the update fell below the positions' "
              "round-off before the relative residual reached the target (the gates accept it; the target was not "
              "reached)."]] + ([measured] if benchmarks else [])
    blocks = [("p", headline, "headline"), ("ul", items, None)]
    if failed:
        blocks.append(("p", [Bold("Failed metrics:")], None))
        blocks.append(("ul", [[Link(case, case_anchor(case)), f" · {r['label']} · ",
                               Link(str(m.get("name", "—")), metric_anchor(case, r["label"], m.get("name", "—"))),
                               f" = {fmt_number(m.get('value'))} (tolerance {fmt_number(m.get('tolerance'))}"
                               + (f" {m['unit']}" if m.get("unit") else "") + ")"]
                              for case, r, m, _ in failed], None))
    if unexpected:
        blocks.append(("p", [Bold("Not converged, and their case does not allow it:")], None))
        blocks.append(("ul", [[Link(r["case"], case_anchor(r["case"])), f" · {r['label']}: {text}"]
                              for r, text in unexpected], None))
    if roundoff:
        blocks.append(("p", [Bold("At the round-off floor above the target:")], None))
        blocks.append(("ul", [[Link(r["case"], case_anchor(r["case"])), f" · {r['label']}: {text}"]
                              for r, text in roundoff], None))
    if allowed:
        by_case = OrderedDict()
        for r, text in allowed:
            by_case.setdefault(r["case"], []).append(r["label"])
        blocks.append(("p", [Bold("Not converged as their case allows"),
                             " (the Runs table says how each run's steps ended):"], None))
        blocks.append(("ul", [[Link(case, case_anchor(case)), ": " + ", ".join(labels)]
                              for case, labels in by_case.items()], None))
    return blocks


def contents_blocks(items):
    """The table of contents: every section, the cases in one line."""
    entries, case_links = [], []
    for heading, _, _ in items:
        if not isinstance(heading, Heading) or heading.anchor in ("summary", "contents"):
            continue
        if heading.anchor.startswith("case-"):
            if not case_links:
                entries.append(None)  # the cases' place in the list
            case_links.append(Link(heading.text[len("Case "):], heading.anchor))
        else:
            entries.append([Link(heading.text, heading.anchor)])
    listed = []
    for e in entries:
        if e is None:
            pieces = [f"Cases ({len(case_links)}): "]
            for i, link in enumerate(case_links):
                pieces += ([", "] if i else []) + [link]
            listed.append(pieces)
        else:
            listed.append(e)
    return [("ul", listed, "contents")]


def build_sections(cases, runs, figures, series, series_figs, step, skipped=(), sweeps=None, sweep_figs=None,
                   case_files=None, benchmarks=()):
    """The report as (heading, kind, content) items that both writers render the same way; the
    verdict and the contents come first. Without runs (benchmark folders only) the run sections
    are left out: empty tables would only look like missing data."""
    case_files = case_files or {}
    metric_rows = metric_table(cases)
    counts = verdict_counts(cases, runs, skipped)
    root = common_root(runs)
    layout = validate_layout(runs, root)
    where = (f" Run folders: {root}/<case>/<solver>." if layout
             else f" Directories are relative to {root}." if root else "")
    items = []
    if runs:
        items += [(Heading("Runs", "runs"), "text",
                   "How the steps ended (summary.json's stop_reason): converged = the relative residual reached the "
                   "target; stopped at the round-off floor = the update fell below the positions' round-off first "
                   "(said when that was above the target: the target was not reached); stopped at the iteration or "
                   "time budget; stalled; diverged. Nodes include P2/P3 midside nodes." + where),
                  (None, "table", runs_table(cases, root, directories=not layout))]
    if skipped:
        items.append((Heading("Skipped", "skipped"), "text",
                      f"{len(skipped)} (case, solver) pairs were not run: the solver rejects the case's scene "
                      "(Solver::rejectionReason). They are neither passes nor failures."))
        items.append((None, "table", skipped_table(skipped)))
    for case, case_runs in cases.items():
        info = case_files.get(case)
        items.append((Heading(f"Case {case}", case_anchor(case)), "text", case_description(case, case_runs, info)))
        if any(r["metrics"] for r in case_runs):
            items.append((None, "table", case_metric_table(case, case_runs, info)))
        items.append((None, "figures", figures.get(case, [])))
    if series:
        items.append((Heading("Series", "series"), "text",
                      "Validation cases that run one problem on different meshes share a series (the case file's "
                      "`series`). Per metric named *error*: its value against the mesh's node count; each series "
                      "also lists all of its runs' metrics."))
    for name, series_runs in series.items():
        cases_in = ", ".join(OrderedDict.fromkeys(r["case"] for r in series_runs))
        items.append((None, "subheading", f"Series {name} (cases {cases_in})"))
        if series_figs.get(name):
            items.append((None, "figures", series_figs[name]))
        else:
            items.append((None, "text", "No figure: no metric named *error* has values on two or more node counts."))
        items.append((None, "table", series_table(series_runs)))
    sweep_items = sweep_sections(sweeps or {}, sweep_figs or {})
    if sweep_items:
        sweep_items[0] = (Heading("Sweeps", "sweeps"),) + sweep_items[0][1:]
    items += sweep_items
    if runs:
        note = (f"{counts['passed']} passed, {len(counts['failed'])} failed, {counts['not_gated']} not gated. "
                "Every metric of every run; each case's section says what they measure." if metric_rows[1]
                else "No run has a metrics.json (written by the validation runner); no metrics to show.")
        items.append((Heading("Metrics", "metrics"), "text", note))
        if metric_rows[1]:
            items.append((None, "table", metric_rows))
        items.append((Heading("Convergence", "convergence"), "text",
                      "Iterations and solver seconds until the relative residual first reaches each threshold "
                      f"in {'step ' + str(step) if step is not None else 'the last step'} "
                      "(from metrics.json when it records that step, else from iterations.csv). — : never reached."))
        items.append((None, "table", convergence_table(cases, step)))
        items.append((Heading("Machine", "machine"), "table", machine_table(runs)))
    items += sweep_time_sections(benchmarks)
    verdict_class = "fail" if counts["failed"] else "pass" if metric_rows[1] else ""
    items = ledger_sections(case_files, cases) + items
    head = [(Heading("Summary", "summary"), "blocks",
             {"class": f"verdict {verdict_class}".strip(),
              "blocks": summary_blocks(counts, bool(metric_rows[1]), len(benchmarks))}),
            (Heading("Contents", "contents"), "blocks", {"class": None, "blocks": contents_blocks(items)})]
    return head + items, counts
