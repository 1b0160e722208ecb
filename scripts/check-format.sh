#!/bin/sh
# Fails when any C source or header differs from what clang-format makes of it.
set -eu
cf=${1:-clang-format}
files=$(git ls-files --cached --others --exclude-standard '*.c' '*.h' 2>/dev/null || find wire testtool stress tests bench -name '*.[ch]')
[ -n "$files" ] || { echo "check-format: no C sources found" >&2; exit 1; }
# shellcheck disable=SC2086
"$cf" --dry-run -Werror $files
