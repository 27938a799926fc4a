#!/usr/bin/env python3
"""@file test_torch_symm_bench.py
@brief Unit tests of bench/coll/torch_symm_bench.py's pure parts (no torch
needed): series names, sample statistics, and that the rows it writes are
read by compare_series.py as torch series with their figures and ok flag."""
import math
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "bench", "coll"))
import compare_series as cs  # noqa: E402
import torch_symm_bench as tb  # noqa: E402


class TorchSymmBenchTest(unittest.TestCase):
    def test_names_and_stats(self):
        self.assertEqual(tb.series_name("one_shot_all_reduce", False), "torch-one_shot_all_reduce-graph")
        self.assertEqual(tb.series_name("two_shot_all_reduce_", True), "torch-two_shot_all_reduce_-graph-sep")
        self.assertEqual(tb.sample_stats([5.0, 1.0, 3.0]), (3.0, 1.0, 5.0))
        with self.assertRaises(ValueError):
            tb.sample_stats([])
        self.assertEqual(tb.sizes(1024, 8192), [1024, 2048, 4096, 8192])
        with self.assertRaises(SystemExit):
            tb.parse(["out", "--min", "4096", "--max", "1024"])

    def test_rows_read_by_compare_series(self):
        with tempfile.TemporaryDirectory() as d:
            rows = [tb.csv_row("AllReduce", 1024, 6.0, 5.5, 6.5, True, 5, tb.series_name("one_shot_all_reduce", True), 2),
                    tb.csv_row("AllReduce", 2048, float("nan"), float("nan"), float("nan"), False, 5,
                               tb.series_name("one_shot_all_reduce", True), 2)]
            with open(os.path.join(d, "results.csv"), "w") as f:
                f.write(tb.HEADER + "\n" + "\n".join(rows) + "\n")
            with open(os.path.join(d, "meta.txt"), "w") as f:
                f.write("key,value\nworld_size,2\nlegend:torch-one_shot_all_reduce-graph-sep,torch one shot\n")
            meta, points = cs.read_run(d)
            self.assertEqual(len(points), 1)  # the NaN row has no figure
            p = points[0]
            self.assertEqual(p["series"], "torch-one_shot_all_reduce-graph-sep")
            self.assertEqual((p["us"], p["min"], p["max"], p["ok"]), (6.0, 5.5, 6.5, True))
            self.assertEqual(cs.family(p["series"]), "graph-sep")
            self.assertFalse(math.isnan(p["us"]))


if __name__ == "__main__":
    unittest.main()
