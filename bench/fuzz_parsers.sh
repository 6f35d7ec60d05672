#!/usr/bin/env bash
# fuzz_parsers.sh — fuzz the project's own parsers with libFuzzer + ASan/UBSan: the spec JSON
# reader, wrapper recovery, crash files and the exported-program contract
# (bench/fuzz_parsers/*.c). Builds the targets (preset fuzz-parsers), gathers seeds from
# tests/fixtures, bench/fuzz_parsers/seeds and the example packages' own files, runs each target
# for its share of the time, and writes a summary (execs, coverage, findings) to OUT/summary.md.
#
#   bench/fuzz_parsers.sh [-t SECONDS] [-o OUT] [TARGET...]   fuzz (default: 600 s in all,
#                                                            split evenly over the targets)
#   bench/fuzz_parsers.sh --replay                          run every target once over its
#                                                            seeds and tests/fixtures/parser_crashes
#                                                            (a regression check, seconds)
# TARGET is one of spec_json spec_wrapper crashfile contract. Environment:
#   AF_FUZZ_BUILD  build dir (default: build-fuzz-parsers)
#   AF_EXAMPLES    the exported example packages (default: .cache/examples; missing is fine)
#   AF_FUZZ_JOBS   libFuzzer -fork jobs (default 1: a 2-core machine shared with builds)
# Exit status: 0 no findings, 1 findings (crash, leak, timeout, OOM, a broken property), 2 the
# build or the arguments failed.
set -euo pipefail
AF_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${AF_FUZZ_BUILD:-$AF_ROOT/build-fuzz-parsers}"
EXAMPLES="${AF_EXAMPLES:-$AF_ROOT/.cache/examples}"
JOBS="${AF_FUZZ_JOBS:-1}"
TOTAL=600
OUT=""
REPLAY=0
ALL_TARGETS=(spec_json spec_wrapper crashfile contract)
TARGETS=()
while (($#)); do
  case "$1" in
    -t) TOTAL="$2"; shift 2 ;;
    -o) OUT="$2"; shift 2 ;;
    --replay) REPLAY=1; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    spec_json|spec_wrapper|crashfile|contract) TARGETS+=("$1"); shift ;;
    *) echo "fuzz_parsers: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
((${#TARGETS[@]})) || TARGETS=("${ALL_TARGETS[@]}")
[[ "$TOTAL" =~ ^[0-9]+$ ]] && ((TOTAL >= ${#TARGETS[@]})) ||
  { echo "fuzz_parsers: -t wants whole seconds, at least one per target" >&2; exit 2; }
OUT="${OUT:-$AF_ROOT/.cache/fuzz_parsers/$(date -u +%Y%m%dT%H%M%SZ)}"
[[ "$OUT" = /* ]] || OUT="$PWD/$OUT"
cd "$AF_ROOT" # cmake --preset reads CMakePresets.json from the cwd
FZ="$AF_ROOT/bench/fuzz_parsers"
CRASHES="$AF_ROOT/tests/fixtures/parser_crashes"

echo "fuzz_parsers: building (preset fuzz-parsers) into $BUILD"
cmake --preset fuzz-parsers -B "$BUILD" -DAF_EXAMPLES_DIR="$EXAMPLES" >/dev/null || exit 2
cmake --build "$BUILD" --target fuzz_spec_json fuzz_spec_wrapper fuzz_crashfile fuzz_contract \
  >/dev/null || exit 2
BIN="$BUILD/bench/fuzz_parsers"

# ---- seeds: every file a parser meets in real use ----------------------------------------
mkdir -p "$OUT"
SEEDS="$OUT/seeds" REPRO="$OUT/reproducers"
rm -rf "$SEEDS" "$REPRO"
mkdir -p "$SEEDS"/{spec_json,spec_wrapper,crashfile,contract} \
  "$REPRO"/{spec_json,spec_wrapper,crashfile,contract}
cp_if() { local dst="$1"; shift; for f in "$@"; do [ -f "$f" ] && cp "$f" "$dst/" || true; done; }
shopt -s nullglob
# bench/fuzz_parsers/seeds/<target>: kept in the tree (crash files from real fuzzer runs, spec
# files of the example models and one with every field of the format)
for t in "${ALL_TARGETS[@]}"; do cp_if "$SEEDS/$t" "$FZ/seeds/$t"/*; done
# the saved reproducers of past findings: seeds too, apart (one may still crash: a finding
# still open is reported again; coverage is counted without them)
for t in "${ALL_TARGETS[@]}"; do cp_if "$REPRO/$t" "$CRASHES/$t"-*; done
cp_if "$SEEDS/spec_json" "$EXAMPLES"/*.spec.json
cp_if "$SEEDS/spec_wrapper" "$AF_ROOT"/tests/fixtures/wrappers/*.cpp \
  "$AF_ROOT"/tests/fixtures/sources/*.wrapper.cpp
cp_if "$SEEDS/contract" "$AF_ROOT"/tests/fixtures/sources/*.model.json
# From the packages themselves: the wrapper .cpp of each model, the exported program
# (models/*.json of a unified archive), the spec our export helper embeds in the metadata,
# and the wrapper cut down to what the recovery reads (small inputs mutate where it matters).
pkgs=("$AF_ROOT"/tests/fixtures/*.pt2 "$EXAMPLES"/*.pt2)
if ((${#pkgs[@]})); then
  python3 - "$SEEDS" "${pkgs[@]}" <<'EOF'
import json, os, re, sys, zipfile
seeds, pkgs = sys.argv[1], sys.argv[2:]
def put(kind, name, data):
    with open(os.path.join(seeds, kind, name), "wb") as f:
        f.write(data)
keep = re.compile(rb"check_input_|_size\[|_stride\[|expected|too small|too large|unmatched|"
                  rb"int64_t s\d+|assert_size_stride|run_impl|throw|^\s*[{}]\s*$|^\s*if \(")
for p in pkgs:
    base = os.path.basename(p)[:-4]
    try:
        z = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, OSError):
        continue
    for n in z.namelist():
        leaf = n.rsplit("/", 1)[-1]
        data = z.read(n)
        if leaf.endswith(".wrapper.cpp"):
            put("spec_wrapper", f"{base}.wrapper.cpp", data)
            cut = b"".join(l for l in data.splitlines(True) if keep.search(l))
            put("spec_wrapper", f"{base}.cut.wrapper.cpp", cut)
        elif "/models/" in n and leaf.endswith(".json"):
            put("contract", f"{base}.{leaf}", data)
        elif leaf.endswith("_metadata.json"):
            try:
                spec = json.loads(data).get("aoti_fuzz.spec")
            except (ValueError, AttributeError):
                spec = None
            if isinstance(spec, str):
                put("spec_json", f"{base}.embedded.spec.json", spec.encode())
EOF
fi
for t in "${ALL_TARGETS[@]}"; do
  printf 'fuzz_parsers: %-12s %3d seed files, %d reproducers\n' "$t" "$(ls "$SEEDS/$t" | wc -l)" \
    "$(ls "$REPRO/$t" | wc -l)"
done

dict_of() { case "$1" in crashfile) echo "$FZ/crash.dict" ;; *) echo "$FZ/$1.dict" ;; esac; }
file_of() { echo "$1.c"; }
# Coverage as "covered/total (pct)" of the instrumented edges of the parser's own source file
# (harness/spec_json.c, spec_wrapper.c, crashfile.c, contract.c; the wrapper's lexer in
# cpp_scan.c and the contract's check in contract_apply.c are not counted), from one pass
# over the given dirs
# (-print_coverage lists each function with its covered and total edges).
edges() {
  local t="$1"; shift
  "$BIN/fuzz_$t" -runs=0 -print_coverage=1 -artifact_prefix="$OUT/coverage-" "$@" 2>&1 |
    awk -v f="/harness/$(file_of "$t"):" 'index($0, f) && /_FUNC: / {
        split($5, e, "/"); c += e[1]; n += e[2] }
      END { if (n) printf "%d/%d (%.0f%%)", c, n, 100 * c / n; else printf "?" }' || true
}

# ---- replay: every seed and every saved reproducer once, no mutation -----------------------
if ((REPLAY)); then
  rc=0
  for t in "${TARGETS[@]}"; do
    # (-artifact_prefix: libFuzzer writes a crashing input again, by default into the cwd)
    if "$BIN/fuzz_$t" -runs=0 -artifact_prefix="$OUT/replay-$t-" "$SEEDS/$t" "$REPRO/$t" \
      >"$OUT/replay-$t.log" 2>&1; then
      echo "fuzz_parsers: replay $t: ok"
    else
      echo "fuzz_parsers: replay $t: FAILED (log: $OUT/replay-$t.log)"
      grep -m3 'ERROR: \|runtime error\|fuzz property failed' "$OUT/replay-$t.log" || true
      rc=1
    fi
  done
  exit $rc
fi

# ---- fuzz ---------------------------------------------------------------------------------
# -fork with -ignore_*: a finding is saved and the run goes on, so one shallow bug does not
# spend the budget of the target. -timeout 10: a parser taking seconds on a few KiB is a bug.
share=$((TOTAL / ${#TARGETS[@]}))
summary="$OUT/summary.md"
{
  echo "| target | time (s) | execs | exec/s | edges of the parser's file: seeds -> end | libFuzzer cov / ft | corpus | findings |"
  echo "|---|---|---|---|---|---|---|---|"
} >"$summary"
findings=0
: >"$OUT/findings.md"
for t in "${TARGETS[@]}"; do
  corpus="$OUT/corpus/$t" art="$OUT/artifacts/$t" log="$OUT/fuzz-$t.log"
  mkdir -p "$corpus" "$art"
  cov0=$(edges "$t" "$SEEDS/$t")
  echo "fuzz_parsers: $t for ${share}s (log: $log)"
  t0=$(date +%s)
  "$BIN/fuzz_$t" -fork="$JOBS" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$share" -timeout=10 -rss_limit_mb=2048 -dict="$(dict_of "$t")" \
    -artifact_prefix="$art/" "$corpus" "$SEEDS/$t" "$REPRO/$t" >"$log" 2>&1 || true
  secs=$(($(date +%s) - t0))
  last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1 || true)
  execs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  cov1=$(edges "$t" "$corpus" "$SEEDS/$t") # the final corpus, counted as the seeds were
  ncorp=$(ls "$corpus" | wc -l)
  arts=("$art"/*)
  n=${#arts[@]}
  findings=$((findings + n))
  rate=$(( secs > 0 ? ${execs:-0} / secs : 0 ))
  echo "| $t | $secs | ${execs:-?} | $rate | $cov0 -> $cov1 | ${cov:-?} / ${ft:-?} | $ncorp | $n |" >>"$summary"
  for a in "${arts[@]}"; do
    # the first line saying what went wrong, from a fresh run of the artifact alone
    why=$("$BIN/fuzz_$t" -artifact_prefix="$OUT/rerun-" "$a" 2>&1 | grep -m1 -E 'ERROR: (Address|Leak|libFuzzer)|runtime error|fuzz property failed|SUMMARY' || true)
    echo "- $t: \`$a\` ($(stat -c %s "$a") bytes): ${why:-did not reproduce}" >>"$OUT/findings.md"
  done
done
if [ -s "$OUT/findings.md" ]; then
  { echo; echo "Findings (each with the first line of a fresh run on it alone):"; cat "$OUT/findings.md"; } >>"$summary"
fi
echo
cat "$summary"
echo "fuzz_parsers: corpora and findings under $OUT"
((findings == 0)) || exit 1
