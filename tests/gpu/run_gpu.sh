#!/usr/bin/env bash
# run_gpu.sh — the one-command GPU run, on a CUDA machine with torch installed.
#
# From the repo root, with a build dir made elsewhere (the GPU image may have no clang,
# libzip or cJSON): unpacks the libzip/cJSON runtime .debs from .deps/ if present, exports
# CUDA versions of the example models with this machine's torch, runs aoti-fuzz on each
# with a time budget, measures the fuzzer against the in-process loop and the harness's
# restarts, minimizes every crash (aoti-minimize checks repro.sh and repro.py, retrying
# repro.py with the system libstdc++ preloaded where the image needs it), and writes
# results.md. Every step appends to OUT as it goes, so a cut-short run keeps what it did.
#   AF_BUILD      build dir (default: build)        OUT    results (default: out/gpu)
#   Each step's "== name" line in the log ends with the seconds since the script started.
#   FUZZ_SECONDS  per model (default 20)     MODELS (default: lasttok twosym crossidx healthy)
#   BENCH_RUNS    aoti-fuzz runs per bench round (default 20000, 3 rounds; 0: no benchmarks)
#   EXAMPLES      use packages already exported there instead of exporting (a dry run of
#                 this script on a CPU machine: EXAMPLES=.cache/examples)
#   MIN_ARGS      extra aoti-minimize options (e.g. --no-crash-map on a tight time budget)
#   STEPS         which parts run (default: "fuzz eager bench restarts minimize"); a later call with
#                 STEPS=minimize and the same OUT minimizes the crash files an earlier one found;
#                 "pyharness" (not in the default) runs aoti-fuzz (seed 1) on healthy, lasttok and
#                 crossidx, then replays the cases it ran through bench/python_harness.py --device
#                 cuda (a Python worker restarted after every crash); PY_MODELS picks and orders them
#   PY_RUNS       pyharness: aoti-fuzz runs on lasttok and crossidx (default 1000; healthy
#                 takes BENCH_RUNS)     PY_SECONDS  cap on each Python replay (default 300)
#   "spares" (not in the default) runs crossidx for SPARES_SECONDS (15) with each --max-spares
#                 of SPARES_LIST ("4 8 16"; "4:nowarm" adds --no-warm-up, "4:nopredict" adds
#                 --no-predict): execs/s and where a worker's start-up goes
#                 "2:before" runs BEFORE_FUZZ (an aoti-fuzz built from an earlier commit) instead
#   BENCH_ROUNDS  rounds of the in-process comparison (default 3)
#   BENCH_VARIANTS  the aoti-fuzz variants each bench round runs (default "unpinned"; also
#                 spinN: AOTI_FUZZ_SPIN_US=N, toolblock: AOTI_FUZZ_TOOL_SPIN_US=0 (the tool
#                 blocks for each answer), nopredict, nospare: --no-warm-spare, spare:
#                 --warm-spare, noreduce: -reduce_inputs=0, before: BEFORE_FUZZ with BEFORE_ARGS, eager: the
#                 reference on; all others run with --no-eager, as the CPU bench does),
#                 rounds outer and variants inner so that the machine's drift
#                 falls on all alike
#   BENCH_PIN     CPU list (e.g. "2,3"): the bench rounds run a second time with aoti-fuzz (tool
#                 and workers) and the in-process loop under `taskset -c BENCH_PIN`
#   "placement" (not in the default) prints the CPU topology and the GPU's local CPUs, and runs
#                 the in-process and worker loops on one case log unpinned and on each NUMA node
#   "split" (not in the default) runs aoti-fuzz once for a case log, then SPLIT_REPS (3) times
#                 bench_harness --replay-split: the in-process loop first and last, the pool
#                 with a spare (loading, loaded) and without, without one and the tool
#                 blocking for each answer, the in-process loop beside an idle pool and beside
#                 a spinning process
#   "probe" (not in the default) runs bench/cuda_start_probe (PROBE_SECONDS per parallelism of
#                 PROBE_PARS) plain, with CUDA_DEVICE_MAX_CONNECTIONS=1, CUDA_MODULE_LOADING=EAGER
#                 and forking from a process with libtorch_cuda loaded: CUDA contexts per second
#   "okmemo" (not in the default) runs aoti-fuzz on healthy as shipped and with --rerun-ok, seeds
#                 1-3, BENCH_RUNS execs each: execs/s with the memo of OK cases, and the findings
#   The bench step also samples the GPU's clocks (nvidia-smi, every 100 ms; tests/gpu/clocks.py)
#                 and prints them per aoti-fuzz run and per replay
#   "pyprof" (not in the default) profiles the first minimized repro.py: python -X importtime
#                 and cProfile (cumulative), into OUT/pyprof.*.txt
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="${AF_BUILD:-$ROOT/build}"
OUT="${OUT:-$ROOT/out/gpu}"
FUZZ_SECONDS="${FUZZ_SECONDS:-20}"
MODELS="${MODELS:-lasttok twosym crossidx healthy}"
BENCH_RUNS="${BENCH_RUNS:-20000}"
STEPS="${STEPS:-fuzz eager bench restarts minimize}"
PY_RUNS="${PY_RUNS:-1000}"
SPARES_LIST="${SPARES_LIST:-4 8 16}"
SPARES_SECONDS="${SPARES_SECONDS:-15}"
BENCH_ROUNDS="${BENCH_ROUNDS:-3}"
PY_SECONDS="${PY_SECONDS:-300}"
has_step() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$OUT"
LOG="$OUT/gpu-run.log"
exec > >(tee -a "$LOG") 2>&1

if ls "$ROOT"/.deps/*.deb >/dev/null 2>&1; then
  mkdir -p /tmp/af-deps
  for f in "$ROOT"/.deps/*.deb; do dpkg -x "$f" /tmp/af-deps; done
  export LD_LIBRARY_PATH="/tmp/af-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export AOTI_FUZZ_PYTHON="${AOTI_FUZZ_PYTHON:-python3}"
PY="$AOTI_FUZZ_PYTHON"
R="$OUT/results.md"

echo "== machine (at ${SECONDS} s)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'

EX="${EXAMPLES:-$OUT/examples}"
if [ -z "${EXAMPLES:-}" ]; then
  echo "== export CUDA examples (at ${SECONDS} s)"
  t0=$(date +%s)
  "$PY" "$ROOT/corpus/build.py" --out "$EX" --device cuda --only $MODELS 2>&1 | grep -v Warning
  echo "export took $(( $(date +%s) - t0 )) s"
fi

# ---- fuzz each model ------------------------------------------------------------------
if has_step fuzz; then
{
  echo "## fuzz ($FUZZ_SECONDS s per model, empty corpus)"
  echo
  echo "| model | aoti-run at the known shape (3 runs) | execs | execs/s | workers started | first crash | signatures | failing inputs | kernel | triage |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} > "$R"
for m in $MODELS; do
  pkg="$EX/$m.pt2"
  [ -f "$pkg" ] || { echo "$m: no package"; continue; }
  echo "== fuzz $m (at ${SECONDS} s)"
  "$B/harness/aoti-run" "$pkg" --describe
  known=$("$PY" -c "import json; e=json.load(open('$EX/$m.expected.json')); f=e['failing']; print(' '.join('--shape %s=%s'%kv for kv in f[0]['shape'].items()) if f else '')")
  kres="-"
  if [ -n "$known" ]; then
    "$B/harness/aoti-run" "$pkg" $known --repeat 3 --json > "$OUT/$m.known.json"
    cat "$OUT/$m.known.json"
    kres=$("$PY" -c "import json; r=json.load(open('$OUT/$m.known.json')); print(r['class'], r.get('cuda_error',''), '%d/%d' % (r['same_signature'], r['runs']))")
  fi
  rm -rf "$OUT/$m.crashes" "$OUT/$m.corpus"; mkdir -p "$OUT/$m.crashes" "$OUT/$m.corpus"
  "$B/fuzz/aoti-fuzz" "$pkg" --artifacts "$OUT/$m.crashes" --summary "$OUT/$m.fuzz.json" \
      -- -max_total_time="$FUZZ_SECONDS" "$OUT/$m.corpus" 2>&1 | tail -n 12
  for j in "$OUT/$m.crashes"/*.json; do [ -f "$j" ] && cat "$j"; done
  row=$("$PY" - "$OUT/$m.fuzz.json" "$OUT/$m.crashes" <<'EOF'
import glob, json, sys
s = json.load(open(sys.argv[1]))
cr = s.get("crashes", [])
side = [json.load(open(p)) for p in sorted(glob.glob(sys.argv[2] + "/*.json"))]
first = "exec %s, %.2f s" % (s["first_crash_exec"], s["first_crash_seconds"]) if cr else "-"
kern = "; ".join(x.get("kernel", "") for x in side if x.get("kernel")) or "-"
tri = "; ".join(x.get("triage", "") for x in side if x.get("triage")) or "-"
print("| %d | %.0f | %d | %s | %d | %d | %s | %s |" % (s["execs"], s["execs_per_second"],
      s["pool"]["spawns"], first, len(cr), s.get("crash_runs", 0), kern, tri.replace("|", "/")))
EOF
)
  echo "| $m | $kres $row" >> "$R"
done
fi

# ---- the contract and the eager reference on the device ----------------------------------
if has_step eager; then
{
  echo
  echo "## contract and eager reference (aoti-run --describe / --eager)"
  echo
  echo "| model | contract | case | AOTI | eager | verdict / compare |"
  echo "|---|---|---|---|---|---|"
} >> "$R"
for m in $MODELS; do
  pkg="$EX/$m.pt2"
  [ -f "$pkg" ] || continue
  contract=$("$B/harness/aoti-run" "$pkg" --describe --json | "$PY" -c "import json,sys; d=json.load(sys.stdin); print(('read: ' + d['contract_source']) if d['contract_known'] else 'not read', '; gaps:', ', '.join('%s >= %d (compiled %d)' % (g['dim'] or g['symbol'], g['declared_min'], g['compiled_min']) for g in d['contract_gaps']) or 'none')")
  cases=$("$PY" -c "
import json
e = json.load(open('$EX/$m.expected.json'))
for x in (e.get('failing') or [])[:1] + (e.get('mismatch') or [])[:1] + [{'shape': s} for s in (e.get('healthy') or [])[:1]]:
    print(' '.join('--shape %s=%s' % kv for kv in x['shape'].items()))
")
  while IFS= read -r c; do
    [ -n "$c" ] || continue
    echo "== eager $m $c (at ${SECONDS} s)"
    "$B/harness/aoti-run" "$pkg" $c --eager --json > "$OUT/$m.eager.json" 2> "$OUT/$m.eager.err"
    cat "$OUT/$m.eager.json" "$OUT/$m.eager.err"
    row=$("$PY" -c "
import json
r = json.load(open('$OUT/$m.eager.json'))
e = r.get('eager', {})
ev = e.get('result', '-') + (': ' + e.get('error_type', '') if e.get('result') == 'error' else '')
vc = e.get('verdict') or e.get('compare', '-')
if e.get('compare') == 'mismatch':
    vc += ' (max abs %.3g)' % e.get('max_abs', 0)
print('| %s | %s | %s | %s |' % (r.get('case', ''), r.get('class', '?'), ev, vc))
" 2>/dev/null || echo "| $c | (no result) | | |")
    echo "| $m | $contract $row" >> "$R"
  done <<< "$cases"
done
fi

# ---- the fuzzer vs the in-process loop, same package, same cases --------------------------
# Rounds outer, variants inner: drift of the machine over the minutes of the run falls on
# every variant alike. Like the CPU's (bench/run_bench.py), the rounds run with --no-eager: the
# in-process loop compares nothing with eager, so the fuzzer does not either. A variant:
# unpinned (as shipped), pinned (taskset -c BENCH_PIN), spinN (the worker spins N µs for its next
# case, AOTI_FUZZ_SPIN_US), toolblock (the tool blocks for each answer instead of spinning,
# AOTI_FUZZ_TOOL_SPIN_US=0), nopredict (--no-predict), nospare (--no-warm-spare), spare
# (--warm-spare: from the start), noreduce (libFuzzer's -reduce_inputs=0), eager (the eager
# reference on, its default: outputs compared on every corpus addition), before (BEFORE_FUZZ:
# an aoti-fuzz built from an earlier commit, as shipped otherwise). Every variant runs with
# --rerun-ok: the in-process loop runs every logged case, repeats included, so the fuzzer must
# too (the memo of OK cases would answer repeats without a run).
bench_variant() { # $1 variant -> sets pin, venv, vargs, vlf, bfz
  pin=""; venv=""; vargs="--no-eager --rerun-ok"; vlf=""; bfz="$B/fuzz/aoti-fuzz"
  case "$1" in
    # BEFORE_ARGS: that build's flags (default --no-eager: builds before --rerun-ok had no OK
    # memo to turn off; one that has it takes BEFORE_ARGS="--no-eager --rerun-ok")
    before) bfz="${BEFORE_FUZZ:-$bfz}"; vargs="${BEFORE_ARGS:---no-eager}" ;;
    pinned) pin="taskset -c $BENCH_PIN" ;;
    spin*) venv="AOTI_FUZZ_SPIN_US=${1#spin}" ;;
    toolblock) venv="AOTI_FUZZ_TOOL_SPIN_US=0" ;;
    nopredict) vargs="--no-eager --rerun-ok --no-predict" ;;
    nospare) vargs="--no-eager --rerun-ok --no-warm-spare" ;;
    spare) vargs="--no-eager --rerun-ok --warm-spare" ;;
    noreduce) vlf="-reduce_inputs=0" ;;
    eager) vargs="--rerun-ok" ;;
  esac
}
echo "== bench: aoti-fuzz vs in-process loop (healthy) (at ${SECONDS} s)"
if has_step bench && [ -f "$EX/healthy.pt2" ] && [ "$BENCH_RUNS" -gt 0 ]; then
  variants="${BENCH_VARIANTS:-unpinned} ${BENCH_PIN:+pinned}"
  {
    echo
    echo "## aoti-fuzz vs the in-process C loop on the cases it ran (healthy, $BENCH_RUNS runs per round; variants: $variants)"
    echo
    echo "| round | aoti-fuzz µs/exec | of it: post to answer / answer to next post | in-process µs/case | worker µs/case | value checks (s in them) | ratio |"
    echo "|---|---|---|---|---|---|---|"
  } >> "$R"
  # The GPU's clocks while the rounds run (a sample every 100 ms), and when each aoti-fuzz run and
  # each replay began and ended: does a slow round come with a lower SM clock?
  clocks="$OUT/bench.clocks.csv"; spans="$OUT/bench.spans.txt"; rm -f "$clocks" "$spans"
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,pstate,utilization.gpu,power.draw \
      --format=csv,noheader,nounits -lms 100 > "$clocks" 2>/dev/null &
  sampler=$!
  for round in $(seq 1 "$BENCH_ROUNDS"); do
  for place in $variants; do
    bench_variant "$place"
    tag="$place.$round"
    log="$OUT/cases.$tag.log"; rm -f "$log"
    echo "fuzz.$tag start $(date +%s.%N)" >> "$spans"
    env $venv AOTI_FUZZ_CASE_LOG="$log" $pin "$bfz" "$EX/healthy.pt2" $vargs --artifacts "$OUT/bench.crashes" \
        --summary "$OUT/bench.fuzz.$tag.json" -- -runs="$BENCH_RUNS" -seed="$round" $vlf 2>&1 | tail -n 1
    echo "fuzz.$tag end $(date +%s.%N)" >> "$spans"
    echo "replay.$tag start $(date +%s.%N)" >> "$spans"
    $pin "$B/bench/bench_harness" --replay "$log" "$EX/healthy.pt2" > "$OUT/bench.replay.$tag.json"
    echo "replay.$tag end $(date +%s.%N)" >> "$spans"
    cat "$OUT/bench.replay.$tag.json"
    "$PY" - "$OUT/bench.fuzz.$tag.json" "$OUT/bench.replay.$tag.json" "$round ($place)" >> "$R" <<'EOF'
import json, sys
f, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
fz = 1e6 / f["execs_per_second"]
ref = f.get("reference", {})
pool = f.get("pool", {})
print("| %s | %.1f | %.1f / %.1f | %.1f | %.1f | %d (%.3f) | %.2f |" % (sys.argv[3], fz,
      pool.get("exchange_mean_us", 0), pool.get("between_mean_us", 0), r["inprocess_us_per_case"],
      r["worker_us_per_case"], ref.get("value_checks", 0), ref.get("value_check_seconds", 0),
      r["inprocess_us_per_case"] / fz))
EOF
    rm -f "$log"
  done
  done
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  "$PY" "$ROOT/tests/gpu/clocks.py" "$clocks" "$spans" >> "$R"
  if [ -x "$B/bench/mailbox_roundtrip" ]; then # the hand-off alone, and this host's floor
    "$B/bench/mailbox_roundtrip" 200000 5 > "$OUT/mailbox_roundtrip.json" &&
      { echo; echo "mailbox round trip (bench/mailbox_roundtrip, µs): \`$(cat "$OUT/mailbox_roundtrip.json")\`"; } >> "$R"
  fi
  for place in $variants; do
  "$PY" - "$OUT" "$BENCH_ROUNDS" "$place" >> "$R" <<'EOF'
import json, statistics, sys
out, n, place = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rs, wk = [], []
for k in range(1, n + 1):
    try:
        f = json.load(open("%s/bench.fuzz.%s.%d.json" % (out, place, k)))
        r = json.load(open("%s/bench.replay.%s.%d.json" % (out, place, k)))
        rs.append(r["inprocess_us_per_case"] / (1e6 / f["execs_per_second"]))
        wk.append(r["inprocess_us_per_case"] / r["worker_us_per_case"])
    except (OSError, ValueError, KeyError):
        pass
if rs:
    print("| **median of %d (%s)** | | | | worker loop / in-process: %.2f | | **%.2f** (spread %.2f to %.2f) |" % (
        len(rs), place, statistics.median(wk), statistics.median(rs), min(rs), max(rs)))
EOF
  done
fi

# ---- the memo of OK cases on CUDA (STEPS=okmemo): aoti-fuzz as shipped against --rerun-ok, ---
# healthy, same seed, BENCH_RUNS execs, seeds 1-3 alternating; the same features and findings?
if has_step okmemo && [ -f "$EX/healthy.pt2" ]; then
  echo "== okmemo (at ${SECONDS} s)"
  {
    echo
    echo "## the memo of OK cases: healthy, $BENCH_RUNS execs, --no-eager, as shipped against --rerun-ok"
    echo
    echo "| seed | runs: OK memo / --rerun-ok | execs/s: OK memo / --rerun-ok | ratio | features | same features and crashes |"
    echo "|---|---|---|---|---|---|"
  } >> "$R"
  for seed in 1 2 3; do
    for mode in memo rerun; do
      extra=""; [ "$mode" = rerun ] && extra="--rerun-ok"
      rm -rf "$OUT/okm.crashes"
      "$B/fuzz/aoti-fuzz" "$EX/healthy.pt2" --no-eager $extra --artifacts "$OUT/okm.crashes" \
          --summary "$OUT/okmemo.$mode.$seed.json" -- -runs="$BENCH_RUNS" -seed="$seed" 2>&1 | tail -n 1
    done
    "$PY" - "$OUT/okmemo.memo.$seed.json" "$OUT/okmemo.rerun.$seed.json" "$seed" >> "$R" <<'EOF'
import json, sys
m, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sig = lambda s: sorted(c["signature"] for c in s["crashes"])
same = m["features"] == r["features"] and sig(m) == sig(r) and m["crash_runs"] == r["crash_runs"]
print("| %s | %d / %d | %.0f / %.0f | %.2f | %d / %d | %s |" % (sys.argv[3], m["runs"], r["runs"],
      m["execs_per_second"], r["execs_per_second"], m["execs_per_second"] / r["execs_per_second"],
      m["features"], r["features"], "yes" if same else "NO"))
EOF
  done
fi

echo "== bench: harness (worker vs in-process, restarts) (at ${SECONDS} s)"
if has_step restarts && [ -f "$EX/healthy.pt2" ] && [ -f "$EX/lasttok.pt2" ] && [ "$BENCH_RUNS" -gt 0 ]; then
  "$B/bench/bench_harness" "$EX/healthy.pt2" "$EX/lasttok.pt2" n=0 2000 | tee "$OUT/bench_harness.json"
fi

# ---- where the processes run (STEPS=placement): the CPU topology, the GPU's NUMA node, and the
# in-process loop and the worker loop on the same cases, unpinned and pinned to each node --------
if has_step placement && [ -f "$EX/healthy.pt2" ]; then
  echo "== placement (at ${SECONDS} s)"
  lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|NUMA|Model name)" | tee "$OUT/topo.txt"
  lscpu -e=CPU,NODE,SOCKET,CORE >> "$OUT/topo.txt" 2>/dev/null
  nvidia-smi topo -m >> "$OUT/topo.txt" 2>&1
  bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -n 1 | tr 'A-F' 'a-f')
  gpu_cpus=$(cat "/sys/bus/pci/devices/${bus#0000}/local_cpulist" 2>/dev/null || echo "")
  echo "GPU $bus local_cpulist: ${gpu_cpus:-unknown}" | tee -a "$OUT/topo.txt"
  log="$OUT/cases.placement.log"; rm -f "$log"
  AOTI_FUZZ_CASE_LOG="$log" "$B/fuzz/aoti-fuzz" "$EX/healthy.pt2" --no-eager --rerun-ok --artifacts "$OUT/bench.crashes" \
      -- -runs="$BENCH_RUNS" -seed=1 2>&1 | tail -n 1
  {
    echo
    echo "## placement: the same $BENCH_RUNS cases, in-process loop and worker loop (GPU local CPUs: ${gpu_cpus:-unknown})"
    echo
    echo "| rep | CPUs | in-process µs/case | worker µs/case |"
    echo "|---|---|---|---|"
  } >> "$R"
  sets="all"
  for n in /sys/devices/system/node/node[0-9]*; do
    [ -f "$n/cpulist" ] && sets="$sets $(cat "$n/cpulist")"
  done
  for rep in 1 2 3; do
    for cs in $sets; do
      pin=""; [ "$cs" = all ] || pin="taskset -c $cs"
      $pin "$B/bench/bench_harness" --replay "$log" "$EX/healthy.pt2" > "$OUT/pl.tmp"
      "$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); print('| %s | %s | %.1f | %.1f |' % (sys.argv[2], sys.argv[3], r['inprocess_us_per_case'], r['worker_us_per_case']))" \
          "$OUT/pl.tmp" "$rep" "$cs" | tee -a "$R"
    done
  done
  rm -f "$OUT/pl.tmp" "$log"
fi

# ---- where a worker's Run loses (STEPS=split): bench_harness --replay-split on one case log ---
if has_step split && [ -f "$EX/healthy.pt2" ]; then
  echo "== split (at ${SECONDS} s)"
  log="$OUT/cases.split.log"; rm -f "$log"
  AOTI_FUZZ_CASE_LOG="$log" "$B/fuzz/aoti-fuzz" "$EX/healthy.pt2" --no-eager --rerun-ok --artifacts "$OUT/bench.crashes" \
      -- -runs="$BENCH_RUNS" -seed=1 2>&1 | tail -n 1
  {
    echo
    echo "## split: the same $BENCH_RUNS cases; µs per case (of it, in the model's Run)"
    echo
    echo "| rep | in-process, first | pool, spare loading | pool, spare loaded | pool, no spare | pool, the tool blocking | in-process beside an idle pool | in-process beside a spinning process | in-process, last |"
    echo "|---|---|---|---|---|---|---|---|---|"
  } >> "$R"
  for rep in $(seq 1 "${SPLIT_REPS:-3}"); do
    "$B/bench/bench_harness" --replay-split "$log" "$EX/healthy.pt2" > "$OUT/split.$rep.json"
    cat "$OUT/split.$rep.json"
    "$PY" - "$OUT/split.$rep.json" "$rep" >> "$R" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
ks = ["inprocess_first", "pool_spare_loading", "pool_spare_loaded", "pool_no_spare", "pool_tool_blocking",
      "inprocess_beside_idle_pool",
      "inprocess_beside_spinner", "inprocess_last"]
print("| %s | " % sys.argv[2] + " | ".join("%.1f (%.1f)" % (r[k + "_us_per_case"], r[k + "_run_us_per_case"]) for k in ks) + " |")
EOF
  done
  rm -f "$log"
fi

# ---- contexts per second (STEPS=probe): bench/cuda_start_probe under a few environments -----
if has_step probe && [ -x "$B/bench/cuda_start_probe" ]; then
  tl="$("$PY" -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))')"
  {
    echo
    echo "## CUDA contexts per second (bench/cuda_start_probe, ${PROBE_SECONDS:-3} s per parallelism)"
    echo
    echo "| environment | parallel | contexts/s | mean s: cuInit / context / alloc+sync / total |"
    echo "|---|---|---|---|"
  } >> "$R"
  for penv in default CUDA_DEVICE_MAX_CONNECTIONS=1 CUDA_MODULE_LOADING=EAGER "PROBE_DLOPEN=$tl/libtorch_cuda.so"; do
    echo "== probe $penv (at ${SECONDS} s)"
    e=""; [ "$penv" = default ] || e="$penv"
    env $e "$B/bench/cuda_start_probe" "${PROBE_SECONDS:-3}" ${PROBE_PARS:-1 2 3 4 8} > "$OUT/probe.tmp"
    cat "$OUT/probe.tmp"
    "$PY" - "$penv" "$OUT/probe.tmp" >> "$R" <<'EOF'
import json, sys
for line in open(sys.argv[2]):
    d = json.loads(line); m = d["mean_seconds"]
    print("| %s | %d | %.2f | %.3f / %.3f / %.3f / %.3f |" % (sys.argv[1].split("/")[-1], d["parallel"],
          d["contexts_per_second"], m["cuInit"], m["context"], m["alloc_sync"], m["total"]))
EOF
  done
  rm -f "$OUT/probe.tmp"
fi

# ---- crossidx with more or fewer spares (STEPS=spares): where a dead worker's time goes -----
if has_step spares && [ -f "$EX/crossidx.pt2" ]; then
  {
    echo
    echo "## crossidx, nearly every fault kills the worker: spares ($SPARES_SECONDS s each, seed 1)"
    echo
    echo "| --max-spares (:nowarm = --no-warm-up, :before = BEFORE_FUZZ) | execs/s | runs/s | workers started | spares peak | predicted | mean start-up s: fork / libtorch / context / model .so / container | warm-ups (mean ms) | tool waited for a worker, s | fresh worker's first case, ms | signatures |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
  } >> "$R"
  for entry in $SPARES_LIST; do
    sp="${entry%%:*}"; extra=""; fz="$B/fuzz/aoti-fuzz"
    case "$entry" in *:nowarm) extra="--no-warm-up" ;; *:nopredict) extra="--no-predict" ;;
      *:before) fz="${BEFORE_FUZZ:-$fz}" ;; esac
    echo "== spares $entry (at ${SECONDS} s)"
    rm -rf "$OUT/sp.$entry.crashes"
    "$fz" "$EX/crossidx.pt2" --no-eager --max-spares "$sp" $extra --artifacts "$OUT/sp.$entry.crashes" \
        --summary "$OUT/sp.$entry.json" -- -max_total_time="$SPARES_SECONDS" -seed=1 2>&1 | tail -n 2
    sp="$entry"
    "$PY" - "$OUT/sp.$sp.json" "$sp" >> "$R" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
p = s["pool"]
ph = p["load_phases_mean_seconds"]
print("| %s | %.1f | %.1f | %d | %d | %s | %.3f / %.3f / %.3f / %.3f / %.3f | %d (%.1f) | %.1f of %.1f | %.1f | %d |" % (
    sys.argv[2], s["execs_per_second"], s["runs"] / s["seconds"], p["spawns"], p["spares_peak"],
    "%d (%d classes, %d of them one-symbol; %d by one-symbol classes; %d broken)" % (
        s.get("predicted", 0), s.get("predicted_classes", 0), s.get("predicted_classes_one_symbol", 0),
        s.get("predicted_by_one_symbol", 0), s.get("broken_predictions", 0)),
    ph["fork"], ph["libtorch"], ph["cuda_context"], ph["model_so"], ph["container"],
    p.get("warm_ups", 0), 1e3 * p.get("warm_up_mean_seconds", 0),
    p["wait_worker_seconds"], s["seconds"], 1e3 * p["first_case_mean_seconds"], len(s["crashes"])))
EOF
    if ! ls "$OUT/crossidx.crashes"/*.bin >/dev/null 2>&1; then
      mkdir -p "$OUT/crossidx.crashes" && cp "$OUT/sp.$sp.crashes"/* "$OUT/crossidx.crashes/" 2>/dev/null
    fi
  done
fi

# ---- minimize the first crash of each model (aoti-minimize checks repro.sh and repro.py) ---
if has_step minimize; then
{
  echo
  echo "## minimize"
  echo
  echo "| model | crash | minimal | questions (bound) | worker runs | search s | wall s | s: workers / reference / search / input-check run / repro checks (sh, py) | repro.sh | repro.py |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} >> "$R"
for m in $MODELS; do
  for crash in "$OUT/$m.crashes"/*.bin; do
    [ -f "$crash" ] || continue
    echo "== minimize $m $(basename "$crash") (at ${SECONDS} s)"
    mo="$OUT/$m.min"; rm -rf "$mo"
    timeout 420 "$B/minimize/aoti-minimize" "$crash" --out "$mo" --json ${MIN_ARGS:-} > "$OUT/$m.min.json"
    cat "$OUT/$m.min.json"
    "$PY" - "$OUT/$m.min.json" "$m" >> "$R" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
rp = s.get("repro", {})
def say(x):
    if not x or not x.get("ran"):
        return "not run"
    return ("reproduced" if x.get("reproduced") else "no") + ": " + x.get("detail", "").replace("|", "/")
ph = s.get("phase_seconds", {})
phs = "%.1f / %.1f / %.1f / %.1f / %.1f (%.1f, %.1f)" % tuple(ph.get(k, 0) for k in (
    "workers_start", "reference_start", "search", "check_inputs_run", "repro_checks", "repro_sh", "repro_py"))
print("| %s | %s | %s | %s (%s) | %s | %.2f | %.1f | %s | %s | %s |" % (sys.argv[2], s["start"]["case"],
      s["minimal"]["case"], s["oracle_calls"], s["call_bound"], s["oracle_runs"],
      s["search_seconds"], s["wall_seconds"], phs, say(rp.get("sh")), say(rp.get("py"))))
EOF
    cp "$mo/report.md" "$OUT/$m.report.md" 2>/dev/null
    if has_step pyprof && [ ! -f "$OUT/pyprof.importtime.txt" ] && [ -f "$mo/repro.py" ]; then
      echo "== pyprof $m (at ${SECONDS} s)"
      pre=""; [ -f /usr/lib/x86_64-linux-gnu/libstdc++.so.6 ] && pre=/usr/lib/x86_64-linux-gnu/libstdc++.so.6
      t0=$(date +%s%N)
      LD_PRELOAD="$pre" "$PY" -X importtime "$mo/repro.py" > /dev/null 2> "$OUT/pyprof.importtime.txt"
      t1=$(date +%s%N)
      LD_PRELOAD="$pre" "$PY" -m cProfile -s cumulative "$mo/repro.py" 2>&1 | head -n 100 > "$OUT/pyprof.cprofile.txt"
      t2=$(date +%s%N)
      echo "repro.py: $(( (t1 - t0) / 1000000 )) ms with -X importtime, $(( (t2 - t1) / 1000000 )) ms under cProfile" | tee -a "$OUT/pyprof.cprofile.txt"
      sort -t'|' -k2 -n -r "$OUT/pyprof.importtime.txt" | head -n 25
      head -n 60 "$OUT/pyprof.cprofile.txt"
    fi
    break
  done
done
fi

# ---- the crash-surviving Python harness on the cases aoti-fuzz ran (STEPS=pyharness) -------
if has_step pyharness; then
  {
    echo
    echo "## aoti-fuzz vs the crash-surviving Python harness on the same cases (seed 1; replays capped at $PY_SECONDS s)"
    echo
    echo "| model | runs | aoti-fuzz runs/s (execs/s) | Python harness cases/s | cases replayed | outcomes | restarts | ratio, same cases |"
    echo "|---|---|---|---|---|---|---|---|"
  } >> "$R"
  for m in ${PY_MODELS:-healthy lasttok crossidx}; do
    [ -f "$EX/$m.pt2" ] || continue
    runs=$PY_RUNS; [ "$m" = healthy ] && runs=$BENCH_RUNS
    echo "== pyharness $m ($runs runs) (at ${SECONDS} s)"
    log="$OUT/py.$m.log"; rm -f "$log"; rm -rf "$OUT/py.corpus"; mkdir -p "$OUT/py.corpus"
    AOTI_FUZZ_CASE_LOG="$log" "$B/fuzz/aoti-fuzz" "$EX/$m.pt2" --no-eager --rerun-ok --artifacts "$OUT/py.crashes" \
        --summary "$OUT/py.$m.fuzz.json" -- -runs="$runs" -seed=1 "$OUT/py.corpus" 2>&1 | tail -n 1
    "$PY" "$ROOT/bench/python_harness.py" "$EX/$m.pt2" "$log" --device cuda \
        --max-seconds "$PY_SECONDS" > "$OUT/py.$m.json"
    cat "$OUT/py.$m.json"
    "$PY" - "$OUT/py.$m.fuzz.json" "$OUT/py.$m.json" "$m" "$runs" >> "$R" <<'EOF'
import json, sys
f, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rps = f["runs"] / f["seconds"]
span = "%d of %d%s" % (p["cases"], p["cases_in_log"], " (capped: rates over different spans)" if p["capped"] else "")
print("| %s | %s | %.0f (%.0f) | %.2f | %s | %s | %d | %.1fx |" % (sys.argv[3], sys.argv[4], rps,
      f["execs_per_second"], p["cases_per_second"], span,
      ", ".join("%s %d" % kv for kv in p["outcomes"].items()), p["restarts"], rps / p["cases_per_second"]))
EOF
  done
fi

echo "== results (at ${SECONDS} s)"
cat "$R"
