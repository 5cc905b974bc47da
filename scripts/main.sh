#!/usr/bin/env bash
# Command 1 of the README: sets up, builds, and lists every registered override.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
"$root/build/cli/native-ops" list "$@"
