#!/usr/bin/env bash
# Configures and builds native-ops in build/ against the libtorch that scripts/setup.sh chose.
# Extra arguments go to the CMake configure step (e.g. -DNATIVE_OPS_CUDA=OFF).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
env_file="$root/build/setup.env"
[ -f "$env_file" ] || { echo "[build] error: $env_file is missing: run scripts/setup.sh first" >&2; exit 1; }
# shellcheck source=/dev/null
source "$env_file"

args=(-S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}")
[ -n "$TORCH_DIR" ] && args+=(-DTorch_DIR="$TORCH_DIR")
[ -n "$PYTHON" ] && args+=(-DNATIVE_OPS_PYTHON="$PYTHON")
if [ ! -f "$root/build/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  args+=(-G Ninja)
fi
echo "[build] configuring"
cmake "${args[@]}" "$@" >"$root/build/configure.log" 2>&1 || { cat "$root/build/configure.log" >&2; exit 1; }
grep -E '^-- native-ops' "$root/build/configure.log" || true
echo "[build] compiling with $(nproc) jobs"
cmake --build "$root/build" --parallel "$(nproc)"
