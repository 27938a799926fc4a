"""lat_table.py DIR REPS BASE SIDE...: medians of lat_floor_micro's rt- rows
(DIR/SIDE.I.log, I = 1..REPS) per side, and each side against BASE."""
import re, statistics, sys

d, reps, sides = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = {}
for side in sides:
    for i in range(1, reps + 1):
        try:
            lines = open(f"{d}/{side}.{i}.log").read().splitlines()
        except OSError:
            continue
        for line in lines:
            m = re.match(r"(rt-\S+)\s+(\d+)\s+\S+\s+\d+\s+\d+\s+([0-9.]+)\s+(\S+)", line)
            if m:
                r = rows.setdefault((m.group(1), int(m.group(2))), {})
                r.setdefault(side, []).append(float(m.group(3)))
                if m.group(4) != "ok":
                    print(f"check failed: {side} run {i}: {line}")
base = sides[0]
print(f"{'row':8} {'bytes':>7} " + " ".join(f"{s:>16}" for s in sides) + "   (us per call, median of runs; vs " + base + ")")
for (name, size), r in rows.items():
    b = statistics.median(r[base]) if r.get(base) else None
    cells = []
    for s in sides:
        if not r.get(s):
            cells.append(f"{'-':>16}")
            continue
        m = statistics.median(r[s])
        cells.append(f"{m:7.3f}" + (f" ({m / b - 1:+6.1%})" if b and s != base else " " * 10))
    print(f"{name:8} {size:7} " + " ".join(cells))
print("runs per side: " + ", ".join(f"{s} {len(next(iter(rows.values())).get(s, []))}" for s in sides))
