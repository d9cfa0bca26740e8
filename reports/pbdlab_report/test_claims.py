"""Tests of claims.py: the claims ledger from the case files and the runs, and docs/claims.md
kept equal to what the shipped cases declare (in-process, no figures)."""
import os
import unittest

from .claims import claims_markdown, ledger, ledger_sections
from .reading import read_cases

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))  # reports/pbdlab_report -> the source tree


def case(paper, source, text, verdict, ours="ours", theirs="theirs", readings=None):
    claim = {"source": source, "text": text, "verdict": verdict, "ours": ours, "theirs": theirs}
    if readings is not None:
        claim["readings"] = readings
    return {"paper": paper, "claim": claim, "metrics": {}, "description": None, "path": "x"}


def run(passes):
    return {"metrics": [{"name": f"m{i}", "value": 1.0, "tolerance": 2.0 if p else 0.5} for i, p in enumerate(passes)],
            "label": "r", "case": "c"}


class Ledger(unittest.TestCase):
    def test_cases_of_one_claim_are_one_entry_with_each_cases_gates(self):
        files = {"fig9_nh": case("pbng", "Fig. 9", "three models alike", "reproduces", "5.1e-4", readings=["a", "b"]),
                 "fig9_snh": case("pbng", "Fig. 9", "three models alike", "reproduces", "5.7e-4", readings=["b", "c"]),
                 "fig8": case("pxpbd", "Fig. 8", "XPBD loses volume", "reproduces"),
                 "no_claim": {"paper": "pbng", "claim": None, "metrics": {}, "description": None, "path": "x"}}
        runs = {"fig9_nh": [run([True, True])], "fig9_snh": [run([True, False])]}
        entries = ledger(files, runs)
        self.assertEqual(list(entries), ["pxpbd", "pbng"])  # the papers' order, not the files'
        fig9 = entries["pbng"][0]
        self.assertEqual(fig9["ours"], ["5.1e-4", "5.7e-4"])
        self.assertEqual(fig9["readings"], ["a", "b", "c"])
        self.assertEqual(dict(fig9["cases"]), {"fig9_nh": "hold", "fig9_snh": "FAIL"})
        self.assertEqual(dict(entries["pxpbd"][0]["cases"]), {"fig8": "not run"})

    def test_an_unknown_verdict_is_refused_naming_the_case(self):
        # pbdlab refuses the word at load ("partly reproduces" for partly_reproduces), so every
        # validate run would fail; the ledger must not render it as if it were known.
        with self.assertRaisesRegex(ValueError, "fig9: /claim/verdict: unknown claim verdict 'partly reproduces'"):
            ledger({"fig9": case("pxpbd", "Fig. 9", "B-PXPBD ahead", "partly reproduces")})

    def test_the_report_tables_claims_that_ran_and_lists_the_others(self):
        files = {"fig8": case("pxpbd", "Fig. 8", "XPBD loses volume", "reproduces"),
                 "fig7": case("pxpbd", "Fig. 7", "sqrt(Psi) blows up", "does_not_reproduce")}
        items = ledger_sections(files, {"fig8": [run([True])]})
        self.assertEqual(items[0][0].anchor, "claims")
        tables = [content for _, kind, content in items if kind == "table"]
        self.assertEqual(len(tables), 1)
        header, rows = tables[0]
        self.assertEqual(rows[0][:3], ["Fig. 8", "XPBD loses volume", "reproduces"])
        self.assertEqual(rows[0][-1].text, "fig8 (hold)")
        lists = [block[1] for _, kind, content in items if kind == "blocks" for block in content["blocks"]
                 if block[0] == "ul"]
        self.assertEqual(lists, [[["Fig. 7: sqrt(Psi) blows up (does not reproduce; cases fig7)"]]])
        # No claims: no section.
        self.assertEqual(ledger_sections({"x": {"paper": "pbng", "claim": None}}, {}), [])

    def test_docs_claims_md_is_what_the_shipped_cases_declare(self):
        expected = claims_markdown(read_cases(os.path.join(SOURCE, "validation", "cases")))
        with open(os.path.join(SOURCE, "docs", "claims.md"), encoding="utf-8") as f:
            self.assertEqual(f.read(), expected,
                             "docs/claims.md differs from the cases' claims: in reports/, run "
                             "python3 -m pbdlab_report.claims --cases ../validation/cases --out ../docs/claims.md")


if __name__ == "__main__":
    unittest.main()
