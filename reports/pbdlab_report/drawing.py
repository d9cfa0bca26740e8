"""What every figure of the report shares: matplotlib on the Agg backend (no display), saving
a figure as PNG and SVG, one colour per run, the markers of steps that stopped short, and the
axis choices (log when values spread, plain numbers on short log axes, integer step ticks)."""
import io
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
# The figure modules take plt from here (from .drawing import plt), so Agg is always chosen first.
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, MaxNLocator, NullFormatter  # noqa: E402

from .document import write_atomically  # noqa: E402
from .values import is_number  # noqa: E402


# Beyond this ratio between the slowest and the fastest run, a linear axis squeezes the fast
# runs against zero, so iterations and seconds go on a logarithmic axis instead.
SPREAD_FOR_LOG_AXIS = 20.0
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


# How a figure marks a step that did not converge (the target was not reached).
STOP_MARKERS = {"roundoff_floor": dict(marker="s", ms=10, mew=1.5, mfc="none"),
                "other": dict(marker="x", ms=9, mew=2)}
STOP_LABELS = {"roundoff_floor": "stopped at the round-off floor", "other": "budget / stalled / diverged"}


def save_figure(fig, figures_dir, name):
    """Writes name.png and name.svg; returns the PNG bytes for embedding."""
    outputs = {}
    for fmt in ("png", "svg"):
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, dpi=110, bbox_inches="tight")
        outputs[fmt] = buffer.getvalue()
        write_atomically(os.path.join(figures_dir, f"{name}.{fmt}"), outputs[fmt])
    plt.close(fig)
    return outputs["png"]


def colors_for(labels):
    """One colour per label (a run, or a series' line), the same in every figure of the group."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {label: cycle[i % len(cycle)] for i, label in enumerate(labels)}


def spread_is_large(values):
    positive = [v for v in values if v and v > 0]
    return len(positive) > 1 and max(positive) / min(positive) > SPREAD_FOR_LOG_AXIS


def positive_pairs(xs, ys):
    """Points a log axis can show (a zero residual or error would be silently dropped anyway)."""
    pairs = [(x, y) for x, y in zip(xs, ys)
             if x is not None and y is not None and math.isfinite(y) and y > 0]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def label_short_log_axis(axis):
    """A log axis spanning under three decades gets at most one labelled power of ten; label
    1, 2, 5 x 10^k in plain numbers instead, so the values can be read off."""
    low, high = sorted(axis.get_view_interval())
    if low <= 0 or math.log10(high / low) >= 3:
        return
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def set_step_ticks(axis, steps):
    """Step numbers are integers: the steps themselves when there are few, else integer ticks."""
    steps = sorted({int(s) for s in steps if is_number(s)})
    if 0 < len(steps) <= 12:
        axis.set_major_locator(FixedLocator(steps))
    else:
        axis.set_major_locator(MaxNLocator(integer=True))
