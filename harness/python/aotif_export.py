"""aotif_export — export a model to an AOTInductor package carrying its shape contract.

A plain AOTInductor package (.pt2) carries no machine-readable description of its
dynamic-shape space. This helper torch.exports the model once and writes, from that one
ExportedProgram:

  * by default, PyTorch's **unified PT2 archive**: the serialized ExportedProgram
    (models/model.json with range_constraints, input names and the graph; weights and sample
    inputs under data/) next to the AOTI model (data/aotinductor/model/...) in one .pt2.
    Both torch.export.load and torch._inductor.aoti_load_package read it. The AOTI model is
    compiled from ep.module(check_guards=False) with torch._inductor.aot_compile (what
    aoti_compile_and_package does inside; the wrapper's check_input_N bounds are the same)
    and packaged with torch.export.pt2_archive._package.package_pt2;
  * with format "embedded", the older layout: torch._inductor.aoti_compile_and_package, no
    exported program in the file (kept for packages made that way);
  * optionally a PLAIN package, the way a user would make one:
    aoti_compile_and_package(ep, package_path=...) with no aoti-fuzz metadata at all (a
    second compile);
  * optionally the exported program alone, torch.export.save(ep, path).

In both the unified and the embedded format the aoti-fuzz spec is also embedded in the
AOTI model's wrapper metadata under the key "aoti_fuzz.spec" (it carries the user's Dim
names, which the exported program does not), and the helper checks that it landed. The spec
is built from the ExportedProgram (user inputs, their fake tensors' dtypes and symbolic
shapes, ep.range_constraints) and the user's `dynamic_shapes` (for the Dim names), in the
format the C side parses (harness/include/aotif/spec.h).

Spec format (version 1):

    {"format": "aoti-fuzz-spec", "version": 1,
     "inputs": [{"name": "x", "dtype": "float32", "shape": ["s77", 16]},
                {"name": "idx", "dtype": "int64", "shape": ["s77"], "int_range": [0, 9]}],
     "symbols": [{"name": "s77", "dim": "n", "min": 0, "max": 128}]}

A static dim is a JSON int; a dynamic dim is "a*sym+b" with no spaces ("s77", "2*s77",
"2*s77+1", "s77-1"). Symbol names are exactly those sympy prints in the graph and the
generated wrapper .cpp. "int_range" is written only where it is known: for an integer input
whose range the caller gave (make()'s "int_ranges"), and for bool inputs ([0, 1]); any other
integer input has no "int_range" (the reader derives one from the exported program or
assumes one). min/max are the declared range from ep.range_constraints; an unbounded upper
is clamped to UNBOUNDED_MAX and the symbol gets a "note" saying so.

Module use:
    ep = export_program(module, args, dynamic_shapes)        # torch.export.export
    spec = spec_from_exported(ep, dynamic_shapes, module=module, args=args)
    compile_unified(ep, "out.pt2", spec)                     # unified archive + embedded spec
    compile_embedded(ep, "out.pt2", spec)                    # older: package + embedded spec
    compile_plain(ep, "plain.pt2")                           # as a user would; no aoti-fuzz key
    save_exported(ep, "out.ep.pt2")                          # torch.export.save
    export_package(module, args, dynamic_shapes, "out.pt2", package_format="unified",
                   plain_path=None, exported_path=None)      # all of the above in one call
CLI:
    python aotif_export.py MODEL.py OUT.pt2 [--format unified|embedded]
                           [--plain OUT_PLAIN.pt2] [--save-exported OUT_EP.pt2] [--print-spec]
    (MODEL.py defines make() -> {"module", "args", "dynamic_shapes", "int_ranges"?,
     "kwargs"?, "inductor_configs"?})

Only torch (and the sympy it ships with) is needed.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import sys
import zipfile

import sympy
import torch

SPEC_KEY = "aoti_fuzz.spec"
UNBOUNDED_MAX = 4096
BOOL_INT_RANGE = (0, 1)
FORMATS = ("unified", "embedded")
EXPORTED_PROGRAM_ENTRY = "models/model.json"  # in a unified archive, under its top folder

_DTYPE_NAMES = {
    torch.float32: "float32",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float64: "float64",
    torch.int64: "int64",
    torch.int32: "int32",
    torch.int16: "int16",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.bool: "bool",
}
_INTEGER_DTYPES = {"int64", "int32", "int16", "int8", "uint8", "bool"}


class SpecError(ValueError):
    """The exported program cannot be described by the spec format."""


# ---------------------------------------------------------------------------------------
# Dim names: walk the user's dynamic_shapes in parallel with the flattened inputs.


def _root_dim(dim):
    """A derived Dim (2*n, n+1, ...) names its root; follow .root to the plain Dim."""
    seen = 0
    while hasattr(dim, "root") and hasattr(dim, "fn") and seen < 16:
        dim = dim.root
        seen += 1
    return dim


def _is_named_dim(obj) -> bool:
    # torch.export.Dim("n") objects, including derived ones; not Dim.AUTO/DYNAMIC/STATIC
    # hints, not ints/None.
    return (
        hasattr(obj, "__name__")
        and hasattr(obj, "min")
        and hasattr(obj, "max")
        and type(obj).__name__ != "_StaticDim"
        and not isinstance(obj, (int, type(None)))
    )


def _per_dim(shape_spec, rank):
    """One tensor's dynamic_shapes entry -> list of length rank (Dim / hint / int / None)."""
    out = [None] * rank
    if shape_spec is None:
        return out
    if isinstance(shape_spec, dict):
        for k, v in shape_spec.items():
            if isinstance(k, int) and 0 <= k < rank:
                out[k] = v
        return out
    if isinstance(shape_spec, (list, tuple)):
        for i, v in enumerate(shape_spec[:rank]):
            out[i] = v
        return out
    return out


def _forward_names(module):
    """forward()'s positional parameter names, [] when unknown."""
    if module is None:
        return []
    try:
        params = inspect.signature(module.forward).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _leaf_dim_specs(args, kwargs, dynamic_shapes, param_names):
    """Flatten (args, kwargs) like export does and pair each tensor leaf with its
    per-dim entries from dynamic_shapes. Returns a list (one per tensor/int leaf, in
    pytree order) of per-dim lists, or None where nothing is known."""
    leaves = []

    def walk(value, spec):
        if isinstance(value, torch.Tensor):
            leaves.append(_per_dim(spec, value.dim()))
        elif isinstance(value, (list, tuple)):
            subs = spec if isinstance(spec, (list, tuple)) and len(spec) == len(value) else [None] * len(value)
            for v, s in zip(value, subs):
                walk(v, s)
        elif isinstance(value, dict):
            for key in value:  # pytree flattens dicts in insertion order
                s = spec.get(key) if isinstance(spec, dict) else None
                walk(value[key], s)
        else:
            leaves.append(None)  # int/float/bool/None leaf: no dims

    # dynamic_shapes is either a tuple/list parallel to args (+kwargs appended) or a dict
    # keyed by forward()'s parameter names.
    arg_specs = [None] * len(args)
    kw_specs = {k: None for k in kwargs}
    if isinstance(dynamic_shapes, dict):
        names = list(param_names)
        for i in range(len(args)):
            if i < len(names) and names[i] in dynamic_shapes:
                arg_specs[i] = dynamic_shapes[names[i]]
        for k in kwargs:
            kw_specs[k] = dynamic_shapes.get(k)
    elif isinstance(dynamic_shapes, (list, tuple)):
        for i in range(min(len(args), len(dynamic_shapes))):
            arg_specs[i] = dynamic_shapes[i]
        for j, k in enumerate(kwargs):
            if len(args) + j < len(dynamic_shapes):
                kw_specs[k] = dynamic_shapes[len(args) + j]

    for v, s in zip(args, arg_specs):
        walk(v, s)
    for k in kwargs:
        walk(kwargs[k], kw_specs[k])
    return leaves


# ---------------------------------------------------------------------------------------
# Shapes and ranges


def _affine(expr):
    """sympy expr -> (symbol, a, b) with expr == a*symbol + b; int -> (None, 0, value)."""
    if isinstance(expr, int):
        return None, 0, int(expr)
    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return None, 0, int(expr)
    free = sorted(expr.free_symbols, key=str)
    if len(free) != 1:
        raise SpecError(f"dim {expr} is not affine in one symbol (symbols: {free})")
    sym = free[0]
    try:
        poly = sympy.Poly(sympy.expand(expr), sym)
    except sympy.PolynomialError as e:
        raise SpecError(f"dim {expr} is not a polynomial in {sym}: {e}") from None
    if poly.degree() != 1:
        raise SpecError(f"dim {expr} is not affine in {sym}")
    a = poly.coeff_monomial(sym)
    b = poly.coeff_monomial(1)
    if not (a.is_Integer and b.is_Integer):
        raise SpecError(f"dim {expr} has non-integer coefficients")
    return sym, int(a), int(b)


def _format_dim(sym, a, b):
    if sym is None:
        return b
    text = str(sym) if a == 1 else f"{a}*{sym}"
    if b > 0:
        text += f"+{b}"
    elif b < 0:
        text += f"{b}"
    return text


def _bound(value, default=None):
    """A ValueRanges bound -> Python int, or None when infinite."""
    try:
        from torch.utils._sympy.numbers import int_oo, IntInfinity, NegativeIntInfinity
    except ImportError:  # pragma: no cover - older torch
        int_oo = None
        IntInfinity = NegativeIntInfinity = ()
    if value is None or (int_oo is not None and value is int_oo):
        return default
    if IntInfinity and isinstance(value, (IntInfinity, NegativeIntInfinity)):
        return default
    if value in (sympy.oo, -sympy.oo):
        return default
    v = int(value)
    if v >= sys.maxsize - 1:  # export's own "unbounded" sentinel
        return default
    return v


def _user_input_names(ep, module):
    """Placeholder names of the user inputs, and the user-facing names to report."""
    placeholders = list(ep.graph_signature.user_inputs)
    names = list(placeholders)
    forward_names = _forward_names(module)
    # export names a plain tensor argument's placeholder after the parameter itself; only
    # when it did not (nested inputs, name clashes) fall back to position.
    if forward_names and len(forward_names) == len(placeholders):
        names = [p if p in forward_names else forward_names[i] for i, p in enumerate(placeholders)]
    return placeholders, names


def spec_from_exported(ep, dynamic_shapes=None, int_ranges=None, module=None, args=None, kwargs=None) -> dict:
    """Build the aoti-fuzz spec dict from an ExportedProgram.

    dynamic_shapes: what was given to torch.export.export (dict keyed by forward()'s
        parameter names, or tuple parallel to args); used only to recover Dim names.
    int_ranges: {input name: [lo, hi]} for integer inputs. An integer input not named here
        gets no "int_range" in the spec (a bool input gets [0, 1]).
    module/args/kwargs: optional; help map dynamic_shapes and forward() names onto the
        placeholders. Without args the dynamic_shapes walk uses the placeholders' ranks.
    """
    int_ranges = dict(int_ranges or {})
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    placeholders, names = _user_input_names(ep, module)

    # Per-leaf dynamic_shapes entries, in the same (pytree) order as the user inputs.
    if args is None:
        args = tuple(nodes[p].meta.get("val") for p in placeholders)
        kwargs = {}
    param_names = _forward_names(module) or list(names)
    leaf_specs = _leaf_dim_specs(tuple(args), dict(kwargs or {}), dynamic_shapes, param_names)
    if len(leaf_specs) != len(placeholders):
        leaf_specs = [None] * len(placeholders)

    ranges = {}
    for sym, vr in ep.range_constraints.items():
        ranges[str(sym)] = vr

    inputs = []
    sym_order = []  # symbols in order of first use
    dim_names = {}
    for idx, (ph, name) in enumerate(zip(placeholders, names)):
        val = nodes[ph].meta.get("val")
        if isinstance(val, torch.SymInt) or isinstance(val, int):
            raise SpecError(f"input {name!r} is a scalar, not a tensor: unsupported by the spec format")
        if not isinstance(val, torch.Tensor):
            raise SpecError(f"input {name!r} has no tensor value ({type(val).__name__})")
        if val.dtype not in _DTYPE_NAMES:
            raise SpecError(f"input {name!r} has unsupported dtype {val.dtype}")
        dtype = _DTYPE_NAMES[val.dtype]
        shape = []
        per_dim = leaf_specs[idx] or [None] * val.dim()
        for d, size in enumerate(val.shape):
            expr = size.node.expr if isinstance(size, torch.SymInt) else int(size)
            sym, a, b = _affine(expr)
            shape.append(_format_dim(sym, a, b))
            if sym is None:
                continue
            s = str(sym)
            if s not in sym_order:
                sym_order.append(s)
            user_dim = per_dim[d] if d < len(per_dim) else None
            if _is_named_dim(user_dim):
                root = _root_dim(user_dim)
                # A derived dim's expression is in its root's symbol; the plain Dim is the
                # symbol itself. Either way the root's name belongs to this symbol.
                dim_names.setdefault(s, root.__name__)
        entry = {"name": name, "dtype": dtype, "shape": shape}
        if dtype in _INTEGER_DTYPES:
            rng = int_ranges.get(name, BOOL_INT_RANGE if dtype == "bool" else None)
            if rng is not None:
                lo, hi = rng
                entry["int_range"] = [int(lo), int(hi)]
        inputs.append(entry)

    symbols = []
    for s in sym_order:
        vr = ranges.get(s)
        entry = {"name": s, "dim": dim_names.get(s, "")}
        notes = []
        lo = _bound(vr.lower) if vr is not None else None
        hi = _bound(vr.upper) if vr is not None else None
        if lo is None:
            lo = 0
            notes.append("lower bound unknown or unbounded; using 0")
        if hi is None:
            hi = max(UNBOUNDED_MAX, lo)
            notes.append(f"upper bound unbounded; clamped to {hi}")
        entry["min"] = lo
        entry["max"] = hi
        if notes:
            entry["note"] = "; ".join(notes)
        symbols.append(entry)

    return {"format": "aoti-fuzz-spec", "version": 1, "inputs": inputs, "symbols": symbols}


# ---------------------------------------------------------------------------------------
# Packaging


def read_embedded_spec(package_path):
    """The spec dict embedded in a package's wrapper metadata, or None when absent."""
    with zipfile.ZipFile(package_path) as zf:
        for entry in zf.namelist():
            if entry.endswith(".wrapper_metadata.json"):
                meta = json.loads(zf.read(entry).decode("utf-8"))
                if SPEC_KEY in meta:
                    return json.loads(meta[SPEC_KEY])
    return None


def has_exported_program(package_path) -> bool:
    """Whether a .pt2 holds a serialized ExportedProgram (<top>/models/model.json)."""
    with zipfile.ZipFile(package_path) as zf:
        return any(e.split("/", 1)[-1] == EXPORTED_PROGRAM_ENTRY for e in zf.namelist())


def has_aoti_model(package_path) -> bool:
    """Whether a .pt2 holds an AOTI model (<top>/data/aotinductor/model/*.wrapper.so)."""
    with zipfile.ZipFile(package_path) as zf:
        return any(e.split("/", 1)[-1].startswith("data/aotinductor/model/") and e.endswith(".wrapper.so")
                   for e in zf.namelist())


def export_program(module, args, dynamic_shapes, kwargs=None):
    """torch.export.export the module (eval mode). The one ExportedProgram every artifact is
    made from."""
    module.eval()
    return torch.export.export(module, tuple(args), kwargs=kwargs, dynamic_shapes=dynamic_shapes)


def _configs_with_spec(inductor_configs, spec):
    configs = dict(inductor_configs or {})
    metadata = dict(configs.pop("aot_inductor.metadata", {}) or {})
    metadata[SPEC_KEY] = json.dumps(spec, separators=(",", ":"))
    configs["aot_inductor.metadata"] = metadata
    return configs


def _check_spec_landed(path, spec):
    embedded = read_embedded_spec(path)
    if embedded is None:
        raise RuntimeError(f"{path}: key {SPEC_KEY!r} not found in any *.wrapper_metadata.json")
    if embedded != spec:
        raise RuntimeError(f"{path}: embedded spec differs from the one built")


def _pristine(ep):
    """A copy of ep through torch.export's own serialization, for the archive. Compiling can
    rewrite the program it is given (Inductor specialized an AdaptiveAvgPool2d's dynamic sizes
    in the ExportedProgram's graph: adaptive_pool), and copy.deepcopy shares what it rewrites,
    so the archive keeps a copy serialized before the compile. The copy itself is never
    compiled: a compile of a reloaded (or deep-copied) program loses the upper bounds of the
    wrapper's input checks on torch 2.13."""
    import io

    buf = io.BytesIO()
    torch.export.save(ep, buf)
    buf.seek(0)
    return torch.export.load(buf)


def compile_unified(ep, package_path, spec=None, inductor_configs=None) -> str:
    """AOTI-compile ep and write the unified PT2 archive at package_path: the serialized
    ExportedProgram ("model") beside the AOTI model ("model"). With spec, it is embedded in the
    wrapper metadata under "aoti_fuzz.spec" and checked. Returns package_path.

    Compiled from ep.module(check_guards=False) with ep.example_inputs, as
    aoti_compile_and_package does (plain ep.module() compiles to a wrapper whose check_input_N
    lose the upper bounds)."""
    from torch.export.pt2_archive._package import package_pt2

    path = os.fspath(package_path)
    configs = _configs_with_spec(inductor_configs, spec) if spec is not None else dict(inductor_configs or {})
    configs["aot_inductor.package"] = True
    archived = _pristine(ep)  # before compiling: the compile may rewrite ep
    try:
        gm = ep.module(check_guards=False)
    except TypeError:  # older torch: no guards to drop
        gm = ep.module()
    args, kwargs = ep.example_inputs
    files = torch._inductor.aot_compile(gm, args, kwargs, options=configs)
    if not isinstance(files, list):
        raise RuntimeError(f"aot_compile returned {type(files).__name__}, not the list of package files")
    package_pt2(path, exported_programs={"model": archived}, aoti_files={"model": files})
    if not has_exported_program(path):
        raise RuntimeError(f"{path}: no {EXPORTED_PROGRAM_ENTRY} in the archive")
    if spec is not None:
        _check_spec_landed(path, spec)
    return path


def compile_embedded(ep, package_path, spec, inductor_configs=None) -> str:
    """The older format: aoti_compile_and_package with the spec embedded (no exported program
    in the file). Returns the package path."""
    configs = _configs_with_spec(inductor_configs, spec)
    out = os.fspath(torch._inductor.aoti_compile_and_package(ep, package_path=os.fspath(package_path),
                                                             inductor_configs=configs))
    _check_spec_landed(out, spec)
    return out


def compile_plain(ep, package_path, inductor_configs=None) -> str:
    """A plain package, as a user would make it: aoti_compile_and_package(ep, package_path=...)
    with no aoti-fuzz metadata (a "aoti_fuzz.spec" entry in inductor_configs' metadata is
    dropped; other settings are kept). Returns the package path."""
    configs = dict(inductor_configs or {})
    metadata = {k: v for k, v in dict(configs.pop("aot_inductor.metadata", {}) or {}).items() if k != SPEC_KEY}
    if metadata:
        configs["aot_inductor.metadata"] = metadata
    out = os.fspath(torch._inductor.aoti_compile_and_package(ep, package_path=os.fspath(package_path),
                                                             inductor_configs=configs))
    if read_embedded_spec(out) is not None:
        raise RuntimeError(f"{out}: a plain package must not carry {SPEC_KEY!r}")
    return out


def save_exported(ep, path) -> str:
    """The exported program alone: torch.export.save(ep, path). Returns path."""
    path = os.fspath(path)
    torch.export.save(ep, path)
    return path


def export_package(module, args, dynamic_shapes, package_path, int_ranges=None, inductor_configs=None,
                   kwargs=None, *, package_format="unified", plain_path=None, exported_path=None) -> str:
    """torch.export the module, build its spec, AOTI-compile to package_path (package_format
    "unified": the unified PT2 archive; "embedded": the older aoti_compile_and_package file)
    with the spec embedded under "aoti_fuzz.spec", and verify it landed. From the same
    ExportedProgram optionally also write a plain package (plain_path) and the exported
    program alone (exported_path). Returns package_path."""
    if package_format not in FORMATS:
        raise ValueError(f"package_format must be one of {FORMATS}, not {package_format!r}")
    args = tuple(args)
    ep = export_program(module, args, dynamic_shapes, kwargs=kwargs)
    spec = spec_from_exported(ep, dynamic_shapes, int_ranges, module=module, args=args, kwargs=kwargs)
    if exported_path is not None:
        save_exported(ep, exported_path)
    if package_format == "unified":
        out = compile_unified(ep, package_path, spec, inductor_configs)
    else:
        out = compile_embedded(ep, package_path, spec, inductor_configs)
    if plain_path is not None:
        compile_plain(ep, plain_path, inductor_configs)
    return out


def load_model_file(path):
    """Import a corpus model file (defines make()) as a fresh module."""
    name = "aotif_model_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not hasattr(mod, "make"):
        raise AttributeError(f"{path} defines no make()")
    return mod


def export_model_file(model_path, package_path, inductor_configs=None, device="cpu", *,
                      package_format="unified", plain_path=None, exported_path=None):
    """Export the model a corpus file's make() describes, on `device` ("cpu", "cuda"), to
    package_path (and optionally plain_path / exported_path, see export_package).
    Returns (package_path, spec)."""
    mod = load_model_file(model_path)
    m = mod.make()
    if device != "cpu":
        m["module"] = m["module"].to(device)
        m["args"] = tuple(a.to(device) if isinstance(a, torch.Tensor) else a for a in m["args"])
    configs = dict(m.get("inductor_configs") or {})
    configs.update(inductor_configs or {})
    out = export_package(m["module"], m["args"], m.get("dynamic_shapes"), package_path,
                         int_ranges=m.get("int_ranges"), inductor_configs=configs,
                         kwargs=m.get("kwargs"), package_format=package_format,
                         plain_path=plain_path, exported_path=exported_path)
    return out, read_embedded_spec(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Export MODEL.py (defines make()) to an AOTI package "
                                             "with an embedded aoti-fuzz spec (by default the unified "
                                             "PT2 archive, which also holds the exported program).")
    ap.add_argument("model", help="Python file defining make()")
    ap.add_argument("out", help="output .pt2 path")
    ap.add_argument("--format", choices=FORMATS, default="unified", dest="package_format",
                    help="unified (default): exported program + AOTI model in one archive; "
                         "embedded: the older aoti_compile_and_package file, no exported program")
    ap.add_argument("--plain", metavar="OUT_PLAIN.pt2",
                    help="also write a plain aoti_compile_and_package package (no aoti-fuzz metadata)")
    ap.add_argument("--save-exported", metavar="OUT_EP.pt2",
                    help="also write the exported program alone (torch.export.save)")
    ap.add_argument("--print-spec", action="store_true", help="print the embedded spec JSON")
    ns = ap.parse_args(argv)
    try:
        out, spec = export_model_file(ns.model, ns.out, package_format=ns.package_format,
                                      plain_path=ns.plain, exported_path=ns.save_exported)
    except Exception as e:  # noqa: BLE001 - CLI boundary: one clear line, non-zero exit
        print(f"aotif_export: {ns.model}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if ns.print_spec:
        print(json.dumps(spec, indent=2))
    for path in (out, ns.plain, ns.save_exported):
        if path is not None:
            print(f"aotif_export: wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
