"""The pieces of the report that both writers render the same way (links, paths, bold text,
headings with their anchors, saved figures), the anchors themselves, and the atomic write every
output file goes through."""
import os

from .values import slug


class Link:
    """A table cell or text piece that links to an anchor of the report."""

    def __init__(self, text, anchor):
        self.text, self.anchor = str(text), anchor

    def __str__(self):
        return self.text


class Path:
    """A file path in a table cell: the HTML lets it wrap after a slash, nowhere else."""

    def __init__(self, text):
        self.text = str(text)

    def __str__(self):
        return self.text


class Bold:
    """A piece of text set in bold."""

    def __init__(self, text):
        self.text = str(text)

    def __str__(self):
        return self.text


class Heading:
    """A section heading with its anchor (the id the summary and the contents link to)."""

    def __init__(self, text, anchor):
        self.text, self.anchor = text, anchor

    def __str__(self):
        return self.text


class Figure:
    """One saved figure: its files and the PNG bytes to embed in the HTML."""

    def __init__(self, name, title, caption, png):
        self.name, self.title, self.caption, self.png = name, title, caption, png


def case_anchor(case):
    return f"case-{slug(case)}"


def metric_anchor(case, label, metric_name):
    return f"metric-{slug(case)}-{slug(label)}-{slug(str(metric_name))}"


def write_atomically(path, data):
    """Temp name + rename, so a reader never sees a half-written report or figure."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
