"""The GPU's clocks per span of a run, as a markdown table.

    python clocks.py CLOCKS_CSV SPANS_TXT

CLOCKS_CSV: `nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,pstate,utilization.gpu,
power.draw --format=csv,noheader,nounits -lms 100`. SPANS_TXT: lines "NAME start|end EPOCH_S".
For each span, the samples taken inside it: the SM clock (median, min, max), the memory clock,
the performance states seen and the GPU's busy percentage. nvidia-smi's timestamps are local
time, as `date` gives it on the same machine."""
import datetime
import statistics
import sys


def samples(path):
    out = []
    for line in open(path):
        f = [x.strip() for x in line.split(",")]
        try:
            t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            out.append((t, float(f[1]), float(f[2]), f[3], float(f[4])))
        except (ValueError, IndexError):
            pass  # a header, a cut-off last line, "[N/A]"
    return out


def spans(path):
    out = {}
    for line in open(path):
        parts = line.split()
        if len(parts) == 3:
            out.setdefault(parts[0], {})[parts[1]] = float(parts[2])
    return out


def main():
    ss, sp = samples(sys.argv[1]), spans(sys.argv[2])
    print(f"\n## GPU clocks during the bench rounds (nvidia-smi every 100 ms; {len(ss)} samples)\n")
    print("| run | seconds | samples | SM MHz: median (min-max) | memory MHz, median | pstates | GPU busy %, median |")
    print("|---|---|---|---|---|---|---|")
    for name, s in sp.items():
        if "start" not in s or "end" not in s:
            continue
        inside = [x for x in ss if s["start"] <= x[0] <= s["end"]]
        if not inside:
            print(f"| {name} | {s['end'] - s['start']:.1f} | 0 | | | | |")
            continue
        sm = [x[1] for x in inside]
        print(f"| {name} | {s['end'] - s['start']:.1f} | {len(inside)} | {statistics.median(sm):.0f} "
              f"({min(sm):.0f}-{max(sm):.0f}) | {statistics.median(x[2] for x in inside):.0f} | "
              f"{' '.join(sorted({x[3] for x in inside}))} | {statistics.median(x[4] for x in inside):.0f} |")


if __name__ == "__main__":
    main()
