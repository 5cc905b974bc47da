#!/usr/bin/env bash
# Builds the libFuzzer targets in tests/fuzz/ with clang (-fsanitize=fuzzer,address,
# undefined) against the library in build/, and runs each for SECONDS (default 60) from
# its seed corpus. Any crash fails (exit 1) and leaves its input in build/fuzz/; make it
# a regression test (tests/fuzz/regressions/<target>/) with the fix. Needs clang++; where
# there is none it says so and exits 0 (scripts/setup.sh installs it on Debian).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
clang=$(command -v clang++ || true)
if [ -z "$clang" ]; then
  echo "[fuzz] skipped: no clang++ here (apt-get install clang)"
  exit 0
fi
# shellcheck source=/dev/null
source "$root/build/setup.env"
torch_prefix=$("${PYTHON:-python3}" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null || true)
[ -n "${TORCH_DIR:-}" ] && torch_prefix=$(cd "$TORCH_DIR/../../.." && pwd)
[ -d "$torch_prefix/include" ] || { echo "[fuzz] error: cannot find libtorch's headers (run scripts/setup.sh)" >&2; exit 1; }
out="$root/build/fuzz"
mkdir -p "$out"
flags=(-std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -D_GLIBCXX_USE_CXX11_ABI=1 -I"$root/lib/include" -I"$root/lib/src"
       -isystem "$torch_prefix/include" -isystem "$torch_prefix/include/torch/csrc/api/include")
libs=(-L"$root/build/lib" -lnative_ops -L"$torch_prefix/lib" -ltorch -ltorch_cpu -lc10
      -Wl,-rpath,"$root/build/lib" -Wl,-rpath,"$torch_prefix/lib")
# Each target compiles the parser it fuzzes, so that libFuzzer sees its branches.
declare -A parser=([policy]=lib/src/policy.cpp [op_symbol]=lib/src/names.cpp [arg_spec]=lib/src/arg_spec.cpp)
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1  # libtorch keeps its globals to exit
status=0
for target in policy op_symbol arg_spec; do
  binary="$out/${target}_fuzzer"
  echo "[fuzz] building $target"
  "$clang" "${flags[@]}" "$root/tests/fuzz/${target}_fuzzer.cpp" "$root/${parser[$target]}" -o "$binary" "${libs[@]}"
  corpus="$out/corpus_$target"
  mkdir -p "$corpus"
  cp -n "$root/tests/fuzz/corpus/$target/"* "$corpus/" 2>/dev/null || true
  regressions="$root/tests/fuzz/regressions/$target"
  if [ -d "$regressions" ]; then
    echo "[fuzz] $target: replaying $(ls "$regressions" | wc -l) regression inputs"
    "$binary" "$regressions"/* >"$out/$target.regressions.log" 2>&1 || { tail -30 "$out/$target.regressions.log"; status=1; }
  fi
  echo "[fuzz] $target: ${seconds}s"
  if ! (cd "$out" && "$binary" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 "$corpus" \
        >"$out/$target.log" 2>&1); then
    tail -40 "$out/$target.log"
    echo "[fuzz] $target FAILED: the crashing input is in $out (crash-*, timeout-* or oom-*)"
    status=1
  else
    grep -E "stat::number_of_executed_units" "$out/$target.log" | sed "s/^/[fuzz] $target: /"
  fi
done
exit $status
