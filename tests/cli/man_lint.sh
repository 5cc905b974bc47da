#!/usr/bin/env bash
# man_lint.sh PAGE...: lints man pages with groff (or mandoc); exit 77 (skipped) without either.
set -u
if command -v groff >/dev/null; then
  for page in "$@"; do
    warnings=$(groff -man -ww -z "$page" 2>&1) || { echo "$warnings"; exit 1; }
    [ -z "$warnings" ] || { echo "$page: $warnings"; exit 1; }
  done
elif command -v mandoc >/dev/null; then
  mandoc -Tlint -Wwarning "$@" || exit 1
else
  echo "skipped: neither groff nor mandoc is installed (apt-get install groff-base)"
  exit 77
fi
echo "lint clean: $*"
