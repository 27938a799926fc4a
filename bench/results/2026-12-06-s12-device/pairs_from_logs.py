"""Issue 33's pair table from pair_bandwidth.py's console logs (bw-LIB.N.txt[.xz]):
per (collective, bytes, dtype, op) the eager and graph us/call of each library and
the ratios variant/packtest and packtest/spec, variant/spec; then per collective,
size and mode the median and the worst ratio.
   python3 pairs_from_logs.py DIR [LIBS=packtest,variant,spec] > pairs.csv"""
import collections, lzma, os, re, statistics, sys

d = sys.argv[1]
libs = (sys.argv[2] if len(sys.argv) > 2 else "packtest,variant,spec").split(",")
row = re.compile(r"(\S+) (\S+)\s+(\S+)\s+(\S+)\s+(\d+) eager\s+([\d.]+) graph\s+([\d.]+)")
t = collections.defaultdict(dict)
for lib in libs:
    for name in sorted(os.listdir(d)):
        if not name.startswith(f"bw-{lib}."):
            continue
        opener = lzma.open if name.endswith(".xz") else open
        with opener(os.path.join(d, name), "rt") as f:
            for line in f:
                m = row.match(line)
                if m:
                    _, c, dt, op, b, e, g = m.groups()
                    t[(c, int(b), dt, op)][lib] = (float(e), float(g))
print("collective,bytes,dtype,op," + ",".join(f"{l}_eager_us,{l}_graph_us" for l in libs) +
      ",variant/packtest eager,variant/packtest graph,packtest/spec eager,packtest/spec graph")
groups = collections.defaultdict(list)
for k in sorted(t):
    v = t[k]
    cells = [f"{v[l][i]:.1f}" if l in v else "" for l in libs for i in (0, 1)]
    ratios = []
    for a, b in (("variant", "packtest"), ("packtest", "spec")):
        for i, mode in ((0, "eager"), (1, "graph")):
            if a in v and b in v:
                r = v[a][i] / v[b][i]
                ratios.append(f"{r:.3f}")
                groups[(k[0], k[1], mode, f"{a}/{b}")].append(r)
            else:
                ratios.append("")
    print(",".join([k[0], str(k[1]), k[2], k[3]] + cells + ratios))
print("# summary: collective bytes mode ratio: median, worst (max) over the pairs", file=sys.stderr)
for g in sorted(groups):
    rs = groups[g]
    print(f"# {g[0]:15s} {g[1]:>10d} {g[2]:6s} {g[3]:17s} median {statistics.median(rs):.3f}  max {max(rs):.3f}  (n={len(rs)})",
          file=sys.stderr)
