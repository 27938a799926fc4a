#!/usr/bin/env python3
"""@file plot_bench.py
@brief Turns one coll_bench run (results.csv, meta.txt, run.log) into PNG
plots and a markdown summary with the issue's targets, under
bench/results/<YYYY-MM-DD>-<device>/ (or --out).

usage: scripts/plot_bench.py RUN_DIR [--out DIR] [--no-plots]

RUN_DIR holds results.csv (collective,bytes,purlin_us,nccl_us,purlin_GBps,
nccl_GBps,ok,ctas, and where coll_bench repeated its rows the medians' spread
purlin_min_us,purlin_max_us,nccl_min_us,nccl_max_us, bus bandwidths and
samples) and meta.txt (key,value) as coll_bench writes them. Failed rows
never enter a geomean.
Plots need matplotlib; without it (or with --no-plots) only the summary is
written. Exit status: 0 written, 2 bad input.
"""
import argparse
import csv
import math
import os
import re
import shutil
import sys

COLLS = ["AllGather", "ReduceScatter", "AllReduce", "AllToAll"]
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
# Targets of issue 6 on 2xH200 (NV18).
LAT_RATIO_MIN = 3.0            # geomean NCCL/Purlin latency, 1 KiB-512 KiB
AR_LAT_MAX_US = 4.0            # AllReduce latency, 1 KiB-64 KiB
BW_RATIO_MIN = 1.25            # geomean Purlin/NCCL algbw, 1 MiB-1 GiB
BW_1G_MIN = {"AllReduce": 355.0, "AllGather": 700.0, "ReduceScatter": 700.0, "AllToAll": 700.0}
CTAS_1G_MAX = 32


class InputError(Exception):
    pass


def read_rows(path):
    need = ["collective", "bytes", "purlin_us", "nccl_us", "purlin_GBps", "nccl_GBps", "ok", "ctas"]
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [k for k in need if k not in (reader.fieldnames or [])]
            if missing:
                raise InputError(f"{path}: missing column(s) {', '.join(missing)}")
            rows = []
            for i, r in enumerate(reader, start=2):
                try:
                    row = {
                        # coll_bench --in-place rows get their own key (not one curve with out-of-place)
                        "coll": r["collective"] + (" (in)" if (r.get("placement") or "out").strip() == "in" else ""),
                        "bytes": int(r["bytes"]),
                        "p_us": float(r["purlin_us"]), "n_us": float(r["nccl_us"]),
                        "p_bw": float(r["purlin_GBps"]), "n_bw": float(r["nccl_GBps"]),
                        "ok": r["ok"].strip() == "1", "ctas": int(r["ctas"]),
                        "program": (r.get("program") or "staged").strip(),
                    }
                    # Optional (repeated rows): the spread of the medians, bus bandwidth.
                    for key, col in (("p_min", "purlin_min_us"), ("p_max", "purlin_max_us"),
                                     ("n_min", "nccl_min_us"), ("n_max", "nccl_max_us"),
                                     ("p_bus", "purlin_busGBps"), ("n_bus", "nccl_busGBps")):
                        v = r.get(col)
                        row[key] = float(v) if v not in (None, "") else float("nan")
                    row["samples"] = int(r["samples"]) if r.get("samples") not in (None, "") else 1
                    rows.append(row)
                except (TypeError, ValueError) as e:
                    raise InputError(f"{path}:{i}: malformed row ({e})")
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}")
    if not rows:
        raise InputError(f"{path}: no rows")
    return rows


def read_meta(path):
    meta = {}
    if os.path.exists(path):
        with open(path, newline="") as f:
            for r in csv.reader(f):
                if len(r) >= 2 and r[0] != "key":
                    meta[r[0]] = ",".join(r[1:])
    return meta


def geomean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def slug(meta):
    date = meta.get("date", "unknown-date").split(" ")[0]
    dev = meta.get("device", "unknown-device")
    dev = re.sub(r"^NVIDIA\s+", "", dev)
    dev = re.sub(r"[^A-Za-z0-9]+", "-", dev).strip("-").lower()
    return f"{date}-{dev}x{meta.get('world_size', '?')}"


def human(b):
    for unit, div in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if b >= div:
            return f"{b // div} {unit}"
    return f"{b} B"


def summarize(rows):
    """Per collective: the figures the issue's targets are stated in."""
    out = {}
    for c in COLLS:
        rs = [r for r in rows if r["coll"] == c]
        if not rs:
            continue
        good = [r for r in rs if r["ok"]]  # a failed row never enters a geomean
        lat = [r for r in good if KIB <= r["bytes"] <= 512 * KIB]
        bw = [r for r in good if MIB <= r["bytes"] <= GIB]
        bw4 = [r for r in good if 4 * MIB <= r["bytes"] <= GIB]
        g1 = [r for r in rs if r["bytes"] == GIB]
        ar_small = [r for r in rs if KIB <= r["bytes"] <= 64 * KIB]
        out[c] = {
            "lat_ratio": geomean([r["n_us"] / r["p_us"] for r in lat if r["p_us"] > 0]) if lat else float("nan"),
            "bw_ratio": geomean([r["p_bw"] / r["n_bw"] for r in bw if r["n_bw"] > 0]) if bw else float("nan"),
            "bw4_ratio": geomean([r["p_bw"] / r["n_bw"] for r in bw4 if r["n_bw"] > 0]) if bw4 else float("nan"),
            "p_1g": g1[0]["p_bw"] if g1 else float("nan"),
            "n_1g": g1[0]["n_bw"] if g1 else float("nan"),
            "ctas_1g": g1[0]["ctas"] if g1 else None,
            "max_ctas": max(r["ctas"] for r in rs),
            "small_max_us": max((r["p_us"] for r in ar_small), default=float("nan")),
            "failed": [r["bytes"] for r in rs if not r["ok"]],
            "rows": len(rs),
        }
    return out


def verdict(ok):
    return "PASS" if ok else "FAIL"


def fmt(x, spec=".2f"):
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, spec)


def write_summary(path, rows, meta, stats, plots, staged=None):
    L = []
    L.append(f"# Collective benchmark: Purlin vs NCCL, {meta.get('device', '?')} x{meta.get('world_size', '?')}")
    L.append("")
    L.append(f"- date: {meta.get('date', '?')}")
    L.append(f"- device: {meta.get('device', '?')} (sm_{meta.get('sm', '?')}, {meta.get('sms', '?')} SMs), "
             f"world size {meta.get('world_size', '?')}")
    L.append(f"- commit: {meta.get('commit', '?')}; Purlin API: {meta.get('purlin_api', '?')}")
    L.append(f"- NCCL {meta.get('nccl', '?')}, CUDA runtime {meta.get('cuda_runtime', '?')}, "
             f"driver {meta.get('cuda_driver', '?')}; NCCL_NVLS_ENABLE=0")
    samples = max((r["samples"] for r in rows), default=1)
    L.append("- method: 128 calls captured in a CUDA graph, 1 warm-up replay, 8 timed replays, "
             "time / 1024, maximum over ranks"
             + (f", repeated {samples} times (medians; min-max in the rows)" if samples > 1 else ", one sample")
             + "; bf16 (sum) for reductions; cudaMalloc buffers; "
             "message = gathered output (AllGather), input per rank (others); each row checked "
             "against NCCL before timing; failed rows are left out of every geomean")
    L.append("")
    L.append("| collective | latency geomean NCCL/Purlin 1K-512K | bandwidth geomean Purlin/NCCL 1M-1G "
             "| 4M-1G | Purlin 1 GiB GB/s | NCCL 1 GiB GB/s | CTAs at 1 GiB | max CTAs | failed rows |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for c, s in stats.items():
        failed = ", ".join(human(b) for b in s["failed"]) or "none"
        L.append(f"| {c} | {fmt(s['lat_ratio'])}x | {fmt(s['bw_ratio'])}x | {fmt(s['bw4_ratio'])}x | {fmt(s['p_1g'], '.1f')} "
                 f"| {fmt(s['n_1g'], '.1f')} | {s['ctas_1g'] if s['ctas_1g'] is not None else 'n/a'} "
                 f"| {s['max_ctas']} | {failed} |")
    L.append("")
    L.append("## Targets (issue 6, 2xH200)")
    L.append("")
    L.append("| target | collective | measured | result |")
    L.append("|---|---|---|---|")
    all_ok = True

    def target(name, c, measured, ok):
        nonlocal all_ok
        all_ok &= bool(ok)
        L.append(f"| {name} | {c} | {measured} | {verdict(ok)} |")

    for c, s in stats.items():
        target(f"latency geomean >= {LAT_RATIO_MIN:g}x lower than NCCL", c, f"{fmt(s['lat_ratio'])}x",
               math.isfinite(s["lat_ratio"]) and s["lat_ratio"] >= LAT_RATIO_MIN)
    if "AllReduce" in stats:
        s = stats["AllReduce"]
        target(f"latency <= {AR_LAT_MAX_US:g} us, 1 KiB-64 KiB", "AllReduce", f"max {fmt(s['small_max_us'])} us",
               math.isfinite(s["small_max_us"]) and s["small_max_us"] <= AR_LAT_MAX_US)
    for c, s in stats.items():
        target(f"bandwidth geomean >= {BW_RATIO_MIN:g}x NCCL", c, f"{fmt(s['bw_ratio'])}x",
               math.isfinite(s["bw_ratio"]) and s["bw_ratio"] >= BW_RATIO_MIN)
    for c, s in stats.items():
        target(f"algbw at 1 GiB >= {BW_1G_MIN[c]:g} GB/s", c, f"{fmt(s['p_1g'], '.1f')} GB/s",
               math.isfinite(s["p_1g"]) and s["p_1g"] >= BW_1G_MIN[c])
    for c, s in stats.items():
        target(f"<= {CTAS_1G_MAX} CTAs at 1 GiB", c, str(s["ctas_1g"]),
               s["ctas_1g"] is not None and 0 < s["ctas_1g"] <= CTAS_1G_MAX)
    for c, s in stats.items():
        target("every row correct (checked against NCCL)", c,
               f"{s['rows'] - len(s['failed'])}/{s['rows']} rows", not s["failed"])
    L.append("")
    L.append(f"Overall: {verdict(all_ok)} ({'all' if all_ok else 'not all'} targets met).")
    L.append("")
    if plots:
        L.append("## Plots")
        L.append("")
        for p in plots:
            L.append(f"![{p}]({p})")
        L.append("")
    L.append("## All rows")
    L.append("")
    L.append("`program`: `direct` = the direct program (captured call, no staging: SM stores below 128 MiB, copy")
    L.append("engines from 128 MiB, where CTAs are the reduce kernels' for ReduceScatter/AllReduce and 1 otherwise);")
    L.append("`staged` = the communicator's own buffers (packet program or staged throughput program).")
    L.append("")
    L.append("| collective | bytes | Purlin us (min-max) | NCCL us (min-max) | Purlin GB/s | NCCL GB/s | NCCL/Purlin time | ok | CTAs | program |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")

    def spread(r, lo, hi):
        return f" ({fmt(r[lo])}-{fmt(r[hi])})" if math.isfinite(r[lo]) and math.isfinite(r[hi]) else ""

    for r in rows:
        ratio = r["n_us"] / r["p_us"] if r["p_us"] > 0 else float("nan")
        L.append(f"| {r['coll']} | {human(r['bytes'])} | {fmt(r['p_us'])}{spread(r, 'p_min', 'p_max')} "
                 f"| {fmt(r['n_us'])}{spread(r, 'n_min', 'n_max')} | {fmt(r['p_bw'])} "
                 f"| {fmt(r['n_bw'])} | {fmt(ratio)} | {'yes' if r['ok'] else 'NO'} | {r['ctas']} | {r['program']} |")
    if staged:
        srows, sstats = staged
        L.append("")
        L.append("## Same run, direct program off (`coll_bench --no-direct`: every call staged)")
        L.append("")
        L.append("Captured calls take the direct program (no staging; peers' output buffers mapped at capture)")
        L.append("where eligible; eager calls always stage. These rows show the staged programs alone,")
        L.append("against NCCL measured again in that pass.")
        L.append("")
        L.append("| collective | latency geomean NCCL/Purlin 1K-512K | bandwidth geomean Purlin/NCCL 1M-1G | Purlin 1 GiB GB/s | NCCL 1 GiB GB/s | failed rows |")
        L.append("|---|---|---|---|---|---|")
        for c, st in sstats.items():
            L.append(f"| {c} | {fmt(st['lat_ratio'])}x | {fmt(st['bw_ratio'])}x | {fmt(st['p_1g'], '.1f')} "
                     f"| {fmt(st['n_1g'], '.1f')} | {', '.join(human(b) for b in st['failed']) or 'none'} |")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    return all_ok


def make_plots(outdir, rows, meta):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_bench: matplotlib not available; summary only (run this script where it is)",
              file=sys.stderr)
        return []
    title = f"{meta.get('device', '?')} x{meta.get('world_size', '?')}, {meta.get('date', '?').split(' ')[0]}"
    made = []
    for kind, lo, hi, key_p, key_n, ylabel, fname in (
            ("latency", KIB, 512 * KIB, "p_us", "n_us", "latency (us)", "latency.png"),
            ("bandwidth", MIB, GIB, "p_bw", "n_bw", "algorithm bandwidth (GB/s)", "bandwidth.png")):
        fig, axes = plt.subplots(1, 4, figsize=(18, 4.2))
        for ax, c in zip(axes, COLLS):
            rs = sorted((r for r in rows if r["coll"] == c and lo <= r["bytes"] <= hi), key=lambda r: r["bytes"])
            xs = [r["bytes"] for r in rs]
            for who, key, us, style, lo, hi in (("Purlin", key_p, "p_us", "o-", "p_min", "p_max"),
                                                ("NCCL", key_n, "n_us", "s--", "n_min", "n_max")):
                ys = [r[key] for r in rs]
                if rs and all(math.isfinite(r[lo]) and math.isfinite(r[hi]) and r[lo] > 0 for r in rs):
                    # Error bars: the repetitions' min-max (bandwidth: at the slowest and fastest time).
                    if kind == "latency":
                        err = [[y - r[lo] for y, r in zip(ys, rs)], [r[hi] - y for y, r in zip(ys, rs)]]
                    else:
                        err = [[y - y * r[us] / r[hi] for y, r in zip(ys, rs)],
                               [y * r[us] / r[lo] - y for y, r in zip(ys, rs)]]
                    ax.errorbar(xs, ys, yerr=err, fmt=style, capsize=2, label=who)
                else:
                    ax.plot(xs, ys, style, label=who)
            bad = [r for r in rs if not r["ok"]]
            if bad:
                ax.plot([r["bytes"] for r in bad], [r[key_p] for r in bad], "rx", ms=10, label="check failed")
            ax.set_xscale("log", base=2)
            ax.set_xticks(xs[::2] if len(xs) > 6 else xs)
            ax.set_xticklabels([human(x).replace(" ", "") for x in (xs[::2] if len(xs) > 6 else xs)], fontsize=8)
            ax.set_title(c)
            ax.set_xlabel("message size")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
        axes[0].set_ylabel(ylabel)
        axes[0].legend()
        fig.suptitle(f"{kind}: Purlin vs NCCL, {title}")
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, fname), dpi=110)
        plt.close(fig)
        made.append(fname)
    return made


def reexec_with_matplotlib(argv, script=None):
    """If this interpreter lacks matplotlib but the system one has it (e.g. a
    pyenv python in front of Debian's python3-matplotlib), re-run `script`
    (default: this file) there."""
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    syspy = "/usr/bin/python3"
    if os.path.exists(syspy) and os.path.realpath(sys.executable) != os.path.realpath(syspy) \
            and not os.environ.get("PLOT_BENCH_REEXEC"):
        os.environ["PLOT_BENCH_REEXEC"] = "1"
        os.execv(syspy, [syspy, os.path.abspath(script or __file__)] + argv)


def main(argv):
    if "--no-plots" not in argv:
        reexec_with_matplotlib(argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("run_dir", help="directory with results.csv and meta.txt from coll_bench")
    ap.add_argument("--out", help="output directory (default bench/results/<date>-<device>)")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--staged", help="a second run directory made with coll_bench --no-direct (summarized too)")
    a = ap.parse_args(argv)
    try:
        rows = read_rows(os.path.join(a.run_dir, "results.csv"))
    except InputError as e:
        print(f"plot_bench: error: {e}", file=sys.stderr)
        return 2
    meta = read_meta(os.path.join(a.run_dir, "meta.txt"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outdir = a.out or os.path.join(root, "bench", "results", slug(meta))
    os.makedirs(outdir, exist_ok=True)
    for f in ("results.csv", "meta.txt", "run.log"):
        src = os.path.join(a.run_dir, f)
        if os.path.exists(src) and os.path.abspath(src) != os.path.abspath(os.path.join(outdir, f)):
            shutil.copyfile(src, os.path.join(outdir, f))
    plots = [] if a.no_plots else make_plots(outdir, rows, meta)
    stats = summarize(rows)
    staged = None
    if a.staged:
        try:
            srows = read_rows(os.path.join(a.staged, "results.csv"))
        except InputError as e:
            print(f"plot_bench: error: {e}", file=sys.stderr)
            return 2
        staged = (srows, summarize(srows))
        shutil.copyfile(os.path.join(a.staged, "results.csv"), os.path.join(outdir, "results-staged.csv"))
    ok = write_summary(os.path.join(outdir, "summary.md"), rows, meta, stats, plots, staged)
    print(f"plot_bench: wrote {outdir}/summary.md ({'all targets met' if ok else 'some targets missed'})"
          + (f" and {', '.join(plots)}" if plots else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
