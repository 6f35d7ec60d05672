"""End-to-end: the "Where" triage (kernel -> source nodes -> input, dim, symbol) on real crashes.

Crash files come from the fuzzer (aoti-fuzz PKG --artifacts DIR -- -runs=2000 -seed=1), then
aoti-minimize --json runs on each in real workers, and the minimal case once more through
aoti-run --json:

- crossidx (x[y.argmax().unsqueeze(0)] * 2, n = 0): RUNTIME_ERROR `index out of bounds: 0 <=
  tmp7 < ks1` from kernel cpp_fused_argmax_index_mul_unsqueeze_0. The Where must find that
  kernel in the package's kernel .cpp, map ks1 -> s77 -> x.size(0) (input x, dim 0, Dim n),
  write the assert as `0 <= tmp7 < x.size(0)`, name the source nodes argmax, unsqueeze, index,
  mul with the model line crossidx.py:15, and list the wrapper's checks of x.size(0) (>= 2,
  <= 64, run only with AOTI_RUNTIME_CHECK_INPUTS).
- lasttok (x[x.shape[0] - 1] * 2 + x.mean(0), n = 0): SIGSEGV inside cpp_fused_add_mean_mul_
  select_0. The Where must name that kernel, its nodes select, mul, mean, add (lasttok.py:13),
  ks0 -> s77 -> x.size(0), and the load at (-16L) + x0 + 16L*x.size(0) of x.

report.md must hold the section between "## Error" and "## Reproduce with Python", its
generated source fenced. Exit 77 when no Python with torch is found or the packages are not built.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from aotif_test import Env, arg_parser, check, finish, need_examples, need_python, read_crash, result  # noqa: E402


def where_section(report):
    """The text of report.md's "## Where" section, or None."""
    i = report.find("\n## Where\n")
    if i < 0:
        return None
    j = report.find("\n## ", i + 1)
    return report[i + 1: j if j >= 0 else len(report)]


def arg(w, param):
    return next((x for x in w.get("args", []) if x["param"] == param), None)


def common(e, name, s, out, kernel, crash=None):
    w = s.get("where")
    if not check(isinstance(w, dict) and w.get("status") == "found",
                 f"{name}: aoti-minimize --json has a found 'where' ({w!r:.300})"):
        return None, None
    check(w["kernel"] == kernel, f"{name}: where.kernel {w['kernel']!r} == {kernel!r}")
    check(w["kind"] == "cpp" and w["source"].endswith(".kernel.cpp"),
          f"{name}: the kernel's C++ source is the package's .kernel.cpp ({w['source']!r})")
    check(w["launch_source"].endswith(".wrapper.cpp") and w["launch_line"] > 0,
          f"{name}: the launch found in the wrapper (line {w['launch_line']})")
    report = open(os.path.join(out, "report.md")).read()
    sec = where_section(report)
    if not check(sec is not None, f"{name}: report.md has a '## Where' section"):
        return w, None
    err_at, repro_at = report.find("\n## Error\n"), report.find("\n## Reproduce with Python\n")
    check(0 <= err_at < report.find("\n## Where\n") < repro_at, f"{name}: Where sits after Error, before the repros")
    check(f"C++ kernel `{kernel}`" in sec, f"{name}: the section names the kernel")
    check("```cpp\n" in sec and sec.count("```") % 2 == 0, f"{name}: generated source fenced")
    check("only when `AOTI_RUNTIME_CHECK_INPUTS` is set" in sec,
          f"{name}: the section says the wrapper's checks are off by default")
    # the Re-runs section: what running again changed, from runs (here: the repeat)
    rr = report.split("\n## Re-runs\n", 1)[1].split("\n## ", 1)[0] if "\n## Re-runs\n" in report else ""
    check(re.search(r"The crash file's case as is, (\d+) times before the search: \1 gave this signature: deterministic", rr),
          f"{name}: report's Re-runs section says the case is deterministic ({rr.strip()[:200]!r})")
    # aoti-run --json on the minimal case gives the same triage
    r = result(e.aoti_run("--case", os.path.join(out, "minimal.bin"), "--json"))
    rw = r.get("where") or {}
    check(rw.get("kernel") == kernel and rw.get("args") == w["args"],
          f"{name}: aoti-run --json --case minimal.bin has the same where")
    # the crash files carry the structured form too: the fuzzer's, and minimal.bin
    for f in (crash or "", os.path.join(out, "minimal.bin")):
        if not f or not os.path.exists(f):
            continue
        body = read_crash(f)[1]
        cw = body.get("where") or {}
        check(cw.get("status") == "found" and cw.get("kernel") == kernel and cw.get("args") == w["args"],
              f"{name}: {os.path.basename(f)} carries the same where (kernel {cw.get('kernel')!r})")
    return w, sec


def test_crossidx(e):
    crash, out, s = e.fuzz_and_minimize("crossidx", "--no-crash-map")
    if not s:
        return
    check(s["class"] == "RUNTIME_ERROR" and "index out of bounds: 0 <= tmp7 < ks1" in s["message"],
          f"crossidx: the minimal case raises the index assert ({s['message'][:80]!r})")
    w, sec = common(e, "crossidx", s, out, "cpp_fused_argmax_index_mul_unsqueeze_0", crash)
    if not w:
        return
    ks1 = arg(w, "ks1")
    check(ks1 and ks1["value"] == "s77" and ks1.get("input") == "x" and ks1.get("dim") == 0
          and ks1.get("dim_name") == "n" and ks1["in_terms"] == "x.size(0)",
          f"crossidx: ks1 -> s77 -> x.size(0), Dim n ({ks1})")
    ks0 = arg(w, "ks0")
    check(ks0 and ks0["value"] == "s17" and ks0.get("input") == "y",
          f"crossidx: ks0 -> s17 -> y.size(0) ({ks0})")
    asrt = w.get("assert") or {}
    check(asrt.get("text") == "index out of bounds: 0 <= tmp7 < ks1" and
          asrt.get("in_terms") == "0 <= tmp7 < x.size(0)",
          f"crossidx: the assert in input terms ({asrt})")
    check(w["source_nodes"] == ["argmax", "unsqueeze", "index", "mul"] and "aten.index" in w["aten"],
          f"crossidx: source nodes from the exported program ({w['source_nodes']}, {w['aten']})")
    check(any("crossidx.py:15 in forward" in c and "y.argmax()" in c for c in w["model_code"]),
          f"crossidx: the model line ({w['model_code']})")
    cx = next((c for c in w["checks"] if c["input"] == "x" and c["dim"] == 0), None)
    check(cx and cx["lower"] == 2 and cx["upper"] == 64 and w["checks_gated"],
          f"crossidx: the wrapper checks x.size(0) in [2, 64], gated ({cx})")
    if sec:
        check("in input terms `0 <= tmp7 < x.size(0)`" in sec, "crossidx: report shows the assert in input terms")
        check("| `ks1` | `s77` | `s77 (n)` | `x.size(0)` |" in sec, "crossidx: report maps ks1 to x.size(0)")
        check("AOTI_TORCH_CHECK((0 <= tmp7) & (tmp7 < ks1)" in sec, "crossidx: report quotes the assert's source")
        check("declared from 0, so the sizes 0..1 are legal but assumed away" in sec,
              "crossidx: report says x.size(0) = 0 is declared legal but below the check")
        print(sec)


def test_lasttok(e):
    crash, out, s = e.fuzz_and_minimize("lasttok", "--no-crash-map")
    if not s:
        return
    check(s["class"] == "SIGNAL" and s["minimal"]["symbols"] == {"n": 0},
          f"lasttok: minimal n=0 dies of a signal ({s['class']}, {s['minimal']['symbols']})")
    w, sec = common(e, "lasttok", s, out, "cpp_fused_add_mean_mul_select_0", crash)
    if not w:
        return
    check(w["source_nodes"] == ["select", "mul", "mean", "add"],
          f"lasttok: source nodes select, mul, mean, add ({w['source_nodes']})")
    check(any("lasttok.py:13 in forward" in c for c in w["model_code"]), f"lasttok: model line ({w['model_code']})")
    ks0 = arg(w, "ks0")
    check(ks0 and ks0["value"] == "s77" and ks0.get("input") == "x" and ks0.get("dim") == 0,
          f"lasttok: ks0 -> s77 -> x.size(0) ({ks0})")
    ix = w["index"][0] if w["index"] else {}
    check(ix.get("ptr_terms") == "x" and ix.get("in_terms") == "(-16L) + x0 + 16L*x.size(0)",
          f"lasttok: x read at (-16L) + x0 + 16L*x.size(0) ({ix})")
    check(w.get("assert") is None, "lasttok: no assert in this kernel")
    if sec:
        check("`in_ptr0` (`x`) + `(-16L) + x0 + 16L*x.size(0)`" in sec, "lasttok: report shows the load in input terms")
        print(sec)


def main():
    a = arg_parser(python="env").parse_args()
    need_python(a.python, "torch")
    need_examples(a.examples, ["crossidx.pt2", "lasttok.pt2"])
    e = Env(a, "aotif-where-e2e-", timeout=900)
    test_crossidx(e)
    test_lasttok(e)
    finish("all where end-to-end checks passed", e.tmp)


if __name__ == "__main__":
    main()
