"""Build the example packages of corpus/models/ once, cached.

    python corpus/build.py --out DIR [--only NAME ...]

For every corpus/models/<name>.py (it defines make() and EXPECTED) this writes, all from one
torch.export of the model:
    DIR/<name>.pt2            PyTorch's unified PT2 archive: the serialized ExportedProgram
                              (models/model.json, ...) beside the AOTI model, whose wrapper
                              metadata holds the aoti-fuzz spec ("aoti_fuzz.spec")
    DIR/<name>.ep.pt2         the ExportedProgram alone (torch.export.save)
    DIR/<name>.plain.pt2      only for a model file that sets PLAIN = True: a plain package, as
                              a user makes it (aoti_compile_and_package, no aoti-fuzz metadata)
    DIR/<name>.spec.json      the spec it embedded (read back from the package)
    DIR/<name>.expected.json  the model's EXPECTED dict plus "model": name
    DIR/<name>.key            sha256(torch version + LAYOUT + model source + aotif_export.py source)
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

# What build_one writes; part of the cache key, so a change of the output set rebuilds.
LAYOUT = "unified+ep+plain/1"

sys.path.insert(0, os.path.dirname(EXPORT_PY))


def model_names():
    return sorted(f[:-3] for f in os.listdir(MODELS_DIR) if f.endswith(".py") and not f.startswith("_"))


def cache_key(torch_version, name, device="cpu"):
    h = hashlib.sha256()
    h.update(torch_version.encode())
    h.update(LAYOUT.encode())
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


def wants_plain(name):
    """Whether corpus/models/<name>.py sets PLAIN = True (read from the source: no import)."""
    import ast

    with open(os.path.join(MODELS_DIR, name + ".py")) as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PLAIN" for t in node.targets):
            return isinstance(node.value, ast.Constant) and node.value.value is True
    return False


def outputs(out_dir, name, plain=None):
    """Output paths by suffix; ".plain.pt2" only for a model with PLAIN = True."""
    if plain is None:
        plain = wants_plain(name)
    exts = [".pt2", ".ep.pt2"] + ([".plain.pt2"] if plain else []) + [".spec.json", ".expected.json", ".key"]
    return {ext: os.path.join(out_dir, name + ext) for ext in exts}


PACKAGES = (".pt2", ".ep.pt2", ".plain.pt2")  # compiled/saved under <tmpdir>/<name><ext>


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

    model_py = os.path.join(MODELS_DIR, name + ".py")
    mod = aotif_export.load_model_file(model_py)
    if not hasattr(mod, "EXPECTED"):
        raise AttributeError(f"corpus/models/{name}.py defines no EXPECTED")
    plain = wants_plain(name)  # the same test is_cached uses
    paths = outputs(out_dir, name, plain)
    expected = dict(mod.EXPECTED)
    expected["model"] = name

    # A package's inner folder is named after its file stem, so write each to
    # <tmpdir>/<name><ext> (same filesystem as out_dir) and move it into place.
    tmpdir = tempfile.mkdtemp(dir=out_dir, prefix="." + name + ".build.")
    tmp = {ext: os.path.join(tmpdir, name + ext) for ext in PACKAGES if ext in paths}
    try:
        # Drop the old key first: outputs half replaced by an interrupted build never look cached.
        if os.path.exists(paths[".key"]):
            os.unlink(paths[".key"])
        pkg, spec = aotif_export.export_model_file(model_py, tmp[".pt2"], device=device,
                                                   package_format="unified",
                                                   exported_path=tmp[".ep.pt2"],
                                                   plain_path=tmp.get(".plain.pt2"))
        if spec is None:
            raise RuntimeError("no spec embedded in the package")
        if not aotif_export.has_exported_program(pkg):
            raise RuntimeError("no exported program in the unified archive")
        for ext, path in tmp.items():
            os.replace(path, paths[ext])
        # A model that no longer sets PLAIN must not leave an old plain package behind.
        stale = os.path.join(out_dir, name + ".plain.pt2")
        if not plain and os.path.exists(stale):
            os.unlink(stale)
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
