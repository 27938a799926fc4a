#!/usr/bin/env python3
"""@file test_compare_series.py
@brief Unit tests of compare_series.py on synthetic runs: series read from
both CSV formats, best peer per family, geomeans without failed rows, dips,
program switches, the targets' verdicts, and refusal of bad input."""
import math
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_series as cs  # noqa: E402

HEADER = ("collective,bytes,purlin_us,nccl_us,purlin_GBps,nccl_GBps,ok,ctas,program,purlin_min_us,purlin_max_us,"
          "nccl_min_us,nccl_max_us,purlin_busGBps,nccl_busGBps,samples,purlin_series,nccl_series,plan\n")


def write_run(root, name, rows, purlin, nccl, header=HEADER, world=2):
    d = os.path.join(root, name)
    os.makedirs(d)
    with open(os.path.join(d, "results.csv"), "w") as f:
        f.write(header)
        for coll, size, pu, nu, ok, prog in rows:
            if header == HEADER:
                f.write(f"{coll},{size},{pu},{nu},0,0,{ok},8,{prog},{pu},{pu},{nu},{nu},0,0,5,{purlin},{nccl},"
                        f"\"{prog} (x): why, with a comma\"\n")
            else:
                f.write(f"{coll},{size},{pu},{nu},0,0,{ok},8\n")
    with open(os.path.join(d, "meta.txt"), "w") as f:
        f.write(f"key,value\nworld_size,{world}\ncommit,abc123\ndevice,NVIDIA H200\ndate,2026-12-02 06:00:00 UTC\n"
                f"purlin_series,{purlin}\npurlin_legend,P {purlin}\nnccl_series,{nccl}\nnccl_legend,N {nccl}\n")
    return d


class CompareSeriesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_best_peer_geomean_and_failed_rows(self):
        K = 1024
        a = write_run(self.root, "a", [("AllGather", K, 2.0, 8.0, 1, "latency"),
                                       ("AllGather", 2 * K, 2.0, 8.0, 0, "latency"),  # failed: left out
                                       ("AllGather", 4 * K, 4.0, 8.0, 1, "latency")],
                      "purlin-graph-graph-sep", "nccl-default-graph-sep")
        b = write_run(self.root, "b", [("AllGather", K, 9.0, 4.0, 1, "latency"),
                                       ("AllGather", 2 * K, 9.0, 1.0, 1, "latency"),
                                       ("AllGather", 4 * K, 9.0, 4.0, 1, "latency")],
                      "purlin-staged-graph-sep", "nccl-symmetric-graph-sep")
        metas, points = [], []
        for d in (a, b):
            m, p = cs.read_run(d)
            metas.append(m)
            points += p
        data = cs.index(points)
        self.assertEqual(set(data), {"purlin-graph-graph-sep", "nccl-default-graph-sep", "purlin-staged-graph-sep",
                                     "nccl-symmetric-graph-sep"})
        # Best NCCL at 1 KiB is the symmetric series (4 us), not default (8 us).
        self.assertEqual(cs.best_peer(data, "nccl-", "AllGather", K, "graph-sep")["us"], 4.0)
        r = cs.ratios(data, "purlin-graph-graph-sep", "AllGather", "nccl-", K, 512 * K)
        self.assertEqual(r, [2.0, 1.0])  # 2 KiB failed in run a: not in the geomean
        self.assertAlmostEqual(cs.geomean(r), math.sqrt(2.0))
        names = [t[0] for t in cs.targets(data, 2, {})]
        self.assertTrue(any("purlin-graph-graph-sep AllGather: latency" in t for t in names))
        verdict = {t[0]: t[2] for t in cs.targets(data, 2, {})}
        self.assertFalse(verdict["purlin-graph-graph-sep AllGather: latency 1K-512K vs best NCCL >= 2.0x"])

    def test_families_are_not_mixed(self):
        d = write_run(self.root, "c", [("AllReduce", 1024, 2.0, 1.0, 1, "latency")], "purlin-graph-graph",
                      "nccl-default-eager")
        data = cs.index(cs.read_run(d)[1])
        self.assertEqual(cs.ratios(data, "purlin-graph-graph", "AllReduce", "nccl-", 0, 1 << 30), [])

    def test_dips_switches_and_ceiling(self):
        M = 1 << 20
        rows = [("AllToAll", 4 * M, 40.0, 50.0, 1, "throughput"), ("AllToAll", 8 * M, 100.0, 90.0, 1, "direct"),
                ("AllToAll", 16 * M, 80.0, 170.0, 1, "direct"), ("AllToAll", 1 << 30, 2900.0, 3000.0, 1, "direct")]
        d = write_run(self.root, "d", rows, "purlin-graph-graph", "nccl-default-graph")
        data = cs.index(cs.read_run(d)[1])
        self.assertEqual(cs.dips(data["purlin-graph-graph"]["AllToAll"]), [8 * M])
        self.assertEqual(cs.switches(data["purlin-graph-graph"]["AllToAll"]), [(8 * M, "direct")])
        # 1 GiB in 2900 us: 370 GB/s algbw, busbw 185 (n=2): 48% of a 385 GB/s ceiling.
        t = {x[0]: x for x in cs.targets(data, 2, {("copy engine", 2): 385.0})}
        key = [k for k in t if "copy-engine ceiling" in k][0]
        self.assertAlmostEqual(t[key][1], (1 << 30) / 2900.0 / 1e3 * 0.5 / 385.0, places=6)
        self.assertFalse(t[key][2])

    def test_old_format_and_summary(self):
        old = "collective,bytes,purlin_us,nccl_us,purlin_GBps,nccl_GBps,ok,ctas\n"
        d = write_run(self.root, "e", [("ReduceScatter", 1024, 3.0, 6.0, 1, "-")], "", "", header=old)
        meta, points = cs.read_run(d)
        self.assertEqual({p["series"] for p in points}, {"purlin-graph-graph", "nccl-default-graph"})
        out = os.path.join(self.root, "out")
        self.assertEqual(cs.main([d, "--out", out, "--no-plots"]), 0)
        text = open(os.path.join(out, "summary.md")).read()
        self.assertIn("## ReduceScatter", text)
        self.assertIn("commit(s): abc123", text)
        self.assertIn("1K-512K 2.00", text)

    def test_bad_input(self):
        d = os.path.join(self.root, "bad")
        os.makedirs(d)
        with open(os.path.join(d, "results.csv"), "w") as f:
            f.write("collective,bytes\nAllGather,1024\n")
        self.assertEqual(cs.main([d, "--no-plots"]), 2)
        self.assertEqual(cs.main([os.path.join(self.root, "missing"), "--no-plots"]), 2)
        a = write_run(self.root, "w2", [("AllGather", 1024, 1.0, 2.0, 1, "latency")], "purlin-graph-graph",
                      "nccl-default-graph", world=2)
        b = write_run(self.root, "w4", [("AllGather", 1024, 1.0, 2.0, 1, "latency")], "purlin-graph-graph",
                      "nccl-default-graph", world=4)
        self.assertEqual(cs.main([a, b, "--no-plots"]), 2)  # different world sizes


if __name__ == "__main__":
    unittest.main()
