#!/usr/bin/env bash
# `cmake --install` gives a pbdlab that finds its data in PREFIX/share/pbdlab and its Gmsh
# module in PREFIX/lib/pbdlab, the build tree's pbdlab finds the source tree through
# pbdlab-data-dir.txt, --data-dir and PBDLAB_DATA_DIR override both, a binary with none of these
# names what it searched, one without its Gmsh module says so, and no binary holds the source
# folder's path.
# Usage: install_data_dir.sh CMAKE_COMMAND BUILD_DIR SOURCE_DIR BUILD_TREE_PBDLAB
set -euo pipefail
cmake=$1 build=$2 source=$3 built=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset PBDLAB_DATA_DIR
fail() { echo "FAIL: $*"; exit 1; }

prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
pbdlab=$prefix/bin/pbdlab
[[ -x $pbdlab ]] || fail "no $pbdlab"
for f in validation/cases/torsion_small.json validation/references/tension_p2_12x4x4.json scenes/torsion_small.json \
         benchmarks/tables/newton_reference.json benchmarks/scenes/res16_stretch_twist.json reports/make_report.py \
         reports/pbdlab_report/__init__.py reports/pbdlab_report/cli.py; do
  [[ -s $prefix/share/pbdlab/$f ]] || fail "not installed: share/pbdlab/$f"
done
# The report package's tests and their fake runs stay in the source tree.
for f in "$prefix"/share/pbdlab/reports/pbdlab_report/{test_*.py,fake_runs.py}; do
  [[ ! -e $f ]] || fail "installed, but only the tests need it: $f"
done
[[ ! -e $prefix/bin/pbdlab-data-dir.txt ]] || fail "the build tree's pbdlab-data-dir.txt was installed"
[[ -s $prefix/lib/pbdlab/libpbdlab_gmsh.so ]] || fail "not installed: lib/pbdlab/libpbdlab_gmsh.so"

# No compiled-in source path, neither installed nor in the build tree (its run path is relative
# too). grep reads the binary itself: `strings | grep -q` under pipefail lost matches to SIGPIPE.
for binary in "$pbdlab" "$built"; do
  for dir in "$source" "$(realpath "$source")"; do
    if grep -qaF -- "$dir" "$binary"; then fail "$binary holds the source folder $dir"; fi
  done
  grep -qaF -- '$ORIGIN/../lib/pbdlab' "$binary" || fail "$binary has no run path \$ORIGIN/../lib/pbdlab"
done

# The help documents the data directory.
"$pbdlab" --help > "$work/help.txt"
grep -q -- "--data-dir" "$work/help.txt" || fail "--help does not show --data-dir"
grep -q "PBDLAB_DATA_DIR" "$work/help.txt" || fail "--help does not name PBDLAB_DATA_DIR"
"$pbdlab" validate --help > /dev/null || fail "validate --help"

# Installed: run from an unrelated folder, the data comes from PREFIX/share/pbdlab.
cd "$work"
"$pbdlab" table --list > "$work/tables.txt" || fail "installed: table --list"
grep -q "^newton_reference" "$work/tables.txt" || { cat "$work/tables.txt"; fail "installed: no newton_reference table"; }
# The default cases folder is the installed one (every case file is read; none matches).
status=0
"$pbdlab" validate --solver no_such_solver --no-report --out "$work/none" 2> "$work/none.txt" || status=$?
[[ $status == 2 ]] && grep -q "share/pbdlab/validation/cases" "$work/none.txt" \
  || { cat "$work/none.txt"; fail "installed: validate's default cases folder (exit $status)"; }
# One fast case from a folder beside the installed ones: its relative paths (../../scenes,
# ../references) resolve inside PREFIX/share/pbdlab; the report uses the installed generator.
mkdir -p "$prefix/share/pbdlab/validation/one_case"
cp "$prefix/share/pbdlab/validation/cases/torsion_small.json" "$prefix/share/pbdlab/validation/one_case/"
report=--no-report
if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then report=; fi
"$pbdlab" validate --cases "$prefix/share/pbdlab/validation/one_case" --out "$work/one" $report 2> "$work/one.txt" \
  || { cat "$work/one.txt"; fail "installed: validate torsion_small"; }
[[ -s $work/one/runs/torsion_small/newton/metrics.json ]] || fail "installed: no metrics.json"
[[ -n $report || -s $work/one/report/report.html ]] || fail "installed: no report.html"

# The build tree's binary finds the source tree.
"$built" table --list | grep -q "^newton_reference" || fail "build tree: table --list"

# --data-dir and PBDLAB_DATA_DIR win; a missing one is an error naming it.
mkdir -p "$work/empty"
status=0
"$pbdlab" table --list --data-dir "$work/empty" 2> "$work/err.txt" || status=$?
[[ $status == 2 ]] && grep -q "$work/empty/benchmarks/tables" "$work/err.txt" \
  || { cat "$work/err.txt"; fail "--data-dir is not used (exit $status)"; }
PBDLAB_DATA_DIR=$source "$pbdlab" table --list | grep -q "^newton_reference" || fail "PBDLAB_DATA_DIR=$source"
status=0
PBDLAB_DATA_DIR=$work/missing "$pbdlab" table --list 2> "$work/err.txt" || status=$?
[[ $status == 2 ]] && grep -q "PBDLAB_DATA_DIR=$work/missing: no such folder" "$work/err.txt" \
  || { cat "$work/err.txt"; fail "a missing PBDLAB_DATA_DIR (exit $status)"; }

# Nothing to find: the error lists every place searched.
mkdir -p "$work/lonely/bin"
cp "$pbdlab" "$work/lonely/bin/pbdlab"
status=0
"$work/lonely/bin/pbdlab" table --list 2> "$work/err.txt" || status=$?
cat "$work/err.txt"
[[ $status == 2 ]] || fail "no data directory: exit $status, expected 2"
for expected in "--data-dir: not given" "PBDLAB_DATA_DIR: not set" "$work/lonely/share/pbdlab: no such folder" \
                "$work/lonely/bin/pbdlab-data-dir.txt: no such file"; do
  grep -qF -- "$expected" "$work/err.txt" || fail "the error does not say '$expected'"
done
# Without lib/pbdlab beside it, a mesh Gmsh makes fails with an error naming the module (exit 1);
# a copied bin/ and lib/ work without a data directory (run and mesh need none).
box='{"type": "box", "size": [1, 1, 1], "cells": [1, 1, 1]}'
status=0
"$work/lonely/bin/pbdlab" mesh "$box" --no-cache > /dev/null 2> "$work/err.txt" || status=$?
[[ $status == 1 ]] && grep -q "cannot use its Gmsh module 'libpbdlab_gmsh.so'" "$work/err.txt" \
  || { cat "$work/err.txt"; fail "no Gmsh module: exit $status, expected 1 and its name"; }
cp -r "$prefix/lib" "$work/lonely/lib"
"$work/lonely/bin/pbdlab" mesh "$box" --no-cache > /dev/null || fail "mesh without a data directory"
echo "install_data_dir: ok"
