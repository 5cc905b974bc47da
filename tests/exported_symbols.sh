#!/usr/bin/env bash
# exported_symbols.sh LIB INCLUDE_DIR DOC: LIB (libnative_ops.so or libnative_ops_testing.so)
# exports only the public API: every dynamic symbol it defines is in namespace native_ops
# (or is a native_ops class's type information or vtable), names something declared under
# INCLUDE_DIR, and there are exactly as many as DOC states ("`libnative_ops.so` exports N
# symbols"), so that a change to the API is a change to the docs too.
set -u
lib=$1 include_dir=$2 doc=$3
name=$(basename "$lib")
symbols=$(nm -DC --defined-only "$lib" | cut -c20-)
count=$(wc -l <<<"$symbols")
status=0
while IFS= read -r symbol; do
  entity=${symbol#typeinfo for }
  entity=${entity#typeinfo name for }
  entity=${entity#vtable for }
  if [[ $entity != native_ops::* ]]; then
    echo "$name exports $symbol: not in namespace native_ops"
    status=1
    continue
  fi
  # The declared name: the last component before the parameters and any ABI tag.
  declared=${entity%%(*}
  declared=${declared%%\[abi:*}
  declared=${declared##*::}
  declared=${declared#\~}
  if ! grep -rqw -- "$declared" "$include_dir"; then
    echo "$name exports $symbol, which no header of $include_dir declares: mark only the API NATIVE_OPS_API"
    status=1
  fi
done <<<"$symbols"
stated=$(grep -oE "\`$name\` exports [0-9]+ symbols" "$doc" | grep -oE "[0-9]+" | head -1)
if [ -z "$stated" ]; then
  echo "$doc does not state how many symbols $name exports (\"\`$name\` exports N symbols\")"
  status=1
elif [ "$stated" != "$count" ]; then
  echo "$name exports $count symbols; $doc says $stated: update the doc with the API"
  status=1
fi
[ "$status" = 0 ] && echo "$name exports $count symbols, all of the public API"
exit "$status"
