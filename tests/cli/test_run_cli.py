"""CLI regression cases for aoti-run: each case is (arguments, exit status, a regex the
stderr or stdout must match). Bad input must give exit 2 and a one-line message."""
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from aotif_test import arg_parser, check, crash_text, finish, result, run_capture, tool_path, write_file  # noqa: E402


def run_case(binary, args, want_rc, pattern, stream="stderr", one_line=False):
    p = run_capture([binary, *args], timeout=300)
    out = p.stderr if stream == "stderr" else p.stdout
    ok = p.returncode == want_rc and re.search(pattern, out, re.M) is not None
    if one_line:
        ok = ok and out.count("\n") == 1
    if not check(ok, " ".join(args)[:110]):
        print(f"  rc={p.returncode} (want {want_rc})\n  stdout={p.stdout!r}\n  stderr={p.stderr!r}")


def interrupted(binary, pkg, signo, after):
    """Signal aoti-run `after` s after its temp dir appears (0: at once, mid-extraction)."""
    tmp = tempfile.mkdtemp(prefix="aotif-cli-sig-")
    env = dict(os.environ, TMPDIR=tmp)
    p = subprocess.Popen([binary, pkg, "--shape", "n=3", "--repeat", "100000"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    t0, seen = time.time(), False
    while p.poll() is None and time.time() - t0 < 60:
        if os.listdir(tmp):
            seen = True
            break
        time.sleep(0.001)
    if seen:
        time.sleep(after)
        p.send_signal(signo)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    time.sleep(0.2)
    left = os.listdir(tmp)
    name = f"aoti-run killed by {signal.Signals(signo).name} {after:.0f} s after its temp dir appeared"
    ok = seen and p.returncode == -signo and not left
    if not check(ok, f"{name}: exit by the signal ({p.returncode}), left in TMPDIR {left}"):
        print(f"  temp dir seen: {seen}; stderr={p.stderr.read()!r}")
    shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = arg_parser()
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    run = tool_path(a.bin, "aoti-run")
    lasttok = os.path.join(a.examples, "lasttok.pt2")
    lasttok_ep = os.path.join(a.examples, "lasttok.ep.pt2")
    tmp = tempfile.mkdtemp()
    notzip = os.path.join(tmp, "notzip.pt2")
    open(notzip, "w").write("not a zip\n")
    badcase = os.path.join(tmp, "bad.bin")
    open(badcase, "w").write("GARBAGE\n{}\n")
    trunc = os.path.join(tmp, "trunc.bin")
    open(trunc, "w").write('AOTIF-CRASH 1\n{"version": 1, "package_path": ')
    spec_bad = os.path.join(tmp, "spec.json")
    open(spec_bad, "w").write('{"format": "aoti-fuzz-spec", "version": 1, "inputs": [{"name": "x", "dtype": "float32", "shape": ["s9", 16]}], "symbols": []}')

    usage_cases = [
        ([], 2, r"missing the package"),
        (["--bogus", lasttok], 2, r"unknown or incomplete option '--bogus'"),
        ([lasttok, "--seed"], 2, r"unknown or incomplete option"),
        ([lasttok, "--seed", "abc"], 2, r"--seed wants a non-negative integer, got 'abc'"),
        ([lasttok, "--repeat", "0"], 2, r"--repeat wants an integer"),
        ([lasttok, "--fill", "purple"], 2, r"--fill wants random, zeros or ones, got 'purple'"),
        ([lasttok, "--timeout", "-1"], 2, r"--timeout wants seconds"),
        ([lasttok, "--shape", "nosuch=1"], 2, r"nosuch"),
        ([lasttok, "--shape", "n=abc"], 2, r"--shape n=abc"),
        ([lasttok, "--shape", "n=129"], 2, r"129"),
        ([lasttok, "--shape", "n=-1"], 2, r"-1"),
        ([lasttok, lasttok], 2, r"one package at a time"),
        (["/nonexistent/x.pt2"], 2, r"/nonexistent/x.pt2"),
        ([notzip], 2, r"not a valid \.pt2 package"),
        ([lasttok, "--model", "other"], 2, r"no model 'other'"),
        ([lasttok, "--case", badcase], 2, r"bad magic|not an aoti-fuzz crash file"),
        ([lasttok, "--case", trunc], 2, r"truncated|invalid"),
        ([lasttok, "--case", badcase, "--shape", "n=1"], 2, r"--case already fixes"),
        ([lasttok, "--spec", spec_bad, "--describe"], 2, r"s9"),
        ([lasttok, "--spec", "/nonexistent.json", "--describe"], 2, r"nonexistent"),
        ([lasttok, "--max-entry-bytes", "1000", "--describe"], 2, r"size limit"),
        ([lasttok, "--exported", "/nonexistent.pt2", "--describe"], 2, r"--exported /nonexistent\.pt2"),
        ([lasttok, "--exported", notzip, "--describe"], 2, r"not a torch\.export\.save file"),
        ([lasttok, "--exported", lasttok_ep, "--spec", spec_bad, "--describe"], 2,
         r"--spec and --exported both"),
        ([lasttok, "--fill", "wide", "--shape", "n=3"], 2, r"wide fill .* needs --beyond-contract"),
        ([lasttok, "--torch-lib", tmp, "--shape", "n=3"], 2, r"no libtorch\.so in"),
        ([lasttok, "--device", "cuda:x", "--shape", "n=3"], 2, r"bad device 'cuda:x'"),
        ([lasttok, "--device", "tpu", "--shape", "n=3"], 2, r"bad device 'tpu'"),
        # a package runs only on the device kind it was compiled for: bad input, said so
        ([lasttok, "--device", "cuda", "--shape", "n=3"], 2, r"device cuda: .*lasttok\.pt2 was compiled for cpu and runs only there"),
        ([os.path.join(a.fixtures, "cuda_lasttok.pt2"), "--device", "cpu", "--shape", "s77=3"], 2,
         r"device cpu: .*cuda_lasttok\.pt2 was compiled for cuda and runs only there"),
    ]
    for args, rc, pat in usage_cases:
        run_case(run, args, rc, pat, one_line=True)

    # a CUDA package where no GPU is usable: a clear error, not a crash
    cuda = os.path.join(a.fixtures, "cuda_lasttok.pt2")
    run_case(run, [cuda, "--shape", "s77=0"], 1, r"CUDA package|compute capability|no usable GPU|cuda")
    run_case(run, [cuda, "--describe"], 0, r"spec:\s+from wrapper", stream="stdout")
    # good paths
    run_case(run, ["--help"], 0, r"usage: aoti-run", stream="stdout")
    run_case(run, [lasttok, "--describe"], 0, r"symbol s\d+ \(n\): declared \[0, 128\] \(exported program\), compiled \[2, 128\]", stream="stdout")
    run_case(run, [lasttok, "--shape", "n=3"], 0, r"^result: OK", stream="stdout")
    run_case(run, [lasttok, "--shape", "n=0", "--fill", "zeros"], 1, r"^result: SIGNAL", stream="stdout")
    run_case(run, [lasttok, "--shape", "n=0"], 1, r"contract: inside the declared contract, in a contract gap: n=0 is declared legal", stream="stdout")
    run_case(run, [lasttok, "--shape", "n=128", "--max-input-bytes", "100"], 1, r"^result: REFUSED", stream="stdout")
    # --repeat N runs each time in a fresh worker (no fill cache or state carried over)
    p = run_capture([run, lasttok, "--shape", "n=3", "--repeat", "4", "--json"], timeout=300)
    j = result(p)
    ok = p.returncode == 0 and j.get("runs") == 4 and j.get("workers_started") == 4 and j.get("same_signature") == 4
    if not check(ok, f"--repeat 4: 4 runs in 4 workers ({j.get('workers_started')} started)"):
        print(f"  rc={p.returncode} stderr={p.stderr!r}")

    # --case: a seed beyond 2^53 comes back exact (a JSON string), and the package is found the
    # way aoti-minimize finds it: recorded path gone, relative path resolved from the crash
    # file's directory (the fuzzer's cwd)
    d = tempfile.mkdtemp(prefix="aotif-cli-case-")
    shutil.copy(lasttok, os.path.join(d, "pkg.pt2"))
    crash = {"format": "aoti-fuzz crash", "version": 1,
             "package": {"path": "pkg.pt2", "abspath": "/nonexistent/pkg.pt2",
                         "sha256": hashlib.sha256(open(lasttok, "rb").read()).hexdigest()},
             "model": "model", "device": "cpu",
             "case": {"symbols": [{"name": "s_other", "dim": "n", "value": 3}], "fill": "random",
                      "seed": "18446744073709551610"},
             "class": "OK", "signature": "OK", "message": "", "first_seen": 0, "count": 1}
    cf = os.path.join(d, "crash-ok-1.bin")
    write_file(cf, crash_text(crash, indent=None))
    p = run_capture([run, "--case", cf, "--json"], timeout=300, cwd=tmp)
    j = result(p)
    ok = p.returncode == 0 and j.get("seed") == "18446744073709551610" and j.get("class") == "OK"
    if not check(ok, f"--case from another cwd: package found beside the crash file, seed exact "
                     f"({p.returncode}, seed {j.get('seed')!r})"):
        print(f"  stderr={p.stderr!r}")

    # a crash file's device is the device the case ran on: a bad one is a bad crash file, and a
    # CUDA case against a CPU package is refused as bad input, not run
    for dev, pat in (("tpu", r'missing or bad field "device"'), ("cuda", r"device cuda: .* was compiled for cpu")):
        bad = dict(crash, device=dev)
        bf = os.path.join(d, f"crash-dev-{dev}.bin")
        write_file(bf, crash_text(bad, indent=None))
        run_case(run, ["--case", bf], 2, pat, one_line=True)

    # SIGINT/SIGTERM: the tool ends by that signal and leaves no temp dir, whether the signal
    # comes while the package is being extracted or while cases run
    for signo, after in ((signal.SIGINT, 0.0), (signal.SIGTERM, 0.0), (signal.SIGINT, 1.0), (signal.SIGTERM, 1.0)):
        interrupted(run, lasttok, signo, after)
    finish("all CLI checks passed")


if __name__ == "__main__":
    main()
