"""CLI regression cases for aoti-minimize: flags, exit codes, stderr, files.

Every case here is refused before a worker starts, so no torch is needed: bad flags,
a missing, empty, truncated, foreign or wrong-version crash file, a crash file naming a
package that is gone or a symbol the package's spec lacks. Each must exit 2 with exactly one
line on stderr, starting "aoti-minimize: ", and must leave no output dir behind.
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from aotif_test import arg_parser, check, crash_doc, finish, run_capture, tool_path  # noqa: E402


def main():
    a = arg_parser(examples=False).parse_args()
    exe = tool_path(a.bin, "aoti-minimize")
    tmp = tempfile.mkdtemp(prefix="aotif-min-cli-")

    def run(*args):
        return run_capture([exe, *args], timeout=120, cwd=tmp)

    def write(name, text, mode="w"):
        path = os.path.join(tmp, name)
        with open(path, mode) as f:
            f.write(text)
        return path

    good_pkg = os.path.abspath(os.path.join(a.examples, "lasttok.pt2")) if a.examples else ""
    have_pkg = bool(good_pkg) and os.path.exists(good_pkg)
    full = crash_doc(good_pkg or "/nonexistent.pt2", [{"name": "s77", "dim": "n", "value": 0}])

    cases = [
        ("no arguments", [], None),
        ("unknown flag", ["--bogus", "x.bin"], None),
        ("flag missing its value", ["x.bin", "--out"], None),
        ("--budget not a number", ["--budget", "soon", "x.bin"], None),
        ("--budget zero", ["--budget", "0", "x.bin"], None),
        ("--runs zero", ["--runs", "0", "x.bin"], None),
        ("--runs too many", ["--runs", "1000", "x.bin"], None),
        ("--timeout negative", ["--timeout", "-3", "x.bin"], None),
        ("two crash files", ["a.bin", "b.bin"], None),
        ("missing crash file", ["missing.bin"], "missing.bin"),
        ("empty crash file", [write("empty.bin", "")], "empty"),
        ("truncated header", [write("cut-header.bin", "AOTIF-CR")], "truncated header"),
        ("truncated JSON", [write("cut.bin", full[: len(full) // 2])], "truncated JSON"),
        ("foreign file (zip)", [write("zip.bin", b"PK\x03\x04" + bytes(200), "wb")], "bad magic"),
        ("foreign file (sidecar)", [write("side.json", full.split("\n", 1)[1])], "bad magic"),
        ("other version", [write("v7.bin", full.replace("AOTIF-CRASH 1", "AOTIF-CRASH 7", 1))],
         "unsupported version"),
        ("malformed JSON", [write("bad.bin", "AOTIF-CRASH 1\n{\"format\": ]")], "malformed"),
        ("missing field", [write("nofield.bin", full.replace('"signature"', '"sig"'))], "signature"),
        ("package gone", [write("gone.bin", crash_doc("/nonexistent/dir/x.pt2",
                                                      [{"name": "s77", "dim": "n", "value": 0}]))],
         "/nonexistent/dir/x.pt2"),
    ]
    if have_pkg:
        cases += [
            ("symbol not in the spec",
             [write("sym.bin", crash_doc(good_pkg, [{"name": "s99", "dim": "q", "value": 0}]))], "s77"),
            ("value outside the declared range",
             [write("range.bin", crash_doc(good_pkg, [{"name": "s77", "dim": "n", "value": 100000}]))],
             "range"),
        ]
    else:
        print("note: no example packages given; spec-mapping cases skipped", flush=True)

    for what, args, needle in cases:
        before = set(os.listdir(tmp))
        p = run(*args)
        lines = p.stderr.splitlines()
        print(f"{what}: exit {p.returncode}: {p.stderr.strip()}", flush=True)
        check(p.returncode == 2, f"{what}: exit 2 (got {p.returncode})")
        check(len(lines) == 1, f"{what}: one line on stderr (got {len(lines)}: {p.stderr!r})")
        check(bool(lines) and lines[0].startswith("aoti-minimize: "), f"{what}: message names the tool")
        if needle:
            check(needle in p.stderr, f"{what}: message mentions {needle!r}")
        check(p.stdout == "", f"{what}: nothing on stdout (got {p.stdout!r})")
        made = [f for f in set(os.listdir(tmp)) - before if f.endswith(".min")]
        check(not made, f"{what}: no output dir left behind ({made})")

    p = run("--help")
    check(p.returncode == 0 and "usage: aoti-minimize" in p.stdout and "--budget" in p.stdout,
          "--help: usage on stdout, exit 0")
    check(p.stderr == "", "--help: nothing on stderr")

    shutil.rmtree(tmp, ignore_errors=True)
    finish("all aoti-minimize CLI checks passed")


if __name__ == "__main__":
    main()
