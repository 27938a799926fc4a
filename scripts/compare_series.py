#!/usr/bin/env python3
"""@file compare_series.py
@brief Puts the series of several benchmark runs of one job side by side
(bench/README.md "Series"): each coll_bench run holds one Purlin and one
NCCL series (results.csv columns purlin_series / nccl_series), a torch run
(bench/coll/torch_symm_bench.py) one torch series. Writes summary.md (per
collective: every series per size, the best NCCL, the ratios, geomeans over
1K-512K / 1M-1G / 4M-1G, dips, and issue 17's targets) and, with
matplotlib, one plot per collective: algbw with min-max error bars, the
link ceilings, markers where a Purlin series switches program, and a
ratio panel (Purlin / best peer).

usage: scripts/compare_series.py RUN_DIR... [--out DIR] [--ceilings CSV] [--no-plots]

Failed rows never enter a geomean or a target. Ceilings: a CSV of
kind,dirs,GBps (bench/micro/link_ceiling), per direction. Exit status: 0
written, 2 bad input.
"""
import argparse
import csv
import math
import os
import sys

COLLS = ["AllGather", "ReduceScatter", "AllReduce", "AllToAll"]
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
RANGES = [("1K-512K", KIB, 512 * KIB), ("1M-1G", MIB, GIB), ("4M-1G", 4 * MIB, GIB)]
# Issue 17's targets (2xH200, same run, medians).
LAT_VS_NCCL = 2.0                  # PDL-neutral latency geomean 1K-512K, every collective
LAT_VS_TORCH_AR = 1.5              # ... against torch symmetric memory's best AllReduce
BW_VS_NCCL = {"ReduceScatter": 1.10, "AllReduce": 1.10, "AllGather": 1.0, "AllToAll": 1.0}  # 4M-1G
CEILING_FRACTION_1G = 0.97         # busbw at 1 GiB against the copy-engine ceiling (both directions)
REGISTERED_VS_GRAPH = 0.03         # eager registered within 3% of the captured direct program


class InputError(Exception):
    pass


def bus_factor(coll, n):
    return 2.0 * (n - 1) / n if coll == "AllReduce" else (n - 1) / n


def num(s):
    try:
        v = float(s)
    except (TypeError, ValueError):
        return math.nan
    return v


def read_run(run_dir):
    """Returns (meta dict, list of points): a point is one series at one
    (collective, bytes): series, coll, bytes, us, min, max, ok, program, plan."""
    path = os.path.join(run_dir, "results.csv")
    meta = {}
    meta_path = os.path.join(run_dir, "meta.txt")
    if os.path.exists(meta_path):
        with open(meta_path, newline="") as f:
            for row in csv.reader(f):
                if len(row) >= 2 and row[0] != "key":
                    meta[row[0]] = ",".join(row[1:])
    points = []
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            for k in ("collective", "bytes", "purlin_us", "nccl_us", "ok"):
                if k not in (reader.fieldnames or []):
                    raise InputError(f"{path}: missing column {k}")
            for i, r in enumerate(reader, start=2):
                try:
                    coll, size, ok = r["collective"], int(r["bytes"]), r["ok"].strip() == "1"
                    if (r.get("placement") or "out").strip() == "in":
                        coll += " (in)"  # coll_bench --in-place: its own key, not the out-of-place point's
                except ValueError as e:
                    raise InputError(f"{path}:{i}: {e}")
                # Runs from before the series columns: the graph mode against default NCCL.
                for lib, default in (("purlin", "purlin-graph-graph"), ("nccl", "nccl-default-graph")):
                    series = (r.get(f"{lib}_series") or default).strip()
                    us = num(r[f"{lib}_us"])
                    if series == "-" or math.isnan(us):
                        continue
                    points.append({
                        "series": series, "coll": coll, "bytes": size, "us": us,
                        "min": num(r.get(f"{lib}_min_us")), "max": num(r.get(f"{lib}_max_us")), "ok": ok,
                        "program": (r.get("program") or "-").strip() if lib == "purlin" else "-",
                        "plan": (r.get("plan") or "") if lib == "purlin" else "",
                    })
    except OSError as e:
        raise InputError(f"{path}: {e}")
    if not points:
        raise InputError(f"{path}: no rows")
    return meta, points


def world_of(metas):
    sizes = {m.get("world_size") for m in metas if m.get("world_size")}
    if len(sizes) > 1:
        raise InputError("runs of different world sizes: " + ", ".join(sorted(sizes)))
    return int(sizes.pop()) if sizes else 2


def index(points):
    """data[series][coll][bytes] = point (a later run's point replaces an earlier one)."""
    data = {}
    for p in points:
        data.setdefault(p["series"], {}).setdefault(p["coll"], {})[p["bytes"]] = p
    return data


def is_purlin(s):
    return s.startswith("purlin-")


def family(s):
    """Series of one family are compared with each other: the same timing
    (graph / eager) and separator use. 'purlin-staged-graph-sep' -> 'graph-sep'."""
    parts = s.split("-")
    return "-".join(parts[2:]) if len(parts) >= 3 else ""


def best_peer(data, prefix, coll, size, fam):
    """The fastest ok point of any series starting with `prefix` of family `fam`."""
    best = None
    for s, colls in data.items():
        if not s.startswith(prefix) or family(s) != fam:
            continue
        p = colls.get(coll, {}).get(size)
        if p and p["ok"] and (best is None or p["us"] < best["us"]):
            best = p
    return best


def geomean(xs):
    xs = [x for x in xs if x > 0 and not math.isnan(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def ratios(data, series, coll, prefix, lo, hi):
    """(peer us / series us) at the sizes in [lo, hi] where both are ok."""
    out = []
    fam = family(series)
    for size, p in sorted(data[series].get(coll, {}).items()):
        if lo <= size <= hi and p["ok"]:
            b = best_peer(data, prefix, coll, size, fam)
            if b:
                out.append(b["us"] / p["us"])
    return out


def dips(points_by_size):
    """Sizes whose algbw is below both neighbours' (ok rows only)."""
    sizes = [s for s, p in sorted(points_by_size.items()) if p["ok"]]
    bw = {s: s / points_by_size[s]["us"] for s in sizes}
    return [s for a, s, b in zip(sizes, sizes[1:], sizes[2:]) if bw[s] < min(bw[a], bw[b])]


def switches(points_by_size):
    """(size, program) where a series' program differs from the size before."""
    out, last = [], None
    for size, p in sorted(points_by_size.items()):
        if last is not None and p["program"] != last:
            out.append((size, p["program"]))
        last = p["program"]
    return out


def human(b):
    for unit, div in (("G", GIB), ("M", MIB), ("K", KIB)):
        if b >= div and b % div == 0:
            return f"{b // div}{unit}"
    return str(b)


def fmt(x, spec=".2f"):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def targets(data, n, ceilings):
    """Issue 17's targets that the data allow evaluating: (name, measured, ok)."""
    out = []
    purlin = [s for s in data if is_purlin(s)]
    for s in purlin:
        fam = family(s)
        for coll in COLLS:
            if coll not in data[s]:
                continue
            if fam.endswith("-sep"):
                g = geomean(ratios(data, s, coll, "nccl-", KIB, 512 * KIB))
                if not math.isnan(g):
                    out.append((f"{s} {coll}: latency 1K-512K vs best NCCL >= {LAT_VS_NCCL}x", g, g >= LAT_VS_NCCL))
                if coll == "AllReduce":
                    g = geomean(ratios(data, s, coll, "torch-", KIB, 512 * KIB))
                    if not math.isnan(g):
                        out.append((f"{s} AllReduce: latency 1K-512K vs torch symmetric memory >= {LAT_VS_TORCH_AR}x",
                                    g, g >= LAT_VS_TORCH_AR))
            g = geomean(ratios(data, s, coll, "nccl-", 4 * MIB, GIB))
            if not math.isnan(g) and not fam.startswith("eager"):
                out.append((f"{s} {coll}: bandwidth 4M-1G vs best NCCL >= {BW_VS_NCCL[coll]}x", g,
                            g >= BW_VS_NCCL[coll]))
            p = data[s][coll].get(GIB)
            ce = ceilings.get(("copy engine", 2))
            if p and p["ok"] and ce:
                frac = GIB / p["us"] / 1e3 * bus_factor(coll, n) / ce
                out.append((f"{s} {coll}: busbw at 1 GiB >= {CEILING_FRACTION_1G:.0%} of the copy-engine ceiling "
                            f"({ce:.0f} GB/s)", frac, frac >= CEILING_FRACTION_1G))
    for coll in COLLS:
        eager = data.get("purlin-eager-eager", {}).get(coll, {})
        worst = min((data["nccl-default-eager"][coll][b]["us"] / p["us"]
                     for b, p in eager.items() if b >= 4 * MIB and p["ok"]
                     and data.get("nccl-default-eager", {}).get(coll, {}).get(b, {}).get("ok")), default=None)
        if worst is not None:
            out.append((f"purlin-eager-eager {coll}: >= 1.0x eager default NCCL at every size >= 4 MiB (worst)",
                        worst, worst >= 1.0))
        reg = data.get("purlin-registered-eager", {}).get(coll, {})
        graph = data.get("purlin-graph-graph", {}).get(coll, {})
        diffs = [abs(p["us"] / graph[b]["us"] - 1) for b, p in reg.items()
                 if b >= 4 * MIB and p["ok"] and p["program"] == "direct" and graph.get(b, {}).get("ok")]
        if diffs:
            out.append((f"purlin-registered-eager {coll}: within {REGISTERED_VS_GRAPH:.0%} of the captured direct "
                        f"program (largest difference)", max(diffs), max(diffs) <= REGISTERED_VS_GRAPH))
    return out


def write_summary(path, data, metas, n, ceilings, plots):
    lines = ["# Series side by side", ""]
    lines.append(f"World size {n}; runs: {len(metas)}; commit(s): "
                 + ", ".join(sorted({m.get('commit', 'unknown') for m in metas})) + "; device(s): "
                 + ", ".join(sorted({m.get('device', '?') for m in metas})) + "; date(s): "
                 + ", ".join(sorted({m.get('date', '?')[:10] for m in metas})) + ".")
    lines += ["", "Each cell is the median of the samples in microseconds (min-max in the CSVs); "
              "ratios are best peer time / Purlin time of the same family (timing, separator); "
              "failed rows (FAILED) enter no geomean.", ""]
    if ceilings:
        lines.append("Link ceilings (per direction): " + ", ".join(
            f"{k} {d} dir(s) {v:.1f} GB/s" for (k, d), v in sorted(ceilings.items())) + ".")
        lines.append("")
    series = sorted(data)
    for coll in COLLS:
        sizes = sorted({b for s in series for b in data[s].get(coll, {})})
        if not sizes:
            continue
        lines += [f"## {coll}", "", "| bytes | " + " | ".join(series) + " |",
                  "|---|" + "---|" * len(series)]
        for b in sizes:
            cells = []
            for s in series:
                p = data[s].get(coll, {}).get(b)
                cells.append("" if not p else fmt(p["us"]) + ("" if p["ok"] else " FAILED")
                             + (f" ({p['program']})" if is_purlin(s) else ""))
            lines.append(f"| {human(b)} | " + " | ".join(cells) + " |")
        lines.append("")
        for s in series:
            if not is_purlin(s) or coll not in data[s]:
                continue
            g = [fmt(geomean(ratios(data, s, coll, "nccl-", lo, hi))) for _, lo, hi in RANGES]
            t = [fmt(geomean(ratios(data, s, coll, "torch-", lo, hi))) for _, lo, hi in RANGES]
            lines.append(f"- {s}: geomean vs best NCCL " + ", ".join(f"{r[0]} {x}" for r, x in zip(RANGES, g))
                         + "; vs torch " + ", ".join(f"{r[0]} {x}" for r, x in zip(RANGES, t)))
            d = dips(data[s][coll])
            lines.append(f"  - dips (algbw below both neighbours): {', '.join(human(x) for x in d) or 'none'}; "
                         "program switches: " + (", ".join(f"{human(b)} -> {p}" for b, p in switches(data[s][coll]))
                                                 or "none"))
        lines.append("")
    lines += ["## Targets (issue 17)", "", "| target | measured | verdict |", "|---|---|---|"]
    for name, value, ok in targets(data, n, ceilings):
        lines.append(f"| {name} | {fmt(value, '.3f')} | {'met' if ok else 'MISSED'} |")
    lines.append("")
    if plots:
        lines += ["## Plots", ""] + [f"![{os.path.basename(p)}]({os.path.basename(p)})" for p in plots] + [""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def read_ceilings(path):
    out = {}
    if not path:
        return out
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            try:
                out[(r["kind"].strip(), int(r["dirs"]))] = float(r["GBps"])
            except (KeyError, ValueError):
                raise InputError(f"{path}: expected columns kind,dirs,GBps")
    return out


def make_plots(outdir, data, n, ceilings, legends):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    files = []
    for coll in COLLS:
        series = [s for s in sorted(data) if coll in data[s]]
        if not series:
            continue
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 8), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
        for s in series:
            pts = [p for _, p in sorted(data[s][coll].items()) if p["ok"]]
            if not pts:
                continue
            x = [p["bytes"] for p in pts]
            y = [p["bytes"] / p["us"] / 1e3 for p in pts]
            lo = [yy - p["bytes"] / p["max"] / 1e3 if not math.isnan(p["max"]) else 0 for yy, p in zip(y, pts)]
            hi = [p["bytes"] / p["min"] / 1e3 - yy if not math.isnan(p["min"]) else 0 for yy, p in zip(y, pts)]
            line = top.errorbar(x, y, yerr=[lo, hi], marker="o" if is_purlin(s) else "s", ms=3, capsize=2,
                                label=f"{s}: {legends.get(s, '')}", linestyle="-" if is_purlin(s) else "--")
            if is_purlin(s):
                for b, prog in switches(data[s][coll]):
                    top.axvline(b, color=line[0].get_color(), linestyle=":", linewidth=0.8)
                    top.annotate(prog, (b, max(y)), rotation=90, fontsize=6, color=line[0].get_color())
                xr, yr = [], []
                for p in pts:
                    b = best_peer(data, "nccl-", coll, p["bytes"], family(s))
                    if b:
                        xr.append(p["bytes"])
                        yr.append(b["us"] / p["us"])
                if xr:
                    bottom.plot(xr, yr, marker="o", ms=3, color=line[0].get_color(), label=s)
        for (kind, dirs), v in sorted(ceilings.items()):
            top.axhline(v / bus_factor(coll, n), linestyle="-.", linewidth=0.8, color="grey")
            top.annotate(f"{kind}, {dirs} dir(s): {v:.0f} GB/s busbw", (min(x for s in series for x in data[s][coll]),
                         v / bus_factor(coll, n)), fontsize=6, color="grey")
        top.set_xscale("log", base=2)
        top.set_yscale("log")
        top.set_ylabel("algbw (GB/s)")
        top.set_title(f"{coll}, {n} ranks: medians, min-max bars")
        top.legend(fontsize=6)
        if not bottom.lines:
            bottom.text(0.5, 0.5, "no NCCL series in these runs", ha="center", va="center", transform=bottom.transAxes)
        bottom.axhline(1.0, color="black", linewidth=0.8)
        bottom.set_xscale("log", base=2)
        bottom.set_ylabel("best NCCL / Purlin\n(time ratio)")
        bottom.set_xlabel("message bytes")
        fig.tight_layout()
        path = os.path.join(outdir, f"series-{coll.lower()}.png")
        fig.savefig(path, dpi=120)
        plt.close(fig)
        files.append(path)
    return files


def main(argv):
    if "--no-plots" not in argv:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from plot_bench import reexec_with_matplotlib
        reexec_with_matplotlib(argv, __file__)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--out", default=None)
    ap.add_argument("--ceilings", default=None)
    ap.add_argument("--no-plots", action="store_true")
    a = ap.parse_args(argv)
    try:
        metas, points, legends = [], [], {}
        for r in a.runs:
            try:
                meta, pts = read_run(r)
            except InputError as e:
                if "no rows" not in str(e) or len(a.runs) == 1:
                    raise
                print(f"compare_series.py: {e}: left out", file=sys.stderr)  # a part that did not finish
                continue
            metas.append(meta)
            points += pts
            for key in ("purlin_legend", "nccl_legend"):
                if meta.get(key) and meta.get(key.replace("legend", "series")):
                    legends[meta[key.replace("legend", "series")]] = meta[key]
            for key, value in meta.items():  # "legend:<series>,<text>" (torch_symm_bench.py)
                if key.startswith("legend:"):
                    legends[key[len("legend:"):]] = value
        n = world_of(metas)
        ceilings = read_ceilings(a.ceilings)
    except (InputError, OSError) as e:
        print(f"compare_series.py: {e}", file=sys.stderr)
        return 2
    data = index(points)
    out = a.out or a.runs[0]
    os.makedirs(out, exist_ok=True)
    plots = [] if a.no_plots else make_plots(out, data, n, ceilings, legends)
    write_summary(os.path.join(out, "summary.md"), data, metas, n, ceilings, plots)
    print(f"compare_series.py: wrote {os.path.join(out, 'summary.md')} and {len(plots)} plot(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
