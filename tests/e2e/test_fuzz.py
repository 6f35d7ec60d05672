"""End-to-end: aoti-fuzz on the real example packages, from an empty corpus.

- each example with a known bug: found within 2,000 execs, with the expected class;
  the fuzzer runs on after it (all 2,000 execs done, many failing inputs, workers
  replaced) and keeps exactly one crash file per signature; the crash file replays
  through `aoti-run --case`; a second run into the same dir adds no duplicate;
- the healthy examples: no crash in 20,000 execs, and no mismatch with eager on the inputs
  that joined the corpus (the reference compares them);
- the wrong-value examples (EXPECTED "mismatch"): MISMATCH crash files, eager AOTI_ONLY;
- shape-class predictions on lasttok, and one-symbol classes on rowgather.
"""
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from aotif_test import (ROOT, aoti_run, arg_parser, check, example_names, expected,  # noqa: E402
                        finish, fuzz_summary, read_json, read_sidecar, result, run_capture, tool_path)


def fuzz(bin_dir, pkg, artifacts, runs, seed=1):
    p, s, _ = fuzz_summary(tool_path(bin_dir, "aoti-fuzz"), pkg, artifacts, runs, seed=seed, timeout=1200)
    if p.returncode != 0:
        print(p.stderr[-3000:])
    return p.returncode, s


def check_predictions(a):
    """Shape-class predictions (fuzz/memo.h) on lasttok, whose n=0 inputs kill the worker with
    SIGSEGV whatever the values: on with --predict (off by default on the CPU), they answer
    cases without running them, the bug is still found, and they make no crash file and no
    count; --no-predict and the CPU default predict nothing."""
    pkg = os.path.join(a.examples, "lasttok.pt2")
    fuzz_bin = tool_path(a.bin, "aoti-fuzz")
    got = {}
    for mode in ("--predict", "--no-predict", None):
        art = tempfile.mkdtemp(prefix="af-predict-")
        extra = ["--no-eager"] + ([mode] if mode else [])
        p, s, _ = fuzz_summary(fuzz_bin, pkg, art, 3000, *extra, seed=1, timeout=1200)
        got[mode] = s
        bins = glob.glob(art + "/*.bin")
        check(p.returncode == 0 and s.get("execs") == 3000 and len(s.get("crashes", [])) == 1
              and len(bins) == 1, f"lasttok {mode or 'default'}: the SIGSEGV found, one crash file "
              f"(rc {p.returncode}, {len(bins)} files)")
        if bins:
            check(read_sidecar(bins[0])["count"] == s.get("crash_runs"),
                  f"lasttok {mode or 'default'}: the sidecar counts the failing inputs that ran or "
                  f"were remembered, not predictions ({read_sidecar(bins[0])['count']} == "
                  f"{s.get('crash_runs')})")
        check(s.get("execs") == s.get("runs", 0) + s.get("memo_hits", 0) + s.get("predicted", -1),
              f"lasttok {mode or 'default'}: execs = runs + memo hits + predictions ({s.get('execs')}, "
              f"{s.get('runs')}, {s.get('memo_hits')}, {s.get('predicted')})")
    on, off, dflt = got["--predict"], got["--no-predict"], got[None]
    check(on.get("predict") is True and on.get("predicted", 0) > 0 and on.get("predicted_classes", 0) > 0,
          f"--predict: cases answered by prediction ({on.get('predicted')} in "
          f"{on.get('predicted_classes')} classes)")
    check(off.get("predict") is False and off.get("predicted") == 0, "--no-predict: none predicted")
    check(dflt.get("predict") is False and dflt.get("predicted") == 0, "CPU default: none predicted")


def check_one_symbol_predictions(a):
    """One-symbol classes (fuzz/memo.h) on rowgather, where every m > n aborts the worker: n = 0
    fails whatever m is, so with --predict that class is learnt from failures with m in two
    value classes or more and answers later n = 0 cases; the bug is still found, and execs
    still add up to runs + memo hits + predictions."""
    pkg = os.path.join(a.examples, "rowgather.pt2")
    if not os.path.exists(pkg):
        check(False, "rowgather exported")
        return
    art = tempfile.mkdtemp(prefix="af-predict1-")
    p, s, _ = fuzz_summary(tool_path(a.bin, "aoti-fuzz"), pkg, art, 3000, "--no-eager", "--predict",
                           seed=1, timeout=1200)
    print(f"rowgather --predict: {s.get('predicted')} predicted, {s.get('predicted_by_one_symbol')} by "
          f"{s.get('predicted_classes_one_symbol')} one-symbol classes, {s.get('broken_predictions')} broken",
          flush=True)
    check(p.returncode == 0 and len(s.get("crashes", [])) == 1 and
          s["crashes"][0]["signature"].startswith("SIGNAL: SIGABRT"),
          f"rowgather --predict: the SIGABRT found ({[c['signature'] for c in s.get('crashes', [])]})")
    check(s.get("predicted_classes_one_symbol", 0) >= 1 and s.get("predicted_by_one_symbol", 0) > 0,
          f"rowgather --predict: a one-symbol class learnt and predicting "
          f"({s.get('predicted_classes_one_symbol')} classes, {s.get('predicted_by_one_symbol')} cases)")
    check(s.get("predicted_by_one_symbol", 0) <= s.get("predicted", -1),
          "rowgather --predict: one-symbol predictions are counted among the predictions")
    check(s.get("execs") == s.get("runs", 0) + s.get("memo_hits", 0) + s.get("predicted", -1),
          "rowgather --predict: execs = runs + memo hits + predictions")


def distinct_in_order(lines):
    seen, out = set(), []
    for ln in lines:
        if ln not in seen:
            seen.add(ln)
            out.append(ln)
    return out


def check_ok_memo(a):
    """The memo of OK cases (fuzz/memo.h): a repeat of a case that ran OK is answered without a
    run, with the same features. Same seed, with and without --rerun-ok: on healthy, the same
    execs and features, fewer runs, every repeat answered (memo_hits_ok = execs - runs), and the
    memo run's case log is the --rerun-ok log with its repeats left out, in the same order (so
    libFuzzer drew the same inputs). On twosym, eager on with --check-every: the same crash, the
    same failing inputs, the same value checks."""
    fuzz_bin = tool_path(a.bin, "aoti-fuzz")
    got = {}
    for model, runs, extra in (("healthy", 20000, ["--no-eager"]), ("twosym", 3000, ["--check-every", "97"])):
        pkg = os.path.join(a.examples, model + ".pt2")
        if not os.path.exists(pkg):
            check(False, f"{model} exported")
            continue
        for mode in (None, "--rerun-ok"):
            art = tempfile.mkdtemp(prefix="af-okmemo-")
            log = os.path.join(art, "cases.log")
            p, s, _ = fuzz_summary(fuzz_bin, pkg, art, runs, *extra, *([mode] if mode else []), seed=1,
                                   env=dict(os.environ, AOTI_FUZZ_CASE_LOG=log), timeout=1200)
            lines = open(log).read().splitlines() if os.path.exists(log) else []
            check(p.returncode == 0 and s.get("execs") == runs and len(lines) == s.get("runs", -1),
                  f"{model} {mode or 'default'}: {s.get('execs')} execs, {s.get('runs')} runs, "
                  f"{len(lines)} logged (rc {p.returncode})")
            got[model, mode] = (s, lines)
    if ("healthy", None) in got and ("healthy", "--rerun-ok") in got:
        (m, mlog), (r, rlog) = got["healthy", None], got["healthy", "--rerun-ok"]
        print(f"healthy: {m.get('runs')} runs with the OK memo, {r.get('runs')} with --rerun-ok; "
              f"{m.get('execs_per_second', 0):.0f} vs {r.get('execs_per_second', 0):.0f} execs/s", flush=True)
        check(m.get("rerun_ok") is False and r.get("rerun_ok") is True, "summary: rerun_ok says which")
        check(0 < m.get("runs", 0) < r.get("runs", 0) and r.get("memo_hits_ok") == 0,
              f"healthy: repeats not run ({m.get('runs')} runs against {r.get('runs')})")
        check(m.get("memo_hits_ok") == m.get("memo_hits") == m.get("execs", 0) - m.get("runs", 0),
              f"healthy: every exec not run is an OK repeat ({m.get('memo_hits_ok')}, {m.get('memo_hits')})")
        check(m.get("ok_cases_held") == m.get("runs"), f"healthy: every OK case held ({m.get('ok_cases_held')})")
        check(len(set(mlog)) == len(mlog), "healthy: no case ran twice with the OK memo")
        check(m.get("features") == r.get("features") and mlog == distinct_in_order(rlog),
              f"healthy: the same inputs drawn, the same features ({m.get('features')} vs "
              f"{r.get('features')}; {len(mlog)} cases, {len(distinct_in_order(rlog))} distinct without)")
    if ("twosym", None) in got and ("twosym", "--rerun-ok") in got:
        (m, mlog), (r, rlog) = got["twosym", None], got["twosym", "--rerun-ok"]
        sigs = lambda s: sorted(c["signature"] for c in s.get("crashes", []))
        mref, rref = m.get("reference", {}), r.get("reference", {})
        check(sigs(m) == sigs(r) and len(sigs(m)) == 1 and m.get("crash_runs") == r.get("crash_runs") > 0,
              f"twosym: the same crash and failing inputs ({sigs(m)} x{m.get('crash_runs')}; "
              f"{sigs(r)} x{r.get('crash_runs')})")
        check(m.get("memo_hits_ok", 0) > 0 and m.get("features") == r.get("features"),
              f"twosym: OK repeats answered ({m.get('memo_hits_ok')}), the same features")
        check(mref.get("value_checks", -1) == rref.get("value_checks", -2) > 0,
              f"twosym: the same value checks ({mref.get('value_checks')} vs {rref.get('value_checks')})")
        check(distinct_in_order(mlog) == distinct_in_order(rlog) and len(mlog) < len(rlog),
              f"twosym: the same inputs drawn, fewer run ({len(mlog)} against {len(rlog)}; the OK "
              f"repeats that ran are --check-every's)")


def check_spare_flags(a):
    """The spare flags on lasttok (n = 0 kills its worker) and healthy (never): --warm-spare
    keeps a spare loaded from the start (spares_peak >= 1 on both), --warm-spare=first-death
    (CUDA's default) only once a worker has died (lasttok >= 1, healthy 0 and one worker
    started), --no-warm-spare never (0). lasttok's SIGSEGV is found every way."""
    runs = [("lasttok", "--warm-spare", lambda n, w: n >= 1),
            ("lasttok", "--warm-spare=first-death", lambda n, w: n >= 1),
            ("lasttok", "--no-warm-spare", lambda n, w: n == 0),
            ("healthy", "--warm-spare", lambda n, w: n >= 1 and w == 2),
            ("healthy", "--warm-spare=first-death", lambda n, w: n == 0 and w == 1)]
    for model, flag, want in runs:
        art = tempfile.mkdtemp(prefix="af-spare-")
        p, s, _ = fuzz_summary(tool_path(a.bin, "aoti-fuzz"), os.path.join(a.examples, model + ".pt2"),
                               art, 400, "--no-eager", flag, seed=2, timeout=1200)
        pool = s.get("pool", {})
        peak, spawns = pool.get("spares_peak", -1), pool.get("spawns", -1)
        found = len(s.get("crashes", [])) == (1 if model == "lasttok" else 0)
        check(p.returncode == 0 and found and want(peak, spawns),
              f"{model} {flag}: spares_peak {peak}, {spawns} workers started, "
              f"{len(s.get('crashes', []))} crashes (rc {p.returncode})")


def check_case_log_and_timing(a):
    """bench/'s two sources on twosym (two symbols, a crash on its edge): $AOTI_FUZZ_CASE_LOG
    has one line per case run, "v0 v1 fill seed"; and
    the summary splits each case's time into post-to-answer and answer-to-next-post, both
    positive and together within the run's time."""
    pkg = os.path.join(a.examples, "twosym.pt2")
    if not os.path.exists(pkg):
        check(False, "twosym exported")
        return
    art = tempfile.mkdtemp(prefix="af-caselog-")
    log = os.path.join(art, "cases.log")
    p, s, _ = fuzz_summary(tool_path(a.bin, "aoti-fuzz"), pkg, art, 2000, "--no-eager", seed=3,
                           env=dict(os.environ, AOTI_FUZZ_CASE_LOG=log), timeout=1200)
    lines = open(log).read().splitlines() if os.path.exists(log) else []
    missed = s.get("run_ahead", {}).get("missed", -1)
    check(p.returncode == 0 and len(lines) == s.get("runs", -1) + missed > 0,
          f"case log: one line per case run ({len(lines)} lines, {s.get('runs')} runs and "
          f"{missed} posted ahead and not taken)")
    def well_formed(ln):
        f = ln.split()
        return len(f) == 4 and all(x.lstrip("-").isdigit() for x in f) and 0 <= int(f[2]) <= 3
    bad = [ln for ln in lines if not well_formed(ln)]
    check(not bad, f"case log: two values, a fill and a seed per line ({bad[:3]})")
    check(len({ln.split()[0] for ln in lines}) > 10 and len({ln.split()[1] for ln in lines}) > 10,
          "case log: the values vary (the fuzzer's draws, not one case)")
    pool = s.get("pool", {})
    ex, bt, cases = pool.get("exchange_mean_us", 0), pool.get("between_mean_us", 0), s.get("runs", 0)
    check(ex > 0 and bt > 0 and (ex + bt) * cases <= s.get("seconds", 0) * 1e6 * 1.05 + 1e5,
          f"summary: post to answer {ex} µs, answer to next post {bt} µs per case, within the "
          f"run ({cases} cases in {s.get('seconds')} s)")
    # the OK results that ran (those the memo answered did not cross the mailbox)
    ok = s.get("results_by_class", {}).get("OK", 0) - s.get("memo_hits_ok", 0)
    check(ok > 0 and pool.get("plain_results", -1) >= ok,
          f"summary: every OK answer on the mailbox's short path ({pool.get('plain_results')} "
          f"plain answers, {ok} OK results run)")


def is_subsequence(short_seq, long_seq):
    it = iter(long_seq)
    return all(x in it for x in short_seq)


def check_run_ahead(a):
    """The run-ahead (callbacks.c): the next mutation made and posted while libFuzzer does its
    own work. With it and with --no-run-ahead (made ahead, not posted), a run of the same seed
    runs the same cases in the same order, but for cases posted ahead and not taken, which
    run in addition and are counted; most execs take a case made ahead. healthy (no crash)
    and lasttok (its n=0 inputs kill the worker): the same crash signatures either way."""
    fuzz_bin = tool_path(a.bin, "aoti-fuzz")
    for name, runs in (("healthy", 20000), ("lasttok", 2000)):
        pkg = os.path.join(a.examples, name + ".pt2")
        got = {}
        for mode in ("ahead", "--no-run-ahead"):
            art = tempfile.mkdtemp(prefix=f"af-ahead-{name}-")
            log = os.path.join(art, "cases.log")
            extra = ["--no-eager", "--rerun-ok"] + ([mode] if mode.startswith("--") else [])
            p, s, _ = fuzz_summary(fuzz_bin, pkg, art, runs, *extra, seed=3,
                                   env=dict(os.environ, AOTI_FUZZ_CASE_LOG=log), timeout=1200)
            lines = open(log).read().splitlines() if os.path.exists(log) else []
            got[mode] = (p.returncode, s, lines)
        (rc1, on, lon), (rc2, off, loff) = got["ahead"], got["--no-run-ahead"]
        ra_on, ra_off = on.get("run_ahead", {}), off.get("run_ahead", {})
        pool_on, pool_off = on.get("pool", {}), off.get("pool", {})
        check(rc1 == 0 and rc2 == 0 and on.get("execs") == off.get("execs") == runs,
              f"{name}: {runs} execs both ways (rc {rc1}, {rc2})")
        check(ra_on.get("posting") is True and ra_off.get("posting") is False
              and ra_on.get("made") == ra_off.get("made") > runs // 2
              and ra_on.get("taken") == ra_off.get("taken") > runs // 2,
              f"{name}: most execs take a mutation made ahead, the same number either way "
              f"({ra_on}, {ra_off})")
        posted, taken, missed = pool_on.get("ahead_posted", 0), pool_on.get("ahead_taken", -1), ra_on.get("missed", -1)
        # the last one posted may still be in flight when libFuzzer's -runs ends the run
        check(posted > runs // 4 and posted - taken - missed in (0, 1) and missed <= posted // 100,
              f"{name}: cases posted ahead were run by the callback that took them, all but "
              f"{missed} and one at most left at the end (posted {posted}, taken {taken})")
        check(pool_off.get("ahead_posted", -1) == 0, f"{name}: --no-run-ahead posts nothing ahead")
        check(len(loff) == off.get("runs") and len(lon) == on.get("runs", 0) + missed
              and is_subsequence(loff, lon),
              f"{name}: the same cases in the same order, and the {missed} not taken besides "
              f"({len(lon)} and {len(loff)} cases run)")
        sig_on = {c["signature"] for c in on.get("crashes", [])}
        sig_off = {c["signature"] for c in off.get("crashes", [])}
        check(sig_on == sig_off and (name == "healthy") == (not sig_on),
              f"{name}: the same crash signatures either way ({sig_on}, {sig_off})")
    # A -max_len far above the encoding's size (a habit from other libFuzzer targets): the
    # mutations come out the same, so the run-ahead still follows libFuzzer.
    pkg = os.path.join(a.examples, "healthy.pt2")
    art = tempfile.mkdtemp(prefix="af-ahead-maxlen-")
    p, s, _ = fuzz_summary(fuzz_bin, pkg, art, 5000, "--no-eager", seed=3, lf=("-max_len=4096",))
    ra = s.get("run_ahead", {})
    check(p.returncode == 0 and s.get("execs") == 5000 and ra.get("taken", 0) > 2500,
          f"healthy, -max_len=4096: most execs take a mutation made ahead (rc {p.returncode}, {ra})")


def main():
    a = arg_parser().parse_args()
    names = example_names(a.examples)
    check(len(names) >= 5, f"examples exported ({names})")
    for name in names:
        pkg = os.path.join(a.examples, name + ".pt2")
        exp = expected(a.examples, name)
        art = tempfile.mkdtemp(prefix=f"af-fuzz-{name}-")
        if not exp["failing"] and not exp.get("mismatch"):
            rc, s = fuzz(a.bin, pkg, art, 20000)
            check(rc == 0 and s.get("execs") == 20000, f"{name}: 20000 execs ran (rc {rc})")
            check(s.get("distinct_crashes") == 0 and not glob.glob(art + "/*.bin"),
                  f"{name}: healthy, no crash in 20000 execs")
            ref = s.get("reference", {})
            check(ref.get("on") and ref.get("value_checks", 0) > 0 and ref.get("mismatches") == 0,
                  f"{name}: outputs compared with eager on the corpus, no mismatch ({ref})")
            check(0 < ref.get("value_check_seconds", 0) <= s.get("seconds", 0),
                  f"{name}: the value checks' time is counted, within the run "
                  f"({ref.get('value_check_seconds')} s of {s.get('seconds')} s)")
            continue
        rc, s = fuzz(a.bin, pkg, art, 2000)
        check(rc == 0, f"{name}: aoti-fuzz exits 0 (rc {rc})")
        first = s.get("first_crash_exec")
        check(first is not None and first <= 2000, f"{name}: first crash at exec {first} <= 2000")
        want = {f["class"] for f in exp["failing"]} | ({"MISMATCH"} if exp.get("mismatch") else set())
        got = {c["class"] for c in s.get("crashes", [])}
        check(got and got <= want, f"{name}: crash classes {got} are the expected {want}")
        if exp.get("mismatch"):
            mm = [c for c in s.get("crashes", []) if c["class"] == "MISMATCH"]
            check(mm and all(c.get("eager") == "AOTI_ONLY" for c in mm),
                  f"{name}: wrong values found as MISMATCH, eager AOTI_ONLY ({[(c['signature'], c.get('eager')) for c in mm]})")
        check(s.get("execs") == 2000, f"{name}: kept fuzzing after the crash (execs {s.get('execs')})")
        check(s.get("crash_runs", 0) > 1, f"{name}: many failing inputs ({s.get('crash_runs')}), one file each signature")
        bins = glob.glob(art + "/*.bin")
        check(len(bins) == s.get("distinct_crashes"), f"{name}: {len(bins)} crash file(s) == {s.get('distinct_crashes')} signature(s)")
        if "SIGNAL" in got:
            check(s["pool"]["spawns"] > 1, f"{name}: workers replaced after crashes ({s['pool']['spawns']} spawns)")
        counts = [read_sidecar(b)["count"] for b in bins]
        check(all(c >= 1 for c in counts) and sum(counts) >= s.get("crash_runs", 0),
              f"{name}: repeats counted in the sidecars ({counts})")
        for b in bins:
            p = aoti_run(a.bin, "--case", b, "--json", timeout=300)
            r = result(p)
            sig = read_sidecar(b)["signature"]
            if sig.startswith("MISMATCH:"):
                # wrong values: the replay runs the reference too; adaptive_pool reads past its
                # input, so whether its garbage is NaN or merely wrong varies between runs
                same = r.get("class") == "MISMATCH" and r.get("signature", "").split(" (")[0].split(" ")[:3] == sig.split(" (")[0].split(" ")[:3]
                same = same or (name == "adaptive_pool" and r.get("class") == "MISMATCH")
                check(p.returncode == 1 and same, f"{name}: aoti-run --case {os.path.basename(b)} replays a mismatch ({sig!r} -> {r.get('signature')!r})")
            else:
                check(p.returncode == 1 and r.get("signature") == sig, f"{name}: aoti-run --case {os.path.basename(b)} replays {sig!r}")
        rc, s2 = fuzz(a.bin, pkg, art, 500, seed=2)
        bins2 = glob.glob(art + "/*.bin")
        if exp.get("mismatch"):
            # another seed can reach mismatches of other shape classes (new signatures); what
            # must not happen is a second file for a signature already on disk
            sigs = [read_sidecar(x)["signature"] for x in bins2]
            check(rc == 0 and len(sigs) == len(set(sigs)) and len(bins2) >= len(bins),
                  f"{name}: a second run into the same dir adds no duplicate ({len(bins2)} files, {len(set(sigs))} signatures)")
        else:
            check(rc == 0 and len(bins2) == len(bins) and s2.get("new_crashes") == 0,
                  f"{name}: a second run into the same dir adds no duplicate ({len(bins2)} files)")
    check_predictions(a)
    check_one_symbol_predictions(a)
    check_case_log_and_timing(a)
    check_run_ahead(a)
    check_ok_memo(a)
    check_spare_flags(a)
    # two concurrent jobs on one package (what scripts/nightly.sh does per GPU): one crash
    # file per signature, counts summed, corpora merged
    out = tempfile.mkdtemp(prefix="af-nightly-")
    p = run_capture(["bash", os.path.join(ROOT, "scripts", "nightly.sh"), "--out", out, "--cpu-jobs", "2",
                     "--seconds", "3", os.path.join(a.examples, "lasttok.pt2")], env=dict(os.environ, AF_BUILD=a.bin))
    check(p.returncode == 0, f"nightly.sh with 2 jobs exits 0 ({p.stderr.strip()[-300:]})")
    bins = glob.glob(os.path.join(out, "lasttok", "crashes", "*.bin"))
    check(len(bins) == 1, f"2 jobs, one signature: {len(bins)} crash file")
    if bins:
        count = read_sidecar(bins[0])["count"]
        seen = sum(read_json(os.path.join(out, "lasttok", f"summary-{i}.json"))["crashes"][0]["seen_this_run"]
                   for i in (0, 1))
        check(count >= seen > 0, f"2 jobs: counts folded into one sidecar ({count} >= {seen})")
    check(len(os.listdir(os.path.join(out, "lasttok", "corpus"))) > 0, "2 jobs: corpora merged")
    finish("all fuzz end-to-end checks passed")


if __name__ == "__main__":
    main()
