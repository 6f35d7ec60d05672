"""End-to-end: the explain phase and the crash map of aoti-minimize on real packages.

Crash files come from the fuzzer itself (aoti-fuzz PKG --artifacts DIR -- -runs=2000 -seed=1),
then aoti-minimize --json runs on each in real workers.

- crossidx (x[y.argmax()] with zero fills fails at n = 0 for any m): the explain phase must
  report n pinned (n=0 fails, 1 8 32 64 pass) and m free (every m tried, 1 2 8 32 64, fails
  the same way), within 5 questions per symbol and the engine's bound; --json, minimal.json
  and report.md all say so. The crash map puts n across: its n=0 column fails, nothing else.
- twosym (fails only at n = 0 and m = 0): both pinned; the map has a single failing cell.
- --no-crash-map: no crashmap.svg, the same questions, the report says why.
Every crashmap.svg must parse as XML and link from report.md; no temp file may be left.

With --render (registered as e2e.crashmap_render): each crashmap.svg is also rendered by
rsvg-convert to PNG, which must be a real picture: a few KB, and among its pixels the crash's
red, the neutral grey of passing cells, and more than two colours. Exit 77 when rsvg-convert
(librsvg2-bin) is missing. Exit 77 too when no Python with torch is found (the workers need
libtorch).
"""
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from aotif_test import Env, arg_parser, check, finish, need_examples, need_python, read_json, skip  # noqa: E402


def sym(ex, dim):
    return next((s for s in ex["symbols"] if s["dim"] == dim), None)


def common(name, s, out):
    """What every minimized crash with a map must have."""
    ex = s["explain"]
    check(ex["ran"] and ex["complete"], f"{name}: explain ran to the end")
    k = len(ex["symbols"])
    check(ex["bound"] == 5 * k and ex["questions"] <= 5 * k,
          f"{name}: explain asked {ex['questions']} <= 5 per symbol ({5 * k})")
    check(s["explain_calls"] == ex["questions"], f"{name}: explain_calls == explain.questions")
    check(s["oracle_calls"] <= s["call_bound"],
          f"{name}: {s['oracle_calls']} questions <= bound {s['call_bound']} (explain included)")
    for e in ex["symbols"]:
        lo, hi = e["range"]
        vals = [t["value"] for t in e["tried"]]
        check(vals == sorted(set(vals)) and all(lo <= v <= hi for v in vals) and lo in vals and hi in vals,
              f"{name}: {e['dim']} tried {vals}: distinct, ascending, in [{lo}, {hi}], bounds included")
    side = read_json(os.path.join(out, "minimal.json"))
    check(side.get("explain", {}).get("pinned") == ex["pinned"] and side["explain"]["free"] == ex["free"],
          f"{name}: minimal.json holds the explain result")
    check(isinstance(side.get("crash_map"), dict), f"{name}: minimal.json holds the crash map")
    report = open(os.path.join(out, "report.md")).read()
    check("## Which sizes matter" in report and f"It **{ex['summary']}**." in report,
          f"{name}: report.md says {ex['summary']!r}")
    check(not [f for f in os.listdir(out) if ".tmp-" in f], f"{name}: no temp files left")
    cm = s["crash_map"]
    if not check(isinstance(cm, dict), f"{name}: a crash map was drawn ({cm!r})"):
        return None, report
    svg = os.path.join(out, "crashmap.svg")
    check(os.path.isfile(svg) and cm.get("file") == svg, f"{name}: crashmap.svg written next to report.md")
    check("![crash map](crashmap.svg)" in report, f"{name}: report.md links crashmap.svg")
    try:
        root = ET.parse(svg).getroot()
        ok = root.tag.endswith("svg")
    except ET.ParseError as err:
        ok = False
        print(err)
    check(ok, f"{name}: crashmap.svg is well-formed XML")
    nx, ny = len(cm["x"]["values"]), len(cm["y"]["values"]) if "y" in cm else 1
    check(nx <= 16 and ny <= 16 and cm["cases"] == nx * ny and cm["complete"],
          f"{name}: {nx} x {ny} cases, all answered")
    check(cm["questions"] + cm["memo_hits"] == cm["cases"] and cm["memo_hits"] >= 1,
          f"{name}: map cases = {cm['questions']} new questions + {cm['memo_hits']} from the memo")
    check(f"crash map: {cm['cases']} cases, {cm['questions']} new questions outside that bound" in report,
          f"{name}: report counts the map's questions apart")
    return cm, report


def test_crossidx(e):
    crash, out, s = e.fuzz_and_minimize("crossidx")
    if not s:
        return []
    print(f"crossidx: minimal {s['minimal']['case']}, {s['oracle_calls']} questions "
          f"({s['explain_calls']} explain) <= {s['call_bound']}; {s['explain']['summary']}; "
          f"map {s['crash_map'].get('cases') if isinstance(s['crash_map'], dict) else s['crash_map']}", flush=True)
    check(s["minimal"]["symbols"] == {"n": 0, "m": 1}, f"crossidx: minimal n=0 m=1 (got {s['minimal']['symbols']})")
    ex = s["explain"]
    check(ex["pinned"] == ["n"] and ex["free"] == ["m"], f"crossidx: n pinned, m free (got {ex['pinned']}, {ex['free']})")
    check(ex["summary"] == "fails when n=0, for every m tried (1, 2, 8, 32, 64)", f"crossidx: summary {ex['summary']!r}")
    check(ex["minimal_failing_set"] == {"n": 0, "m": 1}, f"crossidx: minimal failing set {ex['minimal_failing_set']}")
    n, m = sym(ex, "n"), sym(ex, "m")
    check([(t["value"], t["verdict"]) for t in n["tried"]] ==
          [(0, "SAME"), (1, "PASS"), (8, "PASS"), (32, "PASS"), (64, "PASS")], f"crossidx: n's tried values {n['tried']}")
    check([t["verdict"] for t in m["tried"]] == ["SAME"] * 5, f"crossidx: every m fails ({m['tried']})")
    check(ex["questions"] + ex["memo_hits"] == 10 and ex["memo_hits"] >= 2,
          f"crossidx: explain {ex['questions']} new + {ex['memo_hits']} from the memo")
    cm, report = common("crossidx", s, out)
    check("| n | **pinned** | 0 | [0, 64] | 0 fails the same way; 1 passes; 8 passes; 32 passes; 64 passes |" in report,
          "crossidx: report lists n pinned with what each value gave")
    if cm:
        check(cm["x"]["dim"] == "n" and cm["y"]["dim"] == "m", "crossidx: the pinned n across, m up")
        rows = cm["rows"]
        check(all(r[0] == "X" and set(r[1:]) == {"."} for r in rows),
              f"crossidx: the n=0 column fails, every other cell passes ({rows})")
    # --no-crash-map: no SVG, the same questions, and why
    out2 = os.path.join(e.tmp, "crossidx.nomap")
    s2 = e.minimize_json(crash, out2, "--no-crash-map")
    if s2:
        check(s2["crash_map"] == "not drawn (--no-crash-map)" and not os.path.exists(os.path.join(out2, "crashmap.svg")),
              "crossidx --no-crash-map: no crashmap.svg")
        check(s2["oracle_calls"] == s["oracle_calls"] and s2["explain"]["pinned"] == ["n"],
              "crossidx --no-crash-map: the same questions and explain result")
        check("No crash map: not drawn (--no-crash-map)." in open(os.path.join(out2, "report.md")).read(),
              "crossidx --no-crash-map: report.md says why there is no map")
    return [os.path.join(out, "crashmap.svg")]


def test_twosym(e):
    _, out, s = e.fuzz_and_minimize("twosym")
    if not s:
        return []
    print(f"twosym: minimal {s['minimal']['case']}, {s['oracle_calls']} questions ({s['explain_calls']} explain) "
          f"<= {s['call_bound']}; {s['explain']['summary']}", flush=True)
    ex = s["explain"]
    check(ex["pinned"] == ["n", "m"] and ex["free"] == [], f"twosym: both pinned (got {ex['pinned']}, {ex['free']})")
    check(ex["summary"] == "fails only when n=0 and m=0 (every symbol tried is pinned)", f"twosym: summary {ex['summary']!r}")
    cm, _ = common("twosym", s, out)
    if cm:
        cells = "".join(cm["rows"])
        check(cells.count("X") == 1 and cm["rows"][0][0] == "X" and cells.count(".") == len(cells) - 1,
              f"twosym: one failing cell, at n=0 m=0 ({cm['rows']})")
    return [os.path.join(out, "crashmap.svg")]


def png_pixels(path):
    """Decode an 8-bit, non-interlaced RGB/RGBA PNG (what rsvg-convert writes): (w, h, set of colours)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        (ln,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + ln]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + ln
    raw, stride = zlib.decompress(idat), w * bpp
    prev, colours, i = bytearray(stride), set(), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            left = line[x - bpp] if x >= bpp else 0
            up, ul = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + left) & 255
            elif f == 2:
                line[x] = (line[x] + up) & 255
            elif f == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif f == 4:
                p = left + up - ul
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else ul)) & 255
        for x in range(0, stride, bpp):
            colours.add(bytes(line[x:x + 3]))
        prev = line
    return w, h, colours


def render(svgs, tmp):
    exe = shutil.which("rsvg-convert")
    if not exe:
        skip("rsvg-convert not found (apt-get install librsvg2-bin)")
    for svg in svgs:
        name = os.path.basename(os.path.dirname(svg))
        png = os.path.join(tmp, name + ".png")
        p = subprocess.run([exe, svg, "-o", png], capture_output=True, text=True, timeout=120)
        if not check(p.returncode == 0 and os.path.isfile(png), f"{name}: rsvg-convert renders it ({p.stderr[-300:]!r})"):
            continue
        size = os.path.getsize(png)
        w, h, colours = png_pixels(png)
        check(size > 4000 and w >= 300 and h >= 200, f"{name}: PNG {w}x{h}, {size} bytes")
        check(bytes.fromhex("d62728") in colours, f"{name}: the crash's red is drawn")
        check(bytes.fromhex("ececec") in colours, f"{name}: passing cells are drawn in neutral grey")
        check(len(colours) > 2, f"{name}: {len(colours)} colours")


def main():
    ap = arg_parser(python="env")
    ap.add_argument("--render", action="store_true", help="also render the maps with rsvg-convert")
    a = ap.parse_args()
    if a.render and not shutil.which("rsvg-convert"):
        skip("rsvg-convert not found (apt-get install librsvg2-bin)")
    need_python(a.python, "torch")
    need_examples(a.examples, ["crossidx.pt2", "twosym.pt2"])
    e = Env(a, "aotif-explain-e2e-", timeout=900)
    svgs = test_crossidx(e) + test_twosym(e)
    if a.render:
        render([s for s in svgs if os.path.isfile(s)], e.tmp)
    finish("all explain / crash map end-to-end checks passed", e.tmp)


if __name__ == "__main__":
    main()
