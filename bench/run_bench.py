"""All of aoti-fuzz's CPU benchmarks in one run, on the example packages.

    python bench/run_bench.py --bin build --examples .cache/examples [--out bench-results.json]

Everything is measured in the same run, on the same machine, against baselines measured
in that run (ratios, not absolute times, are what carries over between machines):
  harness  per-case time through the worker vs a plain in-process loop over the same C ABI
           (bench_harness), and crash -> next result latency: zygote, no zygote, warm spare
  fuzz     aoti-fuzz execs/s on the healthy package vs the in-process C loop replaying the
           exact cases the fuzzer ran (AOTI_FUZZ_CASE_LOG; each round as started and placed:
           worker and in-process loop on one CPU, AOTI_FUZZ_WORKER_CPU), vs a Python loop calling
           aoti_load_package's runner (in one process: dies with the first crash), vs a
           crash-surviving Python loop (a process per case); execs until the first crash
  minimize oracle questions, worker runs and wall time per example crash, against the bound
  reference aoti-fuzz execs/s with the eager reference on (outputs compared on corpus
           additions, the default) against off (--no-eager), same package, same seeds, rounds
           alternating on/off; goal >= 0.7x
  ok_memo  aoti-fuzz as shipped against --rerun-ok (every repeat of an OK case run again):
           execs/s on healthy and twosym, same seeds, and whether the findings agree
  python_harness  aoti-fuzz against the crash-surviving Python harness a user would write
           (python_harness.py: a persistent worker process, restarted after each crash) on
           four packages: healthy, mixed (lasttok: a SIGSEGV at n=0 only), fault-heavy
           (rowgather: every m > n aborts the process) and crossidx (an index check fails on
           much of the range, but on the CPU it raises: no restart); each round aoti-fuzz runs,
           then the Python harness replays exactly the cases it ran (AOTI_FUZZ_CASE_LOG);
           goals: >= 10x on the fault-heavy package, >= 1x on the healthy one
(The harness and fuzz rows run with --no-eager: they measure the worker, not the reference.
They and the reference and python_harness rows run with --rerun-ok: their baselines run every
case the fuzzer drew, repeats included.)
Prints a markdown table and writes the raw numbers as JSON."""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def sh(cmd, env=None, timeout=1800):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if p.returncode not in (0, 1):
        sys.stderr.write(p.stderr[-2000:])
    return p


def reference(a, ex):
    """The eager reference: on (corpus-only value checks) vs off, same package and seeds."""
    ref_rounds = []
    for seed in (1, 2, 3):
        row = {}
        for mode in ("off", "on"):
            tmp = tempfile.mkdtemp()
            os.makedirs(os.path.join(tmp, "corpus"))
            cmd = [os.path.join(a.bin, "fuzz", "aoti-fuzz"), ex("healthy"), "--artifacts", os.path.join(tmp, "c"),
                   "--summary", os.path.join(tmp, "s.json"), "--rerun-ok"] + (["--no-eager"] if mode == "off" else []) + [
                   "--", "-runs=30000", f"-seed={seed}", os.path.join(tmp, "corpus")]
            sh(cmd)
            s = json.load(open(os.path.join(tmp, "s.json")))
            row[mode] = {"execs_per_second": s["execs_per_second"], "value_checks": s["reference"]["value_checks"]}
        row["ratio"] = row["on"]["execs_per_second"] / row["off"]["execs_per_second"]
        ref_rounds.append(row)
    return {"rounds": ref_rounds, "median_ratio": statistics.median(r["ratio"] for r in ref_rounds)}


# (package, -runs): the memo of OK cases on a healthy package and on one with a crash edge
OK_MEMO_MODELS = (("healthy", 30000), ("twosym", 30000))


def ok_memo(a, ex):
    """The memo of OK cases (fuzz/memo.h): aoti-fuzz as shipped against --rerun-ok, same package,
    same seed, alternating, seeds 1-3, --no-eager. What a user gets is execs/s over the same
    inputs: libFuzzer draws the same sequence either way (the features are the same), and the
    memo answers the repeats of cases that ran OK without a run. Each round also says whether the
    two runs agreed on the features, the crash signatures and the failing inputs."""
    out = {}
    for name, runs in OK_MEMO_MODELS:
        rounds = []
        for seed in (1, 2, 3):
            row = {}
            for mode in ("memo", "rerun"):
                tmp = tempfile.mkdtemp()
                os.makedirs(os.path.join(tmp, "corpus"))
                sh([os.path.join(a.bin, "fuzz", "aoti-fuzz"), ex(name), "--no-eager", "--artifacts",
                    os.path.join(tmp, "c"), "--summary", os.path.join(tmp, "s.json")] +
                   (["--rerun-ok"] if mode == "rerun" else []) +
                   ["--", f"-runs={runs}", f"-seed={seed}", os.path.join(tmp, "corpus")])
                s = json.load(open(os.path.join(tmp, "s.json")))
                row[mode] = {k: s[k] for k in ("execs", "runs", "memo_hits", "memo_hits_ok", "features",
                                                "crash_runs", "seconds", "execs_per_second")}
                row[mode]["signatures"] = sorted(c["signature"] for c in s["crashes"])
                shutil.rmtree(tmp, ignore_errors=True)
            m, r = row["memo"], row["rerun"]
            row["ratio"] = m["execs_per_second"] / r["execs_per_second"]
            row["same_findings"] = (m["features"] == r["features"] and m["signatures"] == r["signatures"]
                                    and m["crash_runs"] == r["crash_runs"])
            rounds.append(row)
        out[name] = {"runs": runs, "rounds": rounds,
                     "median_ratio": statistics.median(r["ratio"] for r in rounds)}
    return out


def print_ok_memo(om):
    print("| package (execs, --no-eager) | seed | runs: OK memo / --rerun-ok | execs/s: OK memo / --rerun-ok | "
          "ratio | same features, signatures, failing inputs |\n|---|---|---|---|---|---|")
    for name, m in om.items():
        for seed, r in zip((1, 2, 3), m["rounds"]):
            print(f"| {name} ({m['runs']}) | {seed} | {r['memo']['runs']} / {r['rerun']['runs']} | "
                  f"{r['memo']['execs_per_second']:.0f} / {r['rerun']['execs_per_second']:.0f} | "
                  f"{r['ratio']:.2f} | {'yes' if r['same_findings'] else 'NO'} |")
        print(f"| **{name}: median** | | | | **{m['median_ratio']:.2f}x** | |")


def print_reference(rr):
    ref_ratios = ", ".join("%.2f" % r["ratio"] for r in rr["rounds"])
    print(f"| aoti-fuzz with the eager reference on vs off (healthy, 30k execs, 3 rounds) | "
          f"{statistics.median(r['on']['execs_per_second'] for r in rr['rounds']):.0f} vs "
          f"{statistics.median(r['off']['execs_per_second'] for r in rr['rounds']):.0f} execs/s: "
          f"{rr['median_ratio']:.2f}x (rounds: {ref_ratios}; "
          f"{statistics.median(r['on']['value_checks'] for r in rr['rounds']):.0f} value checks) |")


# (label, package, aoti-fuzz -runs, goal as a ratio or None). The -runs are sized so the
# Python harness replays the whole log in about a minute on a 2-core machine: each SIGSEGV
# costs it a fresh interpreter, `import torch` and the package load (seconds); lasttok's
# log has one n=0 case in every ~100 (fewer as libFuzzer moves on).
PY_MODELS = (("healthy", "healthy", 30000, 1.0),
             ("mixed", "lasttok", 600, None),
             ("fault-heavy", "rowgather", 600, 10.0),
             ("failing, no crash", "crossidx", 10000, None))


def python_harness(a, ex, here):
    """aoti-fuzz vs python_harness.py on the same case sequence, 3 rounds per package.

    Every round runs aoti-fuzz with one fixed seed (libFuzzer then draws the same sequence,
    which the rounds check), then replays its case log through the Python harness. The ratio
    is over the same cases: aoti-fuzz's runs/s (worker runs; the memo's answers to repeats
    left out) against the harness's cases/s. aoti-fuzz's execs/s counts the memo's answers
    too and is shown beside it. A replay that hits --py-max-seconds stops early (the first
    N cases of the log): then the rates are of different spans, said in the output."""
    out = {}
    for label, name, runs, goal in PY_MODELS:
        rounds, logs = [], set()
        for _ in range(3):
            tmp = tempfile.mkdtemp()
            log = os.path.join(tmp, "cases.log")
            os.makedirs(os.path.join(tmp, "corpus"))
            env = dict(os.environ, AOTI_FUZZ_CASE_LOG=log, AOTI_FUZZ_PYTHON=a.python)
            sh([os.path.join(a.bin, "fuzz", "aoti-fuzz"), ex(name), "--no-eager", "--rerun-ok", "--artifacts",
                os.path.join(tmp, "c"), "--summary", os.path.join(tmp, "s.json"), "--", f"-runs={runs}",
                "-seed=1", os.path.join(tmp, "corpus")], env=env)
            s = json.load(open(os.path.join(tmp, "s.json")))
            logs.add(open(log, "rb").read())
            fz = {k: s[k] for k in ("execs", "runs", "memo_hits", "crash_runs", "seconds", "execs_per_second")}
            fz["runs_per_second"] = s["runs"] / s["seconds"]
            fz["results_by_class"] = {k: v for k, v in s["results_by_class"].items() if v}
            fz["spawns"] = s["pool"]["spawns"]
            p = sh([a.python, os.path.join(here, "python_harness.py"), ex(name), log,
                    "--max-seconds", str(a.py_max_seconds)], timeout=a.py_max_seconds + 1200)
            py = json.loads(p.stdout.strip().splitlines()[-1])
            rounds.append({"aoti_fuzz": fz, "python_harness": py,
                           "ratio": fz["runs_per_second"] / py["cases_per_second"],
                           "ratio_execs": fz["execs_per_second"] / py["cases_per_second"]})
        out[label] = {"package": name, "runs": runs, "seed": 1, "goal": goal, "rounds": rounds,
                      "same_sequence_every_round": len(logs) == 1,
                      "median_ratio": statistics.median(r["ratio"] for r in rounds),
                      "median_ratio_execs": statistics.median(r["ratio_execs"] for r in rounds)}
    return out


def print_python_harness(ph):
    print("| package (runs, seed 1) | failing | aoti-fuzz runs/s (execs/s) | Python harness cases/s | "
          "outcomes in the replay | ratio, same cases: median (rounds) | goal |")
    print("|---|---|---|---|---|---|---|")
    for label, m in ph.items():
        rs = m["rounds"]
        med = lambda f: statistics.median(f(r) for r in rs)  # noqa: E731
        py = sorted(rs, key=lambda r: r["ratio"])[len(rs) // 2]["python_harness"]
        outc = ", ".join(f"{k} {v}" for k, v in sorted(py["outcomes"].items(), key=lambda kv: -kv[1]))
        span = (f"first {py['cases']} of {py['cases_in_log']} cases (capped at the time limit; "
                f"rates over different spans)" if py["capped"] else f"all {py['cases']} cases")
        ratios = " / ".join(f"{r['ratio']:.1f}" for r in rs)
        goal = "" if m["goal"] is None else (f">= {m['goal']:g}x: " +
                                             ("met" if m["median_ratio"] >= m["goal"] else "not met"))
        fz = rs[0]["aoti_fuzz"]
        bad_execs = fz["execs"] - fz["results_by_class"].get("OK", 0)
        bad_cases = py["cases"] - py["outcomes"].get("ok", 0)
        failing = (f"{100 * bad_cases / max(py['cases'], 1):.1f}% of the cases run, "
                   f"{100 * bad_execs / max(fz['execs'], 1):.0f}% of execs (repeats included)")
        print(f"| {label}: {m['package']} ({m['runs']}) | {failing} | {med(lambda r: r['aoti_fuzz']['runs_per_second']):.0f} "
              f"({med(lambda r: r['aoti_fuzz']['execs_per_second']):.0f}) | "
              f"{med(lambda r: r['python_harness']['cases_per_second']):.1f} ({span}; {py['restarts']} restarts, "
              f"worker start {py['worker_start_seconds_mean']:.1f} s) | {outc} | "
              f"**{m['median_ratio']:.1f}x** ({ratios}; execs/s basis {m['median_ratio_execs']:.1f}x"
              f"{'' if m['same_sequence_every_round'] else '; the rounds drew different sequences'}) | {goal} |")


def p1_rounds(a, ex):
    """P1: aoti-fuzz on `a.p1_model` (healthy unless asked; `a.p1_runs` runs, --no-eager)
    against the in-process C loop
    replaying exactly the cases that round ran, `a.rounds` rounds (seeds 1..N) back to back.
    aoti-fuzz's own summary splits its time per case in two: from posting a case to its
    answer (the worker's run and the hand-off both ways) and from an answer to the next post
    (libFuzzer and the tool's per-exec work), both measured in the same run.

    Each round runs twice, rounds outer: as started (the scheduler places the tool, its worker
    and the in-process loop) and placed (AOTI_FUZZ_WORKER_CPU: the worker and the in-process
    loop on CPU k, the tool on another; k alternates between rounds), so that the model runs on
    the same CPU on both sides. On a virtual machine one CPU can be slower than another for a
    while (another tenant on its core), which as started falls on one side only."""
    cpus = sorted(os.sched_getaffinity(0))
    placements = (False, True) if len(cpus) >= 2 and not a.p1_unplaced_only else (False,)
    rounds = []
    for seed in range(1, a.rounds + 1):
        for placed in placements:
            env, pin = dict(os.environ), []
            label = "as started"
            if placed:
                k = cpus[(seed - 1) % len(cpus)]
                others = ",".join(str(c) for c in cpus if c != k)
                env["AOTI_FUZZ_WORKER_CPU"] = str(k)
                pin = ["taskset", "-c", others]
                label = f"worker on CPU {k}"
            tmp = tempfile.mkdtemp()
            log = os.path.join(tmp, "cases.log")
            env["AOTI_FUZZ_CASE_LOG"] = log
            os.makedirs(os.path.join(tmp, "corpus"))
            sh(pin + [os.path.join(a.bin, "fuzz", "aoti-fuzz"), ex(a.p1_model), "--no-eager", "--rerun-ok", "--artifacts",
                      os.path.join(tmp, "c"), "--summary", os.path.join(tmp, "s.json"), "--",
                      f"-runs={a.p1_runs}", f"-seed={seed}", os.path.join(tmp, "corpus")], env=env)
            fz = json.load(open(os.path.join(tmp, "s.json")))
            del env["AOTI_FUZZ_CASE_LOG"]
            rep = json.loads(sh(pin + [os.path.join(a.bin, "bench", "bench_harness"), "--replay", log,
                                       ex(a.p1_model)], env=env).stdout)
            rounds.append({"seed": seed, "placed": placed, "placement": label, "aoti_fuzz": fz, "replay": rep,
                           "ratio": rep["inprocess_us_per_case"] / (1e6 / fz["execs_per_second"])})
            shutil.rmtree(tmp, ignore_errors=True)
    return rounds


def print_p1(rounds):
    print("| round | placement | aoti-fuzz µs/exec | of it: post to answer / answer to next post | "
          "in-process µs/case | ratio |\n|---|---|---|---|---|---|")
    for r in rounds:
        p = r["aoti_fuzz"]["pool"]
        print(f"| {r['seed']} | {r['placement']} | {1e6 / r['aoti_fuzz']['execs_per_second']:.1f} | "
              f"{p['exchange_mean_us']:.1f} / {p['between_mean_us']:.2f} | "
              f"{r['replay']['inprocess_us_per_case']:.1f} | {r['ratio']:.2f} |")
    for placed in (False, True):
        group = [r for r in rounds if r["placed"] == placed]
        if not group:
            continue
        rs = [r["ratio"] for r in group]
        tool = statistics.median(r["aoti_fuzz"]["pool"]["between_mean_us"] for r in group)
        print(f"| **median of {len(rs)}** | {'placed' if placed else 'as started'} | | answer to next post: "
              f"{tool:.2f} | | **{statistics.median(rs):.2f}** (spread {min(rs):.2f} to {max(rs):.2f}) |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--out", default="bench-results.json")
    ap.add_argument("--python", default=os.environ.get("AOTI_FUZZ_PYTHON", "python3"))
    ap.add_argument("--only", choices=("reference", "python_harness", "p1", "ok_memo"),
                    help="run one section alone")
    ap.add_argument("--rounds", type=int, default=5, help="P1 rounds (default 5)")
    ap.add_argument("--p1-runs", type=int, default=100000,
                    help="aoti-fuzz runs per P1 round (default 100000, as the GPU run's bench rounds)")
    ap.add_argument("--p1-model", default="healthy",
                    help="P1: the example package (default healthy, the goal's model; a model with longer "
                         "cases shows how the fixed cost per exec weighs)")
    ap.add_argument("--p1-unplaced-only", action="store_true",
                    help="P1: only the rounds as started (no placed rounds beside them)")
    ap.add_argument("--py-max-seconds", type=float, default=120,
                    help="python_harness: stop a replay after this long (default 120)")
    a = ap.parse_args()
    ex = lambda n: os.path.join(a.examples, n + ".pt2")  # noqa: E731
    here = os.path.dirname(os.path.abspath(__file__))
    res = {}

    if a.only == "reference":
        res["reference"] = reference(a, ex)
        json.dump(res, open(a.out, "w"), indent=1)
        print_reference(res["reference"])
        return
    if a.only == "p1":
        res["p1"] = p1_rounds(a, ex)
        json.dump(res, open(a.out, "w"), indent=1)
        print_p1(res["p1"])
        return
    if a.only == "ok_memo":
        res["ok_memo"] = ok_memo(a, ex)
        json.dump(res, open(a.out, "w"), indent=1)
        print_ok_memo(res["ok_memo"])
        return
    if a.only == "python_harness":
        res["python_harness"] = python_harness(a, ex, here)
        json.dump(res, open(a.out, "w"), indent=1)
        print_python_harness(res["python_harness"])
        return

    # 1. harness
    runs = []
    for _ in range(3):
        p = sh([os.path.join(a.bin, "bench", "bench_harness"), ex("healthy"), ex("lasttok"), "n=0", "3000"])
        runs.append(json.loads(p.stdout))
    res["harness"] = runs
    med = lambda k: statistics.median(r[k] for r in runs)  # noqa: E731

    # 2. fuzz throughput, same shape mix (P1): rounds of aoti-fuzz, each then the in-process
    #    loop replaying the cases that round ran, back to back (the median ratio is reported)
    rounds = p1_rounds(a, ex)
    started = [r for r in rounds if not r["placed"]]
    mid = sorted(started, key=lambda r: r["ratio"])[len(started) // 2]
    fz, rep = mid["aoti_fuzz"], mid["replay"]
    py = json.loads(sh([a.python, os.path.join(here, "python_loop.py"), ex("healthy"), "10"]).stdout.strip().splitlines()[-1])
    pyp = json.loads(sh([a.python, os.path.join(here, "python_per_process.py"), ex("healthy"), "3"]).stdout.strip().splitlines()[-1])
    res["fuzz"] = {"rounds": rounds, "python_loop": py, "python_per_process": pyp}

    res["reference"] = reference(a, ex)
    res["python_harness"] = python_harness(a, ex, here)
    res["ok_memo"] = ok_memo(a, ex)

    # 3. execs to first crash, 4. minimizer
    res["first_crash"], res["minimize"] = {}, {}
    for name in ("lasttok", "twosym", "runtime_check", "crossidx"):
        d = tempfile.mkdtemp()
        os.makedirs(os.path.join(d, "corpus"))
        sh([os.path.join(a.bin, "fuzz", "aoti-fuzz"), ex(name), "--artifacts", os.path.join(d, "c"),
            "--summary", os.path.join(d, "s.json"), "--", "-runs=2000", "-seed=1", os.path.join(d, "corpus")])
        s = json.load(open(os.path.join(d, "s.json")))
        res["first_crash"][name] = {k: s.get(k) for k in ("first_crash_exec", "first_crash_seconds", "execs_per_second", "runs", "memo_hits")}
        crash = sorted(glob.glob(os.path.join(d, "c", "*.bin")))[0]
        m = json.loads(sh([os.path.join(a.bin, "minimize", "aoti-minimize"), crash, "--out", os.path.join(d, "min"), "--json"]).stdout)
        res["minimize"][name] = {k: m.get(k) for k in ("oracle_calls", "oracle_runs", "call_bound", "search_seconds", "wall_seconds", "locally_minimal")}
        res["minimize"][name]["minimal"] = m.get("minimal", {}).get("case")

    json.dump(res, open(a.out, "w"), indent=1)
    w, i = med("worker_us_per_case"), med("inprocess_us_per_case")
    fz_us = 1e6 / fz["execs_per_second"]
    print("| measure | value |\n|---|---|")
    print(f"| worker vs in-process, per case (median of 3) | {w:.1f} µs vs {i:.1f} µs: ratio {i / w:.2f} |")
    print(f"| restart: zygote / no zygote / warm spare | {med('restart_ms_zygote'):.1f} / {med('restart_ms_no_zygote'):.1f} / {med('restart_ms_warm_spare'):.1f} ms |")
    ratios = " / ".join(f"{r['ratio']:.2f}" for r in started)
    print(f"| aoti-fuzz execs/s (healthy, {a.p1_runs} runs, median round) | {fz['execs_per_second']:.0f} ({fz_us:.1f} µs/exec) |")
    print(f"| in-process C loop, same {rep['replayed_cases']} cases | {rep['inprocess_us_per_case']:.1f} µs/case: aoti-fuzz at {mid['ratio']:.2f}x (rounds: {ratios}) |")
    print(f"| Python loop, one process (dies at first crash) | {py['cases_per_second']:.0f} cases/s: aoti-fuzz at {fz['execs_per_second'] / py['cases_per_second']:.2f}x |")
    print_reference(res["reference"])
    print(f"| Python loop surviving crashes (process per case) | {pyp['cases_per_second']:.3f} cases/s: aoti-fuzz at {fz['execs_per_second'] / pyp['cases_per_second']:.0f}x |")
    for n, v in res["first_crash"].items():
        mm = res["minimize"][n]
        print(f"| {n}: first crash at exec / minimize | {v['first_crash_exec']} ({v['first_crash_seconds']:.3f} s) / {mm['minimal']}: {mm['oracle_calls']} questions (bound {mm['call_bound']}), {mm['oracle_runs']} runs, search {mm['search_seconds']:.2f} s, wall {mm['wall_seconds']:.1f} s |")
    print()
    print_python_harness(res["python_harness"])
    print()
    print_ok_memo(res["ok_memo"])


if __name__ == "__main__":
    main()
