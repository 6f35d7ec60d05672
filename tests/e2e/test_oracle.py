"""End-to-end: the eager reference oracle, on the real example packages.

    python3 tests/e2e/test_oracle.py --bin BUILD --examples DIR [--python PY]
                                     [--mismatch-sample K] [--fuzz-execs N]

The reference runs the model's exported program eagerly (ep.module() under no_grad) on the
inputs the AOTI package got, gives failures a verdict (EAGER_FAILS_TOO / AOTI_ONLY / NOT_RUN /
LOST) and compares the outputs of OK runs (MISMATCH). Checks (one line per check; exit 1 on any
failure, 77 when a package or torch is missing):
1. EAGER_FAILS_TOO: every "failing" shape of every EXPECTED (lasttok n=0, twosym, crossidx,
   runtime_check; measured: eager raises at each of them) through aoti-run --eager (text and
   JSON); a short aoti-fuzz run of lasttok, crossidx and runtime_check (crash file, sidecar,
   summary, stderr's "  eager: EAGER_FAILS_TOO: ..." line); aoti-minimize of the lasttok crash
   (minimal.json, stdout, report.md, repro.py's "eager: fails too (...)").
2. Tolerance 0 flags legitimate last-bit differences: aoti-fuzz conv_pool.pt2 --rtol 0 --atol 0
   --check-every 1 writes MISMATCH crash files (AOTI_ONLY); aoti-minimize of one (--rtol 0
   --atol 0, repro checks on): repro.py reproduced, report "AOTInductor: " / AOTI_ONLY;
   aoti-run --eager --rtol 0 --atol 0 at its case and at bert_encoder batch=8 seq=64: MISMATCH
   with 0 < max_abs < 1e-4, and OK at the default tolerance.
3. Default tolerance: the healthy examples (EXPECTED "failing" empty and no "mismatch") give
   0 MISMATCH in --fuzz-execs (default 20,000) execs each with --check-every 10.
4. Oracle off: bert_encoder.plain.pt2 alone (reference off: no exported program; crash files
   NOT_RUN with the reason; report.md "Eager reference: not run"); aoti-run --eager on it exits
   2 without --exported and works with --exported bert_encoder.ep.pt2; aoti-fuzz --no-eager;
   aoti-minimize of a MISMATCH without the program (plain package, or --no-eager): exit 2.
5. AOTI_ONLY on real defects: every model whose EXPECTED has a non-empty "mismatch" list
   (FAIL if there is none): aoti-run --eager at a sample of the listed shapes (all of them with
   --mismatch-sample 0) gives MISMATCH / AOTI_ONLY, with max_abs equal to the one measured here
   in Python with the same fill (aotif_fill.py, seed 0); every listed shape mismatches in that
   Python measurement; a short aoti-fuzz run finds a MISMATCH crash file (AOTI_ONLY) and
   aoti-minimize of it reproduces (repro.py reproduced).

WARN lines (reported, not failures): EXPECTED's recorded max_abs was measured on
torch.manual_seed(0); torch.randn inputs, not on the tools' fill, so "within a factor of 2 of
the recorded max_abs" is only a plausibility check.
"""
import concurrent.futures
import glob
import hashlib
import json
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from aotif_test import (ROOT, Env, arg_parser, check, crash_files, crash_text, example_names,  # noqa: E402
                        failures, finish, need_examples, need_python, read_crash, result, section,
                        shape_args, short, warn, warnings, write_file)

FILL_PY = os.path.join(ROOT, "harness", "python", "aotif_fill.py")
# healthy models fuzzed for part 3 (those of them present; EXPECTED "failing" empty, no "mismatch")
HEALTHY = ("healthy", "healthy_blob", "derived", "conv_pool", "bert_encoder")
# shapes where a package's output depends on memory past its input (heap garbage): the tool's
# max_abs cannot equal one measured in another process there (corpus/models/README.md:
# adaptive_pool "reads past the input; heap-dependent" where h·w < 64)
READS_PAST_INPUT = {"adaptive_pool": lambda s: s.get("h", 64) * s.get("w", 64) < 64}
LAST_BITS = 1e-4  # a tolerance-0 mismatch of a healthy model is below this (last bits)


# Run in the venv's python: argv[1] = aotif_fill.py's directory, stdin = JSON
# {"examples": DIR, "cases": [{"model", "shape": {Dim: value}, "output"}]}; prints one JSON
# list, per case {"eager": "ok"|"error", "mismatch": bool, "max_abs", "nonfinite"} of the
# AOTI package (aoti_load_package) against its exported program (ep.module(check_guards=False)
# under no_grad), inputs from aotif_fill's fill (mode random, seed 0: aoti-run's default).
HELPER = r'''
import json, os, re, sys
sys.path.insert(0, sys.argv[1])
import torch
from aotif_fill import fill
DIM = re.compile(r"^(?:(\d+)\*)?([A-Za-z_]\w*)([+-]\d+)?$")
req = json.load(sys.stdin)
ex = req["examples"]
loaded = {}
out = []
for c in req["cases"]:
    name = c["model"]
    if name not in loaded:
        pkg = os.path.join(ex, name + ".pt2")
        spec = json.load(open(os.path.join(ex, name + ".spec.json")))
        aoti = torch._inductor.aoti_load_package(pkg)
        ep = torch.export.load(pkg)
        try:
            ref = ep.module(check_guards=False)
        except TypeError:
            ref = ep.module()
        loaded[name] = (spec, aoti, ref)
    spec, aoti, ref = loaded[name]
    by_dim = {s.get("dim") or s["name"]: s["name"] for s in spec["symbols"]}
    vals = {by_dim.get(k, k): v for k, v in c["shape"].items()}
    inputs = []
    for i, inp in enumerate(spec["inputs"]):
        shape = []
        for d in inp["shape"]:
            if isinstance(d, int):
                shape.append(d)
                continue
            m = DIM.match(d.replace(" ", ""))
            shape.append(int(m.group(1) or 1) * vals[m.group(2)] + int(m.group(3) or 0))
        inputs.append(fill(shape, getattr(torch, inp["dtype"]), i, 0, "random",
                           tuple(inp.get("int_range", (0, 1)))))
    r = {}
    try:
        with torch.no_grad():
            e = ref(*[t.clone() for t in inputs])
        r["eager"] = "ok"
    except Exception as err:
        out.append({"eager": "error", "error": f"{type(err).__name__}: {err}"[:300]})
        continue
    with torch.no_grad():
        a = aoti(*inputs)
    from torch.utils import _pytree as pytree
    a = [t for t in pytree.tree_leaves(a) if isinstance(t, torch.Tensor)]
    e = [t for t in pytree.tree_leaves(e) if isinstance(t, torch.Tensor)]
    k = c.get("output", 0)
    av, evv = a[k], e[k]
    try:
        torch.testing.assert_close(av, evv, equal_nan=True)
        r["mismatch"] = bool(((~torch.isfinite(av)) & torch.isfinite(evv)).any())
    except AssertionError:
        r["mismatch"] = True
    d = (av.double() - evv.double()).abs()
    fin = torch.isfinite(d)
    r["max_abs"] = float(d[fin].max()) if bool(fin.any()) else None
    r["nonfinite"] = int(((~torch.isfinite(av)) & torch.isfinite(evv)).sum())
    out.append(r)
print(json.dumps(out))
'''


class OracleEnv(Env):
    def __init__(self, a):
        super().__init__(a, "aotif-oracle-e2e-", unset=("AOTI_RUNTIME_CHECK_INPUTS",))
        self.sample = a.mismatch_sample
        self.fuzz_execs = a.fuzz_execs


def label_of(name, shape):
    return f"{name} " + " ".join(f"{k}={v}" for k, v in shape.items())


def case_shape(body):
    """{Dim (or symbol) name: value} of a crash file's case."""
    return {s.get("dim") or s["name"]: s["value"] for s in body["case"]["symbols"]}


def new_blocks(stderr):
    """stderr's 'aoti-fuzz: NEW ...' lines, each with the indented lines that follow it."""
    lines = stderr.splitlines()
    out = []
    for i, l in enumerate(lines):
        if l.startswith("aoti-fuzz: NEW "):
            block = []
            for m in lines[i + 1:i + 6]:
                if not m.startswith("  "):
                    break
                block.append(m)
            out.append((l, block))
    return out


def eager_line(block):
    return next((l for l in block if l.startswith("  eager: ")), None)


def minimize(e, crash, out, *extra, json_out=True):
    # no crash map: each of its up to 256 cases is an eager comparison here; the map has its
    # own test (e2e.explain)
    args = [e.min_bin, crash, "--out", out, "--no-crash-map", *extra] + (["--json"] if json_out else [])
    t0 = time.time()
    p = e.run(args, timeout=900)
    return p, time.time() - t0


def read(path):
    return open(path).read() if os.path.exists(path) else ""


def run_repro_py(e, out):
    return e.run([e.python, "repro.py"], timeout=300, cwd=out)


def check_fuzz_crashes(label, p, s, art, want_eager, eager_needle=None, want_class=None):
    """Crash files, sidecars, the summary and stderr agree on each crash's eager verdict."""
    files = crash_files(art)
    crashes = {c.get("file"): c for c in s.get("crashes", [])}
    check(len(files) == len(crashes) == s.get("distinct_crashes"),
          f"{label}: {len(files)} crash files == {len(crashes)} summary crashes == distinct_crashes "
          f"{s.get('distinct_crashes')}")
    for b, body, side in files:
        base = os.path.basename(b)
        check(body["_first_line"] == "AOTIF-CRASH 1", f"{base}: first line {body['_first_line']!r}")
        if want_class:
            check(body.get("class") == want_class, f"{base}: class {body.get('class')} == {want_class}")
        for what, j in (("crash file", body), ("sidecar", side), ("summary", crashes.get(b, {}))):
            ok = j.get("eager") == want_eager
            if eager_needle is not None:
                ok = ok and eager_needle in j.get("eager_error", "")
            check(ok, f"{base} {what}: eager {j.get('eager')!r} == {want_eager!r}"
                      + (f", eager_error {short(j.get('eager_error'), 160)!r} has {eager_needle!r}"
                         if eager_needle is not None else ""))
    blocks = new_blocks(p.stderr)
    check(len(blocks) == len(files), f"{label} stderr: {len(blocks)} NEW lines == {len(files)} crash files")
    for head, block in blocks:
        el = eager_line(block)
        check(el is not None and el.startswith(f"  eager: {want_eager}"),
              f"{label} stderr: {head[len('aoti-fuzz: '):][:70]!r} followed by {el!r}")
    return files


# --- 1. EAGER_FAILS_TOO ----------------------------------------------------------------------------

def part1(e):
    # every EXPECTED "failing" shape: measured, eager raises at each (the models do not support
    # those inputs either), so the verdict is EAGER_FAILS_TOO
    failing = [(name, ent) for name in example_names(e.ex) for ent in e.expected(name).get("failing", [])]
    names = sorted({n for n, _ in failing})
    check({"lasttok", "crossidx", "runtime_check"} <= set(names),
          f"EXPECTED failing shapes of {names} (lasttok, crossidx, runtime_check among them)")

    def one(item):
        name, ent = item
        return item, e.aoti_run(e.pkg(name + ".pt2"), *shape_args(ent["shape"]), "--eager", "--json")

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(one, failing))
    for (name, ent), p in runs:
        label = label_of(name, ent["shape"]) + " --eager"
        r = result(p)
        ea = r.get("eager", {})
        check(p.returncode == 1 and r.get("class") == ent["class"],
              f"{label}: class {r.get('class')} == EXPECTED's {ent['class']} (rc {p.returncode}) {short(p.stderr, 200)}")
        check(ea.get("result") == "error" and ea.get("verdict") == "EAGER_FAILS_TOO" and ea.get("error_type")
              and ea.get("error") and ea.get("compare") == "skipped",
              f"{label}: eager {{result {ea.get('result')!r}, verdict {ea.get('verdict')!r}, "
              f"{ea.get('error_type')}: {short(ea.get('error'), 100)!r}, compare {ea.get('compare')!r}}}")
    # lasttok n=0: the text form, and the error eager gives (select(-1) on an empty tensor)
    p = e.aoti_run(e.pkg("lasttok.pt2"), "--shape", "n=0", "--eager")
    out = p.stdout.splitlines()
    el = next((l for l in out if l.startswith("eager: ")), "")
    check(p.returncode == 1 and "result: SIGNAL" in out and el.startswith("eager: fails too: IndexError: ")
          and "verdict: EAGER_FAILS_TOO" in out,
          f"lasttok n=0 --eager text: rc {p.returncode}, {el!r}, 'verdict: EAGER_FAILS_TOO' "
          f"{'present' if 'verdict: EAGER_FAILS_TOO' in out else 'missing'}")
    # a healthy shape of the same model: eager runs, outputs match, no verdict
    p = e.aoti_run(e.pkg("lasttok.pt2"), "--shape", "n=5", "--eager")
    check(p.returncode == 0 and "eager: runs; outputs match" in p.stdout.splitlines(),
          f"lasttok n=5 --eager: rc {p.returncode}, 'eager: runs; outputs match' "
          f"({short(' | '.join(l for l in p.stdout.splitlines() if l.startswith(('result', 'eager'))), 200)})")

    # aoti-fuzz: the crash found at the failing shape gets eager's verdict
    lasttok_bin = None
    for name, needle in (("lasttok", "IndexError: "), ("crossidx", "IndexError: "),
                         ("runtime_check", "RuntimeError: ")):
        art = tempfile.mkdtemp(dir=e.tmp, prefix=f"fuzz-{name}-")
        p, s, secs = e.fuzz(e.pkg(name + ".pt2"), art, 500)
        label = f"aoti-fuzz {name}.pt2 (500 execs, {secs:.1f} s)"
        ref = s.get("reference", {})
        check(p.returncode == 0 and s.get("execs") == 500, f"{label}: rc {p.returncode}, execs {s.get('execs')}")
        check(ref.get("on") is True and ref.get("eager_verdicts", 0) >= 1
              and "aoti-fuzz: reference ready (" in p.stderr,
              f"{label}: reference on, 'reference ready' on stderr, eager_verdicts {ref.get('eager_verdicts')} >= 1")
        files = check_fuzz_crashes(label, p, s, art, "EAGER_FAILS_TOO", needle)
        check(len(files) >= 1, f"{label}: {len(files)} crash file(s)")
        for b, body, side in files:
            for ent in e.expected(name)["failing"]:
                if case_shape(body) == ent["shape"]:
                    check(body.get("class") == ent["class"],
                          f"{os.path.basename(b)}: at EXPECTED's failing shape {ent['shape']}: class {body.get('class')}")
        for head, block in new_blocks(p.stderr):
            el = eager_line(block) or ""
            check(el.startswith(f"  eager: EAGER_FAILS_TOO: {needle}"),
                  f"{label} stderr: NEW crash followed by '  eager: EAGER_FAILS_TOO: {needle}...' ({el[:100]!r})")
        if name == "lasttok" and files:
            lasttok_bin = next((b for b, body, _ in files if case_shape(body) == {"n": 0}), files[0][0])

    # aoti-minimize of the lasttok crash: text stdout, minimal.json, report.md, repro.py
    if not check(lasttok_bin is not None, "lasttok crash file to minimize"):
        return
    out = os.path.join(e.tmp, "min-lasttok")
    p, secs = minimize(e, lasttok_bin, out, json_out=False)
    check(p.returncode == 0, f"aoti-minimize lasttok crash: exit 0 ({p.returncode}, {secs:.1f} s) {short(p.stderr[-300:]) if p.returncode else ''}")
    el = next((l for l in p.stdout.splitlines() if l.startswith("eager:")), "")
    check(re.match(r"eager:\s+EAGER_FAILS_TOO: IndexError: ", el) is not None and el.startswith("eager:        "),
          f"aoti-minimize lasttok stdout: {el!r} (eager:        EAGER_FAILS_TOO: IndexError: ...)")
    mj = json.loads(read(os.path.join(out, "minimal.json")) or "{}")
    check(mj.get("eager") == "EAGER_FAILS_TOO" and mj.get("eager_error", "").startswith("IndexError: ")
          and case_shape(mj) == {"n": 0},
          f"lasttok minimal.json: case {case_shape(mj) if mj else None}, eager {mj.get('eager')!r}, "
          f"eager_error {short(mj.get('eager_error'), 100)!r}")
    rep = read(os.path.join(out, "report.md"))
    para = next((l for l in rep.splitlines() if l.startswith("Eager reference:")), "")
    check(para.startswith("Eager reference: **EAGER_FAILS_TOO**"), f"lasttok report.md: {para[:110]!r}")
    check("repro.py:     reproduced" in p.stdout, "aoti-minimize lasttok: 'repro.py:     reproduced'")
    r = run_repro_py(e, out)
    fails = next((l for l in r.stdout.splitlines() if l.startswith("eager:")), "")
    check(fails.startswith("eager: fails too (IndexError: ") and r.returncode != 0,
          f"lasttok repro.py: {fails[:100]!r}, then the package crashes (rc {r.returncode})")


# --- 2. tolerance 0 --------------------------------------------------------------------------------

def part2(e):
    art = tempfile.mkdtemp(dir=e.tmp, prefix="fuzz-conv-tol0-")
    p, s, secs = e.fuzz(e.pkg("conv_pool.pt2"), art, 300, "--rtol", "0", "--atol", "0", "--check-every", "1")
    label = f"aoti-fuzz conv_pool.pt2 --rtol 0 --atol 0 --check-every 1 (300 execs, {secs:.1f} s)"
    ref = s.get("reference", {})
    check(p.returncode == 0 and s.get("execs") == 300, f"{label}: rc {p.returncode}, execs {s.get('execs')}")
    check(ref.get("on") is True and ref.get("check_every") == 1 and ref.get("value_checks", 0) > 0
          and ref.get("mismatches", 0) > 0,
          f"{label}: reference {{on {ref.get('on')}, check_every {ref.get('check_every')}, value_checks "
          f"{ref.get('value_checks')}, mismatches {ref.get('mismatches')}}}")
    files = check_fuzz_crashes(label, p, s, art, "AOTI_ONLY", want_class="MISMATCH")
    if not check(len(files) >= 1, f"{label}: {len(files)} MISMATCH crash file(s)"):
        return
    for b, body, _ in files:
        m = re.search(r"max abs error ([0-9.e+-]+)", body.get("message", ""))
        check(body.get("signature", "").startswith("MISMATCH: output 0 value (")
              and m is not None and 0 < float(m.group(1)) < LAST_BITS,
              f"{os.path.basename(b)}: {body.get('signature')!r}, max abs error {m.group(1) if m else None} "
              f"< {LAST_BITS} (last bits)")
    # prefer a case inside the compiled bounds (the mismatch is not about the contract gap)
    b, body, _ = next(((b, j, sd) for b, j, sd in files if j.get("contract") == "inside"), files[0])
    # aoti-run at the crash's case: MISMATCH at tolerance 0, a match at the default tolerance
    pz = e.aoti_run(e.pkg("conv_pool.pt2"), "--case", b, "--eager", "--rtol", "0", "--atol", "0", "--json")
    r = result(pz)
    ea = r.get("eager", {})
    check(pz.returncode == 1 and r.get("class") == "MISMATCH" and ea.get("compare") == "mismatch"
          and ea.get("verdict") == "AOTI_ONLY" and 0 < (ea.get("max_abs") or 0) < LAST_BITS,
          f"aoti-run conv_pool --case {os.path.basename(b)} --eager --rtol 0 --atol 0: class {r.get('class')}, "
          f"compare {ea.get('compare')!r}, verdict {ea.get('verdict')!r}, max_abs {ea.get('max_abs')} < {LAST_BITS} "
          f"(rc {pz.returncode}) {short(pz.stderr, 200)}")
    # the crash file recorded tolerance 0, so the default tolerance is asked for by value
    # (assert_close's for float32: rtol 1.3e-6, atol 1e-5)
    pd = e.aoti_run(e.pkg("conv_pool.pt2"), "--case", b, "--eager", "--rtol", "1.3e-6", "--atol", "1e-5", "--json")
    r = result(pd)
    check(pd.returncode == 0 and r.get("class") == "OK" and r.get("eager", {}).get("compare") == "match",
          f"aoti-run conv_pool --case {os.path.basename(b)} --eager --rtol 1.3e-6 --atol 1e-5: class {r.get('class')}, "
          f"compare {r.get('eager', {}).get('compare')!r} (rc {pd.returncode})")
    # bert_encoder at its largest shape: the same in text form
    bert = e.pkg("bert_encoder.pt2")
    pb = e.aoti_run(bert, "--shape", "batch=8", "--shape", "seq=64", "--eager", "--rtol", "0", "--atol", "0")
    lines = pb.stdout.splitlines()
    msg = next((l for l in lines if l.startswith("message: ")), "")
    m = re.search(r"max abs error ([0-9.e+-]+)", pb.stdout)
    check(pb.returncode == 1 and "result: MISMATCH" in lines
          and msg == "message: output 0 value (batch=max seq=max)" and "verdict: AOTI_ONLY" in lines
          and "eager: runs; outputs differ" in lines,
          f"aoti-run bert_encoder batch=8 seq=64 --eager --rtol 0 --atol 0: rc {pb.returncode}, 'result: MISMATCH', "
          f"{msg!r}, 'eager: runs; outputs differ', 'verdict: AOTI_ONLY'")
    check(m is not None and 0 < float(m.group(1)) < LAST_BITS,
          f"bert_encoder batch=8 seq=64 at tolerance 0: max abs error {m.group(1) if m else None} < {LAST_BITS} (last bits)")
    pj = e.aoti_run(bert, "--shape", "batch=8", "--shape", "seq=64", "--eager", "--rtol", "0", "--atol", "0", "--json")
    r = result(pj)
    ea = r.get("eager", {})
    check(r.get("class") == "MISMATCH" and r.get("signature") == "MISMATCH: output 0 value (batch=max seq=max)"
          and ea.get("result") == "ok" and ea.get("compare") == "mismatch" and 0 < (ea.get("max_abs") or 0) < LAST_BITS
          and (ea.get("max_rel") or 0) > 0,
          f"bert_encoder batch=8 seq=64 --json: {r.get('signature')!r}, eager {{result {ea.get('result')!r}, compare "
          f"{ea.get('compare')!r}, max_abs {ea.get('max_abs')}, max_rel {ea.get('max_rel')}}}")
    pd = e.aoti_run(bert, "--shape", "batch=8", "--shape", "seq=64", "--eager", "--json")
    r = result(pd)
    check(pd.returncode == 0 and r.get("class") == "OK" and r.get("eager", {}).get("compare") == "match",
          f"bert_encoder batch=8 seq=64 --eager (default tolerance): class {r.get('class')}, compare "
          f"{r.get('eager', {}).get('compare')!r}")

    # aoti-minimize of the MISMATCH crash, against the reference at the tolerance it was found with
    out = os.path.join(e.tmp, "min-conv-tol0")
    p, secs = minimize(e, b, out, "--rtol", "0", "--atol", "0")
    mr = result(p)
    py = (mr.get("repro") or {}).get("py") or {}
    check(p.returncode == 0 and mr.get("reproduced") is True and mr.get("class") == "MISMATCH",
          f"aoti-minimize {os.path.basename(b)} --rtol 0 --atol 0: exit 0, reproduced, class {mr.get('class')} "
          f"({p.returncode}, {secs:.1f} s) {short(p.stderr[-300:]) if p.returncode else ''}")
    check(py.get("reproduced") is True and "AssertionError: output 0 value (" in py.get("detail", ""),
          f"aoti-minimize conv_pool MISMATCH: repro.py reproduced ({py.get('detail')!r})")
    check("aoti-minimize: repro.py: reproduced" in p.stderr, "aoti-minimize conv_pool MISMATCH stderr: 'repro.py: reproduced'")
    check((mr.get("eager") or {}).get("verdict") == "AOTI_ONLY", f"aoti-minimize conv_pool MISMATCH: eager {mr.get('eager')}")
    mj = json.loads(read(os.path.join(out, "minimal.json")) or "{}")
    check(mj.get("class") == "MISMATCH" and mj.get("eager") == "AOTI_ONLY"
          and mj.get("signature", "").startswith("MISMATCH: output 0 value ("),
          f"conv_pool minimal.json: class {mj.get('class')}, {mj.get('signature')!r}, eager {mj.get('eager')!r}")
    rep = read(os.path.join(out, "report.md"))
    title = rep.splitlines()[0] if rep else ""
    para = next((l for l in rep.splitlines() if l.startswith("Eager reference:")), "")
    check(title.startswith("# AOTInductor: "), f"conv_pool MISMATCH report title {title[:90]!r}")
    check(para.startswith("Eager reference: **AOTI_ONLY**"), f"conv_pool MISMATCH report.md: {para[:90]!r}")
    r = run_repro_py(e, out)
    check(r.returncode != 0 and "eager: runs" in r.stdout.splitlines()
          and re.search(r"^output 0: max abs error \S+, max rel error \S+$", r.stdout, re.M)
          and "repro.py: outputs differ: AssertionError: output 0 value (" in r.stderr,
          f"conv_pool repro.py: 'eager: runs', 'output 0: max abs error ..., max rel error ...', "
          f"'repro.py: outputs differ: AssertionError: output 0 value (...' (rc {r.returncode})")
    # what a reader of the crash file alone gets: the tolerance it was found with, and a repro.sh
    # that compares against eager at that tolerance
    check(body.get("tolerance") == {"rtol": 0, "atol": 0},
          f"{os.path.basename(b)}: records tolerance {body.get('tolerance')!r}")
    sh = read(os.path.join(out, "repro.sh"))
    check(" --eager --rtol 0 --atol 0 " in sh, "conv_pool MISMATCH repro.sh runs aoti-run --eager --rtol 0 --atol 0")
    rsh = (mr.get("repro") or {}).get("sh") or {}
    check(rsh.get("reproduced") is True,
          f"conv_pool MISMATCH: repro.sh (aoti-run --eager) reproduces ({rsh.get('detail')!r})")
    pc = e.aoti_run(e.pkg("conv_pool.pt2"), "--case", b, "--json")
    check(pc.returncode == 1 and result(pc).get("class") == "MISMATCH",
          f"aoti-run --case {os.path.basename(b)} (no tolerance given: the recorded one): class "
          f"{result(pc).get('class')} (rc {pc.returncode})")
    p2, _ = minimize(e, b, os.path.join(e.tmp, "min-conv-tol0-default"), "--no-repro-check")
    check(p2.returncode == 0,
          f"aoti-minimize of the tolerance-0 crash file without --rtol 0 --atol 0 reproduces (the crash file "
          f"records its tolerance; rc {p2.returncode}: {short(p2.stderr.strip().splitlines()[-1] if p2.stderr.strip() else '', 160)!r})")
    return b


# --- 3. default tolerance: no MISMATCH on the healthy models ----------------------------------------

def part3(e):
    for name in HEALTHY:
        if not os.path.exists(e.pkg(name + ".pt2")):
            check(False, f"{name}.pt2 present")
            continue
        exp = e.expected(name)
        if exp.get("failing") or exp.get("mismatch"):
            check(False, f"{name}: EXPECTED failing {exp.get('failing')} and mismatch empty (a healthy model)")
            continue
        art = tempfile.mkdtemp(dir=e.tmp, prefix=f"fuzz-{name}-ce10-")
        n = e.fuzz_execs
        p, s, secs = e.fuzz(e.pkg(name + ".pt2"), art, n, "--check-every", "10")
        ref = s.get("reference", {})
        label = f"aoti-fuzz {name}.pt2 --check-every 10 ({n} execs, {secs:.1f} s)"
        check(p.returncode == 0 and s.get("execs") == n, f"{label}: rc {p.returncode}, execs {s.get('execs')}")
        check(ref.get("on") is True and ref.get("check_every") == 10 and "aoti-fuzz: reference ready (" in p.stderr,
              f"{label}: reference on, check_every {ref.get('check_every')}")
        check(ref.get("mismatches") == 0 and ref.get("value_checks", 0) > 0
              and s.get("results_by_class", {}).get("MISMATCH") == 0,
              f"{label}: reference.mismatches {ref.get('mismatches')} == 0, value_checks {ref.get('value_checks')} > 0, "
              f"MISMATCH results {s.get('results_by_class', {}).get('MISMATCH')}")
        warn(ref.get("value_checks", 0) >= s.get("runs", 0) // 10,
             f"{label}: value_checks {ref.get('value_checks')} >= runs/10 ({s.get('runs', 0) // 10})")
        mm = glob.glob(os.path.join(art, "crash-mismatch-*.bin"))
        other = [os.path.basename(x) for x in glob.glob(os.path.join(art, "crash-*.bin")) if x not in mm]
        check(not mm, f"{label}: no MISMATCH crash file ({[os.path.basename(x) for x in mm]})")
        warn(not other, f"{label}: no other crash file either ({other})")


# --- 4. the oracle off ------------------------------------------------------------------------------

def part4(e, conv_mismatch_bin):
    plain = e.pkg("bert_encoder.plain.pt2")
    art = tempfile.mkdtemp(dir=e.tmp, prefix="fuzz-bert-plain-")
    p, s, secs = e.fuzz(plain, art, 1000, "--beyond-contract")
    label = f"aoti-fuzz bert_encoder.plain.pt2 --beyond-contract (1000 execs, {secs:.1f} s)"
    ref = s.get("reference", {})
    off = next((l for l in p.stderr.splitlines() if l.startswith("aoti-fuzz: reference off: ")), "")
    check(p.returncode == 0 and s.get("execs") == 1000, f"{label}: rc {p.returncode}, execs {s.get('execs')}")
    check(off.startswith("aoti-fuzz: reference off: no exported program") and "reference ready" not in p.stderr,
          f"{label}: stderr {off[:100]!r}")
    check(ref.get("on") is False and "no exported program" in ref.get("why_off", "")
          and ref.get("value_checks") == 0 and ref.get("eager_verdicts") == 0,
          f"{label}: reference {{on {ref.get('on')}, why_off {short(ref.get('why_off'), 80)!r}, value_checks "
          f"{ref.get('value_checks')}, eager_verdicts {ref.get('eager_verdicts')}}}")
    files = check_fuzz_crashes(label, p, s, art, "NOT_RUN", "no exported program")
    # the SIGSEGV at seq=0 (the plain package has no Dim names: seq is the wrapper's s41)
    sig = next((b for b, body, _ in files if body.get("class") == "SIGNAL"
                and 0 in [v["value"] for v in body["case"]["symbols"]]), None)
    if check(sig is not None, f"{label}: a SIGNAL crash at a size 0 (seq=0): {[os.path.basename(b) for b, _, _ in files]}"):
        out = os.path.join(e.tmp, "min-bert-plain")
        pm, secs = minimize(e, sig, out, "--no-repro-check")
        mr = result(pm)
        check(pm.returncode == 0 and (mr.get("eager") or {}).get("verdict") == "NOT_RUN"
              and "no exported program" in (mr.get("eager") or {}).get("error", ""),
              f"aoti-minimize {os.path.basename(sig)}: exit 0, eager {mr.get('eager')} ({pm.returncode}, {secs:.1f} s)")
        mj = json.loads(read(os.path.join(out, "minimal.json")) or "{}")
        check(mj.get("eager") == "NOT_RUN" and "no exported program" in mj.get("eager_error", ""),
              f"bert plain minimal.json: eager {mj.get('eager')!r}, eager_error {short(mj.get('eager_error'), 100)!r}")
        rep = read(os.path.join(out, "report.md"))
        para = next((l for l in rep.splitlines() if l.startswith("Eager reference:")), "")
        check(para.startswith("Eager reference: not run: no exported program"), f"bert plain report.md: {para[:100]!r}")
        check(re.search(r"^PROGRAM = None", read(os.path.join(out, "repro.py")), re.M) is not None,
              "bert plain repro.py: PROGRAM = None (no eager run)")
    # aoti-run --eager: refused without the program, works with --exported
    pr = e.aoti_run(plain, "--shape", "s18=2", "--shape", "s41=8", "--eager", "--json")
    err = pr.stderr.strip()
    check(pr.returncode == 2 and err and "\n" not in err and "--exported" in err and not pr.stdout.strip(),
          f"aoti-run bert_encoder.plain.pt2 --eager: exit 2, one line naming --exported (rc {pr.returncode}: {short(err)!r})")
    ep = e.pkg("bert_encoder.ep.pt2")
    pr = e.aoti_run(plain, "--exported", ep, "--shape", "s18=2", "--shape", "s41=8", "--eager", "--json")
    r = result(pr)
    ea = r.get("eager", {})
    check(pr.returncode == 0 and r.get("class") == "OK" and ea.get("result") == "ok" and ea.get("compare") == "match",
          f"aoti-run bert_encoder.plain.pt2 --exported bert_encoder.ep.pt2 s18=2 s41=8 --eager: class {r.get('class')}, "
          f"eager {{result {ea.get('result')!r}, compare {ea.get('compare')!r}}} (rc {pr.returncode}) {short(pr.stderr, 200)}")
    pr = e.aoti_run(plain, "--exported", ep, "--beyond-contract", "--shape", "s18=2", "--shape", "s41=0", "--eager", "--json")
    r = result(pr)
    ea = r.get("eager", {})
    check(r.get("class") == "SIGNAL" and ea.get("verdict") == "EAGER_FAILS_TOO" and ea.get("error_type") == "RuntimeError",
          f"bert_encoder.plain.pt2 --exported, seq=0 --eager: class {r.get('class')}, verdict {ea.get('verdict')!r}, "
          f"{ea.get('error_type')}: {short(ea.get('error'), 80)!r}")
    art = tempfile.mkdtemp(dir=e.tmp, prefix="fuzz-bert-plain-exported-")
    p, s, secs = e.fuzz(plain, art, 300, "--exported", ep)
    check(p.returncode == 0 and s.get("reference", {}).get("on") is True and "aoti-fuzz: reference ready (" in p.stderr
          and s.get("reference", {}).get("value_checks", 0) > 0,
          f"aoti-fuzz bert_encoder.plain.pt2 --exported bert_encoder.ep.pt2: reference on, value_checks "
          f"{s.get('reference', {}).get('value_checks')} ({secs:.1f} s)")
    # --no-eager on a unified archive
    art = tempfile.mkdtemp(dir=e.tmp, prefix="fuzz-lasttok-noeager-")
    p, s, secs = e.fuzz(e.pkg("lasttok.pt2"), art, 200, "--no-eager")
    ref = s.get("reference", {})
    check(p.returncode == 0 and ref.get("on") is False and "--no-eager" in ref.get("why_off", "")
          and "aoti-fuzz: reference off (--no-eager)" in p.stderr,
          f"aoti-fuzz lasttok.pt2 --no-eager: reference {{on {ref.get('on')}, why_off {ref.get('why_off')!r}}}")
    check_fuzz_crashes("aoti-fuzz lasttok.pt2 --no-eager", p, s, art, "NOT_RUN", "--no-eager")
    # a MISMATCH cannot be minimized without the reference
    if conv_mismatch_bin:
        pm, _ = minimize(e, conv_mismatch_bin, os.path.join(e.tmp, "min-noeager"), "--no-eager", "--no-repro-check")
        check(pm.returncode == 2 and "MISMATCH" in pm.stderr and "exported program" in pm.stderr,
              f"aoti-minimize <conv_pool MISMATCH> --no-eager: exit 2 ({pm.returncode}: "
              f"{short(pm.stderr.strip().splitlines()[-1] if pm.stderr.strip() else '', 200)!r})")
        # the same crash file pointed at the plain package (no exported program)
        _, body = read_crash(conv_mismatch_bin)
        pp = e.pkg("conv_pool.plain.pt2")
        body["package"] = {"path": pp, "abspath": pp, "sha256": hashlib.sha256(open(pp, "rb").read()).hexdigest()}
        for sym in body["case"]["symbols"]:
            sym.pop("dim", None)  # the plain package's spec has no Dim names
        fake = os.path.join(e.tmp, "plain-mismatch.bin")
        write_file(fake, crash_text(body))
        pm, _ = minimize(e, fake, os.path.join(e.tmp, "min-plain-mismatch"), "--no-repro-check")
        check(pm.returncode == 2 and "no exported program" in pm.stderr,
              f"aoti-minimize <MISMATCH crash of conv_pool.plain.pt2>: exit 2, needs the exported program ({pm.returncode}: "
              f"{short(pm.stderr.strip().splitlines()[-1] if pm.stderr.strip() else '', 200)!r})")


# --- 5. AOTI_ONLY on real wrong-value defects -------------------------------------------------------

def sample_entries(entries, k):
    if k <= 0 or len(entries) <= k:
        return list(range(len(entries)))
    idx = {0, len(entries) - 1}
    fin = [i for i, x in enumerate(entries) if isinstance(x.get("max_abs"), (int, float))]
    if fin:
        idx.add(max(fin, key=lambda i: entries[i]["max_abs"]))
        idx.add(min(fin, key=lambda i: entries[i]["max_abs"]))
    nonfin = [i for i, x in enumerate(entries) if x.get("max_abs") is None]
    if nonfin:
        idx.add(nonfin[len(nonfin) // 2])
    step = max(1, len(entries) // k)
    i = step // 2
    while len(idx) < k and i < len(entries):
        idx.add(i)
        i += step
    return sorted(idx)


def python_measure(e, cases):
    if not cases:
        return []
    req = json.dumps({"examples": e.ex, "cases": cases})
    p = e.run([e.python, "-c", HELPER, os.path.dirname(FILL_PY)], input=req, timeout=900)
    if not check(p.returncode == 0 and p.stdout.strip(),
                 f"Python measurement (aoti_load_package vs ep.module(), aotif_fill seed 0) of {len(cases)} cases "
                 f"(rc {p.returncode}: {short(p.stderr[-400:])})"):
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def part5(e):
    models = [name for name in example_names(e.ex) if e.expected(name).get("mismatch")]
    unbuilt = [os.path.basename(m)[:-3] for m in sorted(glob.glob(os.path.join(ROOT, "corpus", "models", "*.py")))
               if not os.path.exists(e.pkg(os.path.basename(m)[:-3] + ".expected.json"))]
    warn(not unbuilt, f"every corpus model is built in {e.ex} (not built: {unbuilt})")
    if not check(models, f"models with a non-empty EXPECTED \"mismatch\" list: {models} (a real AOTI-only "
                         f"wrong-values defect in the corpus; none means that model has not landed yet)"):
        return
    for name in models:
        t0 = time.time()
        exp = e.expected(name)
        entries = exp["mismatch"]
        healthy = [h for h in exp.get("healthy", [])]
        past = READS_PAST_INPUT.get(name, lambda s: False)
        # every listed shape, in Python with the tools' fill
        meas = python_measure(e, [{"model": name, "shape": x["shape"], "output": x.get("output", 0)} for x in entries])
        if meas is None:
            continue
        not_mm = [x["shape"] for x, m in zip(entries, meas) if not (m.get("eager") == "ok" and m.get("mismatch"))]
        check(not not_mm, f"{name}: all {len(entries)} listed shapes mismatch in Python with the tools' fill "
                          f"(eager runs; not: {not_mm[:5]}{'...' if len(not_mm) > 5 else ''})")
        hm = python_measure(e, [{"model": name, "shape": h, "output": 0} for h in healthy]) or []
        bad = [h for h, m in zip(healthy, hm) if m.get("mismatch") or m.get("eager") != "ok"]
        check(not bad, f"{name}: EXPECTED's {len(healthy)} healthy shapes match in Python with the tools' fill (not: {bad})")
        # the tools at a sample of the listed shapes
        pick = sample_entries(entries, e.sample)

        def one(i):
            return i, e.aoti_run(e.pkg(name + ".pt2"), *shape_args(entries[i]["shape"]), "--eager", "--json")

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            runs = list(pool.map(one, pick))
        ratios_off = []
        for i, p in runs:
            x, m = entries[i], meas[i]
            k = x.get("output", 0)
            label = label_of(name, x["shape"]) + " --eager"
            r = result(p)
            ea = r.get("eager", {})
            check(p.returncode == 1 and r.get("class") == "MISMATCH" and r.get("signature", "").startswith(f"MISMATCH: output {k} ")
                  and ea.get("result") == "ok" and ea.get("verdict") == "AOTI_ONLY" and ea.get("compare") == "mismatch",
                  f"{label}: class {r.get('class')}, {r.get('signature')!r}, eager {{result {ea.get('result')!r}, verdict "
                  f"{ea.get('verdict')!r}, compare {ea.get('compare')!r}}} (rc {p.returncode}) {short(p.stderr, 200)}")
            if past(x["shape"]):
                print(f"     {label}: reads past its input here (heap-dependent): max_abs {ea.get('max_abs')} not compared", flush=True)
                continue
            if m.get("nonfinite"):
                check("nonfinite" in r.get("signature", ""),
                      f"{label}: {m['nonfinite']} NaN/Inf where eager is finite (Python) -> signature {r.get('signature')!r} says nonfinite")
                continue
            got, want = ea.get("max_abs"), m.get("max_abs")
            check(isinstance(got, (int, float)) and want is not None and abs(got - want) <= 1e-6 * max(abs(want), 1e-30),
                  f"{label}: max_abs {got} == {want} measured in Python with the same inputs")
            rec = x.get("max_abs")
            if isinstance(rec, (int, float)) and rec > 0 and isinstance(got, (int, float)):
                if not (rec / 2 <= got <= rec * 2):
                    ratios_off.append(f"{x['shape']}: {got:.4g} vs recorded {rec:.4g}")
        recorded = [i for i, _ in runs if isinstance(entries[i].get("max_abs"), (int, float)) and not past(entries[i]["shape"])]
        warn(not ratios_off,
             f"{name}: max_abs within a factor of 2 of EXPECTED's recorded one (measured on torch.randn inputs, not the "
             f"tools' fill) at {len(recorded) - len(ratios_off)}/{len(recorded)} sampled shapes; off: {ratios_off}")
        # the text form once per model
        x = entries[pick[0]]
        p = e.aoti_run(e.pkg(name + ".pt2"), *shape_args(x["shape"]), "--eager")
        lines = p.stdout.splitlines()
        check(p.returncode == 1 and "result: MISMATCH" in lines and "eager: runs; outputs differ" in lines
              and "verdict: AOTI_ONLY" in lines and any(l.startswith(f"message: output {x.get('output', 0)} ") for l in lines),
              f"{label_of(name, x['shape'])} --eager text: 'result: MISMATCH', 'message: output ...', "
              f"'eager: runs; outputs differ', 'verdict: AOTI_ONLY' (rc {p.returncode})")
        # aoti-fuzz finds it, with eager's verdict
        art = tempfile.mkdtemp(dir=e.tmp, prefix=f"fuzz-{name}-")
        p, s, secs = e.fuzz(e.pkg(name + ".pt2"), art, 300)
        label = f"aoti-fuzz {name}.pt2 (300 execs, {secs:.1f} s)"
        ref = s.get("reference", {})
        check(p.returncode == 0 and s.get("execs") == 300 and ref.get("on") is True and ref.get("mismatches", 0) >= 1,
              f"{label}: rc {p.returncode}, reference on {ref.get('on')}, mismatches {ref.get('mismatches')}, "
              f"value_checks {ref.get('value_checks')}")
        files = check_fuzz_crashes(label, p, s, art, "AOTI_ONLY", want_class="MISMATCH")
        listed = [x["shape"] for x in entries]
        for b, body, _ in files:
            sh = case_shape(body)
            check(sh not in healthy, f"{os.path.basename(b)}: case {sh} is not one of EXPECTED's healthy shapes")
        # (a "mismatch" list may be a sample of the mismatching shapes: adaptive_pool lists 99 of 4095)
        print(f"     {label}: {sum(case_shape(body) in listed for _, body, _ in files)} of {len(files)} crash "
              f"cases are shapes EXPECTED lists", flush=True)
        if not check(files, f"{label}: {len(files)} MISMATCH crash file(s)"):
            continue
        # aoti-minimize of one, repro checks on
        b = files[0][0]
        out = os.path.join(e.tmp, f"min-{name}")
        pm, msecs = minimize(e, b, out)
        mr = result(pm)
        py = (mr.get("repro") or {}).get("py") or {}
        check(pm.returncode == 0 and mr.get("reproduced") is True and mr.get("class") == "MISMATCH"
              and (mr.get("eager") or {}).get("verdict") == "AOTI_ONLY",
              f"aoti-minimize {name} {os.path.basename(b)}: exit 0, reproduced, MISMATCH, eager {mr.get('eager')} "
              f"({pm.returncode}, {msecs:.1f} s) {short(pm.stderr[-300:]) if pm.returncode else ''}")
        check(py.get("reproduced") is True and "aoti-minimize: repro.py: reproduced" in pm.stderr,
              f"aoti-minimize {name}: repro.py reproduced ({py.get('detail')!r})")
        mj = json.loads(read(os.path.join(out, "minimal.json")) or "{}")
        msh = case_shape(mj) if mj else None
        check(mj.get("eager") == "AOTI_ONLY" and mj.get("class") == "MISMATCH" and msh not in healthy,
              f"{name} minimal.json: case {msh}, class {mj.get('class')}, eager {mj.get('eager')!r}")
        rep = read(os.path.join(out, "report.md"))
        title = rep.splitlines()[0] if rep else ""
        para = next((l for l in rep.splitlines() if l.startswith("Eager reference:")), "")
        check(title.startswith("# AOTInductor: MISMATCH") and para.startswith("Eager reference: **AOTI_ONLY**"),
              f"{name} report.md: title {title[:70]!r}, {para[:60]!r}")
        rsh = (mr.get("repro") or {}).get("sh") or {}
        check(rsh.get("reproduced") is True, f"{name} MISMATCH: repro.sh (aoti-run --eager) reproduces ({rsh.get('detail')!r})")
        check(files[0][1].get("tolerance") == "assert_close defaults",
              f"{os.path.basename(b)}: tolerance {files[0][1].get('tolerance')!r}")
        print(f"   ({name}: {time.time() - t0:.1f} s, {len(pick)} of {len(entries)} listed shapes through aoti-run)", flush=True)


def main():
    ap = arg_parser(python="venv")
    ap.add_argument("--mismatch-sample", type=int, default=6,
                    help="listed mismatch shapes per model run through aoti-run (0: all; about 2 s each)")
    # 20,000 execs per healthy model (2,000 value checks each) take about 45 s in all on a 2-core
    # machine: bert_encoder 14 s, conv_pool 10 s, the others 6 s each
    ap.add_argument("--fuzz-execs", type=int, default=20000, help="execs per healthy model in part 3")
    a = ap.parse_args()
    t_start = time.time()
    need = [f"{n}{s}" for n in ("lasttok", "crossidx", "runtime_check", "conv_pool", "bert_encoder")
            for s in (".pt2", ".expected.json")]
    need += ["bert_encoder.plain.pt2", "bert_encoder.ep.pt2", "conv_pool.plain.pt2"]
    need += [f"{n}.pt2" for n in HEALTHY]
    need_examples(a.examples, need)
    need_python(a.python, "torch", "transformers")
    e = OracleEnv(a)
    e.check_tools()
    check(os.path.exists(FILL_PY), f"fill function source: {FILL_PY}")
    if failures:
        sys.exit(1)
    conv_bin = []
    sections = [
        ("1. EAGER_FAILS_TOO", lambda: part1(e)),
        ("2. tolerance 0 flags last-bit differences", lambda: conv_bin.append(part2(e))),
        ("3. default tolerance: no MISMATCH on the healthy models", lambda: part3(e)),
        ("4. the oracle off", lambda: part4(e, conv_bin[0] if conv_bin else None)),
        ("5. AOTI_ONLY on real wrong-value defects", lambda: part5(e)),
    ]
    for title, fn in sections:
        section(title, fn)
    print(f"total {time.time() - t_start:.1f} s")
    finish(f"all oracle end-to-end checks passed ({len(warnings)} warning(s))", e.tmp)


if __name__ == "__main__":
    main()
