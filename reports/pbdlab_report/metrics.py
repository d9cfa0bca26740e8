"""metrics.json's metrics: what each one measures, in words, and finding a run's metric by name
or type (the figures draw the metrics named *error*, the sweep tables pick theirs by type)."""
import os

from .values import fmt_number, is_number


AXES = {0: "x", 1: "y", 2: "z"}


def metric_definition(metric, spec=None):
    """What a metric measures, in words: from the case file's metric (`spec`: its type and
    parameters) when given, else from metrics.json's `type` (the runner's own rows included)."""
    spec = spec or {}
    kind = spec.get("type") or metric.get("type") or metric.get("name")
    relative = spec["relative"] if isinstance(spec.get("relative"), bool) else metric.get("unit") == "relative"
    scene = os.path.splitext(os.path.basename(str(spec.get("reference_scene", ""))))[0]
    if kind == "probe_error":
        probe, component, expected = spec.get("probe"), spec.get("component"), spec.get("expected")
        u = ("|u|" if component == -1 else f"u_{AXES[component]}" if component in AXES else "u")
        text = f"|{u}({probe or 'probe'}) − expected|" + (" ÷ |expected|" if relative else "")
        return (text + ", u the displacement after the last step"
                + (f", expected {fmt_number(expected, 5)}" if is_number(expected) else ""))
    if kind == "final_relative_residual":
        return "relative residual |r| / |r(x_ref)| at the end of the last step"
    if kind == "max_penetration":
        return "deepest penetration at the end of any frame (into a collider or another body)"
    if kind == "volume_ratio_error":
        expected = spec.get("expected", 1)
        return f"|V(x) / V(X) − {fmt_number(expected, 5)}| after the last step (V: deformed volume, X: rest)"
    if kind in ("reference_max_error", "reference_rms_error"):
        which = "largest" if kind == "reference_max_error" else "RMS"
        return (f"{which} |x − x_ref| over the nodes, x_ref the Newton solution of the same scene"
                + (" ÷ the reference's largest displacement" if relative else ""))
    if kind in ("mesh_reference_max_error", "mesh_reference_l2_error"):
        which = "largest" if kind == "mesh_reference_max_error" else "volume-weighted L2 norm of"
        return (f"{which} |u − u_ref| at the nodes of the Newton solution of "
                + (scene if scene else "a reference scene") + " (a finer mesh; u interpolated there)"
                + (" ÷ the reference's largest displacement" if relative else ""))
    if kind == "torsion_angle_deviation":
        sections = spec.get("sections")
        return ("largest |deviation| of the cross-sections' rotation angle about x from the linear interpolation "
                "between the end sections" + (f", over {sections} sections" if is_number(sections) else ""))
    if kind == "inverted_elements":
        return "elements of the final state with det F ≤ 0 at a quadrature point"
    if kind == "max_inverted_elements":
        return "the most elements with det F ≤ 0 at the end of any frame"
    if kind == "rest_shape_error":
        return ("distance of the final state from the rest shape up to a rigid motion"
                + (" ÷ the rest mesh's largest extent" if relative else ""))
    if kind in ("edge_stretch_mean", "edge_stretch_max"):
        which = "mean" if kind == "edge_stretch_mean" else "largest"
        return f"{which} stretch l/L − 1 over the cloth's edges after the last step (L: rest length)"
    if kind == "area_ratio_error":
        expected = spec.get("expected", 1)
        return f"|A(x) / A(X) − {fmt_number(expected, 5)}| of the cloth's area after the last step"
    if kind == "lowest_point_error":
        return ("|lowest point − Newton's lowest point| along −gravity after the last step"
                + (" ÷ the reference's largest displacement" if relative else ""))
    if kind == "steps_converged":
        rule = metric.get("measured")
        return "steps that reached neither the target nor the round-off floor" + (f" ({rule})" if rule else "")
    if kind == "expected_divergence":
        return "0 when the run diverged, as the case expects of this solver; 1 when it did not"
    return "—"


def error_metric_names(runs):
    """Metrics named *error*, the ones plotted, in sorted order."""
    return sorted({m["name"] for r in runs for m in r["metrics"]
                   if isinstance(m.get("name"), str) and "error" in m["name"]})


def metric_value(run, name):
    """The first value recorded for the metric `name` (None when the run has no such metric)."""
    return next((m.get("value") for m in run["metrics"] if m.get("name") == name), None)


def metric_of_type(run, types):
    """The run's first metric of one of `types` (its `type`, or its name when it has no type)."""
    for t in types:
        for m in run["metrics"]:
            if m.get("type", m.get("name")) == t:
                return m
    return None


def is_reference(metric):
    """A distance metric of the reference solver against its own solution (the runner writes
    pass null and a note saying so): not a measurement."""
    return metric.get("pass", False) is None and "own solution" in str(metric.get("note", ""))
