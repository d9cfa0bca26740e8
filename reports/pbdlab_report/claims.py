"""The claims ledger: a validation case may declare the paper's claim it tests (its "claim":
source, text, verdict, ours, theirs, readings), the verdict its gates encode. The report opens
with the ledger per paper, each claim beside the state of its cases' gates in that report; the
same entries, without runs, are docs/claims.md (`python3 -m pbdlab_report.claims`), so the docs
and the report say one thing from one source.

    python3 -m pbdlab_report.claims --cases validation/cases --out docs/claims.md
"""
import argparse
import os
import re
import sys
from collections import OrderedDict

from .document import Heading, Link, case_anchor, write_atomically
from .reading import ReportError, read_cases
from .verdict import metric_pass
from .writers import md_table

PAPERS = OrderedDict([
    ("pxpbd", "PXPBD: Chen et al., primal residual reduction in XPBD"),
    ("pbng", "PBNG: position-based nonlinear Gauss-Seidel"),
    ("high_order", "High-order elements in PBD"),
    ("multilayer", "Multi-layer XPBD (Mercier-Aubin and Kry 2024)"),
    ("vbd", "VBD: Chen et al. 2024, Vertex Block Descent (a peer of PBNG, not one of the five papers)"),
    ("model", "The shared model and the references"),
])

VERDICT_WORDS = {"reproduces": "reproduces", "partly_reproduces": "partly reproduces",
                 "does_not_reproduce": "does not reproduce"}


def _gates(case_runs):
    """'hold' when every metric of every run passes (or is not judged), 'FAIL' when one fails,
    'not run' without runs."""
    if not case_runs:
        return "not run"
    passes = [metric_pass(m) for r in case_runs for m in r["metrics"]]
    return "FAIL" if any(p is False for p in passes) else "hold"


def ledger(case_files, cases=None):
    """Per paper (PAPERS' order), the claims of the case files, one entry per (source, text):
    verdict, ours, theirs, readings (in order, without repeats), the cases and, given the
    report's runs by case (`cases`), each case's gate state. Cases without a claim are left out."""
    by_paper = OrderedDict((paper, OrderedDict()) for paper in PAPERS)
    for name in sorted(case_files):
        info = case_files[name]
        claim = info.get("claim")
        if not isinstance(claim, dict) or not claim.get("text"):
            continue
        verdict = claim.get("verdict")
        if verdict is not None and verdict not in VERDICT_WORDS:
            # pbdlab refuses such a case file at load (every validate run fails); so does this.
            raise ValueError(f"case {name}: /claim/verdict: unknown claim verdict {verdict!r} "
                             f"(known: {', '.join(VERDICT_WORDS)})")
        paper = info.get("paper") if info.get("paper") in PAPERS else "model"
        key = (claim.get("source", ""), claim["text"])
        entry = by_paper[paper].setdefault(key, {"source": key[0], "text": key[1], "verdicts": [], "ours": [],
                                                 "theirs": [], "readings": [], "cases": OrderedDict()})
        for field, value in (("verdicts", claim.get("verdict")), ("ours", claim.get("ours")),
                             ("theirs", claim.get("theirs"))):
            if value and value not in entry[field]:
                entry[field].append(value)
        for reading in claim.get("readings") or []:
            if reading not in entry["readings"]:
                entry["readings"].append(reading)
        entry["cases"][name] = _gates((cases or {}).get(name, []))
    return OrderedDict((paper, sorted(entries.values(), key=lambda e: _natural(e["source"])))
                       for paper, entries in by_paper.items() if entries)


def _natural(text):
    """Sort key in reading order: "Fig. 3" before "Fig. 11", figures before sections."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _verdict_text(entry):
    return " / ".join(VERDICT_WORDS.get(v, v) for v in entry["verdicts"])


def _readings_text(entry):
    return "; ".join(entry["readings"]) if entry["readings"] else "—"


def ledger_sections(case_files, cases):
    """The report's items: per paper the claims whose cases ran here, each with its gates' state,
    then the claims of the case files that did not run in this report."""
    entries = ledger(case_files, cases)
    if not entries:
        return []
    run_here = set(cases)
    items = [(Heading("Claims ledger", "claims"), "text",
              "Each validation case may state the paper's claim it tests and the verdict its gates encode "
              "(the case file's `claim`): the gates hold exactly when the stated verdict does. Ours beside "
              "theirs, with the paper's open choices tried. `gates`: hold (every metric of the case's runs "
              "passes), FAIL (the verdict is not confirmed by this report), not run.")]
    for paper, paper_entries in entries.items():
        ran = [e for e in paper_entries if any(c in run_here for c in e["cases"])]
        not_ran = [e for e in paper_entries if e not in ran]
        items.append((None, "subheading", PAPERS[paper]))
        if ran:
            rows = []
            for e in ran:
                here = [(case, gates) for case, gates in e["cases"].items() if case in run_here]
                # One case: a link to its section; several: their names (the contents link each).
                cell = (Link(f"{here[0][0]} ({here[0][1]})", case_anchor(here[0][0])) if len(here) == 1
                        else ", ".join(f"{case} ({gates})" for case, gates in here))
                rows.append([e["source"], e["text"], _verdict_text(e), " · ".join(e["ours"]), " · ".join(e["theirs"]),
                             _readings_text(e), cell])
            items.append((None, "table", (["where", "claim", "verdict", "ours", "theirs", "readings tried",
                                           "cases (gates)"], rows)))
        if not_ran:
            items.append((None, "blocks", {"class": None, "blocks": [
                ("p", ["Not run in this report:"], None),
                ("ul", [[f"{e['source']}: {e['text']} ({_verdict_text(e)}; cases {', '.join(e['cases'])})"]
                        for e in not_ran], None)]}))
    return items


def claims_markdown(case_files):
    """docs/claims.md: the ledger of every case file's claim, per paper (no runs: gates are the
    report's)."""
    lines = ["# The claims ledger", "",
             "Generated from the validation cases' `claim` fields by "
             "`python3 -m pbdlab_report.claims --cases validation/cases --out docs/claims.md` (run in "
             "`reports/`); a test fails when this file and the cases differ. Each claim's verdict is the "
             "one its case's gates encode: a report built from the runs (`pbdlab validate`) shows whether "
             "they hold there. The narrative behind each verdict is in docs/pxpbd.md, docs/pbng.md, "
             "docs/high-order-xpbd.md and docs/multi-layer-xpbd.md.", ""]
    for paper, entries in ledger(case_files).items():
        rows = [[e["source"], e["text"], _verdict_text(e), " · ".join(e["ours"]), " · ".join(e["theirs"]),
                 _readings_text(e), ", ".join(f"`{c}`" for c in e["cases"])] for e in entries]
        lines += [f"## {PAPERS[paper]}", "",
                  md_table(["where", "claim", "verdict", "ours", "theirs", "readings tried", "cases"], rows)]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Write the claims ledger of the validation cases (docs/claims.md).")
    parser.add_argument("--cases", required=True, metavar="DIR", help="the validation case files")
    parser.add_argument("--out", required=True, metavar="FILE", help="the Markdown file to write")
    args = parser.parse_args(argv)
    try:
        text = claims_markdown(read_cases(args.cases))
    except ReportError as error:
        print(f"claims: {error}", file=sys.stderr)
        return 2
    write_atomically(os.path.abspath(args.out), text.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
