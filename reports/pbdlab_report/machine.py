"""The Machine section: the hardware, threading and build that made the runs (summary.json's
environment), one column per distinct machine, so a report that mixes machines or commits
shows it."""
import datetime
import os
from collections import OrderedDict

from .values import fmt_number, is_number, obj


def format_memory(value):
    """Bytes as GiB; any other recorded form as it is."""
    if is_number(value) and value > 1e6:
        return f"{value / 2 ** 30:.1f} GiB"
    return fmt_number(value)


def run_date(run):
    """When the run was made: summary.json's (or its environment's) date, else when summary.json was
    written (its modification time)."""
    for holder in (run["environment"], run["summary"]):
        for key in ("date", "started", "finished", "timestamp"):
            if isinstance(holder.get(key), str) and holder[key]:
                return holder[key]
    try:
        return os.path.getmtime(os.path.join(run["dir"], "summary.json"))  # a number: a file time
    except OSError:
        return None


THREADING_TITLES = OrderedDict([("omp_threads", "OpenMP threads"), ("omp_num_threads", "OpenMP threads"),
                                ("omp_wait_policy", "OMP_WAIT_POLICY"),
                                ("omp_wait_policy_set_by", "OMP_WAIT_POLICY set by"),
                                ("blas_threads", "BLAS threads")])


def machine_table(runs):
    """One column per distinct environment, so a report mixing machines or commits shows it; the
    runs of each column are counted in the first row, not listed in the header."""
    # The date is the run's, not the machine's: runs differing only in it share a column.
    def machine(environment):
        return {k: v for k, v in environment.items() if k not in ("date", "started", "finished", "timestamp")}

    environments = []
    for r in runs:
        for env in environments:
            if machine(env["env"]) == machine(r["environment"]):
                env["runs"].append(r)
                break
        else:
            environments.append({"env": r["environment"], "runs": [r]})
    if len(environments) == 1:
        header = ["", "value"]
    else:
        header = [""] + [f"machine {i + 1}" for i in range(len(environments))]

    def runs_cell(e):
        if len(environments) == 1:
            return f"all {len(e['runs'])} runs" if len(e["runs"]) > 1 else "the one run"
        cases = list(OrderedDict.fromkeys(r["case"] for r in e["runs"]))
        return f"{len(e['runs'])} runs: " + ", ".join(cases[:6]) + (f" and {len(cases) - 6} more" if len(cases) > 6 else "")

    def dates_cell(e):
        dates = [d for d in (run_date(r) for r in e["runs"]) if d is not None]
        recorded = sorted(d for d in dates if isinstance(d, str))
        stamps = sorted(d for d in dates if not isinstance(d, str))
        if recorded:
            return recorded[0] if recorded[0] == recorded[-1] else f"{recorded[0]} to {recorded[-1]}"
        if not stamps:
            return "not recorded"
        first, last = (datetime.datetime.fromtimestamp(t).astimezone() for t in (stamps[0], stamps[-1]))
        text = first.strftime("%Y-%m-%d %H:%M")
        if last.strftime("%Y-%m-%d %H:%M") != text:
            text += " to " + last.strftime("%H:%M" if last.date() == first.date() else "%Y-%m-%d %H:%M")
        return text + first.strftime(" %Z") + " (when summary.json was written)"

    def env_value(e, *keys, formatter=fmt_number):
        for key in keys:
            if key in e["env"]:
                return formatter(e["env"][key])
        return "not recorded"

    def dependency(e, *names):
        deps = obj(e["env"].get("dependencies"))
        for n in names:
            if n in deps:
                return fmt_number(deps[n])
        return "not recorded"

    rows = [["runs"] + [runs_cell(e) for e in environments],
            ["date"] + [dates_cell(e) for e in environments],
            ["CPU"] + [env_value(e, "cpu") for e in environments],
            ["hardware threads"] + [env_value(e, "hardware_threads") for e in environments],
            ["memory"] + [env_value(e, "memory_bytes", "memory", "total_memory", "memory_total_bytes",
                                    formatter=format_memory) for e in environments]]
    threading_keys = list(OrderedDict.fromkeys(k for e in environments for k in obj(e["env"].get("threading"))))
    if threading_keys:
        titles = OrderedDict()
        for k in threading_keys:
            titles.setdefault(THREADING_TITLES.get(k, f"threading: {k}"), []).append(k)
        for title, keys in titles.items():
            cells = []
            for e in environments:
                threading = obj(e["env"].get("threading"))
                present = [k for k in keys if k in threading]
                if not present:
                    cells.append(env_value(e, "omp_threads") if title == "OpenMP threads" else "not recorded")
                elif threading[present[0]] is None and title == "BLAS threads":
                    cells.append("— (not OpenBLAS)")
                else:
                    cells.append(fmt_number(threading[present[0]]))
            rows.append([title] + cells)
    else:
        rows.append(["OpenMP threads"] + [env_value(e, "omp_threads") for e in environments])
        rows.append(["threading settings"] + ["not recorded" for e in environments])
    rows += [["Gmsh"] + [dependency(e, "gmsh", "Gmsh") for e in environments],
             ["git commit"] + [env_value(e, "git_commit") for e in environments],
             ["build type"] + [env_value(e, "build_type") for e in environments],
             ["compiler"] + [env_value(e, "compiler") for e in environments],
             ["OS"] + [env_value(e, "os") for e in environments],
             ["pbdlab version"] + [env_value(e, "pbdlab_version") for e in environments]]
    dependencies = sorted({d for e in environments for d in obj(e["env"].get("dependencies"))} - {"gmsh", "Gmsh"})
    rows += [[f"dependency: {d}"] + [fmt_number(obj(e["env"].get("dependencies")).get(d)) for e in environments]
             for d in dependencies]
    return header, rows, {"class": "machine"}
