#!/usr/bin/env bash
# man_options.sh NATIVE_OPS MAN_PAGE: every subcommand and option that the CLI's help
# lists must appear in the man page.
set -u
cli=$1 page=$2
# The roff source with its escapes for '-' and fonts undone.
text=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$page")
missing=0
check() {
  if ! grep -qF -- "$1" <<<"$text"; then
    echo "man page $page does not mention $1 ($2)"
    missing=1
  fi
}
subcommands=$("$cli" --help | awk '/^Subcommands:/{on=1; next} on && NF {print $1}')
[ -n "$subcommands" ] || { echo "no subcommands found in '$cli --help'"; exit 1; }
for option in $("$cli" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do check "$option" "global option"; done
for sub in $subcommands; do
  check "$sub" "subcommand"
  for option in $("$cli" "$sub" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do check "$option" "option of $sub"; done
done
[ "$missing" = 0 ] && echo "every option and subcommand is in $page"
exit "$missing"
