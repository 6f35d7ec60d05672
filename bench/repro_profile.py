#!/usr/bin/env python3
"""repro_profile.py — where a repro.py run's time goes (the numbers behind aotif_warm.py).

    python bench/repro_profile.py REPRO.py [--profile]

Imports what repro.py imports (torch, torch._inductor, the PT2 archive reader) and times
that, then runs REPRO.py in this process as `python3 REPRO.py` would (runpy, __main__) and
times the run; with --profile the run is under cProfile and the 40 functions with the most
cumulative time go to stderr. Run it with the environment aoti-minimize's check uses
(TORCHINDUCTOR_VEC_ISA_OK=1, and LD_PRELOAD where the image needs it). Timings go to stderr
as "imports S s" and "run S s"; the script's own output and exit status are the repro's."""
import os
import runpy
import sys
import time


def main():
    repro = sys.argv[1]
    profile = "--profile" in sys.argv[2:]
    t0 = time.time()
    import torch  # noqa: F401
    import torch._inductor  # noqa: F401
    try:
        from torch.export.pt2_archive import _package  # noqa: F401
    except ImportError:
        pass
    t1 = time.time()
    sys.stderr.write("imports %.2f s\n" % (t1 - t0))
    sys.argv = [repro]
    sys.path[0] = os.path.dirname(os.path.abspath(repro))
    try:
        if profile:
            import cProfile
            import pstats
            pr = cProfile.Profile()
            try:
                pr.runcall(runpy.run_path, repro, run_name="__main__")
            finally:
                pstats.Stats(pr, stream=sys.stderr).sort_stats("cumulative").print_stats(40)
        else:
            runpy.run_path(repro, run_name="__main__")
    finally:
        sys.stderr.write("run %.2f s\n" % (time.time() - t1))
        sys.stderr.flush()


if __name__ == "__main__":
    main()
