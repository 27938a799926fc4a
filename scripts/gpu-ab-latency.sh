#!/usr/bin/env bash
# A/B of two lat_floor_micro binaries (issue 15: the latency kernels purlinc
# prints from the IR against the hand-written ones of commit 0b21665), in
# one machine session, alternating A B A B ... so drifts hit both alike:
#   scripts/gpu-ab-latency.sh A_BIN B_BIN REPS LOGDIR [micro args...]
# Each run prints the rt-* rows; LOGDIR gets a.N.log / b.N.log and
# summary.txt (median and min-max per row over the runs, B against A).
# On one GPU pass `--loopback --unchecked`: loopback alone bounds the
# waits (checked mode), which is not what the runtime runs by default.
set -euo pipefail
a=$1 b=$2 reps=$3 out=$4
shift 4
mkdir -p "$out"
for i in $(seq 1 "$reps"); do
  "$a" --only rt- "$@" > "$out/a.$i.log" 2>&1 || { echo "A run $i failed"; cat "$out/a.$i.log"; exit 1; }
  "$b" --only rt- "$@" > "$out/b.$i.log" 2>&1 || { echo "B run $i failed"; cat "$out/b.$i.log"; exit 1; }
done
python3 - "$out" "$reps" <<'PY' | tee "$out/summary.txt"
import re, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
rows = {}
for side in "ab":
    for i in range(1, reps + 1):
        for line in open(f"{out}/{side}.{i}.log"):
            m = re.match(r"(rt-\S+)\s+(\d+)\s+\S+\s+\d+\s+\d+\s+([0-9.]+)\s+(\S+)", line)
            if m:
                rows.setdefault((m.group(1), int(m.group(2))), {"a": [], "b": [], "bad": []})
                r = rows[(m.group(1), int(m.group(2)))]
                r[side].append(float(m.group(3)))
                if m.group(4) != "ok":
                    r["bad"].append(f"{side}{i}:{m.group(4)}")
print(f"{'row':8} {'bytes':>8} {'A med':>7} {'A min-max':>13} {'B med':>7} {'B min-max':>13} {'B/A':>7}  checks")
worst = 0.0
for (name, size), r in rows.items():
    ma, mb = statistics.median(r["a"]), statistics.median(r["b"])
    worst = max(worst, mb / ma - 1)
    print(f"{name:8} {size:8} {ma:7.3f} {min(r['a']):6.3f}-{max(r['a']):6.3f} {mb:7.3f} {min(r['b']):6.3f}-{max(r['b']):6.3f} "
          f"{mb / ma - 1:+7.1%}  {'ok' if not r['bad'] else ' '.join(r['bad'])}")
print(f"runs per side: {reps}; worst B against A: {worst:+.1%} (us per call, medians)")
PY
