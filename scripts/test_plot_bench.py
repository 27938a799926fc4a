#!/usr/bin/env python3
"""@file test_plot_bench.py
@brief CPU tests of plot_bench.py's reading and summary: the optional
repetition columns (min-max, samples) are read when present and absent,
failed rows never enter a geomean, the 4M-1G geomean covers only those
sizes, and the summary (no plots) is written with the spread in its rows.
"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_bench  # noqa: E402

OLD = "collective,bytes,purlin_us,nccl_us,purlin_GBps,nccl_GBps,ok,ctas\n"
NEW = ("collective,bytes,purlin_us,nccl_us,purlin_GBps,nccl_GBps,ok,ctas,program,"
       "purlin_min_us,purlin_max_us,nccl_min_us,nccl_max_us,purlin_busGBps,nccl_busGBps,samples\n")


def rows_text(new):
    out = [NEW if new else OLD]
    for p in range(10, 31):  # 1 KiB .. 1 GiB, AllGather
        b = 1 << p
        pu, nu = 2.0 + b / 400e3, 6.0 + b / 300e3  # Purlin faster everywhere
        ok = 0 if b == 8 << 20 else 1  # one failed row, absurdly fast
        if ok == 0:
            pu = 1e-3
        base = f"AllGather,{b},{pu:.3f},{nu:.3f},{b / pu / 1e3:.2f},{b / nu / 1e3:.2f},{ok},8"
        out.append(base + (f",staged,{pu * 0.9:.3f},{pu * 1.1:.3f},{nu * 0.9:.3f},{nu * 1.2:.3f},1,1,5" if new else "")
                   + "\n")
    return "".join(out)


class PlotBenchTest(unittest.TestCase):
    def read(self, text):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "results.csv")
            with open(path, "w") as f:
                f.write(text)
            return plot_bench.read_rows(path)

    def test_optional_columns(self):
        old = self.read(rows_text(False))
        self.assertEqual(old[0]["samples"], 1)
        self.assertNotEqual(old[0]["p_min"], old[0]["p_min"])  # NaN when absent
        new = self.read(rows_text(True))
        self.assertEqual(new[0]["samples"], 5)
        self.assertAlmostEqual(new[0]["p_min"], new[0]["p_us"] * 0.9, places=2)

    def test_failed_rows_leave_the_geomeans(self):
        rows = self.read(rows_text(True))
        s = plot_bench.summarize(rows)["AllGather"]
        self.assertEqual(s["failed"], [8 << 20])
        good = [r for r in rows if r["ok"]]
        want = plot_bench.geomean([r["p_bw"] / r["n_bw"] for r in good if (1 << 20) <= r["bytes"]])
        self.assertAlmostEqual(s["bw_ratio"], want)
        want4 = plot_bench.geomean([r["p_bw"] / r["n_bw"] for r in good if (4 << 20) <= r["bytes"]])
        self.assertAlmostEqual(s["bw4_ratio"], want4)
        self.assertLess(s["bw_ratio"], 100)  # the failed row's absurd figure is not in it

    def test_summary_has_the_spread(self):
        rows = self.read(rows_text(True))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "summary.md")
            plot_bench.write_summary(path, rows, {"device": "test"}, plot_bench.summarize(rows), [])
            text = open(path).read()
        self.assertIn("repeated 5 times", text)
        self.assertIn("4M-1G", text)
        self.assertRegex(text, r"\| AllGather \| 1 KiB \| [0-9.]+ \([0-9.]+-[0-9.]+\) \|")


if __name__ == "__main__":
    unittest.main()
