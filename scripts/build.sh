#!/usr/bin/env bash
# Configures (CMake preset "release") and builds native-ops in build/ against the libtorch
# that scripts/setup.sh chose. Extra arguments go to the configure step (e.g.
# -DNATIVE_OPS_CUDA=OFF).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
echo "[build] configuring"
"$root/scripts/configure.sh" release "$@"
echo "[build] compiling with $(nproc) jobs"
cmake --build "$root/build" --parallel "$(nproc)"
