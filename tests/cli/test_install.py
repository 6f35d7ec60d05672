"""cmake --install puts aoti-run, aoti-fuzz and aoti-minimize into a prefix, and they run from
there: each answers --help; the installed aoti-fuzz finds lasttok's crash; the installed
aoti-minimize minimizes it and writes a repro.sh that runs the installed aoti-run (found next
to itself, not in the build tree), which reproduces. Exit 77 when the example is missing."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from aotif_test import arg_parser, check, failures, need_examples, run_capture  # noqa: E402


def main():
    ap = arg_parser()
    ap.add_argument("--cmake", default="cmake")
    a = ap.parse_args()
    need_examples(a.examples, ["lasttok.pt2"])
    pkg = os.path.join(os.path.abspath(a.examples), "lasttok.pt2")
    root = tempfile.mkdtemp(prefix="aotif-install-")
    try:
        prefix = os.path.join(root, "prefix")
        p = subprocess.run([a.cmake, "--install", a.bin, "--prefix", prefix], capture_output=True, text=True)
        check(p.returncode == 0, f"cmake --install exits 0 ({p.stderr.strip()[-300:]})")
        tools = ["aoti-run", "aoti-fuzz", "aoti-minimize"]
        for t in tools:
            exe = os.path.join(prefix, "bin", t)
            check(os.access(exe, os.X_OK), f"{t} installed in {prefix}/bin")
            if os.access(exe, os.X_OK):
                h = run_capture([exe, "--help"], timeout=60)
                check(h.returncode == 0 and "usage" in (h.stdout + h.stderr).lower(),
                      f"{t} --help from the prefix (exit {h.returncode})")
        if failures:
            return 1
        # the build tree out of reach: the installed tools must not need it
        env = dict(os.environ, PATH="/usr/bin:/bin")
        env.pop("AOTI_RUN", None)
        work = os.path.join(root, "work")
        os.makedirs(os.path.join(work, "corpus"))
        f = run_capture([os.path.join(prefix, "bin", "aoti-fuzz"), pkg, "--no-eager", "--artifacts", "art",
                         "--", "-runs=200", "-seed=1", "corpus"], cwd=work, env=env)
        bins = sorted(glob.glob(os.path.join(work, "art", "*.bin")))
        check(bool(bins), f"installed aoti-fuzz finds lasttok's crash (exit {f.returncode})")
        if not bins:
            print(f.stderr[-1500:])
            return 1
        m = run_capture([os.path.join(prefix, "bin", "aoti-minimize"), bins[0], "--out", "min",
                         "--no-crash-map", "--timeout", "30"], cwd=work, env=env)
        out = m.stdout + m.stderr
        check(m.returncode == 0 and "repro.sh: reproduced" in out,
              f"installed aoti-minimize: exit {m.returncode}, repro.sh reproduced")
        sh = open(os.path.join(work, "min", "repro.sh")).read() if os.path.exists(os.path.join(work, "min", "repro.sh")) else ""
        inst_run = os.path.realpath(os.path.join(prefix, "bin", "aoti-run"))
        check(inst_run in sh and os.path.realpath(a.bin) not in sh,
              "repro.sh runs the installed aoti-run, nothing from the build tree")
        if m.returncode != 0:
            print(out[-2000:])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"install: {len(failures)} failed check(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
