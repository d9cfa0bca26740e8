# Sourced by the `pbdlab table` tests (table_solvers.sh, table_probe.sh) after they set
# `pbdlab`: a temporary data directory `data` with benchmarks/tables and scenes (removed on
# exit), `fail MESSAGE`, and `expect_bad_table ID FIELD`: `pbdlab table ID` exits 2 and its
# error names ID.json and FIELD.
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$data/benchmarks/tables" "$data/scenes"

expect_bad_table() {
  local id=$1 field=$2 status=0
  "$pbdlab" table "$id" --data-dir "$data" --out "$data/runs" > /dev/null 2> "$data/err.txt" || status=$?
  cat "$data/err.txt"
  [[ $status == 2 ]] || fail "$id: exit $status, not 2"
  grep -qF "$id.json" "$data/err.txt" && grep -qF "$field" "$data/err.txt" || fail "$id: the error does not name the file and $field"
}
