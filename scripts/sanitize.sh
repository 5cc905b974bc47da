#!/usr/bin/env bash
# The sanitizer runs of scripts/test.sh, each in a build directory of its own:
#   asan  build-asan/: the whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer;
#   tsan  build-tsan/: the concurrency tests and the load test under ThreadSanitizer.
# libtorch itself is not instrumented: ASan and UBSan check native-ops' own code and its
# use of libtorch; TSan sees the races native-ops' code takes part in. The CUDA and
# Triton parts are left out (nothing of them runs without a GPU, and nvcc does not
# instrument). Both build at -O1 -g1 (CMakePresets.json): line tables are all a report
# needs, and -O2 -g took twice as long to compile (a test source under ASan: 92 s against
# 47 s on the 2-core machine). Usage: scripts/sanitize.sh [asan|tsan|all]  (default all)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"  # the build presets are found from the source tree
which=${1:-all}
if [ "$which" = asan ] || [ "$which" = all ]; then
  echo "[sanitize] ASan + UBSan: building the test suite in build-asan/"
  # vptr is off: libtorch's classes have hidden type info, which UBSan's vptr check
  # cannot match across libraries (false reports, not bugs).
  "$root/scripts/configure.sh" asan
  cmake --build --preset asan --parallel "$(nproc)"
  echo "[sanitize] ASan + UBSan: running ctest"
  # Leak checking is off: libtorch keeps its registries until exit. python_module, e2e_cpu and the
  # two package consumers load the library into an uninstrumented process (Python; a
  # consumer built without the sanitizer), which ASan's runtime cannot join;
  # triton_interpret runs no code of native-ops.
  (cd "$root/build-asan" &&
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --output-on-failure --timeout 900 --parallel "$(nproc)" \
        -E "^(python_module|e2e_cpu|installed_package_consumer|build_tree_package_consumer|triton_interpret)$")
fi

if [ "$which" = tsan ] || [ "$which" = all ]; then
  echo "[sanitize] TSan: building the concurrency tests in build-tsan/"
  "$root/scripts/configure.sh" tsan
  # Only the two programs it runs: the rest of the suite took minutes more to build.
  cmake --build --preset tsan --parallel "$(nproc)" --target concurrency_test native_ops_stress
  echo "[sanitize] TSan: running them"
  (cd "$root/build-tsan" &&
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp" ctest --output-on-failure --timeout 900 \
      -R "^(Concurrency|stress_)")
fi
