"""aotif_ref — the reference process: run a model's exported program eagerly on aoti-fuzz cases.

The tools start it once per run (harness/reference.c), the way they start a worker, and start
it again if it dies: a crash here is the reference's problem, never a finding. It loads the
ExportedProgram (a unified PT2 archive or a torch.export.save file) with torch.export.load,
takes cases on stdin and answers each on stdout, one JSON line each way:

    in   {"id": 7, "values": [0, 16], "fill": "random", "seed": "0", "compare": true,
          "rtol": null, "atol": null}
    out  {"id": 7, "eager": "ok" | "error", "error_type": "IndexError", "error": "...",
          "compare": "match" | "mismatch" | "skipped", "output": 0, "kind": "value" |
          "shape" | "dtype" | "nonfinite" | "count", "max_abs": 0.41, "max_rel": 1.0,
          "detail": "...", "eager_seconds": 0.001}

Inputs are built with aoti-fuzz's fill function (aotif_fill.py, the one Python version of
docs/fill.md) from the spec the tool hands over (--spec, the JSON of harness/spec.h). With
"compare", the AOTI side's outputs of the same case are already in the output arena, a
shared memory region the tool's worker filled (layout: harness/include/aotif/runtime.h,
af_arena_header), passed here as an inherited file descriptor: no output is serialized.
Values are compared like torch.testing.assert_close (its dtype-aware defaults, or the given
rtol/atol); AOTI NaN/Inf where eager is finite, another shape, dtype or output count are
mismatches of their own kind.

Start-up prints {"ready": true, "torch": "2.13.0+cpu"} or {"ready": false, "error": ...}.
"""

import argparse
import json
import mmap
import os
import re
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from torch.utils import _pytree as pytree  # noqa: E402

from aotif_fill import fill, load_program  # noqa: E402

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32,
          torch.int16, torch.int8, torch.uint8, torch.bool]  # af_dtype order (spec.h)
ARENA_MAGIC = 0x4F464F41
MAX_OUTPUTS = 16
HEADER = struct.Struct("<IIII")
ENTRY = struct.Struct("<ii8qqq")
DIM = re.compile(r"^(?:(\d+)\*)?([A-Za-z_]\w*)([+-]\d+)?$")


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def short(text, n=600):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."


class Spec:
    def __init__(self, js):
        self.syms = [s["name"] for s in js.get("symbols", [])]
        self.dims = {s.get("dim"): i for i, s in enumerate(js.get("symbols", [])) if s.get("dim")}
        self.inputs = []
        for inp in js["inputs"]:
            dims = []
            for d in inp["shape"]:
                if isinstance(d, int):
                    dims.append((None, 0, d))
                    continue
                m = DIM.match(d.replace(" ", ""))
                if not m:
                    raise ValueError(f"dim {d!r} of {inp['name']} is not a*sym+b")
                name = m.group(2)
                k = self.syms.index(name) if name in self.syms else self.dims[name]
                dims.append((k, int(m.group(1) or 1), int(m.group(3) or 0)))
            dt = getattr(torch, inp["dtype"])
            self.inputs.append((inp["name"], dims, dt, tuple(inp.get("int_range", (0, 1)))))

    def build(self, values, mode, seed, device):
        out = []
        for i, (_, dims, dt, int_range) in enumerate(self.inputs):
            shape = [b if k is None else a * values[k] + b for k, a, b in dims]
            out.append(fill(shape, dt, i, seed, mode, int_range).to(device))
        return out


def read_arena(arena):
    magic, n, complete, _ = HEADER.unpack_from(arena, 0)
    if magic != ARENA_MAGIC:
        return None, "the worker left no outputs in the arena"
    outs = []
    for i in range(min(n, MAX_OUTPUTS)):
        dtype, rank, *rest = ENTRY.unpack_from(arena, HEADER.size + i * ENTRY.size)
        sizes, offset, nbytes = rest[:rank], rest[8], rest[9]
        if dtype < 0 or not complete:
            return None, f"output {i} could not be copied (dtype or size over the arena)"
        dt = DTYPES[dtype]
        if nbytes == 0:
            outs.append(torch.empty(sizes, dtype=dt))
        else:
            buf = bytearray(arena[offset:offset + nbytes])
            outs.append(torch.frombuffer(buf, dtype=dt).reshape(sizes))
    if n > MAX_OUTPUTS:
        return None, f"{n} outputs, more than the arena holds ({MAX_OUTPUTS})"
    return outs, ""


def compare(aoti, eager, rtol, atol):
    """None when they agree, else a dict saying how they differ (the first output that does)."""
    if len(aoti) != len(eager):
        return {"output": 0, "kind": "count", "detail": f"AOTI gave {len(aoti)} outputs, eager {len(eager)}"}
    for i, (a, e) in enumerate(zip(aoti, eager)):
        e = e.detach().to("cpu")
        if a.dtype != e.dtype:
            return {"output": i, "kind": "dtype", "detail": f"AOTI {a.dtype}, eager {e.dtype}"}
        if tuple(a.shape) != tuple(e.shape):
            return {"output": i, "kind": "shape", "detail": f"AOTI {tuple(a.shape)}, eager {tuple(e.shape)}"}
        if a.numel() == 0:
            continue
        if a.dtype.is_floating_point:
            bad = (~torch.isfinite(a)) & torch.isfinite(e)
            if bool(bad.any()):
                return {"output": i, "kind": "nonfinite",
                        "detail": f"{int(bad.sum())} NaN/Inf in AOTI where eager is finite"}
        kw = {} if rtol is None or atol is None else {"rtol": rtol, "atol": atol}
        try:
            torch.testing.assert_close(a, e, equal_nan=True, **kw)
        except AssertionError as ex:
            d = (a.double() - e.double()).abs()
            fin = torch.isfinite(d)
            max_abs = float(d[fin].max()) if bool(fin.any()) else float("nan")
            rel = d / e.double().abs().clamp_min(torch.finfo(torch.float64).tiny)
            max_rel = float(rel[fin].max()) if bool(fin.any()) else float("nan")
            first = str(ex).strip().splitlines()
            return {"output": i, "kind": "value", "max_abs": max_abs, "max_rel": max_rel,
                    "detail": short(" ".join(first[:3]), 300)}
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--arena-fd", type=int, default=-1)
    ap.add_argument("--arena-bytes", type=int, default=0)
    ns = ap.parse_args()
    try:
        with open(ns.spec) as f:
            spec = Spec(json.load(f))
        ep = load_program(ns.program)  # the program alone, not the archive's AOTI models
        try:
            model = ep.module(check_guards=False)  # run the ops themselves, not the guards
        except TypeError:
            model = ep.module()
        model = model.to(ns.device) if ns.device != "cpu" else model
        arena = None
        if ns.arena_fd >= 0 and ns.arena_bytes > 0:
            arena = mmap.mmap(ns.arena_fd, ns.arena_bytes, mmap.MAP_SHARED, mmap.PROT_READ)
    except Exception as e:  # noqa: BLE001 - the tool reports it in one line
        send({"ready": False, "error": short(f"{type(e).__name__}: {e}")})
        return 3
    send({"ready": True, "torch": torch.__version__})
    cuda = ns.device.startswith("cuda")
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        rep = {"id": req["id"]}
        t0 = time.monotonic()
        try:
            inputs = spec.build(req["values"], req["fill"], int(req["seed"]), ns.device)
            with torch.no_grad():
                out = model(*inputs)
            if cuda:
                torch.cuda.synchronize()
            leaves = [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]
            rep["eager"] = "ok"
        except Exception as e:  # noqa: BLE001 - eager's error is the answer
            rep.update(eager="error", error_type=type(e).__name__, error=short(e))
            leaves = None
        rep["eager_seconds"] = time.monotonic() - t0
        rep["compare"] = "skipped"
        if req.get("compare") and leaves is not None:
            if arena is None:
                rep["detail"] = "no output arena"
            else:
                aoti, why = read_arena(arena)
                if aoti is None:
                    rep["detail"] = why
                else:
                    diff = compare(aoti, leaves, req.get("rtol"), req.get("atol"))
                    rep["compare"] = "match" if diff is None else "mismatch"
                    rep.update(diff or {})
        send(rep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
