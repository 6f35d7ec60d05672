"""End-to-end: aoti-minimize on crash files of the example packages, in real workers.

For each example with a known minimal failing shape (<name>.expected.json "minimal"), a crash
file is written for a failing case as far from minimal as the example allows (the largest
known failing shape, a random fill with a large seed), with the signature aoti-run reports
for it. aoti-minimize must shrink it to exactly the expected minimal shape, write
minimal.bin/.json, repro.py, repro.sh and report.md, and find that both repros reproduce.
The test then checks those outputs itself: aoti-run --case minimal.bin and repro.sh give the
same signature, repro.py under the given Python (torch) dies of the same signal or raises
the same message, repro.py's fill function gives the values docs/fill.md documents (the ones
tests/unit/test_case.c asserts for the C fill), and report.md has every section.

Then the edges: a crash that does not reproduce (exit 1), a case that fails differently
(exit 1, names what it gave), a changed package (warning), --budget (stops, still writes),
SIGINT (exit 130, still writes), and a package and crash file under a hostile path (quotes,
$(...), backticks, non-ASCII) whose repros must still run, and run nothing else.

Exit 77 (skipped) when no Python with torch is found: the workers need libtorch.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from aotif_test import (Env, arg_parser, check, crash_doc, example_names, finish,  # noqa: E402
                        need_python, read_json, result, shape_args, write_file)

SECTIONS = ["## What happens", "## Minimal shapes", "## Error", "## Reproduce with Python",
            "## Reproduce without Python", "## Re-checked after writing", "## Versions",
            "## How this case was found"]


def mask(s):
    return re.sub(r"0x[0-9a-fA-F]+|(?<![A-Za-z_0-9])[0-9]+", "#", s)


class MinEnv(Env):
    def __init__(self, a):
        super().__init__(a, "aotif-min-e2e-", timeout=900, unset=("AOTI_RUN", "AOTI_FUZZ_LOADER"))
        # the loader memory of these runs stays in the test's dir, never the user's ~/.cache
        self.env["XDG_CACHE_HOME"] = os.path.join(self.tmp, "xdg-cache")

    def result_of(self, pkg, shape, fill, seed):
        p = self.aoti_run(pkg, "--fill", fill, "--seed", str(seed), "--json", *shape_args(shape))
        return json.loads(p.stdout) if p.stdout.strip() else None

    def write_crash(self, path, pkg, spec, shape, fill, seed, cls, sig, message="", sha=None):
        symbols = [{"name": s["name"], "dim": s["dim"], "value": shape[s["dim"]]} for s in spec["symbols"]]
        return write_file(path, crash_doc(pkg, symbols, fill=fill, seed=seed, cls=cls, signature=sig,
                                          message=message, sha=sha))


def check_outputs(e, name, out, summary, exp, own_python_run):
    files = ["minimal.bin", "minimal.json", "repro.py", "repro.sh", "report.md"]
    for f in files:
        check(os.path.isfile(os.path.join(out, f)), f"{name}: {f} written")
    check(not [f for f in os.listdir(out) if ".tmp-" in f], f"{name}: no temp files left")
    sig = summary["signature"]

    # minimal.bin is a crash file aoti-run takes, giving the same failure
    p = e.aoti_run("--case", os.path.join(out, "minimal.bin"), "--json")
    r = result(p)
    check(p.returncode == 1 and r.get("signature") == sig,
          f"{name}: aoti-run --case minimal.bin gives {sig!r} (got {p.returncode}, {r.get('signature')!r})")
    side = read_json(os.path.join(out, "minimal.json"))
    got = {s["dim"]: s["value"] for s in side["case"]["symbols"]}
    check(got == exp["minimal"], f"{name}: minimal.json holds {exp['minimal']} (got {got})")

    # repro.sh passes "$@" to aoti-run
    p = e.run(["/bin/sh", os.path.join(out, "repro.sh"), "--json"])
    r = result(p)
    check(p.returncode == 1 and r.get("signature") == sig,
          f"{name}: repro.sh --json gives {sig!r} (got {p.returncode}, {r.get('signature')!r})")

    report = open(os.path.join(out, "report.md")).read()
    check(report.startswith("# AOTInductor: "), f"{name}: report.md has a title")
    for s in SECTIONS:
        check(s in report, f"{name}: report.md has {s!r}")
    check("```python" in report and "aoti_load_package" in report, f"{name}: report inlines repro.py")
    check("```sh" in report and '"$@"' in report, f"{name}: report inlines repro.sh")
    check("below the compiled lower bound" in report, f"{name}: report flags the compiled lower bound")
    check("- torch: 2." in report and "- OS: " in report and "- compiler: " in report,
          f"{name}: report has versions")
    check("repro.sh: **reproduced**" in report and "repro.py: **reproduced**" in report,
          f"{name}: report says both repros reproduced")
    check(not re.search(r"^(PATH|HOME|USER|LD_LIBRARY_PATH)=", report, re.M),
          f"{name}: report does not dump the environment")

    if own_python_run:  # repro.py, run here, fails the same way
        p = e.run([e.python, os.path.join(out, "repro.py")])
        if summary["class"] == "SIGNAL":
            check(p.returncode == -signal.SIGSEGV,
                  f"{name}: repro.py dies of SIGSEGV (got {p.returncode}: {p.stderr[-300:]!r})")
        else:
            m = re.search(r"repro.py: the model raised \w+: (.*)", p.stderr)
            check(p.returncode == 1 and m is not None and mask(summary["message"]) in mask(m.group(1)),
                  f"{name}: repro.py raises {summary['message']!r} (got {p.returncode}: {p.stderr[-300:]!r})")


def minimize_example(e, name):
    exp = e.expected(name)
    pkg = e.pkg(name + ".pt2")
    spec = e.spec(name)
    # the failing shape farthest from the minimal one, with a fill that minimization can simplify
    start = max(exp["failing"], key=lambda f: sum(f["shape"].values()))
    fill, seed = "random", 123456789
    r = e.result_of(pkg, start["shape"], fill, seed)
    if not check(r is not None and r["class"] == start["class"], f"{name}: start case fails ({r})"):
        return
    crash = e.write_crash(os.path.join(e.tmp, name + ".bin"), pkg, spec, start["shape"], fill, seed,
                          r["class"], r["signature"], r["message"])
    t0 = time.time()
    p = e.run([e.min_bin, crash, "--json"])
    wall = time.time() - t0
    if not check(p.returncode == 0, f"{name}: exit 0 (got {p.returncode}: {p.stderr[-500:]})"):
        return
    s = json.loads(p.stdout)
    print(f"{name}: {start['shape']} -> {s['minimal']['symbols']} fill {s['minimal']['fill']} seed "
          f"{s['minimal']['seed']}: {s['oracle_calls']} questions, {s['oracle_runs']} runs, "
          f"{s['cache_hits']} cache hits, search {s['search_seconds']:.2f} s, wall {wall:.1f} s "
          f"(repro.sh {s['repro']['sh']['seconds']:.1f} s, repro.py {s['repro']['py']['seconds']:.1f} s)",
          flush=True)
    check(s["reproduced"] and not s["flaky"], f"{name}: reproduced, not flaky")
    check(s["signature"] == r["signature"], f"{name}: same signature")
    check(s["minimal"]["symbols"] == exp["minimal"], f"{name}: minimal {exp['minimal']} (got {s['minimal']['symbols']})")
    check(s["minimal"]["fill"] == "zeros", f"{name}: fill simplified to zeros")
    check(s["locally_minimal"] and not s["stopped"], f"{name}: locally minimal, not stopped")
    check(s["oracle_calls"] <= s["call_bound"], f"{name}: {s['oracle_calls']} questions <= bound {s['call_bound']}")
    check(s["repro"]["sh"]["reproduced"], f"{name}: repro.sh reproduced ({s['repro']['sh']['detail']})")
    check(s["repro"]["py"]["reproduced"], f"{name}: repro.py reproduced ({s['repro']['py']['detail']})")
    ahead = s["repro"]["py"].get("started_ahead") or {}
    check(ahead.get("seconds_before_check", 0) > 0,
          f"{name}: repro.py ran in the Python started ahead ({ahead})")
    check(s["torch_version"].startswith("2."), f"{name}: torch version found ({s['torch_version']!r})")
    out = os.path.join(e.tmp, name + ".min")
    check(os.path.realpath(s["out_dir"]) == os.path.realpath(out), f"{name}: default out dir is <stem>.min")
    check_outputs(e, name, out, s, exp, own_python_run=name in ("lasttok", "runtime_check"))


def check_fill(e):
    """repro.py's fill equals docs/fill.md's checked values (which test_case.c asserts in C)."""
    py = os.path.join(e.tmp, "lasttok.min", "repro.py")
    if not os.path.exists(py):
        return
    code = f"""
import importlib.util, json, torch
spec = importlib.util.spec_from_file_location("repro", {py!r})
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
f16 = m.fill((6,), torch.float16, 2, 12345678901, "random", (0, 16))
i64 = m.fill((6,), torch.int64, 2, 12345678901, "random", (-3, 5))
b = m.fill((2, 3), torch.bool, 2, 12345678901, "random", (0, 1))
z = m.fill((0, 16), torch.float32, 0, 0, "random", (0, 16))
print(json.dumps([f16.tolist(), i64.tolist(), b.flatten().tolist(), list(z.shape)]))
"""
    p = e.run([e.python, "-c", code])
    got = json.loads(p.stdout) if p.returncode == 0 else None
    want = [[-0.734375, -1.25, -0.578125, 1.28125, 0.3125, 0.53125], [-2, -2, 5, 1, 4, 5],
            [False, False, True, True, False, False], [0, 16]]
    check(got == want, f"repro.py fill matches docs/fill.md (got {got}, {p.stderr[-300:]})")


def edge_cases(e):
    name = "lasttok"
    pkg = e.pkg(name + ".pt2")
    spec = e.spec(name)
    exp = e.expected(name)
    sig = e.result_of(pkg, exp["failing"][0]["shape"], "random", 0)["signature"]

    # a healthy shape recorded as a crash: does not reproduce
    healthy = exp["healthy"][-1]
    crash = e.write_crash(os.path.join(e.tmp, "healthy.bin"), pkg, spec, healthy, "random", 0, "SIGNAL", sig)
    p = e.run([e.min_bin, crash, "--json"])
    s = json.loads(p.stdout) if p.stdout.strip() else {}
    check(p.returncode == 1, f"not reproducing: exit 1 (got {p.returncode})")
    check("does not reproduce" in p.stderr, f"not reproducing: says so ({p.stderr.strip()[-300:]!r})")
    check(s.get("reproduced") is False, "not reproducing: JSON reproduced false")
    check(not os.path.exists(os.path.join(e.tmp, "healthy.min")), "not reproducing: no output dir")

    # the case fails, but differently: a different bug, not this one
    rc_pkg = e.pkg("runtime_check.pt2")
    crash = e.write_crash(os.path.join(e.tmp, "other.bin"), rc_pkg, e.spec("runtime_check"), {"n": 1},
                          "random", 0, "SIGNAL", "SIGNAL: SIGSEGV @ somewhere")
    p = e.run([e.min_bin, crash])
    check(p.returncode == 1 and "RUNTIME_ERROR" in p.stderr,
          f"other failure: exit 1 naming what it gave (got {p.returncode}: {p.stderr.strip()[-300:]!r})")

    # --budget: stops after the reproduction, still writes; a changed package only warns
    rc_sig = e.result_of(rc_pkg, {"n": 1}, "random", 7)
    crash = e.write_crash(os.path.join(e.tmp, "budget.bin"), rc_pkg, e.spec("runtime_check"), {"n": 1},
                          "random", 7, rc_sig["class"], rc_sig["signature"], sha="ab" * 32)
    out = os.path.join(e.tmp, "budget-out")
    p = e.run([e.min_bin, crash, "--budget", "0.001", "--no-repro-check", "--json", "--out", out])
    s = json.loads(p.stdout) if p.stdout.strip() else {}
    check(p.returncode == 0 and s.get("stopped") is True, f"--budget: exit 0, stopped ({p.returncode}, {p.stderr[-300:]})")
    check("changed since the crash was recorded" in p.stderr, "changed package: warning")
    check(os.path.isfile(os.path.join(out, "minimal.bin")) and os.path.isfile(os.path.join(out, "report.md")),
          "--budget: minimal.bin and report.md written")
    check(s.get("repro", {}).get("sh") is None, "--no-repro-check: repros not run")

    # SIGINT while the repros are checked: exit 130, outputs still there
    out = os.path.join(e.tmp, "sigint-out")
    pr = subprocess.Popen([e.min_bin, crash, "--json", "--out", out], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=e.env)
    seen = ""
    for line in pr.stderr:
        seen += line
        if "checking the repros" in line:
            pr.send_signal(signal.SIGINT)
            break
    t0 = time.time()
    stdout, rest = pr.communicate(timeout=120)
    check(pr.returncode == 130, f"SIGINT: exit 130 (got {pr.returncode}: {(seen + rest)[-300:]!r})")
    check(time.time() - t0 < 30, "SIGINT: stops promptly")
    check(os.path.isfile(os.path.join(out, "minimal.bin")) and os.path.isfile(os.path.join(out, "report.md")),
          "SIGINT: minimal.bin and report.md written")
    s = json.loads(stdout) if stdout.strip() else {}
    check(s.get("interrupted") is True, "SIGINT: JSON says interrupted")


def hostile_path(e):
    """Every path lands quoted in the scripts: they run, and run nothing else."""
    d = os.path.join(e.tmp, "we ird'q\"uo$(touch PWNED1)`touch PWNED2`\u00e9 \\n")
    os.makedirs(d)
    pkg = os.path.join(d, "pkg $(touch PWNED3)'.pt2")
    shutil.copy(e.pkg("runtime_check.pt2"), pkg)
    r = e.result_of(pkg, {"n": 1}, "random", 3)
    crash = e.write_crash(os.path.join(d, "cr'ash $(touch PWNED4).bin"), pkg, e.spec("runtime_check"),
                          {"n": 1}, "random", 3, r["class"], r["signature"], r["message"])
    p = e.run([e.min_bin, crash, "--json"], cwd=d)
    s = json.loads(p.stdout) if p.stdout.strip() else {}
    check(p.returncode == 0, f"hostile path: exit 0 (got {p.returncode}: {p.stderr[-300:]})")
    check(s.get("repro", {}).get("sh", {}).get("reproduced"), f"hostile path: repro.sh reproduced ({s.get('repro')})")
    check(s.get("repro", {}).get("py", {}).get("reproduced"), f"hostile path: repro.py reproduced ({s.get('repro')})")
    pwned = [os.path.join(r_, f) for r_, _, fs in os.walk(e.tmp) for f in fs if f.startswith("PWNED")]
    pwned += [f for f in os.listdir(os.getcwd()) if f.startswith("PWNED")]
    check(not pwned, f"hostile path: nothing ran from a name ({pwned})")


def loader_crash(e):
    """A Python whose loader crashes (as torch's C++ runtime does under a newer system gcc's
    model .so) unless the system libstdc++ is preloaded. With the loader memory off
    (AOTI_FUZZ_LOADER=off), each Python start of the run dies once and is retried with the
    preload, and repro.py is judged on the retry. With it on (the default), the first start
    that dies teaches the memory ($XDG_CACHE_HOME/aoti-fuzz/loader.json), the rest of the run
    and every later run start with the preload: no start dies first, and the verdicts stay."""
    lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
    if not os.path.exists(lib):
        print("note: no system libstdc++ at the usual path; LD_PRELOAD retry not checked")
        return
    fake = os.path.join(e.tmp, "crashing-python")
    log = os.path.join(e.tmp, "crashing-python.log")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\n"
                "echo \"${LD_PRELOAD:-}|$1\" >> \"$FAKE_LOG\"\n"
                f"case \"${{LD_PRELOAD:-}}\" in *libstdc++*) exec '{e.python}' \"$@\";; esac\n"
                # the Python aoti-minimize starts ahead (-c aotif_warm.py): its imports work,
                # the repro.py it is handed dies loading, as a plain start does
                "if [ \"$1\" = -c ]; then case \"$2\" in *aotif_warm.py*)\n"
                "  echo 'ready 0' >&3; exec 3>&-; read -r path || exit 0\n"
                "  echo \"|$path\" >> \"$FAKE_LOG\"; echo 'torch 0.0+fake'; kill -SEGV $$;; esac\n"
                f"  exec '{e.python}' \"$@\"; fi\n"
                "echo 'torch 0.0+fake'; kill -SEGV $$\n")
    os.chmod(fake, 0o755)
    pkg = e.pkg("runtime_check.pt2")
    r = e.result_of(pkg, {"n": 1}, "random", 11)
    crash = e.write_crash(os.path.join(e.tmp, "loader.bin"), pkg, e.spec("runtime_check"), {"n": 1},
                          "random", 11, r["class"], r["signature"], r["message"])
    xdg = os.path.join(e.tmp, "loader-xdg")
    memory = os.path.join(xdg, "aoti-fuzz", "loader.json")

    def run(tag, **extra):
        if os.path.exists(log):
            os.remove(log)
        env = dict(e.env, AOTI_FUZZ_PYTHON=fake, XDG_CACHE_HOME=xdg, FAKE_LOG=log, **extra)
        out = os.path.join(e.tmp, "loader-" + tag)
        t0 = time.time()
        p = e.run([e.min_bin, crash, "--json", "--out", out], env=env)
        wall = time.time() - t0
        s = json.loads(p.stdout) if p.stdout.strip() else {}
        py = s.get("repro", {}).get("py") or {}
        check(p.returncode == 0 and py.get("reproduced") and py.get("ld_preload") == lib,
              f"loader crash ({tag}): repro.py reproduced with LD_PRELOAD={lib} ({p.returncode}, {py})")
        # the fake's starts that run a script (the reference, repro.py), not a -c lookup
        starts = [ln.rstrip("\n").split("|", 1) for ln in open(log)] if os.path.exists(log) else []
        scripts = [st for st in starts if st[1] != "-c"]
        died = [st for st in scripts if "libstdc++" not in st[0]]
        print(f"loader crash ({tag}): {len(starts)} starts of the fake Python, {len(scripts)} "
              f"running a script, {len(died)} without the preload; wall {wall:.1f} s", flush=True)
        return s, out, scripts, died

    # the memory off: as before it, every script start dies once first
    s, out, scripts, died = run("off", AOTI_FUZZ_LOADER="off")
    check(died and len(died) * 2 == len(scripts),
          f"loader crash (off): each script start died once, then ran with the preload ({scripts})")
    check(not os.path.exists(memory), "loader crash (off): no loader memory written")

    # the memory on: the first start that dies teaches it, no other start dies
    s, out, scripts, died = run("learn")
    check(len(died) == 1, f"loader crash (learn): one start died, the rest had the preload ({scripts})")
    mem = read_json(memory) if os.path.exists(memory) else {}
    entry = mem.get("pythons", {}).get(os.path.realpath(fake)) or mem.get("pythons", {}).get(fake) or {}
    check(entry.get("ld_preload") == lib, f"loader crash (learn): the memory holds the preload ({mem})")
    check(set(entry) <= {"real", "mtime", "size", "ld_preload", "torch", "why", "recorded"},
          f"loader crash (learn): the memory holds nothing but the one variable ({sorted(entry)})")

    # a later run: no start dies, the report says where the preload came from
    s, out, scripts, died = run("later")
    check(scripts and not died, f"loader crash (later): no start died first ({scripts})")
    report = open(os.path.join(out, "report.md")).read() if os.path.exists(out) else ""
    check("aoti-fuzz remembers that in" in report and "AOTI_FUZZ_LOADER=off" in report,
          "loader crash (later): report.md says the preload was remembered, and how to check again")


def main():
    a = arg_parser(python="env").parse_args()
    need_python(a.python, "torch")
    e = MinEnv(a)
    with_minimal = [n for n in example_names(e.ex) if e.expected(n)["minimal"]]
    check({"lasttok", "twosym", "runtime_check"} <= set(with_minimal), f"examples with a minimal shape: {with_minimal}")
    for name in with_minimal:
        minimize_example(e, name)
    check_fill(e)
    edge_cases(e)
    hostile_path(e)
    loader_crash(e)
    finish("all aoti-minimize end-to-end checks passed", e.tmp)


if __name__ == "__main__":
    main()
