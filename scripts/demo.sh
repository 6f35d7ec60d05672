#!/usr/bin/env bash
# demo.sh — set up everything (see setup.sh), then the main job on the bundled example
# model lasttok (x[x.shape[0]-1] with n declared in [0, 128]):
#   fuzz from an empty corpus → crash file → minimize → repro.sh / repro.py / report.md
# Everything lands in out/demo/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
PKG="$AF_EXAMPLES/lasttok.pt2"
OUT="$AF_ROOT/out/demo"
rm -rf "$OUT" && mkdir -p "$OUT/crashes" "$OUT/corpus"

echo; echo "== 1. describe the package"
"$AF_BUILD/harness/aoti-run" "$PKG" --describe

echo; echo "== 2. fuzz (2000 execs at most, empty corpus)"
"$AF_BUILD/fuzz/aoti-fuzz" "$PKG" --artifacts "$OUT/crashes" --summary "$OUT/fuzz-summary.json" \
  -- -runs=2000 "$OUT/corpus"
crash=$(ls "$OUT"/crashes/*.bin | head -n 1)
echo "crash file: $crash"

echo; echo "== 3. minimize"
"$AF_BUILD/minimize/aoti-minimize" "$crash" --out "$OUT/min"

echo; echo "== 4. replay the minimal case"
bash "$OUT/min/repro.sh" || true
echo; echo "report: $OUT/min/report.md"
