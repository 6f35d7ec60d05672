"""The Python baseline: a loop calling torch._inductor.aoti_load_package's runner on random
shapes inside the compiled range, as a person would without aoti-fuzz. Prints cases/s.
    python_loop.py PKG.pt2 SECONDS
The loop dies with the first segfault (run it on a healthy package)."""
import json
import random
import sys
import time
import zipfile

import torch


def spec_of(path):
    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.endswith("wrapper_metadata.json"))
        meta = json.loads(z.read(name))
    return json.loads(meta["aoti_fuzz.spec"])


def main():
    path, seconds = sys.argv[1], float(sys.argv[2])
    spec = spec_of(path)
    runner = torch._inductor.aoti_load_package(path)
    syms = {s["name"]: s for s in spec["symbols"]}
    rng = random.Random(1)
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        vals = {k: rng.randint(max(2, s["min"]), s["max"]) for k, s in syms.items()}
        args = []
        for inp in spec["inputs"]:
            shape = []
            for d in inp["shape"]:
                if isinstance(d, int):
                    shape.append(d)
                else:  # "a*s+b" forms as written by the export helper
                    expr = d
                    for k, v in vals.items():
                        expr = expr.replace(k, str(v))
                    shape.append(int(eval(expr, {"__builtins__": {}})))
            args.append(torch.randn(*shape))
        runner(*args)
        n += 1
    dt = time.perf_counter() - t0
    print(json.dumps({"cases": n, "seconds": round(dt, 3), "cases_per_second": round(n / dt, 1)}))


if __name__ == "__main__":
    main()
