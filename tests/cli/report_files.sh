#!/usr/bin/env bash
# report_files.sh NATIVE_OPS WORK_DIR: the report options (--junit, --json-file, --csv,
# --svg) refuse, before any work, what would lose a user's file, and replace a report
# atomically (docs/RELIABILITY.md, "Hostile input").
set -u
cli=$1
work=$2/report_files
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}
# expect RC REGEX ARGS...: the command exits RC and prints REGEX; it must take under 20 s
# where it fails (the check comes before the sweep).
expect() {
  local want=$1 regex=$2 output rc
  shift 2
  output=$("$cli" "$@" 2>&1)
  rc=$?
  [ "$rc" = "$want" ] || fail "exit $rc, expected $want: $* ($output)"
  grep -Eq -- "$regex" <<<"$output" || fail "output does not match '$regex': $* ($output)"
}
bench=(bench --op add_.Tensor --seconds 0.01)
sweep=(test --op add_.Tensor --dtype f64)

echo '{"version": 1, "disable": []}' >policy.json
cp policy.json policy.orig
ln -s policy.json link.svg
expect 1 "--svg link.svg: is a symbolic link.*--force" "${bench[@]}" --svg link.svg
cmp -s policy.json policy.orig || fail "a symbolic link's target was written"
[ -L link.svg ] || fail "the link was replaced without --force"

expect 1 "--json-file policy.json: exists and is not a JSON report of native-ops bench.*--force" \
  "${bench[@]}" --json-file policy.json
expect 1 "--junit policy.json: exists and is not a JUnit XML report" "${sweep[@]}" --junit policy.json
cmp -s policy.json policy.orig || fail "a file that is not a report was overwritten"

expect 1 "--json-file and --csv name the same file" "${bench[@]}" --json-file out --csv ./out
expect 1 "--svg /no/such/dir/chart.svg: directory /no/such/dir: No such file or directory: create it first" \
  "${bench[@]}" --svg /no/such/dir/chart.svg
expect 1 "--csv $work: is a directory" "${bench[@]}" --csv "$work"
mkfifo fifo
expect 1 "--junit fifo: is not a regular file" "${sweep[@]}" --junit fifo --force
[ -z "$(ls -A | grep -v -x -e policy.json -e policy.orig -e link.svg -e fifo)" ] ||
  fail "a refused command left files behind: $(ls -A)"

# Reports of their own kind are replaced, keeping the file's mode; nothing temporary stays.
expect 0 "add__Tensor_cpp_0" "${bench[@]}" --json-file bench.json --csv bench.csv --svg bench.svg
expect 0 "results: [0-9]+ passed" "${sweep[@]}" --junit junit.xml
chmod 640 bench.csv
expect 0 "add__Tensor_cpp_0" "${bench[@]}" --json-file bench.json --csv bench.csv --svg bench.svg
expect 0 "results: [0-9]+ passed" "${sweep[@]}" --junit junit.xml
[ "$(stat -c %a bench.csv)" = 640 ] || fail "the replaced report lost its mode: $(stat -c %a bench.csv)"
head -c 40 junit.xml | grep -q '<?xml' || fail "junit.xml is not the report"
expect 1 "--csv bench.json: exists and is not a CSV report" "${bench[@]}" --csv bench.json
ls -A | grep -q '\.tmp\.' && fail "temporary files were left: $(ls -A)"

# --force replaces what is not a report, and a link (not what it points at).
expect 0 "add__Tensor_cpp_0" "${bench[@]}" --svg link.svg --json-file policy.json --force
[ ! -L link.svg ] && head -c 4 link.svg | grep -q '<svg' || fail "--force did not replace the link with the chart"
grep -q '"rows"' policy.json || fail "--force did not replace the file"

[ "$failures" = 0 ] && echo "PASSED" || exit 1
