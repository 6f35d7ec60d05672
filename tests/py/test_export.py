"""Tests of harness/python/aotif_export.py: the spec it derives from torch.export programs, and
the files it writes.

Export only (seconds); no AOTI compile unless AOTIF_TEST_COMPILE=1, which also compiles a small
model to the unified archive (exported program + AOTI model), a plain package, the exported
program alone and the older embedded format, and checks what each file holds. Run:
    .venv/bin/python -m unittest tests/py/test_export.py -v
"""
import json
import os
import sys
import tempfile
import unittest
import zipfile

import torch
from torch.export import Dim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "harness", "python"))
import aotif_export as ax  # noqa: E402


def spec_of(module, args, dynamic_shapes, int_ranges=None, with_module=True):
    ep = torch.export.export(module, args, dynamic_shapes=dynamic_shapes)
    if with_module:
        return ax.spec_from_exported(ep, dynamic_shapes, int_ranges, module=module, args=args)
    return ax.spec_from_exported(ep, dynamic_shapes, int_ranges)


class Derived(torch.nn.Module):
    def forward(self, x, y, z):
        return (torch.cat([x, x]) + y).view(2, x.shape[0], 16).sum(0)[:, :4] * z


class Mixed(torch.nn.Module):
    def forward(self, a, idx, mask):
        return a[1:].sum() + idx.float().sum() + mask.float().sum()


class Embed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)

    def forward(self, ids):
        return self.emb(ids)


def entries(path):
    """A .pt2's entries without their top folder."""
    with zipfile.ZipFile(path) as zf:
        return [e.split("/", 1)[1] for e in zf.namelist()]


class SpecTest(unittest.TestCase):
    def test_derived_dim_shares_root_symbol(self):
        n = Dim("n", min=1, max=64)
        args = (torch.randn(8, 16), torch.randn(16, 16), torch.randn(8, 4))
        ds = {"x": {0: n}, "y": {0: 2 * n}, "z": {0: n}}
        for with_module in (True, False):
            spec = spec_of(Derived(), args, ds, with_module=with_module)
            self.assertEqual(spec["format"], "aoti-fuzz-spec")
            self.assertEqual(spec["version"], 1)
            self.assertEqual([i["name"] for i in spec["inputs"]], ["x", "y", "z"])
            self.assertEqual(len(spec["symbols"]), 1)
            s = spec["symbols"][0]
            self.assertEqual((s["dim"], s["min"], s["max"]), ("n", 1, 64))
            self.assertEqual(spec["inputs"][0]["shape"], [s["name"], 16])
            self.assertEqual(spec["inputs"][1]["shape"], ["2*" + s["name"], 16])
            self.assertEqual(spec["inputs"][2]["shape"], [s["name"], 4])
            self.assertNotIn("int_range", spec["inputs"][0])

    def test_tuple_form_offsets_unbounded_and_ints(self):
        n = Dim("n", min=1)           # unbounded upper: clamped, with a note
        k = Dim("k", max=10)
        args = (torch.randn(6, 3), torch.zeros(5, dtype=torch.int64), torch.ones(4, dtype=torch.bool))
        ds = ((n + 1, Dim.STATIC), (k,), None)
        spec = spec_of(Mixed(), args, ds, int_ranges={"idx": [0, 5]})
        a, idx, mask = spec["inputs"]
        root = a["shape"][0].split("+")[0]
        self.assertEqual(a["shape"], [root + "+1", 3])
        self.assertEqual(idx["dtype"], "int64")
        self.assertEqual(idx["int_range"], [0, 5])
        self.assertEqual(mask["dtype"], "bool")
        self.assertEqual(mask["shape"], [4])
        self.assertEqual(mask["int_range"], [0, 1])
        syms = {s["name"]: s for s in spec["symbols"]}
        self.assertEqual(syms[root]["dim"], "n")
        self.assertEqual(syms[root]["max"], ax.UNBOUNDED_MAX)
        self.assertIn("clamped", syms[root]["note"])
        self.assertEqual((syms[idx["shape"][0]]["dim"], syms[idx["shape"][0]]["max"]), ("k", 10))

    def test_int_range_only_when_given(self):
        # An integer input whose range the caller did not give gets no "int_range" (the C side
        # derives one from the exported program); a given one is written; bool stays [0, 1].
        args = (torch.zeros(3, dtype=torch.int64),)
        ds = {"ids": {0: Dim("n", min=1, max=16)}}
        spec = spec_of(Embed(), args, ds)
        self.assertEqual(spec["inputs"][0]["dtype"], "int64")
        self.assertNotIn("int_range", spec["inputs"][0])
        spec = spec_of(Embed(), args, ds, int_ranges={"ids": [0, 9]})
        self.assertEqual(spec["inputs"][0]["int_range"], [0, 9])
        args = (torch.randn(6, 3), torch.zeros(5, dtype=torch.int64), torch.ones(4, dtype=torch.bool))
        spec = spec_of(Mixed(), args, None)
        a, idx, mask = spec["inputs"]
        self.assertNotIn("int_range", idx)
        self.assertEqual(mask["int_range"], [0, 1])

    def test_bad_format_refused_before_export(self):
        with self.assertRaises(ValueError):
            ax.export_package(Embed(), (torch.zeros(3, dtype=torch.int64),), None, "x.pt2",
                              package_format="zip")

    def test_bert_encoder_inputs_named_after_forward(self):
        try:
            import transformers  # noqa: F401
        except ImportError:
            self.skipTest("transformers not installed")
        m = ax.load_model_file(os.path.join(ROOT, "corpus", "models", "bert_encoder.py")).make()
        ep = ax.export_program(m["module"], m["args"], m["dynamic_shapes"])
        self.assertEqual(list(ep.graph_signature.user_inputs), ["input_ids", "token_type_ids", "attention_mask"])
        spec = ax.spec_from_exported(ep, m["dynamic_shapes"], module=m["module"], args=m["args"])
        self.assertEqual([i["name"] for i in spec["inputs"]], ["input_ids", "token_type_ids", "attention_mask"])
        for i in spec["inputs"]:
            self.assertEqual(i["dtype"], "int64")
            self.assertNotIn("int_range", i)
        self.assertEqual({(s["dim"], s["min"], s["max"]) for s in spec["symbols"]}, {("batch", 1, 8), ("seq", 1, 64)})

    def test_format_dim(self):
        import sympy
        s = sympy.Symbol("s77", integer=True, positive=True)
        cases = {s: "s77", 2 * s: "2*s77", 2 * s + 1: "2*s77+1", s - 1: "s77-1", sympy.Integer(16): 16}
        for expr, want in cases.items():
            self.assertEqual(ax._format_dim(*ax._affine(expr)), want)
        with self.assertRaises(ax.SpecError):
            ax._affine(s * sympy.Symbol("s17", integer=True))
        with self.assertRaises(ax.SpecError):
            ax._affine(s * s)

    def test_built_examples_if_present(self):
        d = os.path.join(ROOT, ".cache", "examples")
        if not os.path.isdir(d):
            self.skipTest("no .cache/examples (run corpus/build.py)")
        sys.path.insert(0, os.path.join(ROOT, "corpus"))
        import build  # noqa: E402

        for name in build.model_names():
            pkg = os.path.join(d, name + ".pt2")
            if not os.path.exists(pkg):
                continue
            with open(os.path.join(d, name + ".spec.json")) as f:
                self.assertEqual(ax.read_embedded_spec(pkg), json.load(f), name)
            with open(os.path.join(d, name + ".expected.json")) as f:
                exp = json.load(f)
            self.assertEqual(exp["model"], name)
            dims = {s["dim"] for s in ax.read_embedded_spec(pkg)["symbols"]}
            beyond = exp.get("beyond_contract", [])
            for shape in exp["healthy"] + [c["shape"] for c in exp["failing"] + beyond]:
                self.assertEqual(set(shape), dims, name)
            for c in beyond:
                self.assertIn(c["what"], ("size below declared min", "size above declared max",
                                          "index values out of range"), name)
                self.assertIn(c["class"], ("SIGNAL", "RUNTIME_ERROR", "OK"), name)
            if not build.is_cached(d, name, build.cache_key(torch.__version__, name)):
                continue  # an older or interrupted build: the rest may be missing or stale
            # the unified archive holds the exported program; .ep.pt2 holds it alone
            self.assertTrue(ax.has_exported_program(pkg), name)
            self.assertTrue(ax.has_aoti_model(pkg), name)
            ep_file = os.path.join(d, name + ".ep.pt2")
            self.assertTrue(ax.has_exported_program(ep_file), name)
            self.assertFalse(ax.has_aoti_model(ep_file), name)
            plain = os.path.join(d, name + ".plain.pt2")
            self.assertEqual(os.path.exists(plain), build.wants_plain(name), name)
            if os.path.exists(plain):
                self.assertIsNone(ax.read_embedded_spec(plain), name)
                self.assertFalse(ax.has_exported_program(plain), name)
                self.assertTrue(ax.has_aoti_model(plain), name)


@unittest.skipUnless(os.environ.get("AOTIF_TEST_COMPILE") == "1", "set AOTIF_TEST_COMPILE=1 (AOTI compile)")
class PackageTest(unittest.TestCase):
    def test_unified_archive_plain_and_exported(self):
        class Lin(torch.nn.Module):
            def forward(self, x):
                return x * 2 + 1

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "u.pt2")
            plain = os.path.join(tmp, "u.plain.pt2")
            ep_path = os.path.join(tmp, "u.ep.pt2")
            out = ax.export_package(Lin(), (torch.randn(4, 3),), {"x": {0: Dim("b", min=1, max=32)}}, path,
                                    plain_path=plain, exported_path=ep_path)
            self.assertEqual(out, path)
            names = entries(path)
            self.assertIn("models/model.json", names)
            self.assertTrue([e for e in names if e.startswith("data/aotinductor/model/")
                             and e.endswith(".wrapper.so")], names)
            self.assertTrue(ax.has_exported_program(path))
            self.assertTrue(ax.has_aoti_model(path))
            spec = ax.read_embedded_spec(path)
            self.assertEqual((spec["symbols"][0]["dim"], spec["symbols"][0]["min"], spec["symbols"][0]["max"]),
                             ("b", 1, 32))
            # torch.export.load reads the exported program back, with the declared range
            ep = torch.export.load(path)
            self.assertEqual(list(ep.graph_signature.user_inputs), ["x"])
            (vr,) = ep.range_constraints.values()
            self.assertEqual((int(vr.lower), int(vr.upper)), (1, 32))
            with open(os.path.join(tmp, "model.json"), "wb") as f, zipfile.ZipFile(path) as zf:
                f.write(zf.read([e for e in zf.namelist() if e.endswith("/models/model.json")][0]))
            with open(os.path.join(tmp, "model.json")) as f:
                model_json = json.load(f)
            self.assertEqual(list(model_json["range_constraints"].values()), [{"min_val": 1, "max_val": 32}])
            # the AOTI model in the same file runs
            x = torch.randn(5, 3)
            self.assertTrue(torch.allclose(torch._inductor.aoti_load_package(path)(x), x * 2 + 1))
            # the plain package: an AOTI model only, no aoti-fuzz key
            self.assertIsNone(ax.read_embedded_spec(plain))
            self.assertFalse(ax.has_exported_program(plain))
            self.assertTrue(ax.has_aoti_model(plain))
            self.assertTrue(torch.allclose(torch._inductor.aoti_load_package(plain)(x), x * 2 + 1))
            # the exported program alone
            self.assertTrue(ax.has_exported_program(ep_path))
            self.assertFalse(ax.has_aoti_model(ep_path))
            self.assertEqual(list(torch.export.load(ep_path).graph_signature.user_inputs), ["x"])

    def test_embedded_format_has_no_exported_program(self):
        class Lin(torch.nn.Module):
            def forward(self, x):
                return x - 3

        with tempfile.TemporaryDirectory() as tmp:
            path = ax.export_package(Lin(), (torch.randn(4, 3),), {"x": {0: Dim("b", max=32)}},
                                     os.path.join(tmp, "e.pt2"), package_format="embedded")
            self.assertFalse(ax.has_exported_program(path))
            self.assertTrue(ax.has_aoti_model(path))
            self.assertEqual(ax.read_embedded_spec(path)["symbols"][0]["dim"], "b")

    def test_spec_lands_in_metadata(self):
        class Lin(torch.nn.Module):
            def forward(self, x):
                return x * 2

        with tempfile.TemporaryDirectory() as tmp:
            path = ax.export_package(Lin(), (torch.randn(4, 3),), {"x": {0: Dim("b", max=32)}},
                                     os.path.join(tmp, "m.pt2"))
            with zipfile.ZipFile(path) as zf:
                metas = [e for e in zf.namelist() if e.endswith(".wrapper_metadata.json")]
                self.assertTrue(metas)
                meta = json.loads(zf.read(metas[0]))
            spec = json.loads(meta[ax.SPEC_KEY])
            self.assertEqual(spec["symbols"][0]["dim"], "b")
            self.assertEqual(spec["symbols"][0]["max"], 32)


if __name__ == "__main__":
    unittest.main()
