"""End-to-end: the model's contract read from the ExportedProgram, on the real example packages.

    python3 tests/e2e/test_contract.py --bin BUILD --examples DIR [--python PY]

Checks (one line per check; exit 1 on any failure, 77 when a package or torch is missing):
1. describe of NAME.pt2 (unified archive) and of NAME.plain.pt2 --exported NAME.ep.pt2, for
   bert_encoder and conv_pool: declared ranges == the Dims of corpus/models/NAME.py (read by
   importing the model with torch), from the exported program; compiled ranges == EXPECTED's
   "compiled"; input names from the exported program; index value ranges == EXPECTED's
   "valid_values" (embedding indexes from the exported program, the mask assumed); contract gaps
   == the declared-legal sizes below the compiled min / above the compiled max; the text form.
2. describe of NAME.plain.pt2 alone: contract unknown, every range assumed [0, compiled max],
   wrapper input names, integer inputs assumed [0, 1]; the text says "declared: unknown".
3. aoti-fuzz on NAME.pt2 from an empty corpus, 5,000 execs: no crash file, contract known,
   not beyond the contract.
4. --beyond-contract: (a) aoti-run on each "beyond_contract" entry of NAME.expected.json that it
   can express (sizes below the declared min; index values out of range through --fill wide)
   gives the entry's class, contract "outside" and an "outside the declared contract" note;
   sizes above the declared max are not explored (exit 2); (b) aoti-fuzz --beyond-contract on
   bert_encoder.pt2 writes crash files, all "outside", counted in crashes_outside_contract and
   labelled on stderr; (c) aoti-minimize of those crash files: report.md titled "(outside the
   declared contract)" with a Contract section naming each fact's origin.
5. without --beyond-contract: a size below the declared min and --fill wide are refused (exit 2).
6. --exported mismatches are refused with exit 2 and one line "does not match the package":
   another model's program (declared max below what the package runs), another input count, a
   float64 export of lasttok (written here); a missing file and a non-zip file: exit 2, one line.

   The signature text of each beyond_contract entry ("signature_contains", measured through
   Python's loader) is checked too: a RUNTIME_ERROR carries torch's own exception text.
4d. torch's text through all three tools: aoti-fuzz --beyond-contract on conv_pool.pt2 gives a
   RUNTIME_ERROR whose signature is torch's text ("Kernel size can't be greater than actual input
   size"), not the wrapper's "aoti_torch_cpu_convolution(...) API call failed at ..."; its
   message says which shim call failed; aoti-minimize's repro.py and repro.sh checks say
   "reproduced"; report.md quotes torch's text; nothing is left in TMPDIR afterwards (repro.py's
   torch, the eager reference and aoti-run extract and cache there).
"""
import glob
import json
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from aotif_test import (ROOT, Env, arg_parser, check, failures, finish, need_examples,  # noqa: E402
                        need_python, read_crash, read_sidecar, result, section, shape_args, short,
                        warnings, write_file)

REAL = ("bert_encoder", "conv_pool")
# integer inputs that index no table in the exported program: their value range is assumed
ASSUMED_VALUES = {"bert_encoder": {"attention_mask": "assumed"}}


# Run in the venv's python (needs torch; transformers for bert_encoder): "dims NAME..." prints
# {NAME: {"inputs": [forward() parameter names], "dims": {input: {axis: [Dim, min, max]}}}};
# "f64 MODEL OUT" writes a torch.export.save of MODEL with its example inputs made float64
# and the same dynamic_shapes.
HELPER = r'''
import importlib.util, inspect, json, os, sys
import torch

def load(name):
    path = os.path.join(sys.argv[1], name + ".py")
    spec = importlib.util.spec_from_file_location("corpus_model_" + name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.make()

if sys.argv[2] == "dims":
    out = {}
    for name in sys.argv[3:]:
        d = load(name)
        params = list(inspect.signature(d["module"].forward).parameters)
        ds = d["dynamic_shapes"]
        if not isinstance(ds, dict):
            ds = dict(zip(params, ds))
        dims = {}
        for inp, axes in ds.items():
            if isinstance(axes, dict):
                items = axes.items()
            else:
                items = enumerate(axes or [])
            dims[inp] = {str(ax): [dim.__name__, int(dim.min), int(dim.max)]
                         for ax, dim in items if dim is not None}
        out[name] = {"inputs": params[:len(d["args"])], "dims": dims}
    print(json.dumps(out))
elif sys.argv[2] == "f64":
    d = load(sys.argv[3])
    args = tuple(a.to(torch.float64) for a in d["args"])
    ep = torch.export.export(d["module"], args, dynamic_shapes=d["dynamic_shapes"])
    torch.export.save(ep, sys.argv[4])
    print("wrote", sys.argv[4])
'''


class ContractEnv(Env):
    def __init__(self, a):
        super().__init__(a, "aotif-contract-e2e-", unset=("AOTI_RUNTIME_CHECK_INPUTS",))

    def describe(self, *args):
        p = self.aoti_run(*args, "--describe", "--json")
        d = json.loads(p.stdout) if p.returncode == 0 and p.stdout.strip() else None
        t = self.aoti_run(*args, "--describe")
        return p, d, t


def model_dims(e, names):
    """The Dims of corpus/models/NAME.py, by importing the model (the ground truth)."""
    p = e.run([e.python, "-c", HELPER, os.path.join(ROOT, "corpus", "models"), "dims", *names], timeout=600)
    if not check(p.returncode == 0, f"model files imported for their Dims ({short(p.stderr, 500)})"):
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def sym_dims(spec, model):
    """symbol name -> (Dim name, declared min, declared max), mapped through the input shapes."""
    out = {}
    by_name = {i["name"]: i for i in spec["inputs"]}
    for pos, inp_name in enumerate(model["inputs"]):
        inp = by_name.get(inp_name) or (spec["inputs"][pos] if pos < len(spec["inputs"]) else None)
        if inp is None:
            continue
        for ax, (dim, lo, hi) in model["dims"].get(inp_name, {}).items():
            ax = int(ax)
            if ax < len(inp["shape"]) and isinstance(inp["shape"][ax], str):
                out.setdefault(inp["shape"][ax], (dim, lo, hi))
    return out


# --- 1. the contract read from the exported program -------------------------------------------

def check_declared(e, name, model, label, args, dims_named):
    exp = e.expected(name)
    p, d, t = e.describe(*args)
    if not check(d is not None, f"{label}: --describe --json exits 0 ({short(p.stderr)})"):
        return
    spec = d["spec"]
    check(d["contract_known"] is True and d["contract_source"] != "",
          f"{label}: contract known, source {d['contract_source']!r}")
    # input names, in forward()'s order
    names = [i["name"] for i in spec["inputs"]]
    check(names == model["inputs"], f"{label}: input names {names} == forward()'s {model['inputs']}")
    check(all(i.get("name_from") == "exported program" for i in spec["inputs"]),
          f"{label}: every input name from the exported program ({[i.get('name_from') for i in spec['inputs']]})")
    # declared and compiled ranges
    sd = sym_dims(spec, model)
    check(set(sd) == {s["name"] for s in spec["symbols"]},
          f"{label}: symbols {sorted(s['name'] for s in spec['symbols'])} map onto the model's Dims {sorted(sd)}")
    want_gaps = {}
    for s in spec["symbols"]:
        if s["name"] not in sd:
            continue
        dim, lo, hi = sd[s["name"]]
        got = [s["min"], s["max"]]
        check(got == [lo, hi] and s.get("declared_from") == "exported program",
              f"{label}: {s['name']} ({dim}) declared {got} from {s.get('declared_from')!r} "
              f"== the model's Dim {dim} [{lo}, {hi}] from 'exported program'")
        if dims_named:
            check(s.get("dim") == dim, f"{label}: {s['name']} carries its Dim name {s.get('dim')!r} == {dim!r}")
        comp = exp["compiled"][dim]
        check([s.get("compiled_min"), s.get("compiled_max")] == comp,
              f"{label}: {dim} compiled [{s.get('compiled_min')}, {s.get('compiled_max')}] == EXPECTED's {comp}")
        if lo < comp[0] or hi > comp[1]:
            want_gaps[s["name"]] = (dim, lo, hi, comp)
        text = f"declared [{lo}, {hi}] (exported program), compiled [{comp[0]}, {comp[1]}]"
        line = next((l for l in t.stdout.splitlines() if l.strip().startswith(f"symbol {s['name']}")), "")
        check(text in line and (not dims_named or f"({dim})" in line),
              f"{label}: text describe has {text!r} ({line.strip()!r})")
    # index value ranges
    valid = exp.get("valid_values", {})
    for i in spec["inputs"]:
        if i["dtype"].startswith("float") or i["dtype"].startswith("bfloat"):
            check("int_range" not in i, f"{label}: float input {i['name']} has no int_range")
            continue
        want = valid.get(i["name"])
        got = i.get("int_range")
        check(want is not None and got == want, f"{label}: {i['name']} values {got} == EXPECTED's valid_values {want}")
        # an index into an embedding table is read from the exported program; the mask
        # indexes nothing, so its [0, 1] is assumed
        want_from = ASSUMED_VALUES.get(name, {}).get(i["name"], "exported program")
        check(i.get("int_range_from") == want_from,
              f"{label}: {i['name']} values from {i.get('int_range_from')!r} == {want_from!r} "
              f"({i.get('int_range_why', '')!r})")
    # contract gaps: declared-legal sizes below the compiled min or above the compiled max
    gaps = {g["symbol"]: g for g in d["contract_gaps"]}
    check(set(gaps) == set(want_gaps), f"{label}: contract gaps on {sorted(gaps)} == {sorted(want_gaps)}")
    gap_block = t.stdout.split("contract gaps", 1)[1] if "contract gaps" in t.stdout else ""
    for sym, (dim, lo, hi, comp) in want_gaps.items():
        g = gaps.get(sym, {})
        if lo < comp[0]:
            check(g.get("declared_min") == lo and g.get("compiled_min") == comp[0],
                  f"{label}: gap {sym} ({dim}): declared min {g.get('declared_min')} vs compiled min "
                  f"{g.get('compiled_min')} == {lo} vs {comp[0]}")
        sizes = list(range(lo, comp[0])) + list(range(comp[1] + 1, hi + 1))
        if hi > comp[1]:
            # the JSON gap entry carries the min side; the max side shows in the symbol's
            # compiled_max (checked above) and in the text; check JSON keys where present
            if "compiled_max" in g or "declared_max" in g:
                check(g.get("declared_max") == hi and g.get("compiled_max") == comp[1],
                      f"{label}: gap {sym} ({dim}): declared max {g.get('declared_max')} vs compiled max "
                      f"{g.get('compiled_max')} == {hi} vs {comp[1]}")
        line = next((l for l in gap_block.splitlines() if l.strip().startswith(sym)), "")
        want_sizes = "sizes " + " and ".join(str(x) for x in sizes) if len(sizes) <= 2 else None
        check(line and (want_sizes is None or line.rstrip().endswith(want_sizes)),
              f"{label}: text gap line for {sym} lists {want_sizes!r} ({line.strip()!r})")


def part1(e, dims):
    for name in REAL:
        check_declared(e, name, dims[name], f"{name}.pt2", [e.pkg(name + ".pt2")], True)
        check_declared(e, name, dims[name], f"{name}.plain.pt2 --exported {name}.ep.pt2",
                       [e.pkg(name + ".plain.pt2"), "--exported", e.pkg(name + ".ep.pt2")], False)


# --- 2. a plain package alone: the contract is unknown ------------------------------------------

def part2(e):
    for name in REAL:
        label = f"{name}.plain.pt2 alone"
        p, d, t = e.describe(e.pkg(name + ".plain.pt2"))
        if not check(d is not None, f"{label}: --describe --json exits 0 ({short(p.stderr)})"):
            continue
        spec = d["spec"]
        check(d["contract_known"] is False and d["contract_source"] == "" and d["contract_gaps"] == [],
              f"{label}: contract unknown (known {d['contract_known']}, source {d['contract_source']!r}, "
              f"gaps {d['contract_gaps']})")
        for s in spec["symbols"]:
            check(s.get("declared_from") == "assumed" and s["min"] == 0 and s["max"] == s.get("compiled_max"),
                  f"{label}: {s['name']} assumed [{s['min']}, {s['max']}] from {s.get('declared_from')!r} "
                  f"== 'assumed' [0, compiled max {s.get('compiled_max')}]")
            line = next((l for l in t.stdout.splitlines() if l.strip().startswith(f"symbol {s['name']}")), "")
            check(f"declared: unknown (assumed [0, {s['max']}])" in line,
                  f"{label}: text has 'declared: unknown (assumed [0, {s['max']}])' ({line.strip()!r})")
        for i in spec["inputs"]:
            check(re.fullmatch(r"arg\d+_1", i["name"]) is not None and i.get("name_from") == "wrapper",
                  f"{label}: input name {i['name']!r} from {i.get('name_from')!r} (the wrapper's argN_1)")
            if i["dtype"].startswith("int"):
                check(i.get("int_range") == [0, 1] and i.get("int_range_from") == "assumed",
                      f"{label}: {i['name']} values {i.get('int_range')} from {i.get('int_range_from')!r} "
                      f"== [0, 1] 'assumed'")
        check("declared: unknown (assumed [0," in t.stdout, f"{label}: text describe says 'declared: unknown (assumed [0,'")


# --- 3. fuzzing inside the contract: nothing to find --------------------------------------------

def part3(e):
    for name in REAL:
        art = tempfile.mkdtemp(dir=e.tmp, prefix=f"fuzz-{name}-")
        p, s, secs = e.fuzz(e.pkg(name + ".pt2"), art, 5000)
        check(p.returncode == 0 and s.get("execs") == 5000,
              f"{name}.pt2 fuzz: 5000 execs (rc {p.returncode}, execs {s.get('execs')}, {secs:.1f} s) {short(p.stderr[-300:]) if p.returncode else ''}")
        bins = glob.glob(os.path.join(art, "crash-*.bin"))
        check(not bins and s.get("distinct_crashes") == 0,
              f"{name}.pt2 fuzz: no crash inside the declared contract ({len(bins)} crash files, {s.get('distinct_crashes')} distinct)")
        check(s.get("contract_known") is True and s.get("beyond_contract") is False,
              f"{name}.pt2 fuzz: summary contract_known {s.get('contract_known')}, beyond_contract {s.get('beyond_contract')}")
        check(s.get("crashes_outside_contract") == 0, f"{name}.pt2 fuzz: crashes_outside_contract {s.get('crashes_outside_contract')} == 0")
        _, d, _ = e.describe(e.pkg(name + ".pt2"))
        check(d is not None and s.get("contract_gaps") == d["contract_gaps"],
              f"{name}.pt2 fuzz: summary contract_gaps == describe's ({s.get('contract_gaps')})")
        check("exploring inside the declared contract" in p.stderr,
              f"{name}.pt2 fuzz: stderr says it explores inside the declared contract")


# --- 4. beyond the contract ----------------------------------------------------------------------

def part4a(e):
    for name in REAL:
        pkg = e.pkg(name + ".pt2")
        entries = e.expected(name).get("beyond_contract", [])
        check(len(entries) > 0, f"{name}: EXPECTED has {len(entries)} beyond_contract entries")
        wide_done = set()
        for ent in entries:
            what, shape = ent["what"], ent["shape"]
            label = f"{name} {shape}" + (f" fill {ent['fill']}" if "fill" in ent else "")
            if what == "size above declared max":
                # --beyond-contract explores below the declared min, not above the max
                p = e.aoti_run(pkg, "--beyond-contract", *shape_args(shape), "--json")
                check(p.returncode == 2 and "outside the explored range" in p.stderr,
                      f"{label} ({what}): not explored, exit 2 (rc {p.returncode}: {short(p.stderr)})")
                continue
            args = [pkg, "--beyond-contract", *shape_args(shape)]
            if what == "index values out of range":
                # aoti-run cannot fill one input with one value: the wide fill puts index
                # values past their range; run it once per shape
                key = json.dumps(shape, sort_keys=True)
                if key in wide_done:
                    print(f"     {label}: covered by --fill wide at this shape", flush=True)
                    continue
                wide_done.add(key)
                args += ["--fill", "wide"]
                label = f"{name} {shape} --fill wide"
            elif what != "size below declared min":
                print(f"     {label}: {what!r} not expressible with aoti-run, not run", flush=True)
                continue
            p = e.aoti_run(*args, "--json")
            r = result(p)
            cls = r.get("class")
            want_rc = 0 if ent["class"] == "OK" else 1
            check(p.returncode == want_rc and cls == ent["class"],
                  f"{label} --beyond-contract: class {cls} == {ent['class']} (rc {p.returncode}: {short(p.stderr)})")
            check(r.get("contract") == "outside" and r.get("contract_note", "").startswith("outside the declared contract"),
                  f"{label}: contract {r.get('contract')!r}, note {r.get('contract_note')!r}")
            if what == "size below declared min":
                below = [k for k, v in shape.items() if f"{k}={v} is below its declared min" in r.get("contract_note", "")]
                check(below != [], f"{label}: the note names the size below its declared min")
            if ent.get("signature_contains"):
                said = r.get("signature", "") + "\n" + r.get("message", "")
                check(ent["signature_contains"] in said,
                     f"{label}: signature/message has EXPECTED's {ent['signature_contains']!r} "
                     f"(got {short(r.get('signature', ''), 160)!r})")


def part4b(e):
    """aoti-fuzz --beyond-contract on bert_encoder.pt2; returns its crash files."""
    art = tempfile.mkdtemp(dir=e.tmp, prefix="fuzz-beyond-bert-")
    runs = 3000
    p, s, secs = e.fuzz(e.pkg("bert_encoder.pt2"), art, runs, "--beyond-contract")
    check(p.returncode == 0 and s.get("execs") == runs,
          f"bert_encoder.pt2 fuzz --beyond-contract: {runs} execs (rc {p.returncode}, {secs:.1f} s)")
    bins = sorted(glob.glob(os.path.join(art, "crash-*.bin")))
    check(len(bins) >= 1, f"bert_encoder.pt2 fuzz --beyond-contract: {len(bins)} crash file(s) written")
    crashes = s.get("crashes", [])
    check(s.get("beyond_contract") is True and s.get("contract_known") is True,
          f"beyond fuzz summary: beyond_contract {s.get('beyond_contract')}, contract_known {s.get('contract_known')}")
    check(len(crashes) == len(bins) == s.get("distinct_crashes"),
          f"beyond fuzz: {len(crashes)} summary crashes == {len(bins)} files == distinct_crashes {s.get('distinct_crashes')}")
    check(s.get("crashes_outside_contract") == len(crashes) and len(crashes) > 0,
          f"beyond fuzz: crashes_outside_contract {s.get('crashes_outside_contract')} == {len(crashes)} crashes")
    check(all(c.get("contract") == "outside" and c.get("contract_note", "").startswith("outside the declared contract")
              for c in crashes),
          f"beyond fuzz: every summary crash 'outside' ({[(c.get('class'), c.get('contract')) for c in crashes]})")
    classes = {c.get("class") for c in crashes}
    want = {ent["class"] for ent in e.expected("bert_encoder")["beyond_contract"] if ent["class"] != "OK"}
    check(classes and classes <= want, f"beyond fuzz: crash classes {sorted(classes)} among EXPECTED's {sorted(want)}")
    for b in bins:
        first, body = read_crash(b)
        side = read_sidecar(b)
        base = os.path.basename(b)
        check(first == "AOTIF-CRASH 1", f"{base}: first line {first!r}")
        for what, j in (("crash file", body), ("sidecar", side)):
            check(j.get("contract") == "outside" and j.get("beyond_contract") is True
                  and j.get("contract_note", "").startswith("outside the declared contract"),
                  f"{base} {what}: contract {j.get('contract')!r}, beyond_contract {j.get('beyond_contract')}, "
                  f"note {j.get('contract_note')!r}")
        check(body.get("signature") == side.get("signature") and body.get("class") == side.get("class"),
              f"{base}: crash file and sidecar agree on {side.get('class')} {side.get('signature')!r}")
    # stderr: the banner, the status lines' "K outside the contract", and each NEW crash
    # followed (after its signature line) by its contract note
    err = p.stderr.splitlines()
    check(any("exploring beyond the declared contract" in l for l in err),
          "beyond fuzz stderr: says it explores beyond the declared contract")
    check(any(re.search(r"inputs, \d+ outside the contract\)", l) for l in err),
          "beyond fuzz stderr: status lines count crashes outside the contract")
    news = [i for i, l in enumerate(err) if re.match(r"aoti-fuzz: NEW ", l)]
    check(len(news) == len(crashes), f"beyond fuzz stderr: {len(news)} NEW lines == {len(crashes)} crashes")
    for i in news:
        block = err[i + 1:i + 4]
        note = next((l for l in block if l.startswith("  contract: ")), None)
        check(note is not None and note.startswith("  contract: outside the declared contract"),
              f"beyond fuzz stderr: {err[i][len('aoti-fuzz: '):][:60]!r} followed by {note!r}")
    return bins


def part4c(e, bins):
    if not check(len(bins) > 0, "minimize: a crash file to minimize"):
        return
    # the SIGNAL crash (seq=0) with the repro checks; the others without (faster)
    bins = sorted(bins, key=lambda b: "signal" not in os.path.basename(b))
    for k, b in enumerate(bins):
        out = os.path.join(e.tmp, "min-" + os.path.basename(b)[:-4])
        extra = [] if k == 0 else ["--no-repro-check"]
        t0 = time.time()
        p = e.run([e.min_bin, b, "--out", out, "--json", "--no-crash-map", *extra], timeout=900)  # map: e2e.explain
        secs = time.time() - t0
        base = os.path.basename(b)
        r = result(p)
        check(p.returncode == 0 and r.get("reproduced") is True,
              f"minimize {base}{' (repro checks)' if k == 0 else ''}: exit 0, reproduced ({p.returncode}, {secs:.1f} s) {short(p.stderr[-300:]) if p.returncode else ''}")
        m = r.get("minimal", {})
        check(m.get("contract") == "outside", f"minimize {base}: minimal case {m.get('case')!r} contract {m.get('contract')!r}")
        if k == 0:
            rp = r.get("repro", {}) or {}
            check(all((rp.get(x) or {}).get("reproduced") for x in ("sh", "py")),
                  f"minimize {base}: repro.sh and repro.py reproduce ({[(x, (rp.get(x) or {}).get('detail')) for x in ('sh', 'py')]})")
        rep = os.path.join(out, "report.md")
        text = open(rep).read() if os.path.exists(rep) else ""
        title = text.splitlines()[0] if text else ""
        check(title.startswith("# ") and title.endswith(" (outside the declared contract)"),
              f"minimize {base}: report title {title[:90]!r}... ends with '(outside the declared contract)'")
        sec = text.split("## Contract", 1)[1].split("\n## ", 1)[0] if "## Contract" in text else ""
        facts = [
            "| input_ids values | [0, 98] | exported program",
            "| token_type_ids values | [0, 1] | exported program",
            "| attention_mask values | [0, 1] | assumed",
            "| input 0 name | input_ids | exported program |",
            "| batch declared range | [1, 8] | exported program |",
            "| seq declared range | [1, 64] | exported program |",
            "| batch compiled range | [2, 8] | wrapper |",
            "| seq compiled range | [2, 64] | wrapper |",
        ]
        missing = [f for f in facts if f not in sec]
        check(sec and not missing, f"minimize {base}: report's Contract section lists each fact with its origin "
                                   f"(missing {missing})")
        check("outside the declared contract" in text.split("## Minimal", 1)[0],
              f"minimize {base}: report's opening says the case is outside the declared contract")


# --- 5. without --beyond-contract ---------------------------------------------------------------

def part5(e):
    pkg = e.pkg("bert_encoder.pt2")
    for shape in ({"batch": 2, "seq": 0}, {"batch": 0, "seq": 8}):
        p = e.aoti_run(pkg, *shape_args(shape), "--json")
        check(p.returncode == 2 and "--beyond-contract" in p.stderr and not p.stdout.strip(),
              f"bert_encoder.pt2 {shape} without --beyond-contract: exit 2 naming --beyond-contract "
              f"(rc {p.returncode}: {short(p.stderr)})")
    p = e.aoti_run(pkg, "--shape", "batch=2", "--shape", "seq=8", "--fill", "wide", "--json")
    check(p.returncode == 2 and "--beyond-contract" in p.stderr,
          f"bert_encoder.pt2 --fill wide without --beyond-contract: exit 2 (rc {p.returncode}: {short(p.stderr)})")
    p = e.aoti_run(pkg, "--shape", "batch=1", "--shape", "seq=1", "--json")
    r = result(p)
    check(p.returncode == 0 and r.get("class") == "OK" and r.get("contract") == "gap",
          f"bert_encoder.pt2 batch=1 seq=1 (declared legal, below the compiled 2): OK, contract "
          f"{r.get('contract')!r} ({r.get('contract_note')!r})")
    p = e.aoti_run(e.pkg("conv_pool.pt2"), "--shape", "batch=16", "--shape", "length=8", "--json")
    r = result(p)
    check(p.returncode == 0 and r.get("class") == "OK" and r.get("contract") == "gap",
          f"conv_pool.pt2 batch=16 (declared legal, above the compiled 15): OK, contract "
          f"{r.get('contract')!r} ({r.get('contract_note')!r})")
    p = e.aoti_run(pkg, "--shape", "batch=2", "--shape", "seq=8", "--json")
    r = result(p)
    check(p.returncode == 0 and r.get("contract") == "inside",
          f"bert_encoder.pt2 batch=2 seq=8: contract {r.get('contract')!r} ({r.get('contract_note')!r})")


# --- 6. --exported mismatches ---------------------------------------------------------------------

def refused(e, label, p, *needles):
    err = p.stderr.strip()
    ok = p.returncode == 2 and err != "" and "\n" not in err and all(n in err for n in needles)
    return check(ok, f"{label}: exit 2, one line with {list(needles)} (rc {p.returncode}: {short(err, 400)!r})")


def part6(e, dims):
    ep = e.pkg
    # (a) another model's program: lasttok declares max 128, healthy runs up to 256
    lt_max = next(iter(dims["lasttok"]["dims"]["x"].values()))[2]
    h_comp = next(iter(e.expected("healthy")["compiled"].values()))[1]
    p = e.aoti_run(ep("healthy.pt2"), "--exported", ep("lasttok.ep.pt2"), "--describe")
    refused(e, "healthy.pt2 --exported lasttok.ep.pt2", p, "does not match the package", "max",
            str(lt_max), str(h_comp))
    # (b) another input count
    p = e.aoti_run(ep("lasttok.pt2"), "--exported", ep("twosym.ep.pt2"), "--describe")
    refused(e, "lasttok.pt2 --exported twosym.ep.pt2", p, "does not match the package", "input")
    p = e.aoti_run(ep("bert_encoder.plain.pt2"), "--exported", ep("conv_pool.ep.pt2"), "--describe")
    refused(e, "bert_encoder.plain.pt2 --exported conv_pool.ep.pt2", p, "does not match the package")
    # (c) a dtype mismatch: lasttok exported with a float64 example input
    f64 = os.path.join(e.tmp, "lasttok_f64.ep.pt2")
    p = e.run([e.python, "-c", HELPER, os.path.join(ROOT, "corpus", "models"), "f64", "lasttok", f64], timeout=600)
    if check(p.returncode == 0 and os.path.exists(f64), f"float64 lasttok exported ({short(p.stderr, 400)})"):
        p = e.aoti_run(ep("lasttok.pt2"), "--exported", f64, "--describe")
        refused(e, "lasttok.pt2 --exported <float64 lasttok>", p, "does not match the package", "float64", "float32")
        p = e.aoti_run(ep("lasttok.pt2"), "--exported", f64, "--shape", "n=3", "--json")
        refused(e, "lasttok.pt2 --exported <float64 lasttok> --shape n=3", p, "does not match the package")
        art = tempfile.mkdtemp(dir=e.tmp, prefix="fuzz-f64-")
        p, s, _ = e.fuzz(ep("lasttok.pt2"), art, 10, "--exported", f64)
        refused(e, "aoti-fuzz lasttok.pt2 --exported <float64 lasttok>", p, "does not match the package")
    # a missing file, a file that is not a zip
    p = e.aoti_run(ep("lasttok.pt2"), "--exported", os.path.join(e.tmp, "no-such.ep.pt2"), "--describe")
    refused(e, "--exported <missing file>", p, "no-such.ep.pt2")
    notzip = os.path.join(e.tmp, "not-a-zip.ep.pt2")
    write_file(notzip, "this is not a zip archive\n")
    p = e.aoti_run(ep("lasttok.pt2"), "--exported", notzip, "--describe")
    refused(e, "--exported <not a zip>", p, "not-a-zip.ep.pt2")


def part6_minimize(e, bins):
    """aoti-minimize --exported with another model's program is refused too."""
    if not bins:
        return
    p = e.run([e.min_bin, bins[0], "--out", os.path.join(e.tmp, "min-mismatch"), "--no-repro-check",
               "--exported", e.pkg("conv_pool.ep.pt2")])
    refused(e, "aoti-minimize <bert crash> --exported conv_pool.ep.pt2", p, "does not match the package")


def part4d(e):
    want = "Kernel size can't be greater than actual input size"
    art = tempfile.mkdtemp(dir=e.tmp, prefix="fuzz-beyond-conv-")
    p, s, secs = e.fuzz(e.pkg("conv_pool.pt2"), art, 300, "--beyond-contract")
    bins = [b for b in sorted(glob.glob(os.path.join(art, "crash-runtime_error-*.bin")))
            if want in read_crash(b)[1].get("signature", "")]
    if not check(p.returncode == 0 and len(bins) >= 1,
                 f"conv_pool.pt2 fuzz --beyond-contract (300 execs, {secs:.1f} s): a RUNTIME_ERROR crash file whose "
                 f"signature holds torch's {want!r} (rc {p.returncode}, files {os.listdir(art) if os.path.isdir(art) else []})"):
        return
    body = read_crash(bins[0])[1]
    sig, msg = body.get("signature", ""), body.get("message", "")
    check("API call failed" not in sig and sig.startswith("RUNTIME_ERROR: Calculated padded input size"),
          f"{os.path.basename(bins[0])}: signature is torch's text, not the wrapper's ({short(sig, 120)!r})")
    check("(in aoti_torch_cpu_convolution, " in msg and ".wrapper.cpp line " in msg,
          f"{os.path.basename(bins[0])}: message names the failing shim call and wrapper line ({short(msg, 200)!r})")
    out = os.path.join(e.tmp, "min-conv-torch-text")
    own_tmp = tempfile.mkdtemp(dir=e.tmp, prefix="tmpdir-")
    pm = e.run([e.min_bin, bins[0], "--out", out, "--json"], timeout=900, env=dict(e.env, TMPDIR=own_tmp))
    left = os.listdir(own_tmp)
    check(left == [], f"aoti-minimize with its repro checks and the eager reference leaves nothing in TMPDIR (left {left})")
    r = result(pm)
    rp = r.get("repro", {}) or {}
    check(pm.returncode == 0 and r.get("reproduced") is True,
          f"minimize conv_pool RUNTIME_ERROR: exit 0, reproduced (rc {pm.returncode}) {short(pm.stderr[-300:]) if pm.returncode else ''}")
    for x in ("py", "sh"):
        c = rp.get(x) or {}
        check(c.get("reproduced") is True and "another message" not in (c.get("detail") or ""),
              f"minimize conv_pool RUNTIME_ERROR: repro.{x} reproduced ({c.get('detail')!r})")
    py = rp.get("py") or {}
    check(want in (py.get("detail") or ""), f"repro.py's detail quotes torch's text ({short(py.get('detail') or '', 200)!r})")
    text = open(os.path.join(out, "report.md")).read() if os.path.exists(os.path.join(out, "report.md")) else ""
    check(want in text and "API call failed" not in text.splitlines()[0] if text else False,
          f"conv_pool report.md: title and body quote torch's text ({short(text.splitlines()[0] if text else '', 160)!r})")


def main():
    a = arg_parser(python="venv").parse_args()
    t_start = time.time()
    need = [f"{n}{s}" for n in REAL for s in (".pt2", ".ep.pt2", ".plain.pt2", ".expected.json")]
    need += ["healthy.pt2", "healthy.expected.json", "lasttok.pt2", "lasttok.ep.pt2", "twosym.ep.pt2"]
    need_examples(a.examples, need)
    need_python(a.python, "torch", "transformers")
    e = ContractEnv(a)
    e.check_tools()
    if failures:
        sys.exit(1)
    dims = model_dims(e, list(REAL) + ["lasttok"])
    if dims is None:
        sys.exit(1)
    sections = [
        ("1. contract from the exported program", lambda: part1(e, dims)),
        ("2. plain package alone: contract unknown", lambda: part2(e)),
        ("3. fuzzing inside the contract", lambda: part3(e)),
        ("4a. aoti-run beyond the contract", lambda: part4a(e)),
    ]
    for title, fn in sections:
        section(title, fn)
    bins = section("4b. aoti-fuzz --beyond-contract", lambda: part4b(e))
    section("4c. aoti-minimize of the out-of-contract crashes", lambda: part4c(e, bins))
    section("4d. torch's exception text through fuzz, minimize and repro", lambda: part4d(e))
    section("5. refused without --beyond-contract", lambda: part5(e))
    section("6. --exported mismatches", lambda: (part6(e, dims), part6_minimize(e, bins)))
    print(f"total {time.time() - t_start:.1f} s")
    finish(f"all contract end-to-end checks passed ({len(warnings)} warning(s))", e.tmp)


if __name__ == "__main__":
    main()
