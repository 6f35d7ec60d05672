"""aotif_warm.py — a Python started ahead of aoti-minimize's repro.py check.

aoti-minimize writes repro.py at the end of its search and then runs it, to see that it
reproduces. On a CUDA machine most of that run is not the model: importing torch and
inductor (7 s on an H200 image), then torch's CPU-ISA probe, which aoti_load_package
reaches and which compiles a test library per vector ISA and loads each in a Python
process of its own (about 25 s there, one ISA after another). The answers are cached per
process. This program does that work at aoti-minimize's start, while the workers start and
the search runs: it imports what repro.py imports, asks torch about every ISA at once (one
thread per ISA, the same calls repro.py would make, whose results torch caches), then waits.

When repro.py is written, aoti-minimize sends its path as one line on stdin; this program
then runs it as `python3 repro.py` would (runpy as __main__, sys.argv = [path], the
script's folder first on sys.path, stdin at end of file) in this same process, so the
script's output, exceptions and exit status are its own. An empty stdin ends it with 0.
Where fd 3 is open, "ready SECONDS" is written there once the warm-up is done.

Nothing here touches CUDA: the script creates its own context, as it would alone."""
import os
import platform
import sys
import threading
import time


def probe_isas():
    try:
        from torch._inductor import cpu_vec_isa
    except ImportError:
        return
    isas = list(getattr(cpu_vec_isa, "supported_vec_isa_list", ()))
    # only those valid_vec_isa_list asks about: on x86, the ones whose flags the CPU has
    checker = getattr(cpu_vec_isa, "x86_isa_checker", None)
    if checker and platform.machine() in ("x86_64", "AMD64"):
        try:
            flags = checker()
            isas = [isa for isa in isas if all(f in flags for f in str(isa).split())]
        except Exception:  # noqa: BLE001 - then every ISA is asked
            pass

    def truth(isa):
        try:
            bool(isa)
        except Exception:  # noqa: BLE001 - a failed probe is torch's answer "no"
            pass

    threads = [threading.Thread(target=truth, args=(isa,), daemon=True) for isa in isas]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name in ("valid_vec_isa_list", "pick_vec_isa"):
        try:
            getattr(cpu_vec_isa, name)()
        except Exception:  # noqa: BLE001
            pass


def warm_up():
    import torch  # noqa: F401
    import torch._inductor  # noqa: F401
    try:
        from torch.export.pt2_archive import _package  # noqa: F401
    except ImportError:
        pass
    probe_isas()


def say_ready(seconds):
    try:
        os.write(3, b"ready %.3f\n" % seconds)
        os.close(3)
    except OSError:
        pass


def main():
    t0 = time.monotonic()
    warm_up()
    say_ready(time.monotonic() - t0)
    line = sys.stdin.buffer.readline().rstrip(b"\n")
    if not line:
        return 0
    path = os.fsdecode(line)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.argv = [path]
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    import runpy
    runpy.run_path(path, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
