#!/usr/bin/env python3
"""Checks scripts/decision_folds.py on two hand-made runs: the held-out MAPE of folds 1-2 per table
and pooled by rows, the tables that moved, the fold-0 calibrations' inner CV, and that the other
classes' rows and fold 0's held-out rows are never counted. Expected figures are worked out by
hand in the comments."""
import csv
import math
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = sys.argv.pop(1)
HEADER = ["class", "dtype", "n", "k", "heads", "kv_heads", "head_dim", "measured_us", "predicted_us"]


def write_run(root, fold1_ratios, fold2_ratios, inner_cv):
    os.makedirs(os.path.join(root, "rows"))
    os.makedirs(os.path.join(root, "cal"))
    with open(os.path.join(root, "class"), "w") as f:
        f.write("attention_decode\n")
    for fold, ratios in ((1, fold1_ratios), (2, fold2_ratios)):
        with open(os.path.join(root, "rows", f"h100_sxm.vllm.{fold}.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(HEADER)
            for r in ratios:
                w.writerow(["attention_decode", "bf16", 0, 128, 32, 8, 128, 100.0, 100.0 * r])
            w.writerow(["gemm", "bf16", 4096, 4096, 0, 0, 0, 100.0, 300.0])  # another class: not counted
        # validate's families table (kernels/family_errors.hpp) of the same rows.
        errors = [abs(r - 1) for r in ratios]
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        with open(os.path.join(root, "cal", f"h100_sxm.vllm.{fold}.validate.log"), "w") as f:
            f.write("kernel MAPE: tier target 1% roofline 2%\n\n"
                    "shape families with the largest share of the error (1 of 1):\n"
                    "  share    MAPE  pred/meas    rows  family\n"
                    f"  100.0%  {100 * sum(errors) / len(errors):5.1f}%  {geo:9.3f}  {len(ratios):6}  "
                    "attention_decode bf16 heads=32/8 head_dim=128\n")
    # Fold 0 is calibrated for its inner CV; a stray held-out file of it must not be scored.
    with open(os.path.join(root, "cal", "h100_sxm.vllm.0.log"), "w") as f:
        f.write("attention_decode residual: depth 8, learning rate 0.1, 25 trees "
                f"(5-fold CV over 10 shape families: {inner_cv}%)\ncalibrated on 100 measurements\n")
    with open(os.path.join(root, "cal", "h100_sxm.vllm.1.log"), "w") as f:
        f.write("attention_decode residual: depth 4, learning rate 0.4, 100 trees "
                "(5-fold CV over 7 shape families: 99.0%)\n")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, check=True).stdout


class DecisionFolds(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.before = os.path.join(self.tmp.name, "before")
        self.after = os.path.join(self.tmp.name, "after")
        # Before: fold 1 |1.1-1|, |0.8-1| -> 15% over 2 rows; fold 2 |1.05-1| -> 5%; pooled 35/3.
        write_run(self.before, [1.1, 0.8], [1.05], 18.5)
        # After: fold 1 2% and 5% -> 3.5%; fold 2 unchanged; pooled (7 + 5) / 3 = 4%.
        write_run(self.after, [1.02, 0.95], [1.05], 17.0)

    def tearDown(self):
        self.tmp.cleanup()

    def test_summary(self):
        out = run("summary", self.before)
        self.assertIn("fold 1   15.00%  (2)", out)
        self.assertIn("fold 2    5.00%  (1)", out)
        self.assertIn("pooled over 2 tables: 11.67%", out)
        self.assertIn("mean of 1 fold-0 calibrations: 18.50%", out)

    def test_compare(self):
        out = run("compare", self.before, self.after)
        self.assertIn("pooled over 2 tables: 11.67% -> 4.00%", out)
        self.assertIn("better / worse by more than 0.1 point: 1 / 0", out)
        self.assertIn("fold 1   15.00 ->   3.50%", out)
        self.assertIn("18.50% -> 17.00%", out)

    def test_families(self):
        out = run("families", self.after)
        # One family over both folds: errors 0.02 + 0.05 + 0.05 over 3 rows; geometric mean ratio
        # (1.02 x 0.95 x 1.05)^(1/3) = 1.00626 (validate prints fold 1's as 0.984).
        self.assertIn("100.0%   4.0%      1.006      3  h100_sxm vllm attention_decode bf16 heads=32/8 head_dim=128", out)

    def test_usage(self):
        bad = subprocess.run([sys.executable, SCRIPT, "compare", self.before], capture_output=True, text=True)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("compare BEFORE AFTER", bad.stderr)


if __name__ == "__main__":
    unittest.main()
