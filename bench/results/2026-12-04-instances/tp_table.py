# Ratios of tp_loopback_micro runs (device-run.sh tpexp/tpfix logs: tpx-SIDE.REP.txt, `row,` lines:
# collective, transfer, bytes, median us, min, max) against the first side given.
#   python3 tp_table.py LOGDIR BASE_SIDE [SIDE...]
import collections, glob, os, statistics, sys
logdir, sides = sys.argv[1], sys.argv[2:]
times = collections.defaultdict(list)
for f in glob.glob(os.path.join(logdir, "tpx-*.txt")):
    side = os.path.basename(f)[4:].rsplit(".", 2)[0]
    for line in open(f):
        if line.startswith("row,"):
            _, coll, transfer, nbytes, us, *_ = line.strip().split(",")
            times[(coll, transfer, int(nbytes), side)].append(float(us))
print(f"{'collective':14s}{'transfer':9s}{'bytes':>10s}{'base us':>10s}" + "".join(f"{s[:17]:>18s}" for s in sides[1:]))
for key in sorted({k[:3] for k in times}):
    base = statistics.median(times[key + (sides[0],)])
    cells = "".join(f"{statistics.median(times[key + (s,)]) / base:18.3f}" if times[key + (s,)] else f"{'-':>18s}"
                    for s in sides[1:])
    print(f"{key[0]:14s}{key[1]:9s}{key[2]:>10d}{base:10.2f}{cells}")
print(f"(medians of {len(times[next(iter(times))])} runs per side, each run's row the median of its own repetitions)")
