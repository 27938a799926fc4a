#!/usr/bin/env python3
"""tp_table.py DIR REPS: medians over REPS runs of tp_loopback_micro's
`row,<collective>,<mode>,<bytes>,<median us>,<min us>,<max us>` lines for
basetest and packtest (DIR/<side>.<i>.log), and packtest / basetest."""
import statistics
import sys
from collections import defaultdict

d, reps = sys.argv[1], int(sys.argv[2])
vals = defaultdict(lambda: defaultdict(list))
for side in ("basetest", "packtest"):
    for i in range(1, reps + 1):
        try:
            lines = open(f"{d}/{side}.{i}.log").read().splitlines()
        except OSError:
            continue
        for ln in lines:
            f = ln.split(",")
            if len(f) >= 7 and f[0] == "row":
                vals[(f[1], f[2], int(f[3]))][side].append(float(f[4]))
print("collective,mode,bytes,base_us,pack_us,pack/base,runs")
for key in sorted(vals):
    b, p = vals[key]["basetest"], vals[key]["packtest"]
    if not b or not p:
        continue
    mb, mp = statistics.median(b), statistics.median(p)
    print(f"{key[0]},{key[1]},{key[2]},{mb:.1f},{mp:.1f},{mp / mb:.3f},{len(b)}/{len(p)}")
