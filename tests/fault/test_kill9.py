"""fault.kill9: aoti-fuzz SIGKILLed at random points after its first crash file appears.

Rounds alternate between real failing example packages (lasttok: a SIGSEGV, so workers are
replaced all the time, with the eager reference process running; runtime_check: a
RUNTIME_ERROR at tens of thousands of execs a second, --no-eager), each package with its own artifact dir kept across rounds, each round with its own
TMPDIR. In a round aoti-fuzz starts on the dir the last killed run left; once it has filed a
crash (a new crash file, or a sidecar's count grown past what the dir held before), it runs
on for a random 0-3 s and is killed with SIGKILL. Meanwhile a reader thread reads every crash
file and sidecar in the dir over and over: it must never see a partial or invalid one (all
writes are temp file, fsync, rename).

After each kill:
- every crash file parses (header line + JSON) and so does every sidecar (json.load); a
  crash file without its sidecar is counted (a kill between the two writes);
- `aoti-run --case FILE --json` replays every crash file with its signature (exit 1), and
  `aoti-minimize` accepts each new one (exit 0; --no-eager --no-repro-check --no-crash-map
  and a small --budget);
- a crash file, once written, never changes;
- no process of the killed run outlives it (this test is their subreaper);
- temp files in the artifact dir are counted: a kill -9 between af_write_atomic's temp file
  and its rename cannot clean up, so the promise is that the next aoti-fuzz run removes them
  (a planted stale temp file must be gone once the next run has opened the dir);
- TMPDIR: a killed process cannot remove its package-extraction dir (af_package_close does
  that on a clean exit), so at most that one aotif.* dir may be left (reported), torch's own
  inductor cache (torchinductor_<user>) aside.
Finally one clean run per package (it ends by -runs): nothing of ours in its TMPDIR after it,
the artifact dir free of temp files, and every crash file must have its sidecar.

Exit 77 when a package or a tool is missing.
"""
import ctypes
import glob
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from aotif_test import (CRASH_MAGIC, aoti_run, arg_parser, check, finish, read_json,  # noqa: E402
                        run_capture, sidecar_path, skip, tool_path)

PACKAGES = ["lasttok", "runtime_check"]


def parse_crash(data):
    """A crash file's bytes -> its JSON object; raises ValueError when partial or foreign."""
    text = data.decode("utf-8")
    head, sep, rest = text.partition("\n")
    if head + sep != CRASH_MAGIC:
        raise ValueError(f"bad header line {head[:40]!r}")
    return json.loads(rest)


def artifacts(art):
    """(crash files, sidecars, temp files) in the artifact dir."""
    names = os.listdir(art) if os.path.isdir(art) else []
    bins = sorted(os.path.join(art, n) for n in names if n.endswith(".bin") and not n.startswith("."))
    sides = sorted(os.path.join(art, n) for n in names if n.endswith(".json") and not n.startswith("."))
    temps = sorted(n for n in names if n.startswith(".") or ".tmp" in n)
    return bins, sides, temps


def counts(art):
    out = {}
    for s in artifacts(art)[1]:
        try:
            out[s] = read_json(s)["count"]
        except (OSError, ValueError, KeyError):
            out[s] = -1
    return out


class Reader(threading.Thread):
    """Reads every crash file and sidecar of a dir until stopped; keeps what went wrong."""

    def __init__(self, art):
        super().__init__(daemon=True)
        self.art, self.stop, self.reads, self.bad = art, threading.Event(), 0, []
        self.last, self.changes = {}, 0  # sidecar -> count last read; rewrites seen

    def run(self):
        while not self.stop.is_set():
            bins, sides, _ = artifacts(self.art)
            for path in bins + sides:
                try:
                    with open(path, "rb") as f:
                        data = f.read()
                except FileNotFoundError:
                    continue
                try:
                    if path.endswith(".bin"):
                        parse_crash(data)
                    else:
                        n = json.loads(data.decode("utf-8"))["count"]
                        self.changes += path in self.last and self.last[path] != n
                        self.last[path] = n
                    self.reads += 1
                except (ValueError, UnicodeDecodeError, KeyError, TypeError) as e:
                    self.bad.append(f"{os.path.basename(path)}: {e} ({len(data)} bytes)")


def become_subreaper():
    """Orphans of the killed aoti-fuzz (zygote, workers, the reference) become our children."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def children():
    me = os.getpid()
    kids = set()
    for task in glob.glob(f"/proc/{me}/task/*/children"):
        try:
            kids |= {int(x) for x in open(task).read().split()}
        except OSError:
            pass
    return kids


def reap_orphans(timeout):
    """Wait for every child (orphans of the killed run) to end; the pids still alive."""
    end = time.time() + timeout
    while True:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == 0:
                break
        alive = children()
        if not alive or time.time() > end:
            return alive
        time.sleep(0.05)


def proc_name(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()[:120]
    except OSError:
        return "?"


def ours(tmpd):
    """What the tools left in a TMPDIR, less torch's inductor cache (torchinductor_<user>,
    where torch keeps it by default and the eager reference leaves it on purpose)."""
    return sorted(x for x in os.listdir(tmpd) if not x.startswith("torchinductor_"))


def main():
    ap = arg_parser()
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("AF_KILL9_ROUNDS", 6)))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("AF_KILL9_SEED", time.time())))
    a = ap.parse_args()
    fuzz = tool_path(a.bin, "aoti-fuzz")
    run = tool_path(a.bin, "aoti-run")
    minimize = tool_path(a.bin, "aoti-minimize")
    pkgs = [n for n in PACKAGES if os.path.exists(os.path.join(a.examples, n + ".pt2"))]
    missing = [t for t in (fuzz, run, minimize) if not os.access(t, os.X_OK)]
    if not pkgs or missing:
        skip(f"packages {pkgs} in {a.examples}, tools missing {missing}")
    # found once for every tool started here (each would run python3 -c 'import torch')
    if not os.environ.get("AOTI_FUZZ_TORCH_LIB"):
        py = os.environ.get("AOTI_FUZZ_PYTHON", "python3")
        r = subprocess.run([py, "-c", "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            skip(f"no torch for {py}")
        os.environ["AOTI_FUZZ_TORCH_LIB"] = r.stdout.strip()
    rng = random.Random(a.seed)
    print(f"fault.kill9: {a.rounds} rounds, seed {a.seed} (AF_KILL9_SEED), packages {pkgs}", flush=True)
    check(become_subreaper(), "this test is the subreaper of the killed runs' orphans")
    t_all = time.time()
    root = tempfile.mkdtemp(prefix="af-kill9-")
    seen_bins = {}  # path -> sha256 at first sight
    tally = dict(rounds=0, reads=0, rewrites=0, bad_reads=0, temps_after_kill=0, bins_without_sidecar=0,
                 orphans=0, replays=0, minimized=0, tmpdir_left=0, swept_planted=0)

    for rnd in range(a.rounds):
        name = pkgs[rnd % len(pkgs)]
        pkg = os.path.join(a.examples, name + ".pt2")
        art = os.path.join(root, "art-" + name)
        corpus = os.path.join(root, "corpus-" + name)
        tmpd = os.path.join(root, f"tmp-{rnd}")
        os.makedirs(corpus, exist_ok=True)
        os.makedirs(tmpd)
        planted = None
        if os.path.isdir(art):  # a stale temp file, as a kill mid-write leaves one
            bins0 = artifacts(art)[0]
            if bins0:
                planted = os.path.join(art, "." + os.path.basename(bins0[0])[:-4] + ".json.tmp-Kill9x")
                with open(planted, "w") as f:
                    f.write('{"version": 1, "sig')  # half a sidecar
        before_bins = set(artifacts(art)[0])
        before = counts(art)
        reader = Reader(art)
        reader.start()
        log = open(os.path.join(root, f"fuzz-{rnd}.log"), "w")
        # lasttok rounds run the eager reference too (a child process that must not outlive
        # the kill either); runtime_check rounds without it, so they reach crashes sooner
        eager = [] if name == "lasttok" else ["--no-eager"]
        p = subprocess.Popen([fuzz, pkg, "--artifacts", art, "--timeout", "10"] + eager +
                             ["--", "-runs=100000000", f"-seed={rnd + 1}", corpus],
                             stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, TMPDIR=tmpd))
        t0, filed = time.time(), False
        while time.time() - t0 < 120 and p.poll() is None:
            now = counts(art)
            if set(artifacts(art)[0]) - before_bins or any(now.get(s, 0) > c for s, c in before.items()):
                filed = True
                break
            time.sleep(0.02)
        check(filed, f"round {rnd} ({name}): aoti-fuzz filed a crash ({time.time() - t0:.1f} s)")
        delay = rng.uniform(0, 3.0)
        time.sleep(delay)
        still_running = p.poll() is None
        os.kill(p.pid, signal.SIGKILL)
        rc = p.wait()
        log.close()
        check(still_running and rc == -signal.SIGKILL,
              f"round {rnd}: killed with SIGKILL {delay:.2f} s after the first crash (rc {rc})")
        if not still_running:
            print(open(os.path.join(root, f"fuzz-{rnd}.log")).read()[-2000:])
        reader.stop.set()
        reader.join()
        tally["rounds"] += 1
        tally["reads"] += reader.reads
        tally["rewrites"] += reader.changes
        tally["bad_reads"] += len(reader.bad)
        check(reader.reads > 0 and not reader.bad,
              f"round {rnd}: concurrent reader: {reader.reads} complete reads across {reader.changes} "
              f"sidecar rewrites, {len(reader.bad)} partial/invalid {reader.bad[:3]}")
        alive = reap_orphans(10)
        tally["orphans"] += len(alive)
        check(not alive, f"round {rnd}: no process outlives the killed aoti-fuzz ({[proc_name(x) for x in alive]})")
        for pid in alive:
            os.kill(pid, signal.SIGKILL)
        reap_orphans(5)

        if planted:
            gone = not os.path.exists(planted)
            tally["swept_planted"] += gone
            check(gone, f"round {rnd}: the stale temp file planted before the run was removed by it")
        bins, sides, temps = artifacts(art)
        tally["temps_after_kill"] += len(temps)
        print(f"info round {rnd}: temp files in the artifact dir after the kill: {temps}")
        ok_bins = True
        for b in bins:
            try:
                obj = parse_crash(open(b, "rb").read())
            except ValueError as e:
                ok_bins = False
                print(f"  {b}: {e}")
                continue
            if not os.path.exists(sidecar_path(b)):
                tally["bins_without_sidecar"] += 1
                print(f"info round {rnd}: {os.path.basename(b)} has no sidecar yet (killed between the two writes)")
            sha = hashlib.sha256(open(b, "rb").read()).hexdigest()
            if b in seen_bins:
                check(seen_bins[b][0] == sha, f"round {rnd}: {os.path.basename(b)} unchanged since it was written")
                continue
            seen_bins[b] = (sha, obj["signature"])
        check(bins and ok_bins, f"round {rnd}: {len(bins)} crash file(s), all complete")
        ok_sides = True
        for s in sides:
            try:
                read_json(s)
            except ValueError as e:
                ok_sides = False
                print(f"  {s}: {e}")
        check(ok_sides, f"round {rnd}: {len(sides)} sidecar(s), all parse")
        for b in bins:
            sig = seen_bins[b][1]
            r = aoti_run(a.bin, "--case", b, "--json", timeout=300, env=dict(os.environ, TMPDIR=tmpd))
            got = json.loads(r.stdout).get("signature") if r.stdout.strip() else None
            tally["replays"] += r.returncode == 1 and got == sig
            check(r.returncode == 1 and got == sig,
                  f"round {rnd}: aoti-run --case {os.path.basename(b)} replays {sig!r} (rc {r.returncode}, {got!r})")
            if len(seen_bins[b]) == 2:  # new this round: aoti-minimize it once
                out = os.path.join(root, f"min-{rnd}-{os.path.basename(b)[:-4]}")
                m = run_capture([minimize, b, "--out", out, "--budget", "5", "--no-eager",
                                 "--no-repro-check", "--no-crash-map", "--json"],
                                timeout=300, env=dict(os.environ, TMPDIR=tmpd))
                tally["minimized"] += m.returncode == 0
                check(m.returncode == 0 and os.path.exists(os.path.join(out, "minimal.bin")),
                      f"round {rnd}: aoti-minimize accepts {os.path.basename(b)} (rc {m.returncode}) {m.stderr.strip()[-300:] if m.returncode else ''}")
                seen_bins[b] = seen_bins[b] + (True,)
        left = ours(tmpd)
        tally["tmpdir_left"] += len(left)
        print(f"info round {rnd}: TMPDIR leftovers after the kill: {left}", flush=True)
        # aoti-run and aoti-minimize ran here too and exited cleanly: what is left can only
        # be the killed run's package-extraction dir
        check(len(left) <= 1 and all(x.startswith("aotif.") for x in left),
              f"round {rnd}: TMPDIR holds at most the killed run's extraction dir ({left})")

    # one clean run per package: it exits by itself, so it must clean up everything
    for name in pkgs:
        pkg = os.path.join(a.examples, name + ".pt2")
        art = os.path.join(root, "art-" + name)
        tmpd = os.path.join(root, "tmp-clean-" + name)
        os.makedirs(tmpd)
        p = run_capture([fuzz, pkg, "--artifacts", art, "--timeout", "10", "--", "-runs=2000", "-seed=99",
                         os.path.join(root, "corpus-" + name)], env=dict(os.environ, TMPDIR=tmpd))
        check(p.returncode == 0, f"clean run {name}: aoti-fuzz exits 0 (rc {p.returncode}) {p.stderr[-500:] if p.returncode else ''}")
        check(ours(tmpd) == [], f"clean run {name}: nothing of ours left in its TMPDIR ({os.listdir(tmpd)})")
        bins, sides, temps = artifacts(art)
        check(not temps, f"clean run {name}: no temp file in the artifact dir ({temps})")
        no_side = [b for b in bins if not os.path.exists(sidecar_path(b))]
        check(bins and not no_side, f"clean run {name}: every crash file has its sidecar ({no_side})")
        check(all(read_json(s)["count"] >= 1 for s in sides), f"clean run {name}: sidecar counts >= 1")
    wall = time.time() - t_all
    check(tally["rewrites"] > 0, f"the reader raced sidecar rewrites ({tally['rewrites']})")
    print(f"fault.kill9: {tally['rounds']} kills in {wall:.0f} s; concurrent reads {tally['reads']} "
          f"across {tally['rewrites']} sidecar rewrites, "
          f"partial/invalid {tally['bad_reads']}; crash files {len(seen_bins)}; replays ok {tally['replays']}, "
          f"minimized {tally['minimized']}; temp files after kills {tally['temps_after_kill']} "
          f"(planted and swept {tally['swept_planted']}); crash files without sidecar after kills "
          f"{tally['bins_without_sidecar']}; orphans {tally['orphans']}; TMPDIR entries left by kills "
          f"{tally['tmpdir_left']}", flush=True)
    finish(None, root, "logs, artifact dirs and TMPDIRs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
