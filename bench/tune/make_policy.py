#!/usr/bin/env python3
"""@file make_policy.py
@brief The tuner's second half: reads purlin_tune's measurements.csv and
writes a policy JSON that purlinc --policy accepts (schema: docs/policy.md).

usage: make_policy.py MEASUREMENTS.csv [-o policy.json] [--name Policy]
                      [--arch sm_90] [--base base.json] [--max-ctas 32]
                      [--tolerance 0.02]

Choices, per world size found in the measurements (one policy serves all
collectives, so each choice is a compromise across the measured ones):
 - latency program: the (CTAs, threads) with the lowest geometric-mean time
   over every measured (collective, size) up to 512 KiB;
 - throughput program and Atom pipeline: the (stages, stage bytes, stage,
   consume, gather CTAs, chunk bytes) with the highest geometric-mean
   bandwidth over the collectives at the large size; among those within
   --tolerance of the best, the one with the fewest CTAs (AllReduce's total,
   which includes the gather role), at most --max-ctas;
 - crossover: the message size X (a measured power of two, or 0) minimizing
   the summed log-time over collectives and sizes when sizes <= X take the
   latency program and larger ones the throughput program.
World sizes not measured keep the --base file's numbers (or purlinc's
built-in defaults). The Atom pipeline is one setting per policy: it is taken
from the largest world size measured (normally the only one).
Exit status: 0 written; 2 bad input (message names the file and line).
"""
import argparse
import csv
import json
import math
import sys

COLUMNS = ["collective", "world", "stages", "stage_bytes", "program", "bytes", "latency_ctas",
           "latency_threads", "stage_ctas", "consume_ctas", "gather_ctas", "threads", "chunk_bytes",
           "us", "ok", "grid"]
INT_COLUMNS = [c for c in COLUMNS if c not in ("collective", "program", "us")]
PROGRAMS = ("latency", "throughput", "crossover")
LATENCY_SCORE_MAX = 512 << 10
COMPOSED = ("AllReduce", "Broadcast", "Reduce")  # compose<F, G>: a gather role (collectives.def)


class InputError(Exception):
    pass


def read_measurements(path):
    """Rows as dicts with typed values; only rows with ok == 1 and a finite time."""
    try:
        f = open(path, newline="")
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}")
    with f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"{path}: missing column(s): {', '.join(missing)}")
        rows = []
        for line, r in enumerate(reader, start=2):
            try:
                row = {c: int(r[c]) for c in INT_COLUMNS}
                row["collective"] = r["collective"]
                row["program"] = r["program"]
                row["us"] = float(r["us"])
            except (TypeError, ValueError) as e:
                raise InputError(f"{path}:{line}: malformed value ({e})")
            if row["program"] not in PROGRAMS:
                raise InputError(f"{path}:{line}: program must be one of {', '.join(PROGRAMS)}, "
                                 f"got '{row['program']}'")
            if not 2 <= row["world"] <= 8:
                raise InputError(f"{path}:{line}: world must be in [2, 8], got {row['world']}")
            if row["ok"] == 1 and math.isfinite(row["us"]) and row["us"] > 0:
                rows.append(row)
    if not rows:
        raise InputError(f"{path}: no successful measurement")
    return rows


def geomean(xs):
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def choose_latency(rows):
    """(ctas, threads) of the latency program, or None if none measured."""
    lat = [r for r in rows if r["program"] == "latency" and r["bytes"] <= LATENCY_SCORE_MAX]
    points = {(r["collective"], r["bytes"]) for r in lat}
    by_cfg = {}
    for r in lat:
        by_cfg.setdefault((r["latency_ctas"], r["latency_threads"]), {})[(r["collective"], r["bytes"])] = r["us"]
    # Only configurations measured (and correct) at every point compete.
    full = {k: v for k, v in by_cfg.items() if set(v) == points}
    if not full:
        return None
    return min(full, key=lambda k: (geomean(full[k].values()), k[0] * k[1]))


def throughput_key(r):
    return (r["stages"], r["stage_bytes"], r["stage_ctas"], r["consume_ctas"], r["chunk_bytes"], r["threads"])


def choose_throughput(rows, max_ctas, tolerance):
    """Best (stages, stageBytes, stage, consume, gather, chunk, threads) and its score."""
    tp = [r for r in rows if r["program"] == "throughput"]
    if not tp:
        return None
    large = max(r["bytes"] for r in tp)
    tp = [r for r in tp if r["bytes"] == large]
    colls = sorted({r["collective"] for r in tp})
    # bandwidth[collective][(key, gather)]; gather matters only for the
    # compositions (their gather role).
    bw = {c: {} for c in colls}
    for r in tp:
        g = r["gather_ctas"] if r["collective"] in COMPOSED else None
        bw[r["collective"]][(throughput_key(r), g)] = r["bytes"] / r["us"] / 1e3
    gathers = sorted({g for c in colls for (_, g) in bw[c] if g is not None}) or [None]
    candidates = []
    keys = {k for c in colls for (k, _) in bw[c]}
    for k in keys:
        for g in gathers:
            vals = []
            for c in colls:
                v = bw[c].get((k, g if c in COMPOSED else None))
                if v is None:
                    break
                vals.append(v)
            else:
                ctas = k[2] + k[3] + (g or 0)
                if ctas <= max_ctas:
                    candidates.append((geomean(vals), ctas, k, g))
    if not candidates:
        return None
    best = max(c[0] for c in candidates)
    near = [c for c in candidates if c[0] >= best * (1 - tolerance)]
    score, ctas, k, g = min(near, key=lambda c: (c[1], -c[0]))
    return {"stages": k[0], "stageBytes": k[1], "stageCtas": k[2], "consumeCtas": k[3],
            "gatherCtas": g if g is not None else max(1, k[2] // 2), "chunkBytes": k[4],
            "threads": k[5], "score": score, "ctas": ctas, "bytes": large}


def choose_crossover(rows, lat_cfg):
    """Largest message size for the latency program, or None if unmeasured."""
    if lat_cfg is None:
        return None
    lat = {(r["collective"], r["bytes"]): r["us"] for r in rows if r["program"] == "latency"
           and (r["latency_ctas"], r["latency_threads"]) == lat_cfg}
    thr = {(r["collective"], r["bytes"]): r["us"] for r in rows if r["program"] == "crossover"}
    common = sorted(set(lat) & set(thr), key=lambda p: (p[1], p[0]))
    if not common:
        return max(b for (_, b) in lat) if lat else None
    sizes = sorted({b for (_, b) in common})
    best = None
    for x in [0] + sizes:
        cost = sum(math.log(lat[p] if p[1] <= x else thr[p]) for p in common)
        if best is None or cost < best[0] - 1e-12:
            best = (cost, x)
    x = best[1]
    # Below the smallest compared size the latency program is assumed to win
    # (it does by construction: one packet round trip vs staging + notify).
    return x


def world_entry(lat_cfg, tp, crossover):
    w = {}
    if lat_cfg is not None:
        w["latency"] = {"maxBytes": int(crossover or 0), "ctas": lat_cfg[0], "threads": lat_cfg[1]}
    if tp is not None:
        w["throughput"] = {"stageCtas": tp["stageCtas"], "consumeCtas": tp["consumeCtas"],
                           "gatherCtas": tp["gatherCtas"], "threads": tp["threads"],
                           "chunkBytes": tp["chunkBytes"], "transfer": "pull"}
    return w


def build_policy(rows, name, arch, base, max_ctas, tolerance):
    """The policy document (a dict) and a list of human-readable choices."""
    doc = base if base is not None else {}
    doc.setdefault("description", f"Codesign policies for {arch}, written by bench/tune/make_policy.py")
    doc["arch"] = arch
    pols = doc.setdefault("policies", {})
    pol = pols.setdefault(name, {})
    notes = []
    worlds = sorted({r["world"] for r in rows})
    atom = None
    for n in worlds:
        wr = [r for r in rows if r["world"] == n]
        lat = choose_latency(wr)
        tp = choose_throughput(wr, max_ctas, tolerance)
        cross = choose_crossover(wr, lat)
        entry = world_entry(lat, tp, cross)
        if not entry:
            notes.append(f"world {n}: nothing usable measured; left as is")
            continue
        pol.setdefault("world", {})[str(n)] = {**pol.get("world", {}).get(str(n), {}), **entry}
        lat_sizes = [r["bytes"] for r in wr if r["program"] == "latency"]
        if cross is not None and lat_sizes and cross == max(lat_sizes):
            notes.append(f"world {n}: warning: crossover {cross} B is the largest latency size measured; "
                         "sweep further (purlin_tune --lat-max)")
        if tp is not None and tp["chunkBytes"] == max(r["chunk_bytes"] for r in wr if r["program"] == "throughput"):
            notes.append(f"world {n}: warning: chunk {tp['chunkBytes']} B is the largest chunk swept")
        if tp is not None:
            atom = {"pipelineStages": tp["stages"], "stageBytes": tp["stageBytes"]}
            notes.append(f"world {n}: throughput stage {tp['stageCtas']} consume {tp['consumeCtas']} "
                         f"gather {tp['gatherCtas']} threads {tp['threads']} chunk {tp['chunkBytes']} "
                         f"S={tp['stages']} B={tp['stageBytes']} ({tp['ctas']} CTAs, geomean "
                         f"{tp['score']:.1f} GB/s at {tp['bytes']} B)")
        if lat is not None:
            notes.append(f"world {n}: latency {lat[0]} CTAs x {lat[1]} threads, crossover {cross} B")
    if atom is not None:
        pol["atom"] = atom
    desc = pol.get("description", "")
    if "make_policy.py" not in desc:
        pol["description"] = (desc + " " if desc else "") + \
            f"Tuned by purlin_tune + make_policy.py for world size(s) {', '.join(map(str, worlds))}."
    return doc, notes


def main(argv):
    ap = argparse.ArgumentParser(description="Write a purlinc policy JSON from purlin_tune measurements.")
    ap.add_argument("measurements")
    ap.add_argument("-o", "--output", default="-", help="output JSON file ('-' = stdout)")
    ap.add_argument("--name", default="Policy", help="policy name (a C++ type name in the .pl)")
    ap.add_argument("--arch", default="sm_90", choices=["sm_80", "sm_90", "sm_100"])
    ap.add_argument("--base", help="policy JSON to start from (its other entries are kept)")
    ap.add_argument("--max-ctas", type=int, default=32)
    ap.add_argument("--tolerance", type=float, default=0.02,
                    help="throughput configurations within this fraction of the best compete on CTA count")
    a = ap.parse_args(argv)
    if not a.name.isidentifier():
        print(f"make_policy: error: --name '{a.name}' is not a C++ type name", file=sys.stderr)
        return 2
    try:
        rows = read_measurements(a.measurements)
        base = None
        if a.base:
            try:
                with open(a.base) as f:
                    base = json.load(f)
            except (OSError, ValueError) as e:
                raise InputError(f"{a.base}: cannot use as base policy ({e})")
            if not isinstance(base, dict):
                raise InputError(f"{a.base}: expected a JSON object at the top level")
    except InputError as e:
        print(f"make_policy: error: {e}", file=sys.stderr)
        return 2
    doc, notes = build_policy(rows, a.name, a.arch, base, a.max_ctas, a.tolerance)
    text = json.dumps(doc, indent=2, sort_keys=False) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)
    for line in notes:
        print(f"make_policy: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
