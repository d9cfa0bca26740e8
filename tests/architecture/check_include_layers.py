#!/usr/bin/python3
"""Checks that includes only point down the layers of docs/ARCHITECTURE.md.

    /usr/bin/python3 tests/architecture/check_include_layers.py SOURCE_DIR

The folders of the project, and the rooms of core/, are stacked: a file may include its own
folder (or room) and the ones below it, never one above. An include that points up is the
first step of a cycle (problem.cpp including the terms that included problem.hpp), so it fails
here with the file, the line and the two layers.
"""
import os
import re
import sys

# Bottom to top. core/ is split into its rooms; the other folders are one layer each.
LAYERS = [
    "core/support",
    "core/fem",
    "core/topology",
    "core/grid",
    "core/materials",
    "core/terms",
    "core/model",
    "core/solver",
    "meshes",
    "reference",
    "solvers",
    "validation",
    "apps",
]
# Files outside the stack: they may include anything of the project.
UNLAYERED = ("tests/", "benchmarks/", "fuzz/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    """The index in LAYERS of a project path, or None when it is not in the stack."""
    for index, layer in enumerate(LAYERS):
        if path.startswith(layer + "/"):
            return index
    return None


def violations(source_dir):
    found = []
    for folder, _, names in os.walk(source_dir):
        relative_folder = os.path.relpath(folder, source_dir)
        if relative_folder.startswith(("build", ".")) or relative_folder.startswith(UNLAYERED):
            continue
        for name in sorted(names):
            if not name.endswith((".hpp", ".cpp", ".h")):
                continue
            path = os.path.normpath(os.path.join(relative_folder, name))
            own = layer_of(path)
            if own is None:
                continue
            with open(os.path.join(source_dir, path), encoding="utf-8") as f:
                for number, line in enumerate(f, start=1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    target = layer_of(match.group(1))
                    if target is not None and target > own:
                        found.append(f"{path}:{number}: includes {match.group(1)}, "
                                     f"but {LAYERS[target]} is above {LAYERS[own]}")
                    elif match.group(1).startswith("core/") and target is None:
                        found.append(f"{path}:{number}: includes {match.group(1)}, "
                                     "which is in no room of core/")
    return found


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    source_dir = sys.argv[1]
    if not os.path.isdir(os.path.join(source_dir, "core", "support")):
        sys.exit(f"{source_dir}: not the project's source folder (no core/support)")
    found = violations(source_dir)
    for line in found:
        print(line)
    if found:
        sys.exit(f"{len(found)} include(s) point up the layers (tests/architecture/check_include_layers.py)")
    print("every include points down the layers: " + " < ".join(LAYERS))


if __name__ == "__main__":
    main()
