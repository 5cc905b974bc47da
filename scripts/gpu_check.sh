#!/usr/bin/env bash
# gpu_check.sh --out DIR [--op OP]... [--step STEP]... [options]: on a machine with an
# NVIDIA GPU, builds native-ops and runs the GPU checks of docs/BENCHMARKS.md for the given
# ops, one log (and JSON report) a step and op in DIR, and a line a step in DIR/summary.log.
# A step that fails does not stop the others; the exit status is 1 if any failed.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
  cat <<'TXT'
usage: scripts/gpu_check.sh --out DIR [--op OP]... [--step STEP]... [options]

  --out DIR        where the logs and reports go (created; refused if it holds anything)
  --op OP          an op symbol ("native_layer_norm_backward"); repeatable; none: every op
  --step STEP      repeatable, run in this order (default: build test bench ctest):
                     build   scripts/setup.sh (setup.log), then configure and build the CLI and the
                             torch library (build.log, ending with its slowest commands): what
                             every step but ctest runs
                     test    native-ops test --dsl cuda --device cuda [--op OP]
                     triton  native-ops test --dsl triton --device cuda [--op OP]
                     cpp     native-ops test --dsl cpp --device cuda [--op OP] (host C++ at CUDA: mm)
                     bench   native-ops bench --device cuda [--op OP]
                     grid    native-ops bench --grid --device cuda [--op OP]
                     routed  native-ops bench --grid --as-routed --device cuda [--op OP]
                     untuned the same with NATIVE_OPS_TUNED_TABLES=0: routed by the conds
                             alone, as on a GPU no shipped table fits
                     tune    native-ops tune --device cuda --op OP (needs --op)
                     retuned routed as above by the table tune wrote in this run (DIR/tune_OP.json,
                             through NATIVE_OPS_ORDER_POLICY): a new table checked before it is
                             compiled in (needs --op, and --step tune before it)
                     ctest   the rest of the build (build_tests.log: the tests), then ctest -L gpu
                     e2e     bench/e2e.py with the library loaded and without (and a
                             profile of 3 training steps by op)
  --seconds S      time per (node, cell) of grid, routed, untuned and retuned (default 0.03)
  --dtype D        grid, routed, untuned and retuned: only cells of this dtype (repeatable: bf16, f16, f32)
  --cells A=N,...  grid, routed, untuned and retuned: only the cells whose feature A is one of these values
                   (repeatable, an axis each: --cells width=151936,256000 --cells rows=256)
  --budget S       tune's time budget per op (default 60)
  --vocab N        e2e's vocabulary; repeatable, a run each (default 50257)
  --timeout S      stop any one command after S seconds (default: none)
  --tar FILE       after each step, write DIR's files to the tar archive FILE
TXT
}

fail_usage() {
  echo "gpu_check: $1" >&2
  echo "run scripts/gpu_check.sh --help for the options" >&2
  exit 2
}

positive_number() { [[ "$1" =~ ^[0-9]+([.][0-9]+)?$ ]] && [[ ! "$1" =~ ^0+([.]0+)?$ ]]; }

out="" tar_file="" seconds=0.03 budget=60 timeout_s=""
ops=() steps=() vocabs=() grid_filters=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --out | --op | --step | --seconds | --budget | --vocab | --timeout | --tar | --dtype | --cells)
      if [ $# -lt 2 ] || [ -z "$2" ]; then fail_usage "$1 needs a value"; fi
      case "$1" in
        --out) out=$2 ;;
        --op) ops+=("$2") ;;
        --step) steps+=("$2") ;;
        --seconds) positive_number "$2" || fail_usage "--seconds '$2' is not a positive number"; seconds=$2 ;;
        --budget) positive_number "$2" || fail_usage "--budget '$2' is not a positive number"; budget=$2 ;;
        --vocab) [[ "$2" =~ ^[1-9][0-9]*$ ]] || fail_usage "--vocab '$2' is not a positive integer"; vocabs+=("$2") ;;
        --timeout) positive_number "$2" || fail_usage "--timeout '$2' is not a positive number"; timeout_s=$2 ;;
        --tar) tar_file=$2 ;;
        --dtype) [[ "$2" =~ ^(f32|f16|bf16)$ ]] || fail_usage "--dtype '$2' is not one of bf16, f16, f32"
          grid_filters+=(--dtype "$2") ;;
        --cells) [[ "$2" =~ ^[a-z_]+=[0-9]+(,[0-9]+)*$ ]] || fail_usage "--cells '$2' is not AXIS=N[,N...] (width=4096,50257)"
          grid_filters+=(--cells "$2") ;;
      esac
      shift 2 ;;
    *) fail_usage "unknown argument '$1'" ;;
  esac
done
[ -n "$out" ] || fail_usage "--out DIR is required: the directory the logs go to"
[ ${#steps[@]} -gt 0 ] || steps=(build test bench ctest)
[ ${#vocabs[@]} -gt 0 ] || vocabs=(50257)
tuned=""
for step in "${steps[@]}"; do
  case "$step" in
    build | test | triton | cpp | bench | grid | routed | untuned | ctest | e2e) ;;
    tune) [ ${#ops[@]} -gt 0 ] || fail_usage "--step tune needs --op: tune one op at a time"
      tuned=1 ;;
    retuned) [ -n "$tuned" ] || fail_usage "--step retuned needs --step tune before it: it routes by the table tune writes" ;;
    *) fail_usage "unknown step '$step': one of build test triton cpp bench grid routed untuned tune retuned ctest e2e" ;;
  esac
done
if [ -e "$out" ] && { [ ! -d "$out" ] || [ -n "$(ls -A "$out")" ]; }; then
  fail_usage "--out $out exists and is not an empty directory: name a new one (nothing there is overwritten)"
fi
if [ -n "$tar_file" ] && [ -e "$tar_file" ]; then
  fail_usage "--tar $tar_file exists: name a new file (nothing is overwritten)"
fi
if [ ! -e /proc/driver/nvidia/version ]; then
  echo "gpu_check: no NVIDIA driver is loaded (/proc/driver/nvidia/version is missing): run it on a machine with an NVIDIA GPU" >&2
  exit 1
fi
mkdir -p "$out" || { echo "gpu_check: cannot create $out" >&2; exit 1; }
out=$(cd "$out" && pwd)
[ -z "$tar_file" ] || tar_file=$(cd "$(dirname "$tar_file")" && pwd)/$(basename "$tar_file")

cli="$root/build/cli/native-ops"
started=$(date +%s)
failed=0
# run NAME COMMAND...: the command's output to DIR/NAME.log, its time and status to summary.log.
run() {
  local name=$1 status begin
  shift
  begin=$(date +%s)
  if [ -n "$timeout_s" ]; then
    timeout "$timeout_s" "$@" >"$out/$name.log" 2>&1
  else
    "$@" >"$out/$name.log" 2>&1
  fi
  status=$?
  [ $status -eq 0 ] || failed=1
  printf '%-40s %s %5ss  (at %ss)\n' "$name" "$([ $status -eq 0 ] && echo ok || echo "FAILED rc=$status")" \
    "$(($(date +%s) - begin))" "$(($(date +%s) - started))" | tee -a "$out/summary.log"
  return $status
}
# each NAME-PREFIX COMMAND...: the command once per --op (with --op OP), or once without.
each() {
  local prefix=$1
  shift
  if [ ${#ops[@]} -eq 0 ]; then
    run "$prefix" "$@"
  else
    for op in "${ops[@]}"; do run "${prefix}_$op" "$@" --op "$op"; done
  fi
}
# JSON reports take the op in their name: each_json NAME-PREFIX COMMAND... (--json-file added).
each_json() {
  local prefix=$1
  shift
  if [ ${#ops[@]} -eq 0 ]; then
    run "$prefix" "$@" --json-file "$out/$prefix.json"
  else
    for op in "${ops[@]}"; do run "${prefix}_$op" "$@" --op "$op" --json-file "$out/${prefix}_$op.json"; done
  fi
}

# The build's longest commands (ninja's log: start and end in ms, then the output), for
# where a device call's build time goes.
slowest_build_commands() {
  [ -f "$root/build/.ninja_log" ] || return 0
  echo "slowest build commands (seconds, output):"
  awk -F'\t' '!/^#/ { took[$4] = ($2 - $1) / 1000 } END { for (o in took) printf "%7.1f  %s\n", took[o], o }' \
    "$root/build/.ninja_log" | sort -rn | head -8
}

for step in "${steps[@]}"; do
  case "$step" in
    build)
      { run setup "$root/scripts/setup.sh" &&
        run build "$root/scripts/build.sh" --target native-ops --target native_ops_torch; } || break
      slowest_build_commands >>"$out/build.log" ;;
    test) each test "$cli" test --dsl cuda --device cuda ;;
    triton) each triton "$cli" test --dsl triton --device cuda ;;
    cpp) each cpp "$cli" test --dsl cpp --device cuda ;;
    bench) each_json bench "$cli" bench --device cuda ;;
    grid) each_json grid "$cli" bench --grid --device cuda --seconds "$seconds" "${grid_filters[@]}" ;;
    routed) each_json routed "$cli" bench --grid --as-routed --device cuda --seconds "$seconds" "${grid_filters[@]}" ;;
    untuned)
      each_json untuned env NATIVE_OPS_TUNED_TABLES=0 "$cli" bench --grid --as-routed --device cuda --seconds "$seconds" \
        "${grid_filters[@]}" ;;
    tune)
      for op in "${ops[@]}"; do
        run "tune_$op" "$cli" tune --op "$op" --device cuda --budget "$budget" -o "$out/tune_$op.json" \
          --results "$out/tune_$op.raw.json"
      done ;;
    retuned)
      for op in "${ops[@]}"; do
        if [ ! -f "$out/tune_$op.json" ]; then
          echo "retuned_$op: tune wrote no $out/tune_$op.json (see tune_$op.log)" | tee -a "$out/summary.log"
          failed=1
          continue
        fi
        run "retuned_$op" env NATIVE_OPS_ORDER_POLICY="$out/tune_$op.json" "$cli" bench --grid --as-routed --device cuda \
          --op "$op" --seconds "$seconds" "${grid_filters[@]}" --json-file "$out/retuned_$op.json"
      done ;;
    ctest)
      run build_tests "$root/scripts/build.sh" &&
        run ctest ctest --test-dir "$root/build" -L gpu --output-on-failure ;;
    e2e)
      for vocab in "${vocabs[@]}"; do
        run "e2e_$vocab" python3 "$root/bench/e2e.py" --library "$root/build/lib/libnative_ops_torch.so" --device cuda \
          --vocab "$vocab" --rounds 2 --profile 3 --json "$out/e2e_$vocab.json"
      done ;;
  esac
  [ -z "$tar_file" ] || tar -C "$out" -cf "$tar_file" .
done
[ -z "$tar_file" ] || tar -C "$out" -cf "$tar_file" .
exit $failed
