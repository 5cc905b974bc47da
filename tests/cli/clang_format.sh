#!/usr/bin/env bash
# clang_format.sh ROOT: every C++ and CUDA source under ROOT is formatted as .clang-format
# says. Skips (77) without clang-format 14, the version the style was applied with: other
# versions lay out some constructs differently.
set -u
root=$1
command -v clang-format >/dev/null || { echo "skipped: no clang-format (apt-get install clang-format)"; exit 77; }
version=$(clang-format --version | grep -oE "version [0-9]+" | grep -oE "[0-9]+")
[ "$version" = 14 ] || { echo "skipped: clang-format $version; the style is clang-format 14's"; exit 77; }
cd "$root" || exit 1
files=$(find cli lib kernels tests examples bench \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
status=0
for file in $files; do
  if ! clang-format --dry-run --Werror "$file" 2>/dev/null; then
    echo "$file is not formatted: run clang-format -i $file"
    status=1
  fi
done
[ "$status" = 0 ] && echo "$(wc -w <<<"$files") sources formatted"
exit "$status"
