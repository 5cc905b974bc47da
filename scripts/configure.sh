#!/usr/bin/env bash
# configure.sh PRESET [CMAKE ARGS...]: configures the CMake preset PRESET (CMakePresets.json)
# against the libtorch that scripts/setup.sh chose (build/setup.env), with Ninja when it is
# installed, and logs to <binary dir>.configure.log. The other scripts call it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preset=$1
shift
ccache=${NATIVE_OPS_CCACHE:-1}
if [ "$ccache" != 0 ] && [ "$ccache" != 1 ]; then
  echo "[configure] error: NATIVE_OPS_CCACHE='$ccache' is not 0 or 1 (0 builds without ccache)" >&2
  exit 2
fi
env_file="$root/build/setup.env"
[ -f "$env_file" ] || { echo "[configure] error: $env_file is missing: run scripts/setup.sh first" >&2; exit 1; }
# shellcheck source=/dev/null
source "$env_file"
case "$preset" in
  release) dir=build ;;
  *) dir="build-$preset" ;;
esac
# A compiler without a shared libstdc++ (the H200 machine's CXX=/opt/gcc/bin/g++) links a
# copy of the C++ runtime into every library, which CMake refuses (CMakeLists.txt says why):
# the system's g++ takes its place, with a note.
has_shared_libstdcxx() { [[ "$("$1" -print-file-name=libstdc++.so 2>/dev/null)" == /* ]]; }
if [ -n "${CXX:-}" ] && [ ! -f "$root/$dir/CMakeCache.txt" ] && ! has_shared_libstdcxx "$CXX"; then
  if has_shared_libstdcxx /usr/bin/g++; then
    echo "[configure] note: CXX=$CXX has no shared libstdc++ (libstdc++.so): building with /usr/bin/g++ instead"
    export CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
  fi
fi
args=(--preset "$preset")
[ -n "$TORCH_DIR" ] && args+=(-DTorch_DIR="$TORCH_DIR")
[ -n "$PYTHON" ] && args+=(-DNATIVE_OPS_PYTHON="$PYTHON")
if [ ! -f "$root/$dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  args+=(-G Ninja)
fi
# ccache, where installed, keeps compiled objects in ~/.cache/ccache: a source compiled
# before with the same flags, even in another clone (paths under the clone are hashed
# relative to it), is not compiled again. The sources that include a precompiled header
# (torch's, CMakeLists.txt) are cacheable only with that header's sloppiness: without it
# ccache compiled 265 of 422 calls uncached. NATIVE_OPS_CCACHE=0 compiles everything.
if [ "$ccache" = 0 ]; then
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_CUDA_COMPILER_LAUNCHER=)
elif command -v ccache >/dev/null; then
  launcher="$(command -v cmake);-E;env;CCACHE_BASEDIR=$root;CCACHE_NOHASHDIR=1"
  launcher+=";CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime;$(command -v ccache)"
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" -DCMAKE_CUDA_COMPILER_LAUNCHER="$launcher")
fi
(cd "$root" && cmake "${args[@]}" "$@") >"$root/$dir.configure.log" 2>&1 || { cat "$root/$dir.configure.log" >&2; exit 1; }
grep -E '^-- native-ops' "$root/$dir.configure.log" || true
