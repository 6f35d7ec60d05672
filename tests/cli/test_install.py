"""cmake --install puts aoti-run, aoti-fuzz and aoti-minimize into a prefix, and they run from
there: each answers --help; the installed aoti-fuzz finds lasttok's crash; the installed
aoti-minimize minimizes it and writes a repro.sh that runs the installed aoti-run (found next
to itself, not in the build tree), which reproduces. Exit 77 when the example is missing."""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="build dir")
    ap.add_argument("--examples", required=True)
    ap.add_argument("--cmake", default="cmake")
    a = ap.parse_args()
    pkg = os.path.join(os.path.abspath(a.examples), "lasttok.pt2")
    if not os.path.exists(pkg):
        print(f"skipped: {pkg} missing")
        return SKIP
    root = tempfile.mkdtemp(prefix="aotif-install-")
    failed = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            failed.append(what)

    try:
        prefix = os.path.join(root, "prefix")
        p = subprocess.run([a.cmake, "--install", a.bin, "--prefix", prefix], capture_output=True, text=True)
        check(p.returncode == 0, f"cmake --install exits 0 ({p.stderr.strip()[-300:]})")
        tools = ["aoti-run", "aoti-fuzz", "aoti-minimize"]
        for t in tools:
            exe = os.path.join(prefix, "bin", t)
            check(os.access(exe, os.X_OK), f"{t} installed in {prefix}/bin")
            if os.access(exe, os.X_OK):
                h = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
                check(h.returncode == 0 and "usage" in (h.stdout + h.stderr).lower(),
                      f"{t} --help from the prefix (exit {h.returncode})")
        if failed:
            return 1
        # the build tree out of reach: the installed tools must not need it
        env = dict(os.environ, PATH="/usr/bin:/bin")
        env.pop("AOTI_RUN", None)
        work = os.path.join(root, "work")
        os.makedirs(os.path.join(work, "corpus"))
        f = subprocess.run([os.path.join(prefix, "bin", "aoti-fuzz"), pkg, "--no-eager", "--artifacts", "art",
                            "--", "-runs=200", "-seed=1", "corpus"], cwd=work, env=env,
                           capture_output=True, text=True, timeout=600)
        bins = sorted(glob.glob(os.path.join(work, "art", "*.bin")))
        check(bool(bins), f"installed aoti-fuzz finds lasttok's crash (exit {f.returncode})")
        if not bins:
            print(f.stderr[-1500:])
            return 1
        m = subprocess.run([os.path.join(prefix, "bin", "aoti-minimize"), bins[0], "--out", "min",
                            "--no-crash-map", "--timeout", "30"], cwd=work, env=env,
                           capture_output=True, text=True, timeout=600)
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
    print(f"install: {len(failed)} failed check(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
