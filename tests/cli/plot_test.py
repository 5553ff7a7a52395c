#!/usr/bin/env python3
"""scripts/plot.py renders every chart kind, as PNG and SVG, from real simulator outputs.

usage: plot_test.py KERNELSIGHT   (run from the source root; ctest does)

The sweep.csv is built in the format of `kernelsight sweep` (point, status, swept keys by dotted
path, then every scalar of summary.json) from real `kernelsight run` results at several rates on
two GPUs, plus one failed point with blank metrics, which the plot must skip.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

CLI = None
SOURCE = os.getcwd()
PLOT = os.path.join(SOURCE, "scripts", "plot.py")
QUICKSTART = os.path.join(SOURCE, "scenarios", "quickstart.yaml")
RATES = ["2/s", "8/s", "24/s"]
GPUS = ["h100_sxm", "a100_sxm_80gb"]


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def plot(*args):
    return run([sys.executable, PLOT, *args])


class PlotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ks_plot_test_")
        cls.dir = cls.tmp.name
        # Real runs: one per (GPU, rate), as a sweep over two keys would make them.
        rows = []
        point = 0
        for gpu in GPUS:
            for rate in RATES:
                out = os.path.join(cls.dir, "sweep", f"point{point}")
                r = run([CLI, "run", QUICKSTART, "-q", "--set", "workload.num_requests=80", "--set",
                         f"workload.rate={rate}", "--set", f"hardware.gpu.spec={gpu}", "--out", out])
                assert r.returncode == 0, r.stdout
                with open(os.path.join(out, "summary.json")) as f:
                    summary = json.load(f)
                rows.append((point, "ok", rate, gpu, summary))
                point += 1
        scalars = [k for k, v in rows[0][4].items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        rows.append((point, "failed", "64/s", "h100_sxm", {}))  # a failed point: blank metrics
        cls.sweep_csv = os.path.join(cls.dir, "sweep", "sweep.csv")
        with open(cls.sweep_csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["point", "status", "workload.rate", "hardware.gpu.spec"] + scalars)
            for p, status, rate, gpu, s in rows:
                w.writerow([p, status, rate, gpu] + [s.get(k, "") for k in scalars])
        cls.result = os.path.join(cls.dir, "sweep", "point1")
        # Two steps to compare on one roofline: H100 and the hypothetical HX200 spec file.
        cls.steps = []
        for name, gpu in (("h100", "h100_sxm"), ("hx200", os.path.join(SOURCE, "scenarios", "gpus", "hx200.yaml"))):
            path = os.path.join(cls.dir, f"{name}.csv")
            r = run([CLI, "step", "--model", "llama-3-8b", "--gpu", gpu, "--decode", "64", "--context", "1024",
                     "--prefill", "512", "--out", path])
            assert r.returncode == 0, r.stdout
            cls.steps.append(path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check_png(self, path):
        with open(path, "rb") as f:
            data = f.read()
        self.assertTrue(data.startswith(b"\x89PNG\r\n\x1a\n"), path)
        self.assertGreater(len(data), 15000, f"{path}: a chart, not an empty canvas")

    def check_svg(self, path, min_paths):
        root = ET.parse(path).getroot()  # raises on malformed XML
        self.assertTrue(root.tag.endswith("svg"), root.tag)
        drawn = [e for e in root.iter() if e.tag.split("}")[-1] in ("path", "use", "rect", "polyline")]
        self.assertGreater(len(drawn), min_paths, path)
        return "".join(e.text or "" for e in root.iter() if e.tag.split("}")[-1] == "text")

    def render_both(self, args, stem, min_paths):
        svgs = []
        for fmt in ("png", "svg"):
            out = os.path.join(self.dir, f"{stem}.{fmt}")
            r = plot(*args, "--out", out)
            self.assertEqual(r.returncode, 0, r.stdout)
            if fmt == "png":
                self.check_png(out)
            else:
                svgs.append(self.check_svg(out, min_paths))
        return svgs[0]

    def test_latency_throughput_one_curve_per_gpu(self):
        svg = self.render_both(["latency-throughput", os.path.dirname(self.sweep_csv), "--group", "hardware.gpu.spec",
                                "--y", "mean_ttft_ms,p99_ttft_ms,mean_tpot_ms"], "latency", 20)
        for label in ("hardware.gpu.spec = h100_sxm", "hardware.gpu.spec = a100_sxm_80gb", "p99_ttft_ms",
                      "output_throughput"):
            self.assertIn(label, svg)
        r = plot("latency-throughput", self.sweep_csv, "--out", os.path.join(self.dir, "latency_default.png"))
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("skipped 1 failed point", r.stdout)

    def test_breakdown_of_one_and_two_runs(self):
        svg = self.render_both(["breakdown", self.result], "breakdown", 20)
        for label in ("prefill", "decode", "gate_up_proj", "GPU time (s)"):
            self.assertIn(label, svg)
        self.render_both(["breakdown", self.result, os.path.join(self.dir, "sweep", "point4"), "--by", "op"],
                         "breakdown2", 20)

    def test_roofline_of_two_gpus(self):
        svg = self.render_both(["roofline", *self.steps, "--annotate"], "roofline", 30)
        for label in ("h100 bf16 989 TFLOP/s", "hx200 bf16 1484 TFLOP/s", "h100: HBM 3.35 TB/s", "lm_head",
                      "attention_decode", "arithmetic intensity (FLOP/byte)"):
            self.assertIn(label, svg)

    def test_bad_inputs_exit_2_and_say_what(self):
        r = plot("breakdown", os.path.join(self.dir, "nowhere"))
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("no such file", r.stdout)
        r = plot("latency-throughput", self.sweep_csv, "--y", "mean_ttft_ms,p99_nothing_ms")
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("missing column(s) p99_nothing_ms", r.stdout)
        bad = os.path.join(self.dir, "bad.csv")
        with open(bad, "w") as f:
            f.write("point,status,output_throughput,mean_ttft_ms,p99_ttft_ms,mean_tpot_ms\n0,ok,fast,1,2,3\n")
        r = plot("latency-throughput", bad)
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("bad.csv:2: column output_throughput: expected a number, got 'fast'", r.stdout)
        r = plot("roofline", os.path.join(self.result, "kernels.csv"))  # not a step CSV
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("missing column(s)", r.stdout)
        r = plot("roofline", self.steps[0], "--out", os.path.join(self.dir, "no", "dir", "x.png"))
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("does not exist", r.stdout)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)
