"""End-to-end: SIGNAL signatures of real crashes in real example packages, through aoti-run.

The crash handler records raw PCs as module + offset; the tool names them from the ELF
symbol tables and builds the signature from up to three function names (docs/crash-file.md,
"Signatures"). Checked on the crashes the corpus really has (corpus/models/README.md):
  (a) one bug, one signature, whatever the path to it:
      - bert_encoder seq=0 (the pooler's addmm copies a view of an empty buffer) at batch 1
        and at batch 2 / 8 reaches the faulting copy loop through different frames (batch >= 2
        adds at::internal::serial_for_each's 2-d loop): the frame lists differ, the signature
        does not; the plain package (another build of the same model) gives it too;
      - adaptive_pool at h=0 or w=0 (several shapes) and lasttok n=0 (three fills, two seeds)
        each give one signature, 3 of 3 runs each;
  (b) different kernels, different signatures: lasttok, twosym and adaptive_pool fault in
      three different model kernels, bert_encoder inside libtorch: four signatures, each
      naming its kernel (cpp_fused_...) or libtorch function;
  (c) C++ frames are demangled: bert_encoder's signature holds
      torch::aot_inductor::AOTInductorModel::run_impl and at::native:: names, no frame or
      signature holds a mangled `_Z` name, and functions that only .symtab knows (libtorch's
      local at::native::...direct_copy_kernel, which dladdr left as a bare offset) are named;
  (d) no signature holds "0x" or "+0x"; frames keep their offsets (for display).
Exit 1 on any failure, 77 when a package or libtorch is missing.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from aotif_test import aoti_run, arg_parser, check, finish, need_examples, result, shape_args, skip  # noqa: E402


def run(bin_dir, pkg, shape, *extra):
    p = aoti_run(bin_dir, pkg, "--json", "--beyond-contract", *extra, *shape_args(shape))
    r = result(p)
    label = f"{os.path.basename(pkg)} {shape} {' '.join(extra)}".strip()
    print(f"{label}: {r.get('class')} {r.get('signature')!r} same {r.get('same_signature')}/{r.get('runs')}",
          flush=True)
    check(p.returncode == 1 and r.get("class") == "SIGNAL",
          f"{label}: a SIGNAL, exit 1 (rc {p.returncode}, {r.get('class')}, {p.stderr.strip()[:300]})")
    return label, r


def frames_ok(label, r):
    """(c) and (d) on one result."""
    sig, frames = r.get("signature", ""), r.get("frames", [])
    check("0x" not in sig and "+0x" not in sig, f"{label}: no offset or address in {sig!r}")
    check("_Z" not in sig, f"{label}: nothing mangled in {sig!r}")
    check(sig.startswith("SIGNAL: SIGSEGV @ ") and len(sig) > 18, f"{label}: names where: {sig!r}")
    check(frames and all("+0x" in f or re.fullmatch(r"0x[0-9a-f]+", f) for f in frames),
          f"{label}: frames keep an offset (display): {frames[:3]}")
    named = [f.split("!", 1)[1] for f in frames if "!" in f]
    check(named and not any(n.startswith("_Z") for n in named),
          f"{label}: every named frame demangled: {[n for n in named if n.startswith('_Z')][:2]}")
    check(any(f.startswith("model.so!") for f in frames), f"{label}: the model's frames named model.so!...")


def main():
    a = arg_parser().parse_args()
    names = ("lasttok", "twosym", "adaptive_pool", "bert_encoder", "bert_encoder.plain")
    need_examples(a.examples, [n + ".pt2" for n in names])
    pk = {n: os.path.join(a.examples, n + ".pt2") for n in names}
    p = aoti_run(a.bin, pk["lasttok"], "--shape", "n=2")
    if p.returncode != 0 and "libtorch" in p.stderr:
        skip("no libtorch: " + p.stderr.strip())

    sigs = {}  # bug -> set of signatures seen

    # (a) bert_encoder seq=0: two code paths to one faulting loop
    bert = {}
    for b in (1, 2, 8):
        label, r = run(a.bin, pk["bert_encoder"], {"batch": b, "seq": 0}, "--repeat", "3")
        frames_ok(label, r)
        check(r.get("same_signature") == 3, f"{label}: one signature in 3 of 3 runs")
        bert[b] = r
        sigs.setdefault("bert", set()).add(r.get("signature"))
    for s18 in (1, 2):
        label, r = run(a.bin, pk["bert_encoder.plain"], {"s18": s18, "s41": 0})
        frames_ok(label, r)
        sigs["bert"].add(r.get("signature"))
    f1, f2 = bert[1].get("frames", []), bert[2].get("frames", [])
    check(f1 and f2 and f1 != f2, "bert_encoder: batch 1 and batch 2 reach the fault through different frames")
    check(any("at::internal::serial_for_each" in f for f in f2) and
          not any("at::internal::serial_for_each" in f for f in f1),
          "bert_encoder: batch 2's stack has the 2-d loop level that batch 1's lacks")
    check(len(sigs["bert"]) == 1, f"bert_encoder (both packages, batch 1, 2, 8): one signature: {sigs['bert']}")
    bsig = next(iter(sigs["bert"]))
    # (c) demangled C++ names, and a function only .symtab names
    check("torch::aot_inductor::AOTInductorModel::run_impl" in bsig, f"bert_encoder: run_impl, demangled, in {bsig!r}")
    check("at::native::" in bsig and "(" not in bsig and "<" not in bsig,
          f"bert_encoder: at::native:: names without parameters or templates in {bsig!r}")
    check(any("direct_copy_kernel" in f for f in f1),
          f"bert_encoder: the local function direct_copy_kernel is named from .symtab: {f1[:5]}")

    # (a) one kernel at several shapes, fills and seeds
    for hw in ({"h": 0, "w": 4}, {"h": 0, "w": 64}, {"h": 4, "w": 0}, {"h": 0, "w": 0}):
        label, r = run(a.bin, pk["adaptive_pool"], hw, "--repeat", "3")
        frames_ok(label, r)
        check(r.get("same_signature") == 3, f"{label}: one signature in 3 of 3 runs")
        sigs.setdefault("adaptive_pool", set()).add(r.get("signature"))
    for extra in (["--fill", "random", "--seed", "0"], ["--fill", "random", "--seed", "7"],
                  ["--fill", "zeros"], ["--fill", "ones"]):
        label, r = run(a.bin, pk["lasttok"], {"n": 0}, *extra)
        frames_ok(label, r)
        sigs.setdefault("lasttok", set()).add(r.get("signature"))
    label, r = run(a.bin, pk["twosym"], {"n": 0, "m": 0}, "--repeat", "3")
    frames_ok(label, r)
    sigs.setdefault("twosym", set()).add(r.get("signature"))
    for bug in ("adaptive_pool", "lasttok", "twosym"):
        check(len(sigs[bug]) == 1, f"{bug}: one signature: {sigs[bug]}")

    # (b) four bugs, four signatures, each naming its own kernel
    one = {bug: next(iter(s)) for bug, s in sigs.items() if len(s) == 1}
    check(len(set(one.values())) == len(one) == 4, f"four bugs, four signatures: {one}")
    check(one.get("lasttok") == "SIGNAL: SIGSEGV @ cpp_fused_add_mean_mul_select_0",
          f"lasttok names its kernel: {one.get('lasttok')!r}")
    check(one.get("twosym") == "SIGNAL: SIGSEGV @ cpp_fused_add_cat_mean_mul_select_0",
          f"twosym names its kernel: {one.get('twosym')!r}")
    check(re.fullmatch(r"SIGNAL: SIGSEGV @ cpp_fused_\w*adaptive_avg_pool2d\w*", one.get("adaptive_pool", "")),
          f"adaptive_pool names its kernel: {one.get('adaptive_pool')!r}")

    finish("all signature checks passed")


if __name__ == "__main__":
    main()
