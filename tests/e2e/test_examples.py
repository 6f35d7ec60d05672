"""End-to-end: every example package, run through aoti-run in real workers.

For each corpus model (corpus/models/*.py) the exported package's EXPECTED outcome
(<name>.expected.json) is checked: each known failing shape gives its class and one stable
signature in 5 of 5 runs (exit status 1); each healthy shape gives OK (exit status 0); and
the package describes itself with the embedded spec.
"""
import argparse
import json
import os
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def aoti_run(bin_dir, *args):
    cmd = [os.path.join(bin_dir, "harness", "aoti-run"), *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p


def shape_args(shape):
    out = []
    for k, v in shape.items():
        out += ["--shape", f"{k}={v}"]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--examples", required=True)
    a = ap.parse_args()
    names = sorted(f[:-14] for f in os.listdir(a.examples) if f.endswith(".expected.json"))
    check(set(names) >= {"lasttok", "twosym", "runtime_check", "derived", "healthy"},
          f"all five examples exported (found {names})")
    for name in names:
        pkg = os.path.join(a.examples, name + ".pt2")
        exp = json.load(open(os.path.join(a.examples, name + ".expected.json")))
        p = aoti_run(a.bin, pkg, "--describe", "--json")
        check(p.returncode == 0, f"{name}: --describe exits 0 ({p.stderr.strip()})")
        if p.returncode == 0:
            d = json.loads(p.stdout)
            check(d["spec_source"] == "embedded", f"{name}: spec from the embedded metadata")
        for f in exp["failing"]:
            p = aoti_run(a.bin, pkg, *shape_args(f["shape"]), "--repeat", "5", "--json")
            check(p.returncode == 1, f"{name} {f['shape']}: exit 1 (got {p.returncode}: {p.stderr.strip()})")
            if not p.stdout.strip():
                continue
            r = json.loads(p.stdout)
            print(f"{name} {f['shape']}: {r['class']} {r['signature']!r} {r['same_signature']}/5", flush=True)
            check(r["class"] == f["class"], f"{name} {f['shape']}: class {r['class']} == {f['class']}")
            said = r["signature"] + "\n" + r["message"]
            check(f["signature_contains"] in said,
                  f"{name} {f['shape']}: signature/message {said!r} has {f['signature_contains']!r}")
            check(r["same_signature"] == 5, f"{name} {f['shape']}: same signature in 5 of 5 runs")
        for h in exp["healthy"]:
            p = aoti_run(a.bin, pkg, *shape_args(h), "--json")
            ok = p.returncode == 0 and json.loads(p.stdout)["class"] == "OK"
            print(f"{name} {h}: {'OK' if ok else 'not OK: ' + p.stdout + p.stderr}", flush=True)
            check(ok, f"{name} {h}: healthy shape runs OK")
        twin = exp.get("same_outputs_as")
        if twin:  # same weights stored another way (e.g. a weights blob): same outputs
            for args in (["--shape", "b=5", "--fill", "ones"], ["--shape", "b=33", "--seed", "3"]):
                sums = []
                for n in (name, twin):
                    p = aoti_run(a.bin, os.path.join(a.examples, n + ".pt2"), *args, "--json")
                    r = json.loads(p.stdout) if p.stdout.strip() else {"outputs": []}
                    sums.append([o["sum"] for o in r["outputs"]])
                same = len(sums[0]) > 0 and len(sums[0]) == len(sums[1]) and all(
                    abs(x - y) <= 1e-5 * max(1.0, abs(y)) for x, y in zip(*sums))
                nonzero = any(abs(x) > 1e-6 for x in sums[0])
                check(same and nonzero, f"{name} {args}: outputs {sums[0]} == {twin}'s {sums[1]} (weights loaded)")
    # the C fill function == the documented torch formula (docs/fill.md), through a real
    # model: same outputs from aoti-run and from Python's loader on torch-built inputs
    healthy = os.path.join(a.examples, "healthy.pt2")
    py = os.environ.get("AOTI_FUZZ_PYTHON", "python3")
    code = ("import sys, torch\n"
            "r = torch._inductor.aoti_load_package(sys.argv[1])\n"
            "for b, seed in ((33, 3), (200, 12345678901)):\n"
            "    j = torch.arange(b * 16, dtype=torch.int64)\n"
            "    v = (j * 40503 + 0 * 9973 + seed % 1000003) % 1000003\n"
            "    w = (v * v + 12345) % 1000003\n"
            "    x = (((w % 257) - 128).to(torch.float64) / 64).to(torch.float32).reshape(b, 16)\n"
            "    print(float(r(x).double().sum()))\n")
    p = subprocess.run([py, "-c", code, healthy], capture_output=True, text=True, timeout=600)
    want = [float(x) for x in p.stdout.split()]
    check(len(want) == 2, f"Python computed the reference outputs ({p.stderr.strip()[-200:]})")
    for (b, seed), ref in zip(((33, 3), (200, 12345678901)), want):
        p = aoti_run(a.bin, healthy, "--shape", f"b={b}", "--seed", str(seed), "--json")
        got = json.loads(p.stdout)["outputs"][0]["sum"] if p.stdout.strip() else None
        ok = got is not None and abs(got - ref) <= 1e-6 * max(1.0, abs(ref))
        print(f"fill check b={b} seed={seed}: aoti-run {got} vs torch {ref}", flush=True)
        check(ok, f"fill b={b} seed={seed}: aoti-run's output sum {got} == torch's {ref}")
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("all end-to-end checks passed")


if __name__ == "__main__":
    main()
