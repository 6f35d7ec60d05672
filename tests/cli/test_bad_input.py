"""Bad input to the three tools, in bulk: damaged packages, spec files, crash files, flags and
environments, each made here from the real example packages (nothing damaged is committed).

Every case asserts three things:
  1. the exit status (2 for bad input, unless the case says otherwise);
  2. a message naming the problem: a regex of the case's own on stderr (and, by default,
     stderr is that one line: the standard for bad input);
  3. nothing written outside the case: the tool runs with its cwd a fresh empty dir and TMPDIR
     another; afterwards both must be as they were (no aotif temp dir, no crashes/ dir, no
     libFuzzer crash-*/oom-*/fuzz-N.log), and the inputs the test made are unchanged (no
     <crash>.min next to a crash file, no seed files in a corpus dir).
A few cases are inputs that look hostile but are valid (shell metacharacters, quotes and a
newline in a package path): they must work, and the same checks on files apply.

Exit status: 0 all cases passed, 1 some failed (a table per category says which), 77 when the
example packages or the tools are missing.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from aotif_test import (CRASH_MAGIC as MAGIC, arg_parser, crash_fields, crash_text,  # noqa: E402
                        run_capture, skip, tool_path)


class Suite:
    def __init__(self, root):
        self.root = root
        self.inputs = os.path.join(root, "inputs")
        os.makedirs(self.inputs)
        self.n = 0
        self.results = []  # (category, name, ok, why)

    # ---- inputs -----------------------------------------------------------------------
    def path(self, *parts):
        return os.path.join(self.inputs, *parts)

    def write(self, name, data):
        p = self.path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return p

    def snapshot(self):
        """Every path under the inputs dir with its size and mtime."""
        out = {}
        for d, dirs, files in os.walk(self.inputs):
            for n in dirs + files:
                p = os.path.join(d, n)
                st = os.lstat(p)
                out[p] = (st.st_size if not os.path.isdir(p) else 0, st.st_mtime_ns, st.st_mode)
        return out

    # ---- one case -----------------------------------------------------------------------
    def case(self, category, name, argv, pattern, rc=2, stream="stderr", one_line=True,
             tmpdir="dir", allowed=(), env_extra=None, check=None, timeout=300):
        """Run argv in a fresh empty cwd with a fresh TMPDIR and judge it.

        pattern: a regex that must match `stream`; one_line: stderr is exactly one line;
        tmpdir: "dir" (fresh, empty), "missing" (a path that does not exist) or "file" (a
        regular file); allowed: names the case may leave in its cwd (a case that works);
        check: an extra callable(proc, cwd) -> str|None (None: fine)."""
        self.n += 1
        base = os.path.join(self.root, "cases", f"{self.n:03d}")
        cwd, tmp = os.path.join(base, "cwd"), os.path.join(base, "tmp")
        os.makedirs(cwd)
        os.makedirs(tmp)
        tmp_marker = None
        if tmpdir == "dir":
            tmp_env = tmp
        elif tmpdir == "missing":
            tmp_env = os.path.join(tmp, "no-such-dir")
        else:
            tmp_env = os.path.join(tmp, "a-file")
            with open(tmp_env, "w") as f:
                f.write("not a dir\n")
            tmp_marker = os.stat(tmp_env)
        env = dict(os.environ, TMPDIR=tmp_env)
        env.update(env_extra or {})
        argv = [str(a) for a in argv]
        before = self.snapshot()
        why = []
        t0 = time.time()
        try:
            p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=timeout)
            out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
            code = p.returncode
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode(errors="replace")
            err = (e.stderr or b"").decode(errors="replace")
            code = "timeout"
            p = None
        dt = time.time() - t0
        time.sleep(0.05)  # a worker the tool left behind would still be writing
        # 1. exit status
        if code != rc:
            why.append(f"exit {code}, want {rc}")
        # 2. the message
        text = err if stream == "stderr" else out
        if not re.search(pattern, text, re.M):
            why.append(f"{stream} does not match /{pattern}/")
        if one_line and err.count("\n") != 1:
            why.append(f"stderr is {err.count(chr(10))} lines, want 1")
        # 3. files
        left = sorted(set(os.listdir(cwd)) - set(allowed))
        if left:
            why.append(f"left in cwd: {left}")
        tleft = sorted(set(os.listdir(tmp)) - ({"a-file"} if tmpdir == "file" else set()))
        if tleft:
            why.append(f"left in TMPDIR: {tleft}")
        if tmp_marker is not None:
            st = os.stat(tmp_env)
            if (st.st_size, st.st_mtime_ns) != (tmp_marker.st_size, tmp_marker.st_mtime_ns):
                why.append("the TMPDIR file was changed")
        after = self.snapshot()
        if after != before:
            new = sorted(set(after) - set(before))
            gone = sorted(set(before) - set(after))
            changed = sorted(k for k in set(after) & set(before) if after[k] != before[k])
            why.append(f"inputs changed: new {new[:4]} gone {gone[:4]} changed {changed[:4]}")
        if check and p is not None:
            extra = check(p, cwd)
            if extra:
                why.append(extra)
        ok = not why
        self.results.append((category, name, ok, "; ".join(why)))
        print(f"{'ok  ' if ok else 'FAIL'} [{category}] {name} ({dt:.1f} s)", flush=True)
        if not ok:
            print(f"    argv:   {' '.join(map(repr, argv))[:600]}")
            print(f"    why:    {'; '.join(why)}")
            print(f"    stderr: {err[-1500:]!r}")
            if out:
                print(f"    stdout: {out[-600:]!r}")
        shutil.rmtree(base, ignore_errors=True)
        return ok

    def table(self):
        cats = []
        for c, *_ in self.results:
            if c not in cats:
                cats.append(c)
        print()
        print(f"{'category':<16} {'cases':>6} {'passed':>7} {'failed':>7}")
        tot = [0, 0, 0]
        for c in cats:
            rs = [r for r in self.results if r[0] == c]
            n, good = len(rs), sum(r[2] for r in rs)
            tot = [tot[0] + n, tot[1] + good, tot[2] + n - good]
            print(f"{c:<16} {n:>6} {good:>7} {n - good:>7}")
        print(f"{'total':<16} {tot[0]:>6} {tot[1]:>7} {tot[2]:>7}")
        failed = [r for r in self.results if not r[2]]
        if failed:
            print("\nfailed cases:")
            for c, n, _, why in failed:
                print(f"  [{c}] {n}: {why}")
        return tot[2]


# ---- making damaged packages ---------------------------------------------------------------

def entries(pkg):
    """[(ZipInfo, bytes)] of a package, in order."""
    with zipfile.ZipFile(pkg) as z:
        return [(i, z.read(i)) for i in z.infolist()]


def write_zip(dst, items):
    """items: [(name or ZipInfo, bytes)]; stored, so nothing is slow."""
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as z:
        for name, data in items:
            if isinstance(name, zipfile.ZipInfo):
                zi = zipfile.ZipInfo(name.filename, date_time=name.date_time)
                zi.external_attr = name.external_attr
                zi.create_system = name.create_system
                name = zi
            z.writestr(name, data)
    return dst


def rezip(src, dst, edit=lambda name, data: data, extra=()):
    """Copy src to dst; edit(name, data) returns the new bytes, or None to drop the entry."""
    items = []
    for zi, data in entries(src):
        new = edit(zi.filename, data)
        if new is not None:
            items.append((zi, new))
    items.extend(extra)
    return write_zip(dst, items)


def member(pkg, suffix):
    for zi, _ in entries(pkg):
        if zi.filename.endswith(suffix):
            return zi.filename
    raise SystemExit(f"{pkg}: no entry ending in {suffix}")


def zeros_deflate(n_mib):
    """A raw deflate stream of n_mib MiB of zeros, made without compressing them: after a
    full flush the compressor is back in its start state, so each MiB compresses the same."""
    mib = bytes(1 << 20)
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = co.compress(mib) + co.flush(zlib.Z_FULL_FLUSH)
    again = co.compress(mib) + co.flush(zlib.Z_FULL_FLUSH)
    tail = co.flush()
    crc = 0
    for _ in range(n_mib):
        crc = zlib.crc32(mib, crc)
    return first + again * (n_mib - 1) + tail, crc, n_mib << 20


def write_zip_raw(dst, items):
    """A zip64-capable writer for entries given as (name, method, payload, crc, size):
    method 0 (stored) or 8 (deflate, payload already compressed). For the zip bombs, whose
    sizes Python's zipfile would have to compress to learn."""
    out = bytearray()
    central = bytearray()
    for name, method, payload, crc, size in items:
        nb = name.encode()
        off = len(out)
        big = size >= 0xFFFFFFFF or len(payload) >= 0xFFFFFFFF or off >= 0xFFFFFFFF
        ex_local = struct.pack("<HHQQ", 1, 16, size, len(payload)) if big else b""
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if big else 20, 0, method, 0, 0x21,
                           crc, 0xFFFFFFFF if big else len(payload),
                           0xFFFFFFFF if big else size, len(nb), len(ex_local))
        out += nb + ex_local + payload
        ex_c = struct.pack("<HHQQQ", 1, 24, size, len(payload), off) if big else b""
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, 45 if big else 20, 0,
                               method, 0, 0x21, crc, 0xFFFFFFFF if big else len(payload),
                               0xFFFFFFFF if big else size, len(nb), len(ex_c), 0, 0, 0,
                               0o100644 << 16, 0xFFFFFFFF if big else off)
        central += nb + ex_c
    cd_off, n = len(out), len(items)
    out += central
    z64 = len(out)
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, len(central), cd_off)
    out += struct.pack("<IIQI", 0x07064B50, 0, z64, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    with open(dst, "wb") as f:
        f.write(out)
    return dst


def bomb_pkg(src, dst, target_suffix, n_mib, extra_name=None):
    """src with one entry replaced (target_suffix) or added (extra_name) by n_mib MiB of
    zeros, deflated."""
    payload, crc, size = zeros_deflate(n_mib)
    items = []
    for zi, data in entries(src):
        if target_suffix and zi.filename.endswith(target_suffix):
            items.append((zi.filename, 8, payload, crc, size))
        else:
            items.append((zi.filename, 0, data, zlib.crc32(data), len(data)))
    if extra_name:
        items.append((extra_name, 8, payload, crc, size))
    return write_zip_raw(dst, items)


def patch_declared_size(src, dst, suffix, new_size):
    """src with the uncompressed size of one (stored) entry understated in both headers."""
    data = bytearray(open(src, "rb").read())
    with zipfile.ZipFile(src) as z:
        zi = next(i for i in z.infolist() if i.filename.endswith(suffix))
    lh = zi.header_offset
    assert data[lh:lh + 4] == b"PK\x03\x04"
    struct.pack_into("<I", data, lh + 22, new_size)
    cd = data.find(b"PK\x01\x02" + data[lh + 4:lh + 6], 0)
    while cd >= 0:
        nlen = struct.unpack_from("<H", data, cd + 28)[0]
        if data[cd + 46:cd + 46 + nlen].decode(errors="replace") == zi.filename:
            struct.pack_into("<I", data, cd + 24, new_size)
            break
        cd = data.find(b"PK\x01\x02", cd + 4)
    open(dst, "wb").write(bytes(data))
    return dst


def system_library():
    """A shared library of this system that is not a model: libz, else libc."""
    for cand in ("/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1",
                 "/lib64/libz.so.1", "/usr/lib64/libz.so.1"):
        if os.path.exists(cand):
            return cand
    for line in open("/proc/self/maps"):
        f = line.split()[-1]
        if re.search(r"/libc\.so\.6$", f):
            return f
    return None


# ---- crash files -----------------------------------------------------------------------------

def real_crash(bin_dir, pkg, work):
    """A crash file of pkg found by aoti-fuzz itself; None when it found none."""
    art, corpus = os.path.join(work, "art"), os.path.join(work, "corpus")
    os.makedirs(corpus)
    cmd = [tool_path(bin_dir, "aoti-fuzz"), pkg, "--artifacts", art, "--no-eager",
           "--", "-runs=400", "-seed=1", corpus]
    p = run_capture(cmd, cwd=work)
    bins = sorted(f for f in os.listdir(art) if f.endswith(".bin")) if os.path.isdir(art) else []
    if not bins:
        print(f"note: aoti-fuzz found no crash in {pkg} (exit {p.returncode}): {p.stderr[-800:]}")
        return None
    return os.path.join(art, bins[0])


def main():
    ap = arg_parser()
    ap.add_argument("--fixtures", help="tests/fixtures (a CUDA package, for a wrong-device case)")
    ap.add_argument("-k", help="only cases whose category or name matches this regex")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    run, fuzz, mini = (tool_path(a.bin, t) for t in ("aoti-run", "aoti-fuzz", "aoti-minimize"))
    ex = os.path.abspath(a.examples)
    lasttok, crossidx = os.path.join(ex, "lasttok.pt2"), os.path.join(ex, "crossidx.pt2")
    missing = [p for p in (run, fuzz, mini, lasttok, crossidx) if not os.path.exists(p)]
    if missing:
        skip(f"missing {missing}")
    print("example packages:", " ".join(sorted(f for f in os.listdir(ex) if f.endswith(".pt2"))))
    plain = next((os.path.join(ex, f) for f in sorted(os.listdir(ex)) if f.endswith(".plain.pt2")),
                 None)

    root = tempfile.mkdtemp(prefix="aotif-bad-input-")
    try:
        failed = run_cases(a, root, run, fuzz, mini, ex, lasttok, crossidx, plain)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(1 if failed else 0)


def run_cases(a, root, run, fuzz, mini, ex, lasttok, crossidx, plain):
    """Make the inputs under root, run every case; the number of failed cases."""
    S = Suite(root)
    want = re.compile(a.k) if a.k else None
    real_case = S.case

    def case(category, name, *args, **kw):
        if want and not (want.search(category) or want.search(name)):
            return None
        return real_case(category, name, *args, **kw)

    S.case = case

    # ---- the inputs, all made here ----------------------------------------------------------
    pkg = S.path("pkgs", "lasttok.pt2")
    os.makedirs(os.path.dirname(pkg))
    shutil.copy(lasttok, pkg)
    raw = open(lasttok, "rb").read()
    so_name = member(lasttok, ".wrapper.so")
    cpp_name = member(lasttok, ".wrapper.cpp")
    meta_name = member(lasttok, ".wrapper_metadata.json")
    top = so_name.split("/")[0]
    model_dir = so_name.rsplit("/", 1)[0]
    so_bytes = dict((zi.filename, d) for zi, d in entries(lasttok))[so_name]
    meta = json.loads(dict((zi.filename, d) for zi, d in entries(lasttok))[meta_name])
    meta_nospec = json.dumps({k: v for k, v in meta.items() if k != "aoti_fuzz.spec"}).encode()

    def damaged(name, **kw):
        return rezip(lasttok, S.path("pkgs", name), **kw)

    def replace(suffix, new):
        return lambda n, d: (new(d) if callable(new) else new) if n.endswith(suffix) else d

    P = {}
    P["truncated"] = S.write("pkgs/truncated.pt2", raw[: len(raw) // 2])
    P["truncated_tail"] = S.write("pkgs/truncated_tail.pt2", raw[:-100])
    P["notzip"] = S.write("pkgs/notzip.pt2", b"this is not a zip archive\n" * 40)
    P["empty"] = S.write("pkgs/empty.pt2", b"")
    P["zipslip"] = damaged("zipslip.pt2", extra=[(f"{top}/../../x.txt", b"escaped\n")])
    P["abspath"] = damaged("abspath.pt2", extra=[("/tmp/aotif-abs-entry.txt", b"absolute\n")])
    link = zipfile.ZipInfo(f"{model_dir}/link.so")
    link.create_system = 3
    link.external_attr = (0o120777 << 16)
    P["symlink"] = damaged("symlink.pt2", extra=[(link, b"/etc/passwd")])
    P["two_so"] = damaged("two_so.pt2",
                          extra=[(f"{model_dir}/other.wrapper.so", so_bytes)])
    P["nonelf"] = damaged("nonelf.pt2", edit=replace(".wrapper.so", b"#!/bin/sh\necho not ELF\n" * 64))
    P["empty_so"] = damaged("empty_so.pt2", edit=replace(".wrapper.so", b""))
    other_arch = bytearray(so_bytes)
    struct.pack_into("<H", other_arch, 18, 183)  # e_machine: EM_AARCH64
    P["arch"] = damaged("arch.pt2", edit=replace(".wrapper.so", bytes(other_arch)))
    syslib = system_library()
    P["nosyms"] = damaged("nosyms.pt2", edit=replace(".wrapper.so", open(syslib, "rb").read()))
    # model .so's whose constructor segfaults or never returns (tests/fault/fake_ctor.c): the
    # tools must load models only in workers, and within a timeout
    for mode in ("segv", "hang"):
        ctor_so = os.path.join(a.bin, "tests", "fault", f"fake_ctor_{mode}.so")
        P[f"ctor_{mode}"] = damaged(f"ctor_{mode}.pt2",
                                    edit=replace(".wrapper.so", open(ctor_so, "rb").read()))
    P["bad_cpp"] = damaged("bad_cpp.pt2", edit=lambda n, d: (
        b"this is not C++ {{{ \n" if n.endswith(".wrapper.cpp")
        else meta_nospec if n.endswith(".wrapper_metadata.json") else d))
    cpp_bytes = dict((zi.filename, d) for zi, d in entries(lasttok))[cpp_name]
    P["half_cpp"] = damaged("half_cpp.pt2", edit=lambda n, d: (
        cpp_bytes[: len(cpp_bytes) // 3] if n.endswith(".wrapper.cpp")
        else meta_nospec if n.endswith(".wrapper_metadata.json") else d))
    bad_embedded = dict(meta, **{"aoti_fuzz.spec": "{\"format\": \"aoti-fuzz-spec\", \"inputs\": ["})
    P["bad_embedded"] = damaged("bad_embedded.pt2",
                                edit=replace(".wrapper_metadata.json", json.dumps(bad_embedded).encode()))
    P["tpu_meta"] = damaged("tpu_meta.pt2", edit=replace(
        ".wrapper_metadata.json", json.dumps(dict(meta, AOTI_DEVICE_KEY="tpu")).encode()))
    P["lying_size"] = patch_declared_size(lasttok, S.path("pkgs", "lying_size.pt2"), ".wrapper.so",
                                          len(so_bytes) // 2)
    P["bomb_entry"] = bomb_pkg(lasttok, S.path("pkgs", "bomb_entry.pt2"), None, 4096 + 64,
                               extra_name=f"{top}/data/bomb.bin")
    P["bomb_meta"] = bomb_pkg(lasttok, S.path("pkgs", "bomb_meta.pt2"), ".wrapper_metadata.json", 1024)
    P["bomb_cpp"] = bomb_pkg(lasttok, S.path("pkgs", "bomb_cpp.pt2"), ".wrapper.cpp", 1024)
    P["bomb_so"] = bomb_pkg(lasttok, S.path("pkgs", "bomb_so.pt2"), ".wrapper.so", 64)

    # spec files
    def spec(inputs, symbols):
        return json.dumps({"format": "aoti-fuzz-spec", "version": 1, "inputs": inputs,
                           "symbols": symbols})

    x = {"name": "x", "dtype": "float32", "shape": ["s77", 16]}
    n_sym = {"name": "s77", "dim": "n", "min": 0, "max": 128}
    SP = {
        "lo_gt_hi": S.write("spec/lo_gt_hi.json", spec([x], [dict(n_sym, min=10, max=5)])),
        "negative": S.write("spec/negative.json", spec([x], [dict(n_sym, min=-3)])),
        "huge": S.write("spec/huge.json", spec([x], [n_sym]).replace('"max": 128', '"max": 1e23')),
        "dtype": S.write("spec/dtype.json", spec([dict(x, dtype="float128")], [n_sym])),
        "zero_inputs": S.write("spec/zero_inputs.json", spec([], [n_sym])),
        "extra_input": S.write("spec/extra_input.json",
                               spec([x, {"name": "extra_y", "dtype": "float32", "shape": ["s77"]}],
                                    [n_sym])),
        "dtype_wrapper": S.write("spec/dtype_wrapper.json", spec([dict(x, dtype="int64")], [n_sym])),
        "rank_wrapper": S.write("spec/rank_wrapper.json", spec([dict(x, shape=["s77"])], [n_sym])),
        "static_wrapper": S.write("spec/static_wrapper.json", spec([dict(x, shape=["s77", 17])], [n_sym])),
        "notjson": S.write("spec/notjson.json", "{\"format\": \"aoti-fuzz-spec\", \"inputs\": [\n"),
        "format": S.write("spec/format.json", spec([x], [n_sym]).replace("aoti-fuzz-spec", "other-spec")),
        "unknown_sym": S.write("spec/unknown_sym.json", spec([dict(x, shape=["s9", 16])], [n_sym])),
        "nul": S.write("spec/nul.json", spec([x], [n_sym]).replace('"x"', '"x\x00y"').encode()),
    }
    os.makedirs(S.path("spec", "a_dir.json"))

    # crash files: a real one, found by aoti-fuzz in the test's own copy of lasttok
    work = os.path.join(root, "fuzz")
    os.makedirs(work)
    found = real_crash(a.bin, pkg, work)
    if found:
        text = open(found).read()
        assert text.startswith(MAGIC), text[:40]
        base_doc = json.loads(text[len(MAGIC):])
    else:  # no torch to run the model: the format by hand, as docs/crash-file.md gives it
        base_doc = crash_fields(pkg, [{"name": "s77", "dim": "n", "value": 0}], first_seen=1, last_seen=1)
    shutil.rmtree(work, ignore_errors=True)
    print(f"crash file: {'found by aoti-fuzz' if found else 'made by hand'}: "
          f"{base_doc['class']} {base_doc['case']['symbols']}")
    good_crash_text = crash_text(base_doc)

    def doc(**over):
        d = json.loads(json.dumps(base_doc))
        for k, v in over.items():
            cur = d
            keys = k.split("__")
            for kk in keys[:-1]:
                cur = cur[kk]
            cur[keys[-1]] = v
        return d

    def sym(**over):
        s = dict(base_doc["case"]["symbols"][0])
        s.update(over)
        return s

    changed_dir = S.path("changed")
    os.makedirs(changed_dir)
    shutil.copy(crossidx, os.path.join(changed_dir, "lasttok.pt2"))
    changed_pkg = os.path.join(changed_dir, "lasttok.pt2")
    CF = {
        "truncated": ("truncated.bin", good_crash_text[: len(good_crash_text) // 2], r"truncated JSON"),
        "truncated_header": ("cut_header.bin", "AOTIF-CR", r"truncated header"),
        "empty": ("empty.bin", "", r"empty file"),
        "magic": ("magic.bin", good_crash_text.replace("AOTIF-CRASH", "AOTIF-CRASX", 1), r"bad magic"),
        "future_header": ("future.bin", good_crash_text.replace("AOTIF-CRASH 1", "AOTIF-CRASH 2", 1),
                          r"unsupported version 2"),
        "future_json": ("future_json.bin", crash_text(doc(version=2)), r"unsupported version 2"),
        "unknown_symbol": ("unknown_sym.bin", crash_text(doc(case__symbols=[sym(name="s99", dim="q")])),
                           r"s77 \(n\)|s99"),
        "extra_symbol": ("extra_sym.bin", crash_text(doc(case__symbols=[sym(), {"name": "s99", "dim": "q", "value": 1}])),
                         r"s99 .*not in the spec"),
        "twice": ("twice.bin", crash_text(doc(case__symbols=[sym(), sym()])), r"given twice"),
        "out_of_range": ("range.bin", crash_text(doc(case__symbols=[sym(value=100000)])),
                         r"=100000 is outside the spec's range"),
        "negative_value": ("negative.bin", crash_text(doc(case__symbols=[sym(value=-1)])),
                           r"=-1 is outside the spec's range"),
        "fraction": ("fraction.bin", crash_text(doc(case__symbols=[sym(value=2.5)])),
                     r"bad entry 0 of case\.symbols"),
        "huge_value": ("huge.bin", crash_text(doc(case__symbols=[sym(value=1e300)])),
                       r"bad entry 0 of case\.symbols"),
        "class": ("class.bin", crash_text(doc(**{"class": "NOPE"})), r'field "class"'),
        "fill": ("fill.bin", crash_text(doc(case__fill="purple")), r'field "case\.fill"'),
        "seed": ("seed.bin", crash_text(doc(case__seed=-5)), r'field "case\.seed"'),
        "count": ("count.bin", crash_text(doc(count=0)), r'field "count"'),
        "device": ("device.bin", crash_text(doc(device="tpu")), r'field "device"'),
        "array": ("array.bin", MAGIC + "[1, 2, 3]\n", r"not a JSON object"),
        "trailing": ("trailing.bin", good_crash_text + "}{ junk\n", r"trailing data"),
        "nul_raw": ("nul_raw.bin", good_crash_text.replace('"signature": "', '"signature": "\x00', 1),
                    r"NUL"),
        "nul_escaped": ("nul_esc.bin", crash_text(doc(package__path=pkg + "\x00/junk",
                                                      package__abspath=pkg + "\x00/junk")),
                        r"NUL|\\u0000"),
        "huge_file": ("huge_file.bin", good_crash_text[:-2] + ", \"pad\": \"" + "x" * (2 << 20) + "\"}\n",
                      r"too large"),
        "missing_pkg": ("missing_pkg.bin", crash_text(doc(package={"path": "/nonexistent/dir/gone.pt2",
                                                                  "abspath": "/nonexistent/dir/gone.pt2",
                                                                  "sha256": "0" * 64})),
                        r"/nonexistent/dir/gone\.pt2"),
        "pkg_is_dir": ("pkg_dir.bin", crash_text(doc(package={"path": S.inputs, "abspath": S.inputs,
                                                             "sha256": "0" * 64})),
                       r"not a regular file"),
        "pkg_notzip": ("pkg_notzip.bin", crash_text(doc(package={"path": P["notzip"], "abspath": P["notzip"],
                                                                "sha256": "0" * 64})),
                       r"notzip\.pt2: not a valid \.pt2 package"),
        "model_name": ("model_name.bin", crash_text(doc(model="../etc")), r"bad model name '\.\./etc'"),
        "model_missing": ("model_missing.bin", crash_text(doc(model="nosuch")), r"no model 'nosuch'"),
    }
    crash = {k: S.write("crash/" + f, t) for k, (f, t, _) in CF.items()}
    crash["changed"] = S.write("crash/changed.bin", crash_text(doc(package={
        "path": changed_pkg, "abspath": changed_pkg, "sha256": base_doc["package"]["sha256"]})))
    crash_dir = S.path("crash", "a_dir.bin")
    os.makedirs(crash_dir)
    good_crash = S.write("crash/good.bin", good_crash_text)
    # a valid crash file whose package sits in a dir named with shell metacharacters, quotes,
    # a newline: it must run, and nothing in the name may be executed
    weird = S.path("we$(touch pwned)`touch pwned2`;'\"\nx")
    os.makedirs(weird)
    shutil.copy(lasttok, os.path.join(weird, "p k;g.pt2"))
    weird_pkg = os.path.join(weird, "p k;g.pt2")
    weird_crash = os.path.join(weird, "crash $HOME.bin")
    open(weird_crash, "w").write(crash_text(doc(package={"path": weird_pkg, "abspath": weird_pkg,
                                                          "sha256": base_doc["package"]["sha256"]})))
    afile = S.write("a_file", "a regular file\n")
    corpus_nonempty = S.path("corpus_full")
    os.makedirs(corpus_nonempty)
    open(os.path.join(corpus_nonempty, "seed0"), "wb").write(b"\0" * 16)

    # ================================================================ malformed packages
    R = [run]
    shape = ["--shape", "n=3", "--timeout", "30"]
    case("package", "truncated", R + [P["truncated"], "--describe"], r"truncated\.pt2: not a valid \.pt2 package")
    case("package", "truncated tail (no central directory end)", R + [P["truncated_tail"], "--describe"],
         r"truncated_tail\.pt2: not a valid \.pt2 package")
    case("package", "not a zip", R + [P["notzip"], "--describe"], r"notzip\.pt2: not a valid \.pt2 package \(zip: Not a zip archive\)")
    case("package", "empty file", R + [P["empty"], "--describe"], r"empty\.pt2: (not a valid \.pt2 package|no compiled model)")
    case("package", "zip slip entry ../", R + [P["zipslip"], "--describe"], r"refusing package entry with '\.\.': .*\.\./\.\./x\.txt")
    case("package", "absolute-path entry", R + [P["abspath"], "--describe"],
         r"refusing package entry with an absolute path: /tmp/aotif-abs-entry\.txt")
    case("package", "symlink entry", R + [P["symlink"], "--describe"], r"symlink: .*link\.so")
    case("package", "zip bomb entry over the 4 GiB entry limit", R + [P["bomb_entry"], "--describe"],
         r"over the size limit .*bomb\.bin")
    case("package", "zip bomb in the metadata JSON (1 GiB)", R + [P["bomb_meta"], "--describe"],
         r"(size limit|too large|over).*wrapper_metadata\.json|wrapper_metadata\.json.*(size limit|too large|over)")
    case("package", "zip bomb in the wrapper .cpp (1 GiB)", R + [P["bomb_cpp"], "--describe"],
         r"(size limit|too large|over).*wrapper\.cpp|wrapper\.cpp.*(size limit|too large|over)")
    case("package", "zip bomb .so over --max-entry-bytes", R + [P["bomb_so"], "--max-entry-bytes", "1M", "--describe"],
         r"over the size limit \(67108864 > 1048576 bytes\): .*wrapper\.so")
    case("package", "entry larger than its declared size", R + [P["lying_size"]] + shape,
         r"wrapper\.so.*(larger than declared|corrupt|CRC)|(larger than declared|corrupt|CRC).*wrapper\.so|"
         r"lying_size\.pt2: not a valid \.pt2 package \(zip: Zip archive inconsistent\)")
    case("package", "two model .so's", R + [P["two_so"], "--describe"], r"more than one \.wrapper\.so")
    case("package", "non-ELF .so", R + [P["nonelf"]] + shape, r"wrapper\.so.*(invalid ELF header|not an ELF)")
    case("package", "empty .so", R + [P["empty_so"]] + shape, r"wrapper\.so.*(file too short|empty|not an ELF)")
    case("package", ".so for another architecture (e_machine aarch64)", R + [P["arch"]] + shape,
         r"wrapper\.so.*(architecture|machine|ELF|wrong ELF class|AArch64|aarch64)")
    case("package", f".so without the container symbols ({os.path.basename(syslib)})", R + [P["nosyms"]] + shape,
         r"AOTInductorModelContainer\w*")
    ctor_segv = r"the worker died while loading the model \(killed by SIGSEGV\)"
    ctor_hang = r"the model did not finish loading within 20 s .*the worker was killed"
    case("package", "model .so constructor segfaults", R + [P["ctor_segv"]] + shape, ctor_segv)
    case("package", "model .so constructor never returns (load timeout, 20 s at least)",
         R + [P["ctor_hang"], "--shape", "n=3", "--timeout", "2"], ctor_hang, timeout=90)
    case("package", "aoti-fuzz: model .so constructor segfaults (no crash-* from libFuzzer)",
         [fuzz, P["ctor_segv"], "--timeout", "30", "--", "-runs=10"], ctor_segv, one_line=False)
    case("package", "aoti-fuzz: model .so constructor never returns",
         [fuzz, P["ctor_hang"], "--timeout", "2", "--", "-runs=10"], ctor_hang, one_line=False,
         timeout=90)
    case("package", "wrong device: --device cuda on a CPU package", R + [pkg, "--device", "cuda"] + shape,
         r"device cuda: .*lasttok\.pt2 was compiled for cpu and runs only there")
    cuda_pkg = os.path.join(a.fixtures, "cuda_lasttok.pt2") if a.fixtures else ""
    if os.path.exists(cuda_pkg):
        case("package", "wrong device: --device cpu on a CUDA package",
             R + [cuda_pkg, "--device", "cpu", "--shape", "s77=3"],
             r"device cpu: .*cuda_lasttok\.pt2 was compiled for cuda and runs only there")
    case("package", "bad device string 'tpu'", R + [pkg, "--device", "tpu"] + shape, r"bad device 'tpu'")
    for bad in ("abc", "-1", "99999"):
        case("package", f"AOTI_FUZZ_WORKER_CPU={bad}", R + [pkg] + shape,
             rf"AOTI_FUZZ_WORKER_CPU='{bad}': not a CPU number of this machine",
             env_extra={"AOTI_FUZZ_WORKER_CPU": bad})
    for bad in ("abc", "-5", "1e7", "nan"):
        case("package", f"AOTI_FUZZ_TOOL_SPIN_US={bad}", R + [pkg] + shape,
             rf"AOTI_FUZZ_TOOL_SPIN_US='{bad}': not a number of microseconds in \[0, 1000000\]",
             env_extra={"AOTI_FUZZ_TOOL_SPIN_US": bad})
    case("package", "metadata names device 'tpu'", R + [P["tpu_meta"], "--describe"], r"targets device 'tpu'")
    case("package", "broken wrapper .cpp, no embedded spec", R + [P["bad_cpp"], "--describe"],
         r"wrapper source could not be read.*check_input")
    case("package", "wrapper .cpp cut to a third, no embedded spec", R + [P["half_cpp"], "--describe"],
         r"wrapper source could not be read|wrapper: ")
    case("package", "broken embedded spec", R + [P["bad_embedded"], "--describe"], r"embedded spec: spec: invalid JSON")
    case("package", "aoti-fuzz: truncated", [fuzz, P["truncated"], "--", "-runs=10"], r"^aoti-fuzz: .*truncated\.pt2: not a valid")
    case("package", "aoti-fuzz: zip slip", [fuzz, P["zipslip"], "--", "-runs=10"], r"^aoti-fuzz: refusing package entry with '\.\.'")
    case("package", "aoti-fuzz: non-ELF .so", [fuzz, P["nonelf"], "--timeout", "30", "--", "-runs=10"],
         r"wrapper\.so.*(invalid ELF header|not an ELF)", one_line=False)
    case("package", "aoti-minimize: crash file of a non-ELF .so package",
         [mini, S.write("crash/nonelf_pkg.bin", crash_text(doc(package={"path": P["nonelf"], "abspath": P["nonelf"],
                                                                          "sha256": "0" * 64}))), "--timeout", "30"],
         r"wrapper\.so.*(invalid ELF header|not an ELF)", one_line=False)

    # ================================================================ spec files
    sp = lambda k: R + [pkg, "--spec", SP[k], "--timeout", "30"]
    case("spec", "lower > upper", sp("lo_gt_hi"), r"symbols\[0\]: min 10 > max 5")
    case("spec", "negative lower bound", sp("negative"), r"symbols\[0\]: min -3 is negative")
    case("spec", "huge bound 1e23", sp("huge"), r'symbols\[0\]: "max" (is out of range|must be an integer)')
    case("spec", "unknown dtype", sp("dtype"), r"inputs\[0\]: unknown dtype 'float128'")
    case("spec", "zero inputs", sp("zero_inputs"), r"\binputs?\b.*(\b0\b|none|no input|empty|wrapper|model)")
    case("spec", "an extra input", sp("extra_input"), r"extra_y|\b1 inputs?\b.*\b2\b|\b2 inputs?\b.*\b1\b")
    case("spec", "dtype disagrees with the wrapper", sp("dtype_wrapper"),
         r"dtype.*(int64|float32)|(int64|float32).*dtype")
    case("spec", "rank disagrees with the wrapper", sp("rank_wrapper"), r"rank|\bdims?\b")
    case("spec", "static size disagrees with the wrapper", sp("static_wrapper"), r"\b17\b.*\b16\b|\b16\b.*\b17\b")
    case("spec", "not JSON", sp("notjson"), r"notjson\.json: spec: invalid JSON")
    case("spec", "wrong format field", sp("format"), r'"format" must be "aoti-fuzz-spec"')
    case("spec", "shape names an undeclared symbol", sp("unknown_sym"), r"s9")
    case("spec", "NUL byte", sp("nul"), r"nul\.json: contains a NUL byte")
    case("spec", "a directory", R + [pkg, "--spec", S.path("spec", "a_dir.json"), "--describe"],
         r"a_dir\.json.*(not a regular file|directory)")
    case("spec", "missing file", R + [pkg, "--spec", S.path("spec", "nosuch.json"), "--describe"],
         r"nosuch\.json.*No such file")
    case("spec", "aoti-fuzz: lower > upper", [fuzz, pkg, "--spec", SP["lo_gt_hi"], "--", "-runs=10"],
         r"^aoti-fuzz: .*min 10 > max 5")
    case("spec", "aoti-fuzz: dtype disagrees with the wrapper",
         [fuzz, pkg, "--spec", SP["dtype_wrapper"], "--no-eager", "--", "-runs=10"],
         r"dtype.*(int64|float32)|(int64|float32).*dtype")
    case("spec", "aoti-minimize: unknown dtype", [mini, good_crash, "--spec", SP["dtype"]],
         r"^aoti-minimize: .*unknown dtype 'float128'")

    # ================================================================ crash files
    for k, (_, _, pat) in CF.items():
        case("crashfile", f"aoti-run --case: {k}", [run, "--case", crash[k]], pat)
        case("crashfile", f"aoti-minimize: {k}", [mini, crash[k]], pat)
    chg = r"changed since the crash was recorded[^\n]*\n.*does not set symbol s17 \(m\)"
    case("crashfile", "aoti-run --case: changed package (different sha)", [run, "--case", crash["changed"]],
         chg, one_line=False)
    case("crashfile", "aoti-minimize: changed package (different sha)", [mini, crash["changed"]],
         chg, one_line=False)
    case("crashfile", "aoti-run --case: a directory", [run, "--case", crash_dir], r"a_dir\.bin: not a regular file")
    case("crashfile", "aoti-minimize: a directory", [mini, crash_dir], r"a_dir\.bin: not a regular file")
    case("crashfile", "aoti-run --case: missing file", [run, "--case", S.path("crash", "gone.bin")],
         r"gone\.bin: No such file")
    case("crashfile", "aoti-minimize: missing file", [mini, S.path("crash", "gone.bin")], r"gone\.bin: No such file")

    def no_pwned(p, cwd):
        """The names `touch pwned` in the path would create, if anything ran it."""
        names = ("pwned", "pwned2")
        hits = [os.path.join(d, f) for d, _, fs in os.walk(S.root) for f in fs if f in names]
        for d in ("/tmp", os.path.expanduser("~")):
            hits += [os.path.join(d, f) for f in os.listdir(d) if f in names]
        return f"a name in the path was executed: {hits}" if hits else None

    if found:  # a real crash: it must reproduce through a path that is hostile to shells
        case("crashfile", "aoti-run --case: shell metacharacters, quotes, newline in the path (works)",
             [run, "--case", weird_crash], r"^result: SIGNAL", rc=1, stream="stdout", one_line=False,
             check=no_pwned)
        case("crashfile", "aoti-minimize: shell metacharacters, quotes, newline in the path (works)",
             [mini, weird_crash, "--out", "out", "--no-crash-map", "--budget", "120", "--timeout", "30"],
             r"repro\.sh: reproduced", rc=0, one_line=False, allowed=("out",), timeout=600,
             check=lambda p, cwd: no_pwned(p, cwd) or (
                 None if os.path.exists(os.path.join(cwd, "out", "minimal.bin"))
                 else "no out/minimal.bin"))
        # bytes that are not UTF-8 in the package path (and in the artifact and summary names):
        # every JSON file stays valid UTF-8 (Python's strict json.load), the exact bytes come
        # back from "<key>_hex", and the crash file replays and minimizes through that path
        raw_dir = os.fsencode(S.root) + b"/non-utf8 \xff\xfe$(touch pwned)'\"\nx"
        os.makedirs(raw_dir)
        raw_pkg = raw_dir + b"/p\xe9kg.pt2"
        shutil.copy(lasttok, raw_pkg)
        art_name, summ_name = os.fsdecode(b"art\xff"), os.fsdecode(b"summary\xfe.json")

        def strict_json(path):
            return json.loads(open(path, "rb").read().decode("utf-8"))

        def non_utf8_ok(p, cwd):
            art = os.path.join(cwd, art_name)
            try:
                summ = strict_json(os.path.join(cwd, summ_name))
            except (OSError, ValueError) as e:
                return f"--summary is not valid UTF-8 JSON: {e}"
            if bytes.fromhex(summ.get("package_hex", "")) != raw_pkg:
                return f"summary package_hex does not give the path back: {summ.get('package_hex')!r}"
            sides = sorted(f for f in os.listdir(art) if f.endswith(".json"))
            bins = sorted(f for f in os.listdir(art) if f.endswith(".bin"))
            if not sides or not bins:
                return f"no crash file and sidecar in {art!r}: {os.listdir(art)}"
            for f in sides:
                try:
                    d = strict_json(os.path.join(art, f))
                except ValueError as e:
                    return f"sidecar {f} is not valid UTF-8 JSON: {e}"
                if bytes.fromhex(d["package"].get("path_hex", "")) != raw_pkg:
                    return f"sidecar {f}: package.path_hex does not give the path back"
            crash_file = os.path.join(art, bins[0])
            r = subprocess.run([run, "--case", crash_file], capture_output=True, timeout=300)
            if r.returncode != 1 or b"result: SIGNAL" not in r.stdout:
                return f"aoti-run --case: exit {r.returncode}, {r.stdout[-300:]!r} {r.stderr[-300:]!r}"
            out = os.path.join(cwd, "out")
            r = subprocess.run([mini, crash_file, "--out", out, "--no-crash-map", "--budget", "120",
                                "--timeout", "30"], capture_output=True, timeout=600)
            if r.returncode != 0 or b"repro.sh: reproduced" not in r.stdout + r.stderr:
                return f"aoti-minimize: exit {r.returncode}, {(r.stdout + r.stderr)[-600:]!r}"
            try:
                strict_json(os.path.join(out, "minimal.json"))
            except (OSError, ValueError) as e:
                return f"minimal.json is not valid UTF-8 JSON: {e}"
            return no_pwned(p, cwd)

        case("crashfile", "non-UTF-8 bytes in the package path: fuzz, JSON, replay, minimize (works)",
             [fuzz, os.fsdecode(raw_pkg), "--artifacts", art_name, "--summary", summ_name,
              "--no-eager", "--timeout", "30", "--", "-runs=400", "-seed=1"],
             r"aoti-fuzz", rc=0, one_line=False, allowed=(art_name, summ_name, "out"),
             check=non_utf8_ok, timeout=900)
    else:
        print("note: no real crash (no torch?): the hostile-path cases that run the model are left out")

    # ================================================================ aoti-run flags
    F = "flags-run"
    nums_run = [("--seed", ["-1", "99999999999999999999", "abc"], r"--seed wants a non-negative integer, got '{v}'"),
                ("--repeat", ["-1", "100001", "abc"], r"--repeat wants an integer in 1\.\.100000, got '{v}'"),
                ("--timeout", ["-1", "1e12", "abc", "nan"], r"--timeout wants seconds > 0, got '{v}'"),
                ("--max-input-bytes", ["-1", "9999999999999G", "abc"], r"--max-input-bytes wants a byte count.*got '{v}'"),
                ("--mem-limit", ["-1", "9999999999999G", "abc"], r"--mem-limit wants a byte count.*got '{v}'"),
                ("--max-entry-bytes", ["-1", "9999999999999G", "abc"], r"--max-entry-bytes wants a byte count.*got '{v}'"),
                ("--rtol", ["-1", "1e999", "abc"], r"--rtol wants a (finite )?number >= 0, got '{v}'"),
                ("--atol", ["-1", "inf", "nan"], r"--atol wants a (finite )?number >= 0, got '{v}'")]
    for flag, vals, pat in nums_run:
        for v in vals:
            other = ["--atol", "0"] if flag == "--rtol" else ["--rtol", "0"] if flag == "--atol" else []
            case(F, f"{flag} {v}", [run, pkg, flag, v, *other, "--shape", "n=3"], pat.format(v=re.escape(v)))
    case(F, "unknown option --bogus", [run, pkg, "--bogus"], r"unknown or incomplete option '--bogus'")
    case(F, "unknown short option -x", [run, pkg, "-x"], r"unknown or incomplete option '-x'")
    case(F, "missing the package", [run], r"missing the package")
    case(F, "--shape without its value", [run, pkg, "--shape"], r"unknown or incomplete option '--shape'")
    case(F, "--case without its value", [run, "--case"], r"unknown or incomplete option '--case'")
    case(F, "two packages", [run, pkg, pkg], r"one package at a time")
    case(F, "--case with --shape", [run, "--case", good_crash, "--shape", "n=1"], r"--case already fixes")
    case(F, "--fill purple", [run, pkg, "--fill", "purple"], r"--fill wants random, zeros or ones, got 'purple'")
    case(F, "--shape n=abc", [run, pkg, "--shape", "n=abc"], r"--shape n=abc")
    case(F, "--shape n=huge", [run, pkg, "--shape", "n=99999999999999999999"], r"--shape n=99999999999999999999")
    case(F, "--shape n=-1", [run, pkg, "--shape", "n=-1"], r"--shape n=-1")
    case(F, "--shape without =", [run, pkg, "--shape", "n"], r"--shape n\b")
    case(F, "--shape nosuch=1", [run, pkg, "--shape", "nosuch=1"], r"--shape nosuch=1: .*nosuch")
    case(F, "--rtol without --atol", [run, pkg, "--rtol", "0.1", "--shape", "n=3"], r"give --rtol and --atol together")
    case(F, "--model ../x", [run, pkg, "--model", "../x", "--describe"], r"bad model name '\.\./x'")
    case(F, "--model nosuch", [run, pkg, "--model", "nosuch", "--describe"], r"no model 'nosuch' \(models in package: model\)")
    case(F, "--torch-lib without libtorch", [run, pkg, "--torch-lib", S.inputs] + shape, r"no libtorch\.so in")
    case(F, "--exported missing", [run, pkg, "--exported", S.path("nosuch.ep.pt2"), "--describe"],
         r"--exported .*nosuch\.ep\.pt2")
    case(F, "--exported not a zip", [run, pkg, "--exported", P["notzip"], "--describe"], r"not a torch\.export\.save file")
    if plain:
        case(F, "--eager on a plain package", [run, plain, "--eager"], r"--eager needs the exported program")
    case(F, "TMPDIR missing", [run, pkg, "--describe"], r"TMPDIR", tmpdir="missing")
    case(F, "TMPDIR a regular file", [run, pkg, "--describe"], r"TMPDIR", tmpdir="file")

    # ================================================================ aoti-fuzz flags
    F = "flags-fuzz"
    lf_runs = ["--", "-runs=10"]
    nums_fuzz = [("--timeout", ["-1", "1e12", "abc"], r"--timeout wants seconds > 0, got '{v}'"),
                 ("--case-timeout", ["0", "abc"], r"--case-timeout|--timeout: not a positive number of seconds: {v}"),
                 ("--max-input-bytes", ["-1", "9999999999999G", "abc"], r"--max-input-bytes wants a byte count.*got '{v}'"),
                 ("--max-spares", ["0", "17", "abc"], r"--max-spares wants an integer in 1\.\.16, got '{v}'"),
                 ("--mem-limit", ["-1", "0", "9999999999999G", "abc"], r"--mem-limit wants a byte count.*or 'none', got '{v}'"),
                 ("--max-entry-bytes", ["-1", "9999999999999G", "abc"], r"--max-entry-bytes wants a byte count.*got '{v}'"),
                 ("--check-every", ["-1", "99999999999999999999", "abc"], r"--check-every wants an integer >= 0, got '{v}'"),
                 ("--rtol", ["-1", "1e999", "abc"], r"--rtol wants a finite number >= 0, got '{v}'"),
                 ("--atol", ["-1", "nan"], r"--atol wants a finite number >= 0, got '{v}'")]
    for flag, vals, pat in nums_fuzz:
        for v in vals:
            extra = ["--atol", "0"] if flag == "--rtol" else ["--rtol", "0"] if flag == "--atol" else []
            case(F, f"{flag} {v}", [fuzz, pkg, flag, v] + extra + lf_runs, pat.format(v=re.escape(v)))
    case(F, "unknown option --bogus", [fuzz, pkg, "--bogus"] + lf_runs, r"unknown option --bogus")
    case(F, "unknown short option -x", [fuzz, pkg, "-x"] + lf_runs, r"unknown option -x")
    case(F, "libFuzzer flag before --", [fuzz, pkg, "-runs=10"], r"unknown option -r .*libFuzzer flags go after --")
    case(F, "missing the package", [fuzz] + lf_runs, r"no package given")
    case(F, "--artifacts without its value", [fuzz, pkg, "--artifacts"], r"--artifacts needs a value")
    case(F, "two packages", [fuzz, pkg, pkg] + lf_runs, r"unexpected argument .*lasttok\.pt2")
    case(F, "--rtol without --atol", [fuzz, pkg, "--rtol", "0.1"] + lf_runs, r"give --rtol and --atol together")
    case(F, "--spec and --exported", [fuzz, pkg, "--spec", SP["lo_gt_hi"], "--exported", lasttok] + lf_runs,
         r"--spec and --exported both")
    def jobs_logs(p, cwd):
        art = os.path.join(cwd, "art")
        logs = sorted(f for f in os.listdir(art) if re.fullmatch(r"fuzz-\d+\.log", f)) \
            if os.path.isdir(art) else []
        return None if logs == ["fuzz-0.log", "fuzz-1.log"] else \
            f"want fuzz-0.log and fuzz-1.log in --artifacts, found {logs}"

    # libFuzzer's -jobs writes fuzz-<N>.log into the current directory: they belong in
    # --artifacts (a relative one: every path is made absolute before the tool moves there)
    case(F, "-jobs=2 -workers=2: the jobs' logs go to --artifacts, not the cwd",
         [fuzz, pkg, "--artifacts", "art", "--timeout", "30", "--", "-jobs=2", "-workers=2",
          "-runs=20"],
         r"the jobs' logs \(fuzz-<N>\.log\) go to /.*/art", rc=0, one_line=False,
         allowed=("art",), check=jobs_logs, timeout=600)
    case(F, "--summary a directory", [fuzz, pkg, "--summary", S.inputs] + lf_runs, r"--summary .*: not a regular file")
    case(F, "--summary /proc/x", [fuzz, pkg, "--summary", "/proc/x"] + lf_runs, r"--summary /proc/x")
    case(F, "--summary in a missing dir", [fuzz, pkg, "--summary", S.path("nodir", "s.json")] + lf_runs,
         r"--summary .*nodir/s\.json: cannot write")
    case(F, "--artifacts under a regular file", [fuzz, pkg, "--artifacts", os.path.join(afile, "art")] + lf_runs,
         r"--artifacts .*a_file/art: .*a_file is not a directory")
    case(F, "--seed-corpus under a regular file", [fuzz, pkg, "--seed-corpus", os.path.join(afile, "seeds")],
         r"a_file/seeds.*Not a directory")
    case(F, "missing corpus dir", [fuzz, pkg, "--no-eager", "--", "-runs=10", S.path("no_corpus")],
         r"no_corpus.*(does not exist|No such file|not a directory)", one_line=False)
    for lflag, pat in (("-runs=abc", r"-runs wants an integer .*got 'abc'"),
                       ("-max_len=-1", r"-max_len wants an integer .*got '-1'"),
                       ("-seed=-5", r"-seed wants an integer .*got '-5'"),
                       ("-jobs=100000", r"-jobs wants an integer .*got '100000'"),
                       ("-max_total_time=1.5", r"-max_total_time wants an integer .*got '1\.5'"),
                       ("-runs=99999999999999999999", r"-runs wants an integer .*got '99999999999999999999'"),
                       ("-print_final_stats=2", r"-print_final_stats wants an integer .*got '2'")):
        case(F, f"libFuzzer {lflag}", [fuzz, pkg, "--", lflag, corpus_nonempty], pat)
    case(F, "--device tpu", [fuzz, pkg, "--device", "tpu", "--no-eager"] + lf_runs, r"bad device 'tpu'",
         one_line=False)
    case(F, "--device cuda on a CPU package", [fuzz, pkg, "--device", "cuda", "--no-eager"] + lf_runs,
         r"device cuda: .*compiled for cpu", one_line=False)
    case(F, "TMPDIR missing", [fuzz, pkg] + lf_runs, r"TMPDIR", tmpdir="missing")
    case(F, "TMPDIR a regular file", [fuzz, pkg] + lf_runs, r"TMPDIR", tmpdir="file")

    # ================================================================ aoti-minimize flags
    F = "flags-minimize"
    nums_min = [("--budget", ["-1", "1e12", "abc"], r"--budget wants seconds > 0, got '{v}'"),
                ("--runs", ["0", "102", "abc"], r"--runs wants an integer in 1\.\.101, got '{v}'"),
                ("--timeout", ["-1", "1e12", "abc"], r"--timeout wants seconds > 0, got '{v}'"),
                ("--rtol", ["-1", "1e999", "abc"], r"--rtol wants a (finite )?number >= 0, got '{v}'"),
                ("--atol", ["-1", "inf"], r"--atol wants a (finite )?number >= 0, got '{v}'")]
    for flag, vals, pat in nums_min:
        for v in vals:
            other = ["--atol", "0"] if flag == "--rtol" else ["--rtol", "0"] if flag == "--atol" else []
            case(F, f"{flag} {v}", [mini, good_crash, flag, v, *other], pat.format(v=re.escape(v)))
    case(F, "unknown option --bogus", [mini, good_crash, "--bogus"], r"unknown or incomplete option '--bogus'")
    case(F, "missing the crash file", [mini], r"missing the crash file")
    case(F, "--out without its value", [mini, good_crash, "--out"], r"unknown or incomplete option '--out'")
    case(F, "two crash files", [mini, good_crash, good_crash], r"one crash file at a time")
    case(F, "--out under a regular file", [mini, good_crash, "--out", os.path.join(afile, "out")],
         r"--out .*a_file/out: .*a_file is not a directory")
    case(F, "--out an existing regular file", [mini, good_crash, "--out", afile],
         r"--out .*a_file: not a directory")
    case(F, "--rtol without --atol", [mini, good_crash, "--rtol", "0.1"], r"give --rtol and --atol together")
    case(F, "--spec missing", [mini, good_crash, "--spec", S.path("nosuch.json")], r"nosuch\.json")
    case(F, "--spec and --exported", [mini, good_crash, "--spec", SP["lo_gt_hi"], "--exported", lasttok],
         r"--spec and --exported both")
    case(F, "TMPDIR missing", [mini, good_crash, "--timeout", "30"], r"TMPDIR", tmpdir="missing")
    case(F, "TMPDIR a regular file", [mini, good_crash, "--timeout", "30"], r"TMPDIR", tmpdir="file")

    return S.table()


if __name__ == "__main__":
    main()
