"""Tests of writers.py: what a table cell becomes in HTML and in Markdown, and the anchors a
heading gets in both."""
import unittest

from .document import Heading, Link, Path
from .writers import html_table, md_table, render_html, render_markdown


class WritersTest(unittest.TestCase):
    def test_cells_in_html(self):
        page = html_table(["case", "directory", "result", "value"],
                          [[Link("a<b", "case-a_b"), Path("runs/a/newton"), "FAIL", "1e-05 FAIL"]],
                          {"numbers": True, "class": "runs", "ids": ["row-1"]})
        self.assertIn('<table class="runs">', page)
        self.assertIn('<tr id="row-1"><td><a href="#case-a_b">a&lt;b</a></td><td>runs/<wbr>a/<wbr>newton</td>'
                      '<td class="FAIL">FAIL</td><td class="num">1e-05 FAIL</td></tr>', page)

    def test_cells_in_markdown(self):
        table = md_table(["case", "note"], [[Link("a", "case-a"), "x | y\nz"]])
        self.assertEqual(table, "| case | note |\n|---|---|\n| [a](#case-a) | x \\| y z |\n")

    def test_a_heading_has_its_anchor_in_both(self):
        items = [(Heading("Runs", "runs"), "text", "1 < 2")]
        self.assertIn('<h2 id="runs">Runs</h2>\n<p>1 &lt; 2</p>', render_html(items, "now"))
        self.assertEqual(render_markdown(items, "now"),
                         '# pbdlab report\n\nGenerated now.\n\n<a id="runs"></a>\n\n## Runs\n\n1 < 2\n')


if __name__ == "__main__":
    unittest.main()
