"""End-to-end: every example package, run through aoti-run in real workers.

For each corpus model (corpus/models/*.py) the exported package's EXPECTED outcome
(<name>.expected.json) is checked: each known failing shape gives its class and one stable
signature in 5 of 5 runs (exit status 1); each healthy shape gives OK (exit status 0); and
the package describes itself with the embedded spec.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from aotif_test import (aoti_run, arg_parser, check, example_names, expected, finish,  # noqa: E402
                        run_capture, shape_args)


def main():
    a = arg_parser().parse_args()
    names = example_names(a.examples)
    check(set(names) >= {"lasttok", "twosym", "runtime_check", "derived", "healthy"},
          f"all five examples exported (found {names})")
    for name in names:
        pkg = os.path.join(a.examples, name + ".pt2")
        exp = expected(a.examples, name)
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
    p = run_capture([py, "-c", code, healthy])
    want = [float(x) for x in p.stdout.split()]
    check(len(want) == 2, f"Python computed the reference outputs ({p.stderr.strip()[-200:]})")
    for (b, seed), ref in zip(((33, 3), (200, 12345678901)), want):
        p = aoti_run(a.bin, healthy, "--shape", f"b={b}", "--seed", str(seed), "--json")
        got = json.loads(p.stdout)["outputs"][0]["sum"] if p.stdout.strip() else None
        ok = got is not None and abs(got - ref) <= 1e-6 * max(1.0, abs(ref))
        print(f"fill check b={b} seed={seed}: aoti-run {got} vs torch {ref}", flush=True)
        check(ok, f"fill b={b} seed={seed}: aoti-run's output sum {got} == torch's {ref}")
    finish("all end-to-end checks passed")


if __name__ == "__main__":
    main()
