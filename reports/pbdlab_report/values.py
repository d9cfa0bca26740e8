"""How values are tested and written: numbers, optional JSON objects, names made safe for files
and anchors. The lowest module of the report: it knows nothing of runs."""
import math
import re


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def obj(x):
    """x if it is a JSON object, else {}: optional sections of a run's files may be absent."""
    return x if isinstance(x, dict) else {}


def fmt_number(x, digits=3):
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, int):
        return str(x)
    if not math.isfinite(x):
        return str(x)
    return f"{x:.{digits}g}"


def fmt_seconds(x):
    return f"{x:.3g} s" if is_number(x) else fmt_number(x)


def plural(n, word, words=None):
    return f"{n} {word if n == 1 else (words or word + 's')}"


def slug(text):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "case"
