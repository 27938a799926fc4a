#!/usr/bin/env python3
"""@file test_make_policy.py
@brief CPU tests of make_policy.py on synthetic measurements whose optimum is
known (latency config, throughput config with the CTA tie-break, crossover),
plus its handling of bad input. `--write-synthetic PATH` writes the synthetic
measurement file for validate_policy.cmake.
"""
import io
import json
import math
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_policy  # noqa: E402

COLLS = ["AllGather", "ReduceScatter", "AllReduce", "AllToAll"]
HEADER = ",".join(make_policy.COLUMNS)
# The synthetic optimum, checked below and by validate_policy.cmake.
BEST_LAT = (8, 512)
BEST_TP = dict(stages=8, stage_bytes=16384, stage=8, consume=16, gather=8, chunk=1 << 20)
CROSSOVER = 256 << 10


def row(c, n, S, B, prog, b, lc, lt, sc, cc, gc, thr, ch, us, ok=1):
    return f"{c},{n},{S},{B},{prog},{b},{lc},{lt},{sc},{cc},{gc},{thr},{ch},{us:.3f},{ok},0"


def synthetic(world=2, colls=COLLS):
    lines = [HEADER]
    for c in colls:
        # Latency program: time grows with size; (8, 512) is 10% faster.
        for p in range(10, 21):
            b = 1 << p
            for (lc, lt) in [(4, 512), (8, 512), (16, 512)]:
                us = (3.0 + b / 100e3) * (0.9 if (lc, lt) == BEST_LAT else 1.0)
                lines.append(row(c, world, 0, 0, "latency", b, lc, lt, 0, 0, 0, 0, 0, us))
        # Throughput at 64 MiB: the best config; a 1%-faster one with more
        # CTAs (loses the tie-break); a wrong (ok=0) even faster one.
        L = 64 << 20
        g = 8 if c in make_policy.COMPOSED else 0
        base_bw = 360.0
        for (S, B, sc, cc, gc, ch, bw, ok) in [
                (8, 16384, 8, 16, g, 1 << 20, base_bw, 1),
                (8, 16384, 16, 16, g, 1 << 20, base_bw * 1.01, 1),
                (4, 16384, 8, 16, g, 1 << 20, base_bw * 0.8, 1),
                (8, 16384, 8, 8, g, 512 << 10, base_bw * 0.7, 1),
                (4, 32768, 8, 16, g, 1 << 20, base_bw * 2.0, 0)]:
            lines.append(row(c, world, S, B, "throughput", L, 0, 0, sc, cc, gc, 512, ch, L / bw / 1e3, ok))
        if c in make_policy.COMPOSED:  # a worse gather count
            lines.append(row(c, world, 8, 16384, "throughput", L, 0, 0, 8, 16, 4, 512, 1 << 20,
                             L / (base_bw * 0.6) / 1e3))
        # Crossover: throughput wins from 512 KiB on.
        for p in range(12, 21):
            b = 1 << p
            lat_us = (3.0 + b / 100e3) * 0.9
            us = lat_us * (1.2 if b <= CROSSOVER else 0.8)
            lines.append(row(c, world, 8, 16384, "crossover", b, 0, 0, 8, 16, g, 512, 1 << 20, us))
    return "\n".join(lines) + "\n"


class MakePolicyTest(unittest.TestCase):
    def run_tool(self, text, *args):
        with tempfile.TemporaryDirectory() as d:
            m = os.path.join(d, "m.csv")
            with open(m, "w") as f:
                f.write(text)
            out = os.path.join(d, "p.json")
            err = io.StringIO()
            with redirect_stderr(err), redirect_stdout(io.StringIO()):
                rc = make_policy.main([m, "-o", out, *args])
            doc = None
            if rc == 0:
                with open(out) as f:
                    doc = json.load(f)
            return rc, doc, err.getvalue()

    def test_picks_known_optimum(self):
        rc, doc, _ = self.run_tool(synthetic())
        self.assertEqual(rc, 0)
        self.assertEqual(doc["arch"], "sm_90")
        p = doc["policies"]["Policy"]
        self.assertEqual(p["atom"], {"pipelineStages": 8, "stageBytes": 16384})
        w = p["world"]["2"]
        self.assertEqual(w["latency"], {"maxBytes": CROSSOVER, "ctas": 8, "threads": 512})
        t = w["throughput"]
        self.assertEqual((t["stageCtas"], t["consumeCtas"], t["gatherCtas"], t["chunkBytes"], t["threads"]),
                         (8, 16, 8, 1 << 20, 512))
        self.assertEqual(t["transfer"], "pull")

    def test_rooted_and_v_collectives(self):
        # The eleven measured together: the same optimum (the compositions'
        # gather role counted like AllReduce's).
        every = COLLS + ["Broadcast", "Reduce", "Scatter", "Gather", "AllGatherV", "ReduceScatterV", "AllToAllV"]
        rc, doc, _ = self.run_tool(synthetic(colls=every))
        self.assertEqual(rc, 0)
        t = doc["policies"]["Policy"]["world"]["2"]["throughput"]
        self.assertEqual((t["stageCtas"], t["consumeCtas"], t["gatherCtas"], t["chunkBytes"]), (8, 16, 8, 1 << 20))
        self.assertEqual(doc["policies"]["Policy"]["world"]["2"]["latency"]["maxBytes"], CROSSOVER)

    def test_cta_cap_and_tolerance(self):
        # With no tolerance and a cap of 40 the 1%-faster 16+16+8 config wins;
        # the default cap of 32 CTAs excludes it again.
        rc, doc, _ = self.run_tool(synthetic(), "--tolerance", "0", "--max-ctas", "40")
        self.assertEqual(doc["policies"]["Policy"]["world"]["2"]["throughput"]["stageCtas"], 16)
        rc, doc, _ = self.run_tool(synthetic(), "--tolerance", "0", "--max-ctas", "32")
        self.assertEqual(doc["policies"]["Policy"]["world"]["2"]["throughput"]["stageCtas"], 8)

    def test_world_and_name_and_base(self):
        with tempfile.TemporaryDirectory() as d:
            base = os.path.join(d, "base.json")
            with open(base, "w") as f:
                json.dump({"policies": {"decode": {"stagingBytes": 1 << 28}}}, f)
            rc, doc, _ = self.run_tool(synthetic(4), "--name", "decode", "--base", base)
        self.assertEqual(rc, 0)
        pol = doc["policies"]["decode"]
        self.assertEqual(pol["stagingBytes"], 1 << 28)
        self.assertEqual(list(pol["world"]), ["4"])

    def test_bad_input(self):
        rc, _, err = self.run_tool("a,b\n1,2\n")
        self.assertEqual(rc, 2)
        self.assertIn("missing column", err)
        bad = synthetic().replace(",latency,", ",lat,", 1)
        rc, _, err = self.run_tool(bad)
        self.assertEqual(rc, 2)
        self.assertIn("m.csv:2: program must be one of", err)
        rc, _, err = self.run_tool(HEADER + "\n")
        self.assertEqual(rc, 2)
        self.assertIn("no successful measurement", err)
        rc, _, err = self.run_tool(synthetic(), "--name", "not a type")
        self.assertEqual(rc, 2)

    def test_geomean(self):
        self.assertAlmostEqual(make_policy.geomean([2, 8]), 4.0)
        self.assertTrue(math.isnan(make_policy.geomean([])))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write-synthetic":
        with open(sys.argv[2], "w") as f:
            f.write(synthetic())
        sys.exit(0)
    unittest.main()
