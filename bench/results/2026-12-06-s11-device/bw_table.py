#!/usr/bin/env python3
"""Medians over rounds of pair_bandwidth.py's JSON rows (DIR/bw-*.json) per
library, per size, and each library's ratio to REF (default spec).
    python3 bw_table.py DIR LIB1,LIB2,... [REF]
(bench/results/2026-12-04-rdc/bw_table.py, with the message size in the key.)"""
import collections
import glob
import json
import statistics
import sys

d = sys.argv[1]
libs = sys.argv[2].split(",")
ref = sys.argv[3] if len(sys.argv) > 3 else "spec"
v = collections.defaultdict(list)
for f in glob.glob(f"{d}/bw-*.json"):
    for r in json.load(open(f)):
        v[(r["lib"], r["collective"], r["bytes"], r["dtype"], r["op"], r["mode"])].append(r["us_median"])
keys = sorted({k[1:] for k in v})
print("collective bytes dtype op mode " + " ".join(libs) + " " + " ".join(f"{l}/{ref}" for l in libs if l != ref))
for k in keys:
    m = {l: statistics.median(v[(l,) + k]) if v[(l,) + k] else float("nan") for l in libs}
    print(" ".join(str(x) for x in k), " ".join(f"{m[l]:.1f}" for l in libs),
          " ".join(f"{m[l] / m[ref]:.3f}" for l in libs if l != ref))
