#!/usr/bin/env bash
# run_gpu.sh — the one-command GPU run, on a CUDA machine with torch installed.
#
# From the repo root, with a build dir made elsewhere (the GPU image may have no clang,
# libzip or cJSON): unpacks the libzip/cJSON runtime .debs from .deps/ if present, exports
# CUDA versions of the example models with this machine's torch, runs aoti-fuzz on each
# with a time budget, minimizes every crash, replays each minimal case through repro.sh
# (and repro.py, with the system libstdc++ preloaded where the image needs it), runs the
# harness benchmark, and writes a results table.
#   AF_BUILD   build dir (default: build)        OUT   where results go (default: out/gpu)
#   FUZZ_SECONDS per model (default 30)           MODELS (default: lasttok twosym healthy)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="${AF_BUILD:-$ROOT/build}"
OUT="${OUT:-$ROOT/out/gpu}"
FUZZ_SECONDS="${FUZZ_SECONDS:-30}"
MODELS="${MODELS:-lasttok twosym healthy}"
mkdir -p "$OUT"
LOG="$OUT/gpu-run.log"
exec > >(tee -a "$LOG") 2>&1

if ls "$ROOT"/.deps/*.deb >/dev/null 2>&1; then
  mkdir -p /tmp/af-deps
  for f in "$ROOT"/.deps/*.deb; do dpkg -x "$f" /tmp/af-deps; done
  export LD_LIBRARY_PATH="/tmp/af-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export AOTI_FUZZ_PYTHON="${AOTI_FUZZ_PYTHON:-python3}"
PRELOAD=""
[ -e /usr/lib/x86_64-linux-gnu/libstdc++.so.6 ] && PRELOAD=/usr/lib/x86_64-linux-gnu/libstdc++.so.6

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
"$AOTI_FUZZ_PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'

echo "== export CUDA examples"
EX="$OUT/examples"
t0=$(date +%s)
"$AOTI_FUZZ_PYTHON" "$ROOT/corpus/build.py" --out "$EX" --device cuda --only $MODELS 2>&1 | grep -v Warning
echo "export took $(( $(date +%s) - t0 )) s"

printf '| model | aoti-run known shape | fuzz execs | execs/s | crashes | minimal | oracle calls | min wall s | repro.sh | repro.py |\n|---|---|---|---|---|---|---|---|---|---|\n' > "$OUT/results.md"
for m in $MODELS; do
  pkg="$EX/$m.pt2"
  [ -f "$pkg" ] || { echo "$m: no package"; continue; }
  echo "== $m"
  "$B/harness/aoti-run" "$pkg" --describe
  known=$("$AOTI_FUZZ_PYTHON" -c "import json,sys; e=json.load(open('$EX/$m.expected.json')); f=e['failing']; print(' '.join('--shape %s=%s'%kv for kv in f[0]['shape'].items()) if f else '')")
  kres="-"
  if [ -n "$known" ]; then
    "$B/harness/aoti-run" "$pkg" $known --repeat 3 --json > "$OUT/$m.known.json"
    kres=$("$AOTI_FUZZ_PYTHON" -c "import json; r=json.load(open('$OUT/$m.known.json')); print(r['class'], r.get('cuda_error',''), '%d/%d' % (r['same_signature'], r['runs']))")
    cat "$OUT/$m.known.json"
  fi
  rm -rf "$OUT/$m.crashes" "$OUT/$m.corpus"; mkdir -p "$OUT/$m.crashes" "$OUT/$m.corpus"
  "$B/fuzz/aoti-fuzz" "$pkg" --artifacts "$OUT/$m.crashes" --summary "$OUT/$m.fuzz.json" \
      -- -max_total_time="$FUZZ_SECONDS" "$OUT/$m.corpus" 2>&1 | tail -n 15
  read -r execs rate ncrash < <("$AOTI_FUZZ_PYTHON" -c "
import json
s=json.load(open('$OUT/$m.fuzz.json'))
t=s.get('seconds') or s.get('time') or s.get('elapsed_s') or 1
print(s.get('execs',0), round(s.get('execs',0)/max(t,1e-9),1), len(s.get('crashes',[])))" 2>/dev/null || echo "? ? ?")
  minimal="-"; calls="-"; mwall="-"; rsh="-"; rpy="-"
  for crash in "$OUT/$m.crashes"/*.bin; do
    [ -f "$crash" ] || continue
    mo="$OUT/$m.min"
    rm -rf "$mo"
    "$B/minimize/aoti-minimize" "$crash" --out "$mo" --json > "$OUT/$m.min.json"
    cat "$OUT/$m.min.json"
    read -r minimal calls mwall < <("$AOTI_FUZZ_PYTHON" -c "
import json
s=json.load(open('$OUT/$m.min.json'))
mc=s.get('minimal_case') or s.get('minimal') or {}
print(str(mc.get('case', mc)).replace(' ',''), s.get('oracle_calls','?'), round(s.get('wall_seconds', s.get('seconds',0)),1))" 2>/dev/null || echo "? ? ?")
    if bash "$mo/repro.sh" --json > "$OUT/$m.repro_sh.json" 2>&1; then rsh="no (exit 0)"; else rsh="exit $?"; fi
    LD_PRELOAD="$PRELOAD" timeout 300 "$AOTI_FUZZ_PYTHON" "$mo/repro.py" > "$OUT/$m.repro_py.txt" 2>&1
    rpy="exit $? (LD_PRELOAD libstdc++)"
    tail -n 5 "$OUT/$m.repro_py.txt"
    break
  done
  echo "| $m | $kres | $execs | $rate | $ncrash | $minimal | $calls | $mwall | $rsh | $rpy |" >> "$OUT/results.md"
done

echo "== bench (harness, CUDA)"
if [ -f "$EX/healthy.pt2" ] && [ -f "$EX/lasttok.pt2" ]; then
  "$B/bench/bench_harness" "$EX/healthy.pt2" "$EX/lasttok.pt2" n=0 2000 | tee "$OUT/bench_harness.json"
fi
echo "== results"
cat "$OUT/results.md"
