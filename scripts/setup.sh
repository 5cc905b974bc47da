#!/usr/bin/env bash
# Prepares a machine to build native-ops, idempotently, and writes build/setup.env,
# which scripts/build.sh reads. What it does, in order:
#   1. Picks the libtorch to build against:
#      - Torch_DIR or NATIVE_OPS_TORCH_DIR in the environment: a standalone libtorch;
#      - else a python3 that already imports torch 2.11.0 (the H200 machine): that torch,
#        and nothing is installed;
#      - else a project-local .venv with torch==2.11.0 from PyPI. Wheels are cached in
#        ~/.cache/native-ops/wheels, so fresh clones on this machine download nothing.
#   2. Installs the Debian packages the build needs when any is missing (root only); where
#      it makes the .venv, also clang (the fuzzers) and groff-base (the man-page lint),
#      which the tests skip without, and ccache (scripts/configure.sh compiles through it).
#      Where torch is already there (the H200 machine, offline), nothing optional is asked for.
#   3. Checks for Triton 3.6.0, the triton DSL's build-time compiler: in the .venv it is
#      installed (from the same wheel cache; torch's wheel depends on it already), with
#      numpy for Triton's interpreter (tests/triton_interpret_test.py); elsewhere it is
#      used when present, and the build says so when it is not.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
torch_version=2.11.0
cache=${NATIVE_OPS_CACHE:-$HOME/.cache/native-ops}

say() { echo "[setup] $*"; }
die() { echo "[setup] error: $*" >&2; exit 1; }

has_header() { [ -e "/usr/include/$1" ]; }

# require_space DIR MIB WHAT [ELSE]: stops before WHAT when the disk holding DIR has less
# than MIB MiB free, since pip would stop halfway with a traceback instead. ELSE is a fix
# other than freeing space.
require_space() {
  local free
  free=$(df -Pm "$1" | awk 'NR == 2 { print $4 }')
  [ "$free" -ge "$2" ] ||
    die "$3 needs about $(($2 / 1024)) GiB free on the disk of $1, which has $free MiB: free some space there${4:+ (or $4)}, then run again"
}

# install_optional COMMAND PACKAGE WHY WITHOUT: installs PACKAGE where COMMAND is missing,
# saying WHY, or WITHOUT where it cannot.
install_optional() {
  command -v "$1" >/dev/null && return 0
  say "installing $2 ($3)"
  { apt-get install -y -qq "$2" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "$2" >/dev/null 2>&1; }; } ||
    say "$2 could not be installed: $4"
}

# with-venv: python3 and its venv module are needed too.
ensure_debian_packages() {
  local missing=()
  # The H200 machine has these headers without the Debian packages: look at headers first.
  command -v cmake >/dev/null || missing+=(cmake)
  command -v g++ >/dev/null || missing+=(g++)
  if [ "${1:-}" = with-venv ]; then
    command -v python3 >/dev/null || missing+=(python3)
    python3 -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
  fi
  has_header CLI/CLI.hpp || missing+=(libcli11-dev)
  has_header nlohmann/json.hpp || missing+=(nlohmann-json3-dev)
  has_header spdlog/spdlog.h || missing+=(libspdlog-dev)
  has_header gtest/gtest.h || missing+=(libgtest-dev)
  has_header benchmark/benchmark.h || missing+=(libbenchmark-dev)
  local optional=false
  [ "${1:-}" = with-venv ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] && optional=true
  if $optional; then
    # Optional: the fuzzers (scripts/fuzz.sh) need clang's libFuzzer; the man-page lint test
    # needs groff; scripts/configure.sh compiles through ccache, so that a fresh clone on
    # this machine (CI's) compiles again only what changed. Without them the fuzzers and the
    # lint test skip, and every build compiles everything.
    install_optional clang++ clang "for the fuzzers" "the fuzzers will be skipped"
    install_optional ccache ccache "compiled objects kept in ~/.cache/ccache across clones" \
      "every build compiles everything"
    install_optional groff groff-base "for the man-page lint test" "the man-page lint test will be skipped"
  fi
  if [ ${#missing[@]} -eq 0 ]; then
    say "build tools and libraries: present"
    return
  fi
  command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get: install them with your package manager"
  [ "$(id -u)" = 0 ] || die "missing Debian packages ${missing[*]}: run as root, or 'sudo apt-get install ${missing[*]}'"
  say "installing Debian packages: ${missing[*]}"
  if ! apt-get update -qq; then
    die "apt-get update failed: the Debian package mirror cannot be reached (check the network or proxy), or install ${missing[*]} by hand"
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed: see the messages above"
}

python_has_torch() {
  "$1" - "$torch_version" <<'PY' 2>/dev/null
import sys
import torch
sys.exit(0 if torch.__version__.split("+")[0] == sys.argv[1] else 1)
PY
}

ensure_venv_torch() {
  local venv="$root/.venv"
  if [ -x "$venv/bin/python" ] && python_has_torch "$venv/bin/python"; then
    say "torch $torch_version: present in $venv"
    return
  fi
  if [ ! -x "$venv/bin/python" ]; then
    say "creating the virtual environment $venv"
    python3 -m venv "$venv" || die "python3 -m venv failed: install python3-venv ('apt-get install python3-venv')"
  fi
  mkdir -p "$cache/wheels"
  require_space "$root" 5500 "installing torch==$torch_version into $venv"
  if ! "$venv/bin/pip" install -q --no-index --find-links "$cache/wheels" "torch==$torch_version" 2>/dev/null; then
    say "downloading torch==$torch_version and its CUDA libraries into $cache/wheels (about 3 GB, once per machine)"
    require_space "$cache/wheels" 3500 "downloading torch==$torch_version" \
      "set NATIVE_OPS_CACHE to a folder on a larger disk"
    # --no-cache-dir: pip's own HTTP cache would hold a second copy of every wheel.
    "$venv/bin/pip" download -q --no-cache-dir --dest "$cache/wheels" "torch==$torch_version" \
      || die "cannot download torch==$torch_version from PyPI: check the network or proxy (PIP_INDEX_URL), or point Torch_DIR at a standalone libtorch $torch_version"
    say "installing torch==$torch_version into $venv"
    "$venv/bin/pip" install -q --no-index --find-links "$cache/wheels" "torch==$torch_version" \
      || die "installing torch==$torch_version from $cache/wheels failed: delete that folder and run again"
  fi
  python_has_torch "$venv/bin/python" || die "torch in $venv does not import: delete $venv and run again"
  say "torch $torch_version: installed in $venv"
}

triton_version=3.6.0
# numpy runs Triton's interpreter for tests/triton_interpret_test.py; Triton 3.6's
# interpreter fails with numpy 2.4 and later (it converts one-element arrays with int()).
numpy_version=2.2.6

# python_has PYTHON NAME VERSION: whether PYTHON imports NAME at VERSION.
python_has() {
  "$1" - "$2" "$3" <<'PY' 2>/dev/null
import importlib
import sys
sys.exit(0 if importlib.import_module(sys.argv[1]).__version__ == sys.argv[2] else 1)
PY
}

# ensure_venv_package NAME VERSION: NAME==VERSION in .venv, from the wheel cache, which
# it is downloaded into the first time.
ensure_venv_package() {
  local venv="$root/.venv" name=$1 version=$2
  if python_has "$venv/bin/python" "$name" "$version"; then
    say "$name $version: present in $venv"
    return
  fi
  "$venv/bin/pip" install -q --no-index --find-links "$cache/wheels" "$name==$version" 2>/dev/null || {
    say "downloading $name==$version into $cache/wheels"
    "$venv/bin/pip" download -q --no-cache-dir --no-deps --dest "$cache/wheels" "$name==$version" \
      || die "cannot download $name==$version from PyPI: check the network or proxy (PIP_INDEX_URL)"
    "$venv/bin/pip" install -q --no-index --find-links "$cache/wheels" "$name==$version" \
      || die "installing $name==$version from $cache/wheels failed: delete that folder and run again"
  }
  say "$name $version: installed in $venv"
}

report_triton() {
  if python_has "$1" triton "$triton_version"; then
    say "triton $triton_version: present for $1"
  else
    say "triton $triton_version is not importable by $1: the build will have no Triton kernels (the triton DSL says why)"
  fi
}

mkdir -p "$root/build"
env_file="$root/build/setup.env"
torch_dir=${NATIVE_OPS_TORCH_DIR:-${Torch_DIR:-}}
if [ -n "$torch_dir" ]; then
  [ -e "$torch_dir/TorchConfig.cmake" ] || die "Torch_DIR=$torch_dir holds no TorchConfig.cmake: point it at libtorch/share/cmake/Torch"
  ensure_debian_packages
  say "libtorch: $torch_dir (from Torch_DIR)"
  printf 'TORCH_DIR=%q\nPYTHON=\n' "$torch_dir" >"$env_file"
elif python_has_torch python3; then
  say "libtorch: the torch $torch_version of $(command -v python3); installing nothing for it"
  ensure_debian_packages
  report_triton python3
  printf 'TORCH_DIR=\nPYTHON=%q\n' "$(command -v python3)" >"$env_file"
else
  ensure_debian_packages with-venv
  ensure_venv_torch
  ensure_venv_package triton "$triton_version"
  ensure_venv_package numpy "$numpy_version"
  printf 'TORCH_DIR=\nPYTHON=%q\n' "$root/.venv/bin/python" >"$env_file"
fi
say "ready: $env_file"
