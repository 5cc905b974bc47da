#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ in build-fuzz/ with clang (CMake option
# NATIVE_OPS_FUZZERS; -fsanitize=fuzzer,address,undefined on each parser), replays each
# target's regression inputs, and runs each for SECONDS (default 45) from its seed corpus,
# as many at once as there are cores.
# Any crash fails (exit 1) and leaves its input in build-fuzz/; make it a regression test
# (tests/fuzz/regressions/<target>/) with the fix. Needs clang++; where there is none it
# says so and exits 0 (scripts/setup.sh installs it on Debian).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"  # the build presets are found from the source tree
seconds=${1:-45}
clang=$(command -v clang++ || true)
if [ -z "$clang" ]; then
  echo "[fuzz] skipped: no clang++ here (apt-get install clang)"
  exit 0
fi
out="$root/build-fuzz"
echo "[fuzz] configuring build-fuzz/ with clang (CMake preset fuzz)"
"$root/scripts/configure.sh" fuzz -DCMAKE_CXX_COMPILER="$clang"
targets=(policy op_symbol arg_spec ordering bench_report)
echo "[fuzz] building ${targets[*]/%/_fuzzer}"
cmake --build --preset fuzz --parallel "$(nproc)"
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1  # libtorch keeps its globals to exit
# fuzz_target TARGET: replays TARGET's regression inputs, then fuzzes it for SECONDS; exit
# status 1 when an input crashed it.
fuzz_target() {
  local target=$1 failed=0
  local binary="$out/tests/fuzz/${target}_fuzzer" corpus="$out/corpus_$target"
  mkdir -p "$corpus"
  cp -n "$root/tests/fuzz/corpus/$target/"* "$corpus/" 2>/dev/null || true
  local regressions="$root/tests/fuzz/regressions/$target"
  if [ -d "$regressions" ]; then
    echo "[fuzz] $target: replaying $(ls "$regressions" | wc -l) regression inputs"
    "$binary" "$regressions"/* >"$out/$target.regressions.log" 2>&1 || { tail -30 "$out/$target.regressions.log"; failed=1; }
  fi
  echo "[fuzz] $target: ${seconds}s"
  if ! "$binary" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$out/$target-" "$corpus" >"$out/$target.log" 2>&1; then
    tail -40 "$out/$target.log"
    echo "[fuzz] $target FAILED: the crashing input is in $out ($target-crash-*, -timeout-* or -oom-*)"
    failed=1
  else
    grep -E "stat::number_of_executed_units" "$out/$target.log" | sed "s/^/[fuzz] $target: /"
  fi
  return $failed
}
# A fuzzer runs on one core: as many run at once as there are cores, each reporting in
# turn when its batch is done.
status=0
batch=()
finish_batch() {
  for target in "${batch[@]}"; do
    wait "${pid[$target]}" || status=1
    cat "$out/$target.summary"
  done
  batch=()
}
declare -A pid
for target in "${targets[@]}"; do
  fuzz_target "$target" >"$out/$target.summary" 2>&1 &
  pid[$target]=$!
  batch+=("$target")
  [ ${#batch[@]} -lt "$(nproc)" ] || finish_batch
done
finish_batch
exit $status
