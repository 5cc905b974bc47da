#!/usr/bin/env bash
# Command 2 of the README: sets up, builds, and runs every test: the ctest suite, then
# the sanitizer runs (ASan + UBSan over the suite, TSan over the concurrency tests:
# scripts/sanitize.sh) and the fuzzers, 45 s each (scripts/fuzz.sh). Arguments go to the
# first ctest run (e.g. -R Sweep; -j1 for one test at a time). NATIVE_OPS_QUICK=1 runs
# the ctest suite only.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Each step says how long it took: where the time of a CI run goes.
step() {
  local start=$SECONDS
  "$@"
  echo "[test] $(basename "$1") ${2:-}: $((SECONDS - start)) s (total $SECONDS s)"
}
step "$root/scripts/setup.sh"
step "$root/scripts/build.sh"
# The tests are separate processes that share nothing: they run a core each.
run_ctest() { (cd "$root/build" && ctest --output-on-failure --timeout 600 --parallel "$(nproc)" "$@"); }
step run_ctest "$@"
if [ "${NATIVE_OPS_QUICK:-0}" = 1 ]; then
  echo "[test] NATIVE_OPS_QUICK=1: sanitizers and fuzzers skipped"
  exit 0
fi
step "$root/scripts/sanitize.sh" asan
step "$root/scripts/sanitize.sh" tsan
step "$root/scripts/fuzz.sh" "${NATIVE_OPS_FUZZ_SECONDS:-45}"
