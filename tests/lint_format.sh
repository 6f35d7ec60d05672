#!/usr/bin/env bash
# lint.format: every C source and header of the project (test fixtures aside) is as
# clang-format formats it (.clang-format). Exit 77 (skipped) without clang-format or git.
set -uo pipefail
src="$1"
cf="${2:-}"
[ -n "$cf" ] && [ -x "$cf" ] || { echo "skipped: no clang-format"; exit 77; }
files=$(git -C "$src" ls-files '*.c' '*.h' 2>/dev/null | grep -v '^tests/fixtures/') ||
  { echo "skipped: $src is not a git checkout"; exit 77; }
cd "$src" || exit 1
bad=0
for f in $files; do
  if ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (run: $cf -i $f)"
    bad=$((bad + 1))
  fi
done
echo "lint.format: $(echo "$files" | wc -l) files, $bad not formatted"
[ "$bad" -eq 0 ]
