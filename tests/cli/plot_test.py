#!/usr/bin/env python3
"""scripts/plot.py renders every chart kind, as PNG and SVG, and the HTML report, from real
simulator outputs.

usage: plot_test.py KERNELSIGHT   (run from the source root; ctest does)

Inputs: a real `kernelsight sweep` (two GPUs x three rates of the quickstart scenario, short
runs), the same sweep.csv without its manifest plus one failed point with blank metrics (which
the plot must skip), a real `kernelsight capacity` search, two `kernelsight step` CSVs, and two
hand-written CSVs whose values are chosen to test one rule each (a TTFT range spanning decades;
capacity's per-seed and stable/unstable columns). The expected values come from those inputs
(the CSV rows, the CLI's printed answer), never from plot.py.
"""
import base64
import csv
import json
import os
import re
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

SWEEP_YAML = f"""name: plot_test
base: {QUICKSTART}
set:
  workload.num_requests: 80
grid:
  hardware.gpu.spec: [{", ".join(GPUS)}]
  workload.rate: [{", ".join(RATES)}]
"""

# A sweep whose tp=2 line saturates: its p99 TTFT spans 450 ms .. 134 s (300x), TPOT 15..101 ms.
DECADES_CSV = """point,status,parallel.tp,workload.rate,output_throughput,p99_ttft_ms,p99_tpot_ms,mean_ttft_ms,mean_tpot_ms
0,ok,2,1/s,280.6,447,46.2,171,37.0
1,ok,2,2/s,537.0,9382,56.3,3000,40.1
2,ok,2,4/s,566.4,88420,55.7,40000,41.0
3,ok,2,8/s,572.0,134100,57.3,70000,42.5
4,ok,4,1/s,285.1,236,24.4,120,20.1
5,ok,4,2/s,553.3,288,30.2,150,22.0
6,ok,4,4/s,1062.0,401,39.8,200,25.3
7,ok,4,8/s,1829.5,940,101.3,420,60.2
8,ok,8,1/s,286.0,140,15.2,80,13.0
9,ok,8,2/s,565.2,178,17.8,95,14.1
10,ok,8,4/s,1094.1,252,22.0,120,16.8
11,ok,8,8/s,2040.7,335,40.3,160,27.9
"""

# capacity.csv with the columns another change adds: per-seed probes, stable, binding_metric.
SEEDED_CAPACITY_CSV = """probe,rate_per_s,seed,meets,stable,binding_metric,completed,submitted,p99_ttft_ms,p99_tpot_ms,p99_e2el_ms,request_throughput,tensor_parallel,why
1,2,1,true,true,,200,200,30,9,1200,1.9,1,
1,2,2,true,true,,200,200,31,9.2,1210,1.9,1,
2,4,1,true,true,,200,200,40,11,1300,3.8,1,
2,4,2,false,true,tpot,200,200,45,21,1350,3.7,1,p99 TPOT 21 ms > 20 ms
3,8,1,false,false,ttft,180,200,900,30,5000,6.1,1,queue still growing
3,8,2,false,false,ttft,175,200,950,31,5100,6.0,1,queue still growing
"""


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def plot(*args):
    return run([sys.executable, PLOT, *args])


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class PlotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ks_plot_test_")
        cls.dir = cls.tmp.name
        # A real sweep: every (GPU, rate) point in its own process, with its manifest and configs.
        sweep_file = os.path.join(cls.dir, "plot_test.yaml")
        with open(sweep_file, "w") as f:
            f.write(SWEEP_YAML)
        cls.sweep = os.path.join(cls.dir, "sweep")
        r = run([CLI, "sweep", sweep_file, "-j", "2", "--out", cls.sweep])
        assert r.returncode == 0, r.stdout
        cls.sweep_csv = os.path.join(cls.sweep, "sweep.csv")
        # The same rows without the manifest, plus a failed point with blank metrics.
        cls.failed_csv = os.path.join(cls.dir, "with_failed", "sweep.csv")
        os.makedirs(os.path.dirname(cls.failed_csv))
        rows = read_rows(cls.sweep_csv)
        with open(cls.failed_csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
            w.writerow({"point": len(rows), "status": "failed", "hardware.gpu.spec": "h100_sxm", "workload.rate": "64/s"})
        cls.result = os.path.join(cls.sweep, "points", "0001")
        cls.decades = os.path.join(cls.dir, "decades.csv")
        with open(cls.decades, "w") as f:
            f.write(DECADES_CSV)
        # A real capacity search; its printed answer is what the plot must mark.
        cls.capacity = os.path.join(cls.dir, "capacity")
        r = run([CLI, "capacity", QUICKSTART, "--set", "workload.num_requests=100", "--slo", "ttft=200ms,tpot=20ms",
                 "--find", "rate", "--min", "2/s", "--out", cls.capacity])
        assert r.returncode == 0, r.stdout
        cls.capacity_answer = float(re.search(r"^answer: ([0-9.]+) req/s", r.stdout, re.M).group(1))
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
        return "\n".join(e.text or "" for e in root.iter() if e.tag.split("}")[-1] == "text")

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

    def plotted(self, args, stem):
        """Renders an SVG with --data; returns (series JSON, SVG text)."""
        out = os.path.join(self.dir, f"{stem}.svg")
        data = os.path.join(self.dir, f"{stem}.json")
        r = plot(*args, "--out", out, "--data", data)
        self.assertEqual(r.returncode, 0, r.stdout)
        with open(data) as f:
            return json.load(f), self.check_svg(out, 20)

    # ------------------------------------------------------------ latency vs throughput

    def test_latency_throughput_one_line_per_deployment_in_rate_order(self):
        svg = self.render_both(["latency-throughput", self.sweep], "latency", 20)
        data, _ = self.plotted(["latency-throughput", self.sweep], "latency_data")
        rows = read_rows(self.sweep_csv)
        # One line per GPU (the swept key other than the rate), its points the rows of that GPU
        # in rate order, at their p99 TTFT and TPOT (the default statistic).
        self.assertEqual(sorted(l["label"] for l in data["lines"]), sorted(f"hardware.gpu.spec={g}" for g in GPUS))
        for line in data["lines"]:
            gpu = line["label"].split("=", 1)[1]
            expected = sorted((r for r in rows if r["hardware.gpu.spec"] == gpu), key=lambda r: float(r["workload.rate"][:-2]))
            self.assertEqual([p["rate_text"] for p in line["points"]], RATES)
            self.assertEqual([p["x"] for p in line["points"]], [float(r["output_throughput"]) for r in expected])
            self.assertEqual([p["y"]["p99_ttft_ms"] for p in line["points"]], [float(r["p99_ttft_ms"]) for r in expected])
            self.assertEqual([p["y"]["p99_tpot_ms"] for p in line["points"]], [float(r["p99_tpot_ms"]) for r in expected])
        # Units on every axis; the title names model, GPUs and engine (from the points' configs).
        for label in ("p99 TTFT (ms)", "p99 TPOT (ms)", "output throughput (tok/s)", "hardware.gpu.spec=h100_sxm",
                      "hardware.gpu.spec=a100_sxm_80gb", "llama-3-8b (bf16) on h100_sxm / a100_sxm_80gb, vLLM v1 scheduler", "24/s"):
            self.assertIn(label, svg)
        # --stat and --group none.
        data, svg = self.plotted(["latency-throughput", self.sweep, "--stat", "mean", "--group", "none"], "latency_mean")
        self.assertEqual(len(data["lines"]), 1)
        self.assertEqual(len(data["lines"][0]["points"]), len(rows))
        self.assertEqual(sorted(p["y"]["mean_tpot_ms"] for p in data["lines"][0]["points"]),
                         sorted(float(r["mean_tpot_ms"]) for r in rows))
        self.assertIn("mean TPOT (ms)", svg)

    def test_latency_throughput_exact_columns_and_failed_points(self):
        svg = self.render_both(["latency-throughput", self.failed_csv, "--group", "hardware.gpu.spec",
                                "--y", "mean_ttft_ms,p99_ttft_ms,mean_tpot_ms"], "latency_y", 20)
        for label in ("hardware.gpu.spec=h100_sxm", "hardware.gpu.spec=a100_sxm_80gb", "p99 TTFT (ms)",
                      "mean TPOT (ms)", "output throughput (tok/s)"):
            self.assertIn(label, svg)
        # Without sweep.json the swept keys are still found (dotted columns): one line per GPU.
        data, _ = self.plotted(["latency-throughput", self.failed_csv], "latency_failed")
        self.assertEqual(len(data["lines"]), 2)
        self.assertEqual(data["skipped"], 1)
        r = plot("latency-throughput", self.failed_csv, "--out", os.path.join(self.dir, "latency_default.png"))
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("skipped 1 failed point", r.stdout)

    def test_log_axis_where_values_span_decades(self):
        data, svg = self.plotted(["latency-throughput", self.decades], "decades")
        # p99 TTFT runs from 140 ms to 134 s (~1000x): log; TPOT 15..101 ms (7x) and the
        # throughput 280..2041 tok/s (7x): linear.
        self.assertEqual(data["scales"]["y"], {"p99_ttft_ms": "log", "p99_tpot_ms": "linear"})
        self.assertEqual(data["scales"]["x"], "linear")
        # On the chart: decade ticks 1000, 10000, 100000 on the TTFT axis, and no linear 20000-step ticks.
        ticks = set(svg.split("\n"))
        self.assertTrue({"1000", "10000", "100000"} <= ticks, sorted(ticks))
        self.assertNotIn("40000", ticks)
        self.assertIn("p99 TTFT — log scale", svg)
        # --log none keeps every axis linear.
        data, svg = self.plotted(["latency-throughput", self.decades, "--log", "none"], "decades_linear")
        self.assertEqual(data["scales"]["y"]["p99_ttft_ms"], "linear")
        self.assertIn("40000", set(svg.split("\n")))

    def test_slo_lines_and_the_best_point_within_them(self):
        data, svg = self.plotted(["latency-throughput", self.decades, "--slo", "ttft=2s,tpot=100ms"], "decades_slo")
        self.assertEqual(data["slo_ms"], {"ttft": 2000.0, "tpot": 100.0})
        rows = read_rows(self.decades)
        for line in data["lines"]:
            tp = line["label"].split("=", 1)[1]
            meeting = [float(r["output_throughput"]) for r in rows if r["parallel.tp"] == tp
                       and float(r["p99_ttft_ms"]) <= 2000 and float(r["p99_tpot_ms"]) <= 100]
            self.assertEqual(line["best_within_slo"], max(meeting) if meeting else None, tp)
            for p in line["points"]:
                self.assertEqual(p["meets"], p["y"]["p99_ttft_ms"] <= 2000 and p["y"]["p99_tpot_ms"] <= 100)
        for label in ("SLO TTFT ≤ 2 s", "SLO TPOT ≤ 100 ms", "within SLO up to 1062 tok/s", "hollow = misses an SLO"):
            self.assertIn(label, svg)

    # ------------------------------------------------------------ capacity

    def test_capacity_probes_with_the_slo_and_the_answer(self):
        svg = self.render_both(["capacity", self.capacity], "capacity", 20)
        data, _ = self.plotted(["capacity", self.capacity], "capacity_data")
        rows = read_rows(os.path.join(self.capacity, "capacity.csv"))
        self.assertEqual(len(data["probes"]), len(rows))
        self.assertEqual([p["meets"] for p in data["probes"]], [r["seed_meets"] == "true" for r in rows])
        self.assertAlmostEqual(data["answer"], self.capacity_answer, places=4)
        for label in ("offered rate (req/s)", "p99 TTFT (ms)", "p99 TPOT (ms)", "meets", "misses", "answer",
                      "llama-3-8b (bf16) on h100_sxm, vLLM v1 scheduler"):
            self.assertIn(label, svg)
        # The limits: given, or read from the failing probes' `why`.
        data, svg = self.plotted(["capacity", self.capacity, "--slo", "ttft=200ms,tpot=20ms"], "capacity_slo")
        self.assertEqual(data["slo_ms"], {"ttft": 200.0, "tpot": 20.0})
        self.assertIn("SLO TTFT ≤ 200 ms", svg)

    def test_capacity_per_seed_and_unstable_columns(self):
        path = os.path.join(self.dir, "seeded", "capacity.csv")
        os.makedirs(os.path.dirname(path))
        with open(path, "w") as f:
            f.write(SEEDED_CAPACITY_CSV)
        data, svg = self.plotted(["capacity", path, "--slo", "ttft=500ms,tpot=20ms"], "seeded")
        self.assertEqual([p["seed"] for p in data["probes"]], ["1", "2", "1", "2", "1", "2"])
        self.assertEqual([p["stable"] for p in data["probes"]], [True, True, True, True, False, False])
        self.assertEqual([p["binding_metric"] for p in data["probes"]], [None, None, None, "tpot", "ttft", "ttft"])
        # 4/s failed on one seed of two: the answer is 2/s.
        self.assertEqual(data["answer"], 2.0)
        for label in ("unstable", "misses", "meets", "answer 2 req/s", "SLO TPOT ≤ 20 ms"):
            self.assertIn(label, svg)

    # ------------------------------------------------------------ breakdown, roofline

    def test_breakdown_of_one_and_two_runs(self):
        svg = self.render_both(["breakdown", self.result], "breakdown", 20)
        for label in ("prefill", "decode", "gate_up_proj", "GPU time (s)", "llama-3-8b (bf16) on h100_sxm, vLLM v1 scheduler"):
            self.assertIn(label, svg)
        self.render_both(["breakdown", self.result, os.path.join(self.sweep, "points", "0004"), "--by", "op"],
                         "breakdown2", 20)

    def test_roofline_of_two_gpus(self):
        svg = self.render_both(["roofline", *self.steps, "--annotate"], "roofline", 30)
        for label in ("h100 bf16 989 TFLOP/s", "hx200 bf16 1484 TFLOP/s", "h100: HBM 3.35 TB/s", "lm_head",
                      "attention_decode", "arithmetic intensity (FLOP/byte)"):
            self.assertIn(label, svg)
        # By default only the kernels with the most GPU time are labelled: the top 3 here.
        svg = self.render_both(["roofline", self.steps[0], "--top", "3"], "roofline_top", 20)
        rows = [r for r in read_rows(self.steps[0]) if r["bound"] != "communication" and float(r["intensity"] or 0) > 0
                and float(r["achieved_tflops"]) > 0]
        rows.sort(key=lambda r: -float(r["total_us"]))
        labels = set(svg.split("\n"))
        for r in rows[:3]:
            self.assertIn(r["kernel"], labels)
        for r in rows[3:]:
            self.assertNotIn(r["kernel"], labels)

    # ------------------------------------------------------------ report

    def report(self, folder, name, *extra):
        out = os.path.join(self.dir, name)
        r = plot("report", folder, "-o", out, *extra)
        self.assertEqual(r.returncode, 0, r.stdout)
        with open(out) as f:
            page = f.read()
        self.assertTrue(page.startswith("<!DOCTYPE html>"))
        images = re.findall(r'<img alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
        for b in images:
            self.assertTrue(base64.b64decode(b).startswith(b"\x89PNG\r\n\x1a\n"))
        self.assertNotRegex(page, r'src="(?!data:)')  # self-contained: nothing loaded from elsewhere
        return page, images

    def test_report_of_a_run(self):
        page, images = self.report(self.result, "run.html", "--slo", "ttft=2s,tpot=100ms")
        self.assertEqual(len(images), 2)  # latency distributions (requests.csv), GPU time (kernels.csv)
        with open(os.path.join(self.result, "summary.json")) as f:
            summary = json.load(f)
        kernels = sorted(read_rows(os.path.join(self.result, "kernels.csv")), key=lambda r: -float(r["time_s"]))
        tables = re.sub(r"base64,[A-Za-z0-9+/=]+", "base64,...", page)  # short failure messages
        self.assertIn("<th>kernel</th>", tables)
        self.assertIn(f"<td>{kernels[0]['kernel']}</td>", tables)
        self.assertIn(f"<td>{summary['completed']}</td>", tables)
        ttft = summary["p99_ttft_ms"]  # shown with 4 significant digits, whole numbers from 1000
        self.assertIn(f"<td>{ttft:.4g}</td>" if ttft < 1000 else f"<td>{ttft:.0f}</td>", tables)
        self.assertIn(f"llama-3-8b (bf16) on {summary['gpu']}, vLLM v1 scheduler", page[:2000])

    def test_report_of_a_sweep_and_of_a_capacity_search(self):
        page, images = self.report(self.sweep, "sweep.html")
        self.assertEqual(len(images), 1)
        rows = read_rows(self.sweep_csv)
        table = page[page.index("<table>"):page.index("</table>")]
        self.assertEqual(table.count("<tr>"), len(rows) + 1)  # header + one row per point
        self.assertIn("<th>hardware.gpu.spec</th>", table)
        # With --slo: a yes/no column per point, and each deployment's best point within the SLOs.
        page, _ = self.report(self.sweep, "sweep_slo.html", "--slo", "ttft=100ms,tpot=10ms")
        meeting = [r for r in rows if float(r["p99_ttft_ms"]) <= 100 and float(r["p99_tpot_ms"]) <= 10]
        self.assertEqual(page.count("<td>yes</td>"), len(meeting))
        self.assertEqual(page.count("<td>no</td>"), len(rows) - len(meeting))
        self.assertIn("<th>meets the SLOs</th>", page)
        for gpu in GPUS:
            self.assertIn(f"<tr><td>hardware.gpu.spec={gpu}</td>", page)
        page, images = self.report(self.capacity, "capacity.html")
        self.assertEqual(len(images), 1)
        self.assertIn(f"Answer: <b>{self.capacity_answer:g} req/s</b>", page)

    # ------------------------------------------------------------ bad input

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
        r = plot("latency-throughput", bad, "--y", "p99_ttft_ms")
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("bad.csv:2: column output_throughput: expected a number, got 'fast'", r.stdout)
        r = plot("latency-throughput", self.sweep_csv, "--slo", "ttft=2 parsecs")
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("expected metric=duration pairs such as ttft=2s,tpot=100ms", r.stdout)
        r = plot("roofline", os.path.join(self.result, "kernels.csv"))  # not a step CSV
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("missing column(s)", r.stdout)
        r = plot("roofline", self.steps[0], "--out", os.path.join(self.dir, "no", "dir", "x.png"))
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("does not exist", r.stdout)
        r = plot("capacity", self.sweep_csv)  # not a capacity.csv
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("missing column(s) probe", r.stdout)
        empty = os.path.join(self.dir, "empty")
        os.makedirs(empty)
        r = plot("report", empty)
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("none of sweep.csv, capacity.csv, summary.json", r.stdout)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)
