"""The crash-surviving Python baseline: one fresh process per case (import torch, load the
package, run one random shape), the only way a Python loop outlives a segfault or a
sticky CUDA error. Prints seconds per case over N cases.
    python_per_process.py PKG.pt2 N"""
import json
import subprocess
import sys
import time

CHILD = r"""
import sys, random, torch
runner = torch._inductor.aoti_load_package(sys.argv[1])
n = random.Random(int(sys.argv[2])).randint(2, 128)
runner(torch.randn(n, 16))
"""


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    t0 = time.perf_counter()
    for k in range(n):
        subprocess.run([sys.executable, "-c", CHILD, path, str(k)], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    dt = time.perf_counter() - t0
    print(json.dumps({"cases": n, "seconds": round(dt, 2), "seconds_per_case": round(dt / n, 3),
                      "cases_per_second": round(n / dt, 3)}))


if __name__ == "__main__":
    main()
