#!/usr/bin/env bash
# nightly.sh — fuzz several packages across the GPUs of one host (or CPU jobs), one job
# per device at a time, all jobs of a package sharing one crash dir and one corpus.
#
#   scripts/nightly.sh --out DIR [--gpus N | --cpu-jobs N] [--seconds S] PKG.pt2...
#
# Each package gets DIR/<stem>/{crashes,corpus,summary-<dev>.json}. Jobs of the same
# package run concurrently on different devices (cuda:0..N-1; each job's workers are
# bound to its device with --device) and write into the same crash dir: the crash store
# takes new signatures with link() and folds counts under flock, so a crash seen by two
# jobs is one file with the summed count. Corpora: each job writes its own corpus dir,
# merged into DIR/<stem>/corpus at the end with libFuzzer's -merge=1 (nothing lost,
# nothing duplicated). With one device it behaves the same, with one job per package.
# Prints a table (package, device, execs, execs/s, distinct crashes) and the total.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
B="${AF_BUILD:-$ROOT/build}"
OUT="" GPUS=0 CPUJOBS=0 SECONDS_PER=60
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --gpus) GPUS="$2"; shift 2 ;;
    --cpu-jobs) CPUJOBS="$2"; shift 2 ;;
    --seconds) SECONDS_PER="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    --*) echo "nightly.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ -n "$OUT" ] && [ $# -gt 0 ] || { echo "nightly.sh: usage: nightly.sh --out DIR [--gpus N | --cpu-jobs N] [--seconds S] PKG.pt2..." >&2; exit 2; }
if [ "$GPUS" -gt 0 ]; then devices=(); for ((i = 0; i < GPUS; i++)); do devices+=("cuda:$i"); done
else n=$((CPUJOBS > 0 ? CPUJOBS : 1)); devices=(); for ((i = 0; i < n; i++)); do devices+=("cpu"); done; fi

mkdir -p "$OUT"
printf '| package | device | execs | execs/s | distinct crashes in dir |\n|---|---|---|---|---|\n' > "$OUT/nightly.md"
total=0
for pkg in "$@"; do
  [ -f "$pkg" ] || { echo "nightly.sh: no such package: $pkg" >&2; exit 2; }
  stem=$(basename "$pkg" .pt2); d="$OUT/$stem"
  mkdir -p "$d/crashes" "$d/corpus"
  pids=()
  for i in "${!devices[@]}"; do
    dev="${devices[$i]}"
    mkdir -p "$d/corpus-$i"
    "$B/fuzz/aoti-fuzz" "$pkg" --device "$dev" --artifacts "$d/crashes" --summary "$d/summary-$i.json" \
      -- -max_total_time="$SECONDS_PER" -seed=$((i + 1)) "$d/corpus-$i" "$d/corpus" > "$d/log-$i.txt" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || true; done
  # merge every job's new inputs into the package's corpus
  "$B/fuzz/aoti-fuzz" "$pkg" --artifacts "$d/crashes" -- -merge=1 "$d/corpus" "$d"/corpus-* > "$d/merge.txt" 2>&1 || true
  for i in "${!devices[@]}"; do
    read -r execs rate < <(python3 -c "import json;s=json.load(open('$d/summary-$i.json'));print(s['execs'], round(s['execs_per_second']))")
    total=$((total + execs))
    echo "| $stem | ${devices[$i]} | $execs | $rate | $(ls "$d"/crashes/*.bin 2>/dev/null | wc -l) |" >> "$OUT/nightly.md"
  done
done
echo "| all | ${#devices[@]} device(s) | $total | | |" >> "$OUT/nightly.md"
cat "$OUT/nightly.md"
