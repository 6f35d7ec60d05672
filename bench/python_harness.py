"""The crash-surviving Python baseline: the harness a user would write without aoti-fuzz.

    python_harness.py PKG.pt2 CASE_LOG [--device cpu|cuda] [--max-cases N] [--max-seconds S]
                      [--window N] [--timeout S] [--verbose]

A parent driver (this process, which never imports torch) starts a worker: a Python process
that imports torch and loads the package once with torch._inductor.aoti_load_package, then
takes cases over a pipe, one line each way. The parent sends cases, waits for each answer
with a timeout, and records its outcome. It keeps --window cases in the pipe ahead of the
answers, so the worker never waits on the parent; answers come in order, so when the worker
dies the oldest unanswered case is the one that killed it and the others are sent again to
the next worker. The outcomes:
  ok          the runner returned (on CUDA: and torch.cuda.synchronize() did too)
  exception   the runner raised (a shape check's RuntimeError): the worker lives on
  cuda_error  it raised a CUDA error: the context is unusable, so the worker exits after
              answering and a new one is started
  signal      the worker died of a signal (SIGSEGV, SIGABRT, ...): a new one is started
  exit        the worker exited on its own (the model called exit()): a new one is started
  timeout     no answer in --timeout seconds: the worker is killed and a new one started
Restarts cost what they cost a user: a fresh interpreter, `import torch`, the package load.

The cases are the ones aoti-fuzz ran, from its AOTI_FUZZ_CASE_LOG file (one line per case:
the symbol values in spec order, the fill mode, the seed; fuzz/callbacks.c log_case), and each
input is filled with aoti-fuzz's own fill function (docs/fill.md), so both sides run the same
shapes on the same values and meet the same faults. The fill is table-driven here (one
gather per input, 3-4x faster than the element-wise formula), so that building inputs
does not slow the baseline down. Like aoti-fuzz's workers, the worker's OMP_NUM_THREADS defaults
to one core less than the machine has (1 on 2 cores).

Where the package's load dies of a signal before the first case and the system libstdc++
exists (images whose model .so was built by a newer gcc than the torch wheel, see
tests/gpu/README.md), the worker is started again with that libstdc++ in LD_PRELOAD, as a
user would after reading the traceback; the JSON says so.

--max-cases / --max-seconds stop early (a model whose every case kills the worker costs a
Python start per case); the rate is over the cases run. Timing starts when the first worker
is ready, as aoti-fuzz's execs/s does; restarts after that are inside it.
Prints one JSON object: cases, seconds, cases_per_second, outcomes, restarts, ..."""
import argparse
import collections
import json
import os
import select
import signal
import subprocess
import sys
import time
import zipfile

FILLS = ["random", "zeros", "ones", "wide"]  # af_fill order (harness/include/aotif/case.h)
TIMEOUT = object()
LIBSTDCXX = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"


def metadata(path):
    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.endswith("wrapper_metadata.json"))
        return json.loads(z.read(name))


def spec_of(path):
    return json.loads(metadata(path)["aoti_fuzz.spec"])


# ---- the worker ------------------------------------------------------------------------

class Filler:
    """aoti-fuzz's fill (docs/fill.md), exact: for input i, element j, s = seed mod MOD,
    v = (j*A + i*B + s) mod MOD and the value is a function of v alone. So a table of the
    value at every v (per dtype and int range; stored twice over, so that an index up to
    2*MOD needs no mod) and base = j*A mod MOD give each input in one add and one gather:
    table[base[:numel] + (i*B + s) mod MOD]. The constants, and a check of the first
    values against it, come from the project's own Python fill (harness/python/aotif_fill.py)."""

    def __init__(self, torch, device):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                        "harness", "python"))
        import aotif_fill
        self.MOD, self.A, self.B, self.C = aotif_fill.MOD, aotif_fill.A, aotif_fill.B, aotif_fill.C
        self.torch, self.device = torch, device
        self.base = torch.empty(0, dtype=torch.int64, device=device)
        v = torch.arange(self.MOD, dtype=torch.int64, device=device)
        self.w = (v * v + self.C) % self.MOD
        self.tables = {}

    def table(self, dtype, mode, int_range):
        key = (dtype, mode, int_range)
        t = self.tables.get(key)
        if t is None:
            torch, w = self.torch, self.w
            if dtype.is_floating_point:
                t = (((w % 257) - 128).to(torch.float64) / 64).to(dtype)
            elif dtype == torch.bool:
                t = (w % 2).to(torch.bool)
            else:
                lo, hi = int_range
                span = (hi - lo + 1) * (2 if mode == "wide" else 1)
                t = (lo + w % span).to(dtype)
            t = self.torch.cat([t, t])
            self.tables[key] = t
        return t

    def fill(self, shape, dtype, i, seed, mode, int_range):
        torch = self.torch
        if mode == "zeros":
            return torch.zeros(shape, dtype=dtype, device=self.device)
        if mode == "ones":
            return torch.ones(shape, dtype=dtype, device=self.device)
        numel = 1
        for d in shape:
            numel *= d
        if numel > self.base.numel():
            j = torch.arange(max(numel, 2 * self.base.numel()), dtype=torch.int64, device=self.device)
            self.base = (j % self.MOD) * self.A % self.MOD
        idx = self.base[:numel] + (i * self.B + seed % self.MOD) % self.MOD
        return self.table(dtype, mode, int_range).index_select(0, idx).reshape(shape)


def worker(path, device):
    """Load once, then answer cases from stdin until EOF: 'ok', or 'exc|cuda TYPE: MSG'."""
    import torch
    spec = spec_of(path)
    filler = Filler(torch, device)  # puts harness/python on the path
    import aotif_fill
    import aotif_ref
    # per input: dims as (symbol index or None, a, b) for a*sym+b, dtype, int range
    plan = [(dims, dt, ir) for _, dims, dt, ir in aotif_ref.Spec(spec).inputs]
    n_syms = len(spec["symbols"])
    index = int(device.split(":")[1]) if device.startswith("cuda:") else -1
    runner = torch._inductor.aoti_load_package(path, device_index=index)
    cuda = device.startswith("cuda")
    for dt, mode, ir in ((torch.float32, "random", (0, 1)), (torch.int64, "wide", (-3, 40)),
                         (torch.bool, "random", (0, 1)), (torch.float16, "random", (0, 1))):
        if not torch.equal(filler.fill([513], dt, 1, 99, mode, ir).cpu(),
                           aotif_fill.fill([513], dt, 1, 99, mode, ir)):
            raise SystemExit(f"python_harness: its table fill differs from aotif_fill ({dt}, {mode})")
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    out.write(b"ready\n")
    out.flush()
    with torch.no_grad():
        for line in inp:
            f = line.split()
            values = [int(x) for x in f[:n_syms]]
            mode, seed = FILLS[int(f[n_syms])], int(f[n_syms + 1])
            fatal = False
            try:
                args = [filler.fill([b if k is None else a * values[k] + b for k, a, b in dims],
                                    dt, i, seed, mode, ir) for i, (dims, dt, ir) in enumerate(plan)]
                runner(*args)
                if cuda:
                    torch.cuda.synchronize()
                reply = b"ok\n"
            except Exception as e:  # noqa: BLE001 - every Python-level failure is an outcome
                msg = " ".join(str(e).split())[:200]
                fatal = cuda and ("CUDA error" in msg or type(e).__name__ == "AcceleratorError")
                reply = ("%s %s: %s\n" % ("cuda" if fatal else "exc", type(e).__name__, msg)).encode()
            out.write(reply)
            out.flush()
            if fatal:  # a sticky CUDA error: nothing more runs in this context
                os._exit(3)


# ---- the parent driver -------------------------------------------------------------------

def omp_default():
    ncpu = os.cpu_count() or 1
    return ncpu - 1 if ncpu > 2 else 1


class Worker:
    """One worker process and the parent's end of its pipes."""

    def __init__(self, a, preload):
        env = dict(os.environ)
        if "OMP_NUM_THREADS" not in env:  # aoti-fuzz's workers' default (harness/zygote.c)
            env["OMP_NUM_THREADS"] = str(omp_default())
        if preload:
            env["LD_PRELOAD"] = preload + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", a.pkg,
                                   "--device", a.device], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=None if a.verbose else subprocess.DEVNULL, env=env, bufsize=0)
        self.rfd, self.buf = self.p.stdout.fileno(), b""

    def readline(self, timeout):
        """One line from the worker; None at EOF (it died), TIMEOUT when timeout seconds pass."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.rfd], [], [], left)[0]:
                return TIMEOUT
            chunk = os.read(self.rfd, 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode(errors="replace")

    def send(self, line):
        try:
            self.p.stdin.write(line)
            return True
        except (BrokenPipeError, OSError):
            return False

    def reap(self, kill):
        if kill and self.p.poll() is None:
            self.p.kill()
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            rc = self.p.wait(timeout=None if kill else 10)
        except subprocess.TimeoutExpired:  # closed its output but does not end
            self.p.kill()
            rc = self.p.wait()
        self.p.stdout.close()
        return rc


def death(rc):
    """The outcome of a worker that ended: ('signal', 'SIGSEGV') or ('exit', '3')."""
    if rc < 0:
        try:
            return "signal", signal.Signals(-rc).name
        except ValueError:
            return "signal", "signal %d" % -rc
    return "exit", str(rc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pkg")
    ap.add_argument("log", nargs="?")
    ap.add_argument("--device", default="auto",
                    help="cpu, cuda or cuda:N (default: the package's, AOTI_DEVICE_KEY)")
    ap.add_argument("--max-cases", type=int, default=0, help="run only the first N cases of the log")
    ap.add_argument("--max-seconds", type=float, default=0, help="stop after this long (timed part)")
    ap.add_argument("--window", type=int, default=32,
                    help="cases sent ahead of the answers (1: one case at a time); at most 256")
    ap.add_argument("--timeout", type=float, default=30, help="per case, seconds (aoti-fuzz's default)")
    ap.add_argument("--start-timeout", type=float, default=600, help="for a worker to load the package")
    ap.add_argument("--verbose", action="store_true", help="pass the workers' stderr through")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a.pkg, a.device)
    if not a.log:
        ap.error("CASE_LOG is required")
    a.window = max(1, min(a.window, 256))
    if a.device == "auto":
        a.device = metadata(a.pkg).get("AOTI_DEVICE_KEY") or "cpu"

    n_syms = len(spec_of(a.pkg)["symbols"])
    cases = []
    with open(a.log, "rb") as f:
        for line in f:
            if len(line.split()) == n_syms + 2:
                cases.append(line if line.endswith(b"\n") else line + b"\n")
    total = len(cases)
    if a.max_cases:
        cases = cases[:a.max_cases]

    preload, preload_why = None, ""
    starts, start_seconds = 0, []

    def start():
        """A ready worker, or exit: the package cannot be loaded at all."""
        nonlocal preload, preload_why, starts
        for _ in range(2):
            t = time.perf_counter()
            w = Worker(a, preload)
            starts += 1
            line = w.readline(a.start_timeout)
            if line == "ready":
                start_seconds.append(time.perf_counter() - t)
                return w
            rc = w.reap(kill=True)
            if (line is None and rc < 0 and preload is None and not os.environ.get("LD_PRELOAD")
                    and os.path.exists(LIBSTDCXX)):
                preload = LIBSTDCXX
                preload_why = "the load died of %s without it" % death(rc)[1]
                continue
            break
        sys.stderr.write("python_harness: the worker did not load %s (%s)\n" % (a.pkg, " ".join(death(rc))))
        sys.exit(2)

    outcomes, details = {}, {}
    restarts = 0
    w = start()
    t0 = time.perf_counter()
    done, nxt = 0, 0
    inflight, retry = collections.deque(), collections.deque()  # case indices
    while True:
        stopping = a.max_seconds and time.perf_counter() - t0 > a.max_seconds
        if not inflight and (stopping or not (retry or nxt < len(cases))):
            break
        if w is None:
            w = start()
            restarts += 1
        ok = True
        while ok and not stopping and len(inflight) < a.window and (retry or nxt < len(cases)):
            if retry:
                k = retry.popleft()
            else:
                k, nxt = nxt, nxt + 1
            inflight.append(k)
            ok = w.send(cases[k])
        ans = w.readline(a.timeout)  # after a failed send too: answers may be waiting before EOF
        inflight.popleft()  # answers come in order: this one is the oldest case sent
        ended = True
        if ans == "ok":
            kind, what, ended = "ok", "", False
        elif ans is TIMEOUT:
            w.reap(kill=True)
            kind, what = "timeout", ""
        elif ans is not None:
            kind, _, what = ans.partition(" ")
            kind = {"exc": "exception", "cuda": "cuda_error"}.get(kind, "exception")
            ended = kind == "cuda_error"
            if ended:
                w.reap(kill=False)
        else:  # EOF: it is dying; its status says how
            kind, what = death(w.reap(kill=False))
        if ended:  # the cases sent after this one never ran: the next worker runs them
            retry.extendleft(reversed(inflight))
            inflight.clear()
            w = None
        outcomes[kind] = outcomes.get(kind, 0) + 1
        if what:
            key = kind + ": " + (what.split(":")[0] if kind in ("exception", "cuda_error") else what)
            details[key] = details.get(key, 0) + 1
        done += 1
    dt = time.perf_counter() - t0
    if w is not None:
        w.reap(kill=False)
    res = {"package": a.pkg, "device": a.device, "cases": done, "cases_in_log": total,
           "capped": done < total, "seconds": round(dt, 3),
           "cases_per_second": round(done / dt, 3) if dt > 0 else None,
           "outcomes": outcomes, "outcome_details": details, "restarts": restarts, "window": a.window,
           "worker_start_seconds_first": round(start_seconds[0], 2),
           "worker_start_seconds_mean": round(sum(start_seconds) / len(start_seconds), 2),
           "omp_num_threads": os.environ.get("OMP_NUM_THREADS") or str(omp_default())}
    if preload:
        res["ld_preload"] = preload + " (" + preload_why + ")"
    print(json.dumps(res))


if __name__ == "__main__":
    sys.exit(main())
