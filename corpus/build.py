"""Build the example packages of corpus/models/ once, cached.

    python corpus/build.py --out DIR [--only NAME ...]

For every corpus/models/<name>.py (it defines make() and EXPECTED) this writes
    DIR/<name>.pt2            the AOTInductor package, with the aoti-fuzz spec embedded
    DIR/<name>.spec.json      the spec it embedded (read back from the package)
    DIR/<name>.expected.json  the model's EXPECTED dict plus "model": name
    DIR/<name>.key            sha256(torch version + model source + aotif_export.py source)
A model whose .key matches (and whose outputs exist) is skipped: AOTI compiles take minutes.
Every file is written to a temporary name and moved into place with os.replace; the key
goes last, so an interrupted build is redone next time. One line per model on stdout;
exit status 1 (and a message naming the model on stderr) if any export failed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS_DIR = os.path.join(HERE, "models")
EXPORT_PY = os.path.join(ROOT, "harness", "python", "aotif_export.py")

sys.path.insert(0, os.path.dirname(EXPORT_PY))


def model_names():
    return sorted(f[:-3] for f in os.listdir(MODELS_DIR) if f.endswith(".py") and not f.startswith("_"))


def cache_key(torch_version, name, device="cpu"):
    h = hashlib.sha256()
    h.update(torch_version.encode())
    if device != "cpu":
        h.update(device.encode())
    with open(os.path.join(MODELS_DIR, name + ".py"), "rb") as f:
        h.update(f.read())
    with open(EXPORT_PY, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def write_atomic(path, data):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix="." + os.path.basename(path) + ".")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; these are plain shared outputs
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def outputs(out_dir, name):
    return {ext: os.path.join(out_dir, name + ext) for ext in (".pt2", ".spec.json", ".expected.json", ".key")}


def is_cached(out_dir, name, key):
    paths = outputs(out_dir, name)
    try:
        with open(paths[".key"]) as f:
            if f.read().strip() != key:
                return False
    except OSError:
        return False
    return all(os.path.exists(p) for p in paths.values())


def build_one(out_dir, name, key, device="cpu"):
    import aotif_export

    paths = outputs(out_dir, name)
    mod = aotif_export.load_model_file(os.path.join(MODELS_DIR, name + ".py"))
    if not hasattr(mod, "EXPECTED"):
        raise AttributeError(f"corpus/models/{name}.py defines no EXPECTED")
    expected = dict(mod.EXPECTED)
    expected["model"] = name

    # The package's inner folder is named after its file stem, so compile to <tmpdir>/<name>.pt2
    # (same filesystem as out_dir) and move it into place.
    tmpdir = tempfile.mkdtemp(dir=out_dir, prefix="." + name + ".build.")
    try:
        # Drop the old key first: outputs half replaced by an interrupted build never look cached.
        if os.path.exists(paths[".key"]):
            os.unlink(paths[".key"])
        pkg, spec = aotif_export.export_model_file(os.path.join(MODELS_DIR, name + ".py"),
                                                   os.path.join(tmpdir, name + ".pt2"),
                                                   device=device)
        if spec is None:
            raise RuntimeError("no spec embedded in the package")
        os.replace(pkg, paths[".pt2"])
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    write_atomic(paths[".spec.json"], json.dumps(spec, indent=2) + "\n")
    write_atomic(paths[".expected.json"], json.dumps(expected, indent=2) + "\n")
    write_atomic(paths[".key"], key + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Export corpus/models/*.py to AOTI packages (cached).")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="build only these models")
    ap.add_argument("--device", default="cpu", help="export for this device (cpu, cuda)")
    ns = ap.parse_args(argv)

    names = model_names()
    if ns.only:
        unknown = [n for n in ns.only if n not in names]
        if unknown:
            print(f"build.py: unknown model(s): {', '.join(unknown)} (have: {', '.join(names)})", file=sys.stderr)
            return 2
        names = [n for n in names if n in ns.only]
    os.makedirs(ns.out, exist_ok=True)

    import torch

    failed = []
    for name in names:
        key = cache_key(torch.__version__, name, ns.device)
        if is_cached(ns.out, name, key):
            print(f"{name}: cached", flush=True)
            continue
        t0 = time.monotonic()
        try:
            build_one(ns.out, name, key, ns.device)
        except Exception as e:  # noqa: BLE001 - report every model, then fail
            traceback.print_exc(file=sys.stderr)
            print(f"build.py: {name}: export failed: {type(e).__name__}: {e}", file=sys.stderr)
            print(f"{name}: FAILED", flush=True)
            failed.append(name)
            continue
        print(f"{name}: built in {time.monotonic() - t0:.1f} s", flush=True)
    if failed:
        print(f"build.py: {len(failed)} model(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
