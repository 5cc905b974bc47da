#!/usr/bin/env bash
# build.sh [--target NAME]... [CMAKE ARGS...]: configures (CMake preset "release") and builds
# native-ops in build/ against the libtorch that scripts/setup.sh chose: every target, or
# only the NAMEd ones and what they need. The other arguments go to the configure step
# (e.g. -DNATIVE_OPS_CUDA=OFF).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
targets=() configure_args=()
while [ $# -gt 0 ]; do
  if [ "$1" = --target ]; then
    [ $# -ge 2 ] && [ -n "$2" ] || { echo "[build] error: --target needs a target name (native-ops, native_ops_torch)" >&2; exit 2; }
    targets+=("$2")
    shift 2
  else
    configure_args+=("$1")
    shift
  fi
done
echo "[build] configuring"
"$root/scripts/configure.sh" release "${configure_args[@]}"
if [ ${#targets[@]} -eq 0 ]; then
  echo "[build] compiling with $(nproc) jobs"
  cmake --build "$root/build" --parallel "$(nproc)"
else
  echo "[build] compiling ${targets[*]} with $(nproc) jobs"
  cmake --build "$root/build" --parallel "$(nproc)" --target "${targets[@]}"
fi
