"""Tests of harness/python/aotif_export.py: the spec it derives from torch.export programs.

Export only (seconds); no AOTI compile unless AOTIF_TEST_COMPILE=1, which also exports one small
package and checks that the spec landed in its wrapper metadata. Run:
    /work/venv/bin/python -m unittest tests/py/test_export.py -v
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
        for name in ("lasttok", "twosym", "runtime_check", "derived", "healthy"):
            pkg = os.path.join(d, name + ".pt2")
            if not os.path.exists(pkg):
                continue
            with open(os.path.join(d, name + ".spec.json")) as f:
                self.assertEqual(ax.read_embedded_spec(pkg), json.load(f), name)
            with open(os.path.join(d, name + ".expected.json")) as f:
                exp = json.load(f)
            self.assertEqual(exp["model"], name)
            dims = {s["dim"] for s in ax.read_embedded_spec(pkg)["symbols"]}
            for shape in exp["healthy"] + [c["shape"] for c in exp["failing"]]:
                self.assertEqual(set(shape), dims, name)


@unittest.skipUnless(os.environ.get("AOTIF_TEST_COMPILE") == "1", "set AOTIF_TEST_COMPILE=1 (AOTI compile)")
class PackageTest(unittest.TestCase):
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
