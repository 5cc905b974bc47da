#!/usr/bin/env bash
# native-ops bench on a GPU shows aten, cuda and triton side by side for an op that both
# DSLs override. Skips (exit 77) where the triton or cuda DSL cannot run.
set -uo pipefail
cli=$1
dsls=$("$cli" dsls)
if ! grep -qE '^cuda +yes' <<<"$dsls" || ! grep -qE '^triton +yes' <<<"$dsls"; then
  echo "skipped: the cuda and triton DSLs need a GPU here"
  exit 77
fi
out=$("$cli" bench --op _softmax --device cuda --seconds 0.02) || { echo "$out"; exit 1; }
echo "$out"
grep -qE '^OP +SHAPE +ATEN +CUDA +TRITON' <<<"$out" || { echo "FAILED: no side-by-side header"; exit 1; }
grep -qE '^_softmax +bf16 \[32768,4096\] +[0-9.]+[mun]?s +[0-9.]+[mun]?s\*? +[0-9.]+[mun]?s' <<<"$out" \
  || { echo "FAILED: no side-by-side row with aten, cuda and triton times"; exit 1; }
