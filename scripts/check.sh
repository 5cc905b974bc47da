#!/usr/bin/env bash
# The contributor loop: rebuilds build/ incrementally and runs every test but the slow
# ones (ctest preset "fast": labels unit, cli and gpu). Needs a first build (scripts/build.sh
# or scripts/test.sh). Arguments go to ctest (e.g. -R Policies, -L cli).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -f "$root/build/CMakeCache.txt" ] || { echo "[check] error: build/ is not configured: run scripts/build.sh first" >&2; exit 1; }
cmake --build "$root/build" --parallel "$(nproc)"
cd "$root" && ctest --preset fast --parallel "$(nproc)" "$@"
