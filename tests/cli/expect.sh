#!/usr/bin/env bash
# expect.sh RC REGEX CMD [ARGS...]: runs CMD; passes when it exits with RC and its output
# (stdout and stderr together) matches the extended regular expression REGEX.
set -u
want_rc=$1 regex=$2
shift 2
output=$("$@" 2>&1)
rc=$?
printf '%s\n' "$output"
if [ "$rc" != "$want_rc" ]; then
  echo "expect.sh: exit code $rc, expected $want_rc" >&2
  exit 1
fi
if ! grep -Eq -- "$regex" <<<"$output"; then
  echo "expect.sh: output does not match: $regex" >&2
  exit 1
fi
