#!/usr/bin/env bash
# native-ops tune on the CPU: a small grid gives a table that parses, applies, and shows in
# list and explain; the output file is checked before the measurements, and a file that is
# not a tuned policy is never replaced.
set -uo pipefail
cli=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

out=$("$cli" tune --op _softmax --device cpu --budget 3 -o "$dir/tuned.json" --results "$dir/raw.json") \
  || { echo "$out"; fail "tune exited $?"; }
echo "$out"
grep -qE '^_softmax @ CPU: rows x width: .*f32 [0-9]+x[0-9]+[, ].* buckets' <<<"$out" || fail "no table summary"
python3 - "$dir/tuned.json" "$dir/raw.json" <<'PY' || fail "the table's format"
import json, sys
table = json.load(open(sys.argv[1]))
assert table["version"] == 2, table["version"]
assert table["description"].startswith("Tuned by native-ops tune --op _softmax"), table["description"]
entry = table["select"]["_softmax@CPU"]
assert entry["features"] == ["rows", "width"]
assert "torch" in entry["tuned_with"] and "device" not in entry
grid = entry["tables"]["f32"]
buckets = (len(grid["edges"]["rows"]) + 1) * (len(grid["edges"]["width"]) + 1)
assert len(grid["cells"]) == buckets == len(grid["margins"]), grid
assert set(grid["cells"]) <= {"aten", "_softmax_cpp_0"}, grid["cells"]
for cell, margin in zip(grid["cells"], grid["margins"]):
    assert margin == 1.0 if cell == "aten" else margin > 1.0, (cell, margin)
for edges in grid["edges"].values():
    assert edges == sorted(set(edges)), edges
for dtype in ("bf16", "f16", "f64"):  # the cpp override takes float32 only: aten everywhere
    assert entry["tables"][dtype]["cells"] == ["aten"], entry["tables"][dtype]
raw = json.load(open(sys.argv[2]))
f32 = [row for row in raw["rows"] if row["dtype"] == "f32"]
assert 12 <= len(f32) <= 16, len(f32)  # the CPU grid: 4 rows x 4 widths, less cells over its byte limit
PY
"$cli" reorder --check --policy "$dir/tuned.json" | grep -q "is valid" || fail "reorder --check"
"$cli" --policy "$dir/tuned.json" list --op _softmax --key CPU | grep -qF "selection table ($dir/tuned.json): rows x width" \
  || fail "list shows no table"
"$cli" --policy "$dir/tuned.json" explain _softmax --args "f32[1024,4096], -1, false" \
  | grep -qE "selection table .*: f32 rows=1024 width=4096 falls in rows \[.*\), width \[.*\): (aten|_softmax_cpp_0)" \
  || fail "explain shows no bucket"

echo '{"mine": 1}' >"$dir/keep.json"
if "$cli" tune --op _softmax --device cpu --budget 1 -o "$dir/keep.json" 2>"$dir/err"; then fail "replaced keep.json"; fi
grep -q "exists and is not a policy written by native-ops tune" "$dir/err" || { cat "$dir/err"; fail "message"; }
grep -q mine "$dir/keep.json" || fail "keep.json changed"
"$cli" tune --op _fused_rms_norm_backward --device cpu --budget 1 -o "$dir/none.json" 2>"$dir/err" && fail "tuned an op without a grid"
grep -q "nothing to tune: no op in the selection has both shape features and a grid" "$dir/err" || { cat "$dir/err"; fail "message"; }
[ ! -e "$dir/none.json" ] || fail "wrote a file for nothing"
echo PASSED
