"""What the Python test scripts of tests/cli, tests/e2e and tests/fault share: checks that print
one line each and are counted, the end of a test (exit 1 on a failed check, 77 for skipped),
the common arguments (--bin, --examples, --python) and the skip conditions, running the tools
of a build (aoti-run, aoti-fuzz, aoti-minimize) with their output captured, and reading and
writing crash files and sidecars (docs/crash-file.md). Env is one end-to-end test's world:
the tools, the example packages, the Python with torch the tools use and a temp dir.

The scripts put this directory on sys.path themselves (so each runs alone too, as its
docstring shows) rather than through PYTHONPATH, which would reach the Pythons the tools start.
"""
import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77  # the exit status ctest's SKIP_RETURN_CODE reads as "skipped"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL_DIRS = {"aoti-run": "harness", "aoti-fuzz": "fuzz", "aoti-minimize": "minimize"}
CRASH_MAGIC = "AOTIF-CRASH 1\n"

# what check() and warn() saw fail, for finish(); one list per test process
failures = []
warnings = []


# ---- checks and the end of a test ------------------------------------------------------------

def check(cond, what):
    """One line, "ok   WHAT" or "FAIL WHAT"; a failure is counted. Returns cond."""
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def warn(cond, what):
    """As check(), but a false cond is a warning: reported by finish(), not a failure."""
    print(("ok   " if cond else "WARN ") + what, flush=True)
    if not cond:
        warnings.append(what)
    return cond


def finish(passed, keep=None, kept="outputs"):
    """The end of a test: the warnings; then on a failed check "N failure(s)" and exit 1,
    leaving `keep` (the test's temp dir) for a look; else `keep` is removed and `passed` (a
    line, or None) printed."""
    for w in warnings:
        print("warning:", w)
    if failures:
        print(f"{len(failures)} failure(s)" + (f"; {kept} kept in {keep}" if keep else ""))
        sys.exit(1)
    if keep:
        shutil.rmtree(keep, ignore_errors=True)
    if passed:
        print(passed)


def section(title, fn):
    """fn() under a "== TITLE" line, then its seconds; returns what fn returns."""
    t0 = time.time()
    print(f"== {title}", flush=True)
    out = fn()
    print(f"   ({time.time() - t0:.1f} s)", flush=True)
    return out


def skip(why):
    """The test cannot run here (a package, a tool or torch missing): exit 77."""
    print("SKIP:", why)
    sys.exit(SKIP)


# ---- arguments and what a test needs ---------------------------------------------------------

def arg_parser(examples=True, python=None):
    """--bin BUILD and --examples DIR (required unless examples is False); --python PY when
    python is "env" (default $AOTI_FUZZ_PYTHON, else python3) or "venv" (then the
    repository's .venv before python3). The caller adds its own options and parses."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="build dir")
    ap.add_argument("--examples", required=examples, help="exported example packages")
    if python:
        venv = os.path.join(ROOT, ".venv", "bin", "python")
        fallback = venv if python == "venv" and os.path.exists(venv) else "python3"
        ap.add_argument("--python", default=os.environ.get("AOTI_FUZZ_PYTHON") or fallback,
                        help="python with torch (the tools find libtorch through it); default "
                             "$AOTI_FUZZ_PYTHON" + (", else the repository's .venv" if python == "venv" else ""))
    return ap


def need_python(python, *modules):
    """Skip (exit 77) unless `python` imports every one of modules."""
    p = subprocess.run([python, "-c", "import " + ", ".join(modules)], capture_output=True, text=True)
    if p.returncode != 0:
        skip(f"{python} cannot import {' and '.join(modules)} (set AOTI_FUZZ_PYTHON): {short(p.stderr, 200)}")


def need_examples(examples, files):
    """Skip (exit 77) unless every one of files (names in the examples dir) is there."""
    missing = [f for f in files if not os.path.exists(os.path.join(examples, f))]
    if missing:
        skip(f"example packages missing in {examples}: {missing} (run scripts/setup.sh)")


def example_names(examples):
    """The models exported into the examples dir: those with a NAME.expected.json, sorted."""
    return sorted(f[:-len(".expected.json")] for f in os.listdir(examples) if f.endswith(".expected.json"))


def expected(examples, name):
    """NAME.expected.json: the outcomes corpus/build.py measured for the example."""
    with open(os.path.join(examples, name + ".expected.json")) as f:
        return json.load(f)


# ---- running the tools -----------------------------------------------------------------------

def tool_path(bin_dir, name):
    """The absolute path of tool `name` (aoti-run, aoti-fuzz, aoti-minimize) in a build dir."""
    return os.path.join(os.path.abspath(bin_dir), TOOL_DIRS[name], name)


def run_capture(cmd, timeout=600, **kw):
    """cmd run to its end, stdout and stderr captured as text; kw go to subprocess.run."""
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def aoti_run(bin_dir, *args, timeout=600, **kw):
    return run_capture([tool_path(bin_dir, "aoti-run"), *args], timeout, **kw)


def fuzz_summary(fuzz_bin, pkg, art, runs, *extra, seed=1, corpus=None, env=None, timeout=900, lf=()):
    """aoti-fuzz PKG --artifacts ART --summary ART/summary.json EXTRA -- -runs=RUNS -seed=SEED
    LF CORPUS (a new temp dir unless given): (the process, the summary or {}, seconds)."""
    corpus = corpus or tempfile.mkdtemp()
    summary = os.path.join(art, "summary.json")
    cmd = [fuzz_bin, pkg, "--artifacts", art, "--summary", summary, *extra,
           "--", f"-runs={runs}", f"-seed={seed}", *lf, corpus]
    t0 = time.time()
    p = run_capture(cmd, timeout, env=env)
    s = read_json(summary) if os.path.exists(summary) else {}
    return p, s, time.time() - t0


def result(p):
    """A tool's --json output, {} when there is none or it is not JSON."""
    try:
        return json.loads(p.stdout) if p.stdout.strip() else {}
    except ValueError:
        return {}


def short(s, n=300):
    s = (s or "").strip()
    return s if len(s) <= n else s[:n] + "..."


def shape_args(shape):
    """{dim or symbol: size} -> aoti-run's --shape K=V arguments."""
    out = []
    for k, v in shape.items():
        out += ["--shape", f"{k}={v}"]
    return out


# ---- files and crash files -------------------------------------------------------------------

def read_json(path):
    with open(path) as f:
        return json.load(f)


def write_file(path, data):
    """data (str, or bytes) into path; returns path."""
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return path


def crash_fields(pkg, symbols, fill="random", seed=0, cls="SIGNAL", signature="SIGNAL: SIGSEGV",
                 message="", sha=None, **over):
    """A crash file's JSON object for a CPU case of pkg (docs/crash-file.md); sha defaults to
    the package's (zeros when it does not exist); over replaces top-level fields."""
    if sha is None:
        sha = hashlib.sha256(open(pkg, "rb").read()).hexdigest() if os.path.exists(pkg) else "0" * 64
    doc = {
        "format": "aoti-fuzz crash", "version": 1,
        "package": {"path": pkg, "abspath": pkg, "sha256": sha},
        "model": "model", "device": "cpu",
        "case": {"symbols": symbols, "fill": fill, "seed": seed},
        "class": cls, "signature": signature, "message": message,
        "below_compiled": True, "flaky": False,
        "first_seen": 1796204976, "last_seen": 1796204976, "count": 1,
    }
    doc.update(over)
    return doc


def crash_text(doc, indent=1):
    """The bytes of a crash file holding doc: the magic line, then the JSON."""
    return CRASH_MAGIC + json.dumps(doc, indent=indent) + "\n"


def crash_doc(pkg, symbols, **kw):
    """crash_text(crash_fields(...)): a whole crash file's text."""
    return crash_text(crash_fields(pkg, symbols, **kw))


def read_crash(path):
    """(its first line, stripped; its JSON object) of a crash file."""
    with open(path) as f:
        first = f.readline().strip()
        return first, json.loads(f.read())


def sidecar_path(crash):
    """The sidecar of crash file X.bin: X.json."""
    return crash[:-len(".bin")] + ".json"


def read_sidecar(crash):
    return read_json(sidecar_path(crash))


def crash_files(art):
    """[(path, crash file JSON, sidecar JSON or {})] of an artifacts dir's crash-*.bin, sorted;
    each crash file's first line in its JSON as "_first_line"."""
    out = []
    for b in sorted(glob.glob(os.path.join(art, "crash-*.bin"))):
        first, body = read_crash(b)
        side = read_sidecar(b) if os.path.exists(sidecar_path(b)) else {}
        body["_first_line"] = first
        out.append((b, body, side))
    return out


# ---- an end-to-end test's world --------------------------------------------------------------

class Env:
    """The build's tools, the example packages (ex), the Python with torch (python) that the
    tools are told to use through AOTI_FUZZ_PYTHON in env, the variables in unset removed,
    and a new temp dir (tmp) for what the test writes; run() uses `timeout` by default."""

    def __init__(self, a, prefix, timeout=600, unset=()):
        self.bin = a.bin
        self.ex = os.path.abspath(a.examples)
        self.python = a.python
        self.timeout = timeout
        self.env = dict(os.environ, AOTI_FUZZ_PYTHON=a.python)
        for k in unset:
            self.env.pop(k, None)
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.run_bin = tool_path(a.bin, "aoti-run")
        self.fuzz_bin = tool_path(a.bin, "aoti-fuzz")
        self.min_bin = tool_path(a.bin, "aoti-minimize")

    def check_tools(self):
        """A check per tool: built and executable."""
        for b in (self.run_bin, self.fuzz_bin, self.min_bin):
            check(os.access(b, os.X_OK), f"tool built: {b}")

    def pkg(self, f):
        return os.path.join(self.ex, f)

    def expected(self, name):
        return expected(self.ex, name)

    def spec(self, name):
        return read_json(self.pkg(name + ".spec.json"))

    def run(self, cmd, timeout=None, **kw):
        kw.setdefault("env", self.env)
        return run_capture(cmd, timeout or self.timeout, **kw)

    def aoti_run(self, *args):
        return self.run([self.run_bin, *args])

    def fuzz(self, pkg, art, runs, *extra, seed=1):
        """fuzz_summary() with a new corpus dir under tmp: (process, summary, seconds)."""
        corpus = tempfile.mkdtemp(dir=self.tmp, prefix="corpus-")
        return fuzz_summary(self.fuzz_bin, pkg, art, runs, *extra, seed=seed, corpus=corpus, env=self.env)

    def fuzz_crash(self, name):
        """The first crash file (by name) aoti-fuzz writes for example NAME in 2,000 execs
        from an empty corpus, seed 1; None (a failed check) when it finds none."""
        art, corpus = os.path.join(self.tmp, name + ".art"), os.path.join(self.tmp, name + ".corpus")
        os.makedirs(art)
        os.makedirs(corpus)
        p = self.run([self.fuzz_bin, self.pkg(name + ".pt2"), "--artifacts", art, "--",
                      "-runs=2000", "-seed=1", corpus])
        bins = sorted(f for f in os.listdir(art) if f.endswith(".bin"))
        check(bins, f"{name}: aoti-fuzz found a crash (exit {p.returncode}: {p.stderr[-400:]!r})")
        return os.path.join(art, bins[0]) if bins else None

    def minimize_json(self, crash, out, *extra):
        """aoti-minimize CRASH --out OUT --json --no-repro-check EXTRA: its JSON, or None (a
        failed check) when it does not exit 0."""
        p = self.run([self.min_bin, crash, "--out", out, "--json", "--no-repro-check", *extra])
        if not check(p.returncode == 0, f"aoti-minimize {os.path.basename(crash)} exits 0 "
                                        f"(got {p.returncode}: {p.stderr[-600:]!r})"):
            return None
        return json.loads(p.stdout)

    def fuzz_and_minimize(self, name, *extra):
        """fuzz_crash(NAME), then minimize_json() of it into tmp/NAME.min: (crash file, out
        dir, the JSON); the crash file or the JSON None where that step failed."""
        crash = self.fuzz_crash(name)
        out = os.path.join(self.tmp, name + ".min")
        return crash, out, self.minimize_json(crash, out, *extra) if crash else None
