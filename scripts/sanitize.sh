#!/usr/bin/env bash
# The sanitizer runs of scripts/test.sh, each in a build directory of its own:
#   asan  build-asan/: the whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer;
#   tsan  build-tsan/: the concurrency tests and the load test under ThreadSanitizer.
# libtorch itself is not instrumented: ASan and UBSan check native-ops' own code and its
# use of libtorch; TSan sees the races native-ops' code takes part in. The CUDA and
# Triton parts are left out (nothing of them runs without a GPU, and nvcc does not
# instrument). Usage: scripts/sanitize.sh [asan|tsan|all]  (default all)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
which=${1:-all}
# shellcheck source=/dev/null
source "$root/build/setup.env"

configure() {  # DIR FLAGS
  local dir=$1 flags=$2
  local args=(-S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNATIVE_OPS_CUDA=OFF -DNATIVE_OPS_TRITON=OFF
              -DNATIVE_OPS_BENCH=OFF "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_EXE_LINKER_FLAGS=$flags"
              "-DCMAKE_SHARED_LINKER_FLAGS=$flags" "-DCMAKE_MODULE_LINKER_FLAGS=$flags")
  [ -n "$TORCH_DIR" ] && args+=(-DTorch_DIR="$TORCH_DIR")
  [ -n "$PYTHON" ] && args+=(-DNATIVE_OPS_PYTHON="$PYTHON")
  command -v ninja >/dev/null && [ ! -f "$dir/CMakeCache.txt" ] && args+=(-G Ninja)
  cmake "${args[@]}" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log" >&2; exit 1; }
}

if [ "$which" = asan ] || [ "$which" = all ]; then
  echo "[sanitize] ASan + UBSan: building the test suite in build-asan/"
  # vptr is off: libtorch's classes have hidden type info, which UBSan's vptr check
  # cannot match across libraries (false reports, not bugs).
  configure "$root/build-asan" "-fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  cmake --build "$root/build-asan" --parallel "$(nproc)"
  echo "[sanitize] ASan + UBSan: running ctest"
  # Leak checking is off: libtorch keeps its registries until exit. python_module and
  # installed_package_consumer load the library into an uninstrumented process (Python; a
  # consumer built without the sanitizer), which ASan's runtime cannot join;
  # triton_interpret runs no code of native-ops.
  (cd "$root/build-asan" &&
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --output-on-failure --timeout 900 --parallel "$(nproc)" \
        -E "^(python_module|installed_package_consumer|triton_interpret)$")
fi

if [ "$which" = tsan ] || [ "$which" = all ]; then
  echo "[sanitize] TSan: building the concurrency tests in build-tsan/"
  configure "$root/build-tsan" "-fsanitize=thread -fno-omit-frame-pointer"
  cmake --build "$root/build-tsan" --parallel "$(nproc)" --target concurrency_test native_ops_stress
  echo "[sanitize] TSan: running them"
  (cd "$root/build-tsan" &&
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp" ctest --output-on-failure --timeout 900 \
      -R "^(Concurrency|stress_)")
fi
