#!/usr/bin/env python3
"""@file plot_micro.py
@brief Draws the Atom microbenchmark figures (paper Figures 3, 6, 9) from the
CSV files atom_micro writes.

Usage: plot_micro.py CSV_DIR [PNG_DIR]   (PNG_DIR defaults to CSV_DIR)
Needs python3 + matplotlib (Debian: python3-matplotlib, /usr/bin/python3).
"""
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PEAK = 450.0  # nominal per-direction NVLink bandwidth of H200 (GB/s)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def fig3(csv_dir, out):
    data = rows(os.path.join(csv_dir, "fig3_pull_sweep.csv"))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, threads in zip(axes, ("256", "512")):
        best = defaultdict(dict)  # datapath -> ctas -> best over stages
        eight = defaultdict(dict)  # datapath -> ctas -> at 8 stages
        for r in data:
            if r["threads"] != threads:
                continue
            c, g = int(r["ctas"]), float(r["gbps"])
            best[r["datapath"]][c] = max(best[r["datapath"]].get(c, 0.0), g)
            if r["stages"] in ("0", "8"):
                eight[r["datapath"]][c] = g
        for dp, style in (("generic", "s--"), ("ampere", "o-"), ("hopper", "^-")):
            xs = sorted(eight[dp])
            ax.plot(xs, [eight[dp][x] for x in xs], style, label=f"Atom<{dp.capitalize()}>"
                    + ("" if dp == "generic" else " 8 stages"))
        xs = sorted(best["hopper"])
        ax.plot(xs, [best["hopper"][x] for x in xs], "k:", label="Hopper, best stage count")
        ax.axhline(PEAK, color="gray", ls=":", lw=1)
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(eight["generic"]))
        ax.set_xticklabels([str(x) for x in sorted(eight["generic"])])
        ax.set_xlabel("CTAs (one per SM)")
        ax.set_title(f"256 MiB pull, {threads} threads/CTA")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("GB/s")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig3_pull_sweep.png"), dpi=120)


def fig9(csv_dir, out):
    data = rows(os.path.join(csv_dir, "fig9_stage_ablation.csv"))
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for direction, color in (("pull", "tab:blue"), ("push", "tab:orange")):
        for dp, style in (("ampere", "o-"), ("hopper", "^--"), ("bulkpf", "x:")):
            pts = sorted((int(r["stages"]), float(r["gbps"])) for r in data
                         if r["datapath"] == dp and r["direction"] == direction)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=f"{dp} {direction}")
        g = [float(r["gbps"]) for r in data if r["datapath"] == "generic" and r["direction"] == direction]
        if g:
            ax.axhline(g[0], color=color, ls="-.", lw=1, label=f"generic {direction}")
    ax.axhline(PEAK, color="gray", ls=":", lw=1)
    ax.set_xlabel("pipeline stages (16 KiB each)")
    ax.set_ylabel("GB/s")
    ax.set_title("256 MiB copy, 8 CTAs x 256 threads")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig9_stage_ablation.png"), dpi=120)


def fig6(csv_dir, out):
    lat = rows(os.path.join(csv_dir, "fig6_latency.csv"))
    bw = rows(os.path.join(csv_dir, "fig6_bandwidth.csv"))
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for mode, style in (("push", "o-"), ("push+fence", "o:"), ("pull", "s-"), ("packet", "^-")):
        pts = sorted((int(r["bytes"]), float(r["one_way_us"])) for r in lat if r["mode"] == mode)
        a.plot([p[0] for p in pts], [p[1] for p in pts], style, label=mode)
    a.set_xscale("log", base=2)
    a.set_xlabel("message bytes")
    a.set_ylabel("one-way latency (us)")
    a.set_title("latency (ping-pong / 2), 1 CTA x 256 threads")
    a.grid(alpha=0.3)
    a.legend(fontsize=8)
    for dp in ("hopper", "generic"):
        for direction, style in (("pull", "-"), ("push", "--")):
            pts = sorted((int(r["bytes"]), float(r["gbps"])) for r in bw
                         if r["datapath"] == dp and r["direction"] == direction and r["ctas"] == "8")
            b.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o" if dp == "hopper" else "s",
                   label=f"{dp} {direction}")
    b.axhline(PEAK, color="gray", ls=":", lw=1)
    b.set_xscale("log", base=2)
    b.set_xlabel("message bytes")
    b.set_ylabel("GB/s")
    b.set_title("bandwidth, 8 CTAs x 256 threads (CUDA graph)")
    b.grid(alpha=0.3)
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig6_push_pull.png"), dpi=120)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    csv_dir = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else csv_dir
    os.makedirs(out, exist_ok=True)
    for name in ("fig3_pull_sweep.csv", "fig9_stage_ablation.csv", "fig6_latency.csv", "fig6_bandwidth.csv"):
        if not os.path.exists(os.path.join(csv_dir, name)):
            print(f"plot_micro.py: missing {name} in {csv_dir}", file=sys.stderr)
            return 1
    fig3(csv_dir, out)
    fig9(csv_dir, out)
    fig6(csv_dir, out)
    print(f"wrote fig3_pull_sweep.png, fig9_stage_ablation.png, fig6_push_pull.png to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
