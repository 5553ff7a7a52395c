#!/usr/bin/env python3
"""Checks microbench.py's measuring loop without a GPU: a recording stand-in for torch logs every
GPU call, and the test asserts their order and the script's handling of failing shapes and of
--max-seconds. What it guards: the timed region (start event .. end event) holds the op alone; the
L2 flush (a read by default) and the spin kernel that covers the host's dispatch come before the
start event; one failing shape does not end the sweep."""
import csv
import importlib.util
import io
import sys
import types
import unittest
from contextlib import redirect_stderr

SCRIPT = sys.argv.pop(1)


class RecordingTorch(types.ModuleType):
    """Just enough of torch for Bench: every GPU-side action appends to `log`."""

    def __init__(self):
        super().__init__("torch")
        self.log = []
        self.__version__ = "0.0+fake"
        self.version = types.SimpleNamespace(cuda="0.0", hip=None)
        self.bfloat16, self.float16, self.float32, self.uint8 = "bf16", "fp16", "fp32", "u8"
        torch = self

        class Tensor:
            def __init__(self, name):
                self.name = name

            def sum(self):
                torch.log.append("read " + self.name)

            def zero_(self):
                torch.log.append("write " + self.name)

        class Event:
            count = 0

            def __init__(self, enable_timing=False):
                Event.count += 1
                self.name = "start" if Event.count % 2 else "end"

            def record(self):
                torch.log.append("record " + self.name)

            def synchronize(self):
                pass

            def elapsed_time(self, other):
                return 0.005  # ms

        self.Tensor = Tensor
        self.cuda = types.SimpleNamespace(
            is_available=lambda: True,
            get_device_properties=lambda dev: types.SimpleNamespace(L2_cache_size=50 << 20, clock_rate=1_980_000),
            Event=Event,
            _sleep=lambda cycles: torch.log.append("spin %d" % cycles),
            empty_cache=lambda: None)
        self.nn = types.SimpleNamespace(functional=types.SimpleNamespace(
            linear=lambda x, w: torch.log.append("linear")))

    def device(self, name):
        return name

    def ones(self, n, dtype=None, device=None):
        return self.Tensor("flush_buf[%d]" % n)

    empty = ones

    def randn(self, *shape, device=None, dtype=None):
        if shape and shape[0] == 13:
            raise RuntimeError("CUDA out of memory (planted)")
        return self.Tensor("x")


def load_script(fake):
    sys.modules["torch"] = fake
    spec = importlib.util.spec_from_file_location("microbench", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(module, argv):
    out, err = io.StringIO(), io.StringIO()
    real_stdout = sys.stdout
    sys.stdout = out
    try:
        with redirect_stderr(err):
            module.main(argv)
    finally:
        sys.stdout = real_stdout
    return list(csv.DictReader(io.StringIO(out.getvalue()))), err.getvalue()


class MeasuringLoop(unittest.TestCase):
    def setUp(self):
        self.torch = RecordingTorch()
        self.mb = load_script(self.torch)
        self.mb.M_QUICK[:] = [1, 13, 64]  # m = 13 hits the planted out-of-memory error

    def test_the_timed_region_holds_the_op_alone_after_a_read_flush_and_a_spin(self):
        rows, _ = run(self.mb, ["--ops", "gemm", "--dtypes", "bf16", "--quick", "--repeats", "2",
                                "--warmup", "1", "--elementwise", "eager"])
        self.assertTrue(rows)
        log = self.torch.log
        starts = [i for i, e in enumerate(log) if e == "record start"]
        self.assertEqual(len(starts), 2 * len(rows))
        for i in starts:
            self.assertTrue(log[i - 2].startswith("read flush_buf"), log[i - 3:i + 3])
            # 200 us at 1.98 GHz
            self.assertEqual(log[i - 1], "spin 396000")
            self.assertEqual(log[i + 1:i + 3], ["linear", "record end"])
        self.assertNotIn("write", " ".join(log))

    def test_write_flush_and_no_flush_are_still_available(self):
        run(self.mb, ["--ops", "gemm", "--dtypes", "bf16", "--quick", "--repeats", "1", "--warmup", "0",
                      "--flush-l2", "write", "--elementwise", "eager"])
        self.assertIn("write flush_buf", " ".join(self.torch.log))
        self.torch.log.clear()
        rows, _ = run(self.mb, ["--ops", "gemm", "--dtypes", "bf16", "--quick", "--repeats", "1", "--warmup", "0",
                                "--no-flush-l2", "--elementwise", "eager"])
        self.assertFalse([e for e in self.torch.log if "flush_buf" in e and not e.startswith("ones")])
        self.assertTrue(all(r["source"].endswith("/flush-none") for r in rows))

    def test_a_failing_shape_costs_its_row_not_the_sweep(self):
        rows, err = run(self.mb, ["--ops", "gemm", "--dtypes", "bf16", "--quick", "--repeats", "1",
                                  "--warmup", "0", "--elementwise", "eager"])
        ms = {r["m"] for r in rows}
        self.assertEqual(ms, {"1", "64"})
        self.assertIn("failed: RuntimeError: CUDA out of memory (planted)", err)
        planned = len(self.mb.plan(self.mb.parse_args(["--ops", "gemm", "--dtypes", "bf16", "--quick"])))
        self.assertEqual(len(rows), planned * 2 // 3)
        self.assertIn("shapes failed", err)

    def test_max_seconds_stops_early_with_a_valid_csv(self):
        rows, err = run(self.mb, ["--ops", "gemm", "--dtypes", "bf16", "--quick", "--repeats", "1",
                                  "--warmup", "0", "--max-seconds", "1e-9", "--elementwise", "eager"])
        self.assertLessEqual(len(rows), 1)
        self.assertIn("--max-seconds", err)


class AttentionShapes(unittest.TestCase):
    """--attention-shapes takes the distinct 16-bit attention shapes of another sweep (an imported
    table's decode rows leave q_len blank; prefill over a cached prefix is left out), optionally of
    one kernel_source, thinned evenly."""

    def setUp(self):
        import tempfile
        self.mb = load_script(RecordingTorch())
        header = "gpu,source,op,dtype,batch,heads,kv_heads,head_dim,q_len,kv_len,time_us,kernel_source,kv_dtype\n"
        rows = [
            "h200,aic,attention_prefill,bf16,2,40,4,64,1024,1024,50,fa3,bf16",
            "h200,aic,attention_prefill,bf16,2,40,4,64,1024,1024,51,fa3,bf16",   # the same shape again
            "h200,aic,attention_prefill,bf16,2,40,4,64,512,1024,30,fa3,bf16",    # over a cached prefix: skipped
            "h200,aic,attention_decode,bf16,32,40,4,64,,2048,20,fa3,bf16",       # decode: q_len blank
            "h200,aic,attention_decode,bf16,32,40,4,64,,2048,9,fa3,fp8",         # fp8 KV cache: skipped
            "h200,aic,attention_decode,bf16,8,32,8,128,,512,7,fa4,bf16",         # another kernel source
            "h200,aic,gemm,bf16,,,,,,,3,,",                                      # not attention
        ]
        self.csv = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
        self.csv.write(header + "\n".join(rows) + "\n")
        self.csv.close()

    def plan(self, *extra):
        args = self.mb.parse_args(["--ops", "attention_prefill,attention_decode", "--dtypes", "bf16",
                                   "--attention-shapes", self.csv.name] + list(extra))
        return self.mb.plan(args)

    def test_distinct_shapes_of_one_source(self):
        rows = self.plan("--kernel-source", "fa3")
        self.assertEqual(len(rows), 2)
        prefill, decode = rows
        self.assertEqual((prefill["op"], prefill["batch"], prefill["q_len"], prefill["tokens"]),
                         ("attention_prefill", 2, 1024, 2048))
        self.assertEqual((decode["op"], decode["batch"], decode["q_len"], decode["kv_len"], decode["tokens"]),
                         ("attention_decode", 32, 1, 2048, 32))
        self.assertEqual(len(self.plan()), 3)
        self.assertEqual(len(self.plan("--max-shapes", "2")), 2)

    def test_selection_without_the_csv_and_a_missing_csv_are_errors(self):
        err = io.StringIO()
        with redirect_stderr(err), self.assertRaises(SystemExit):
            self.mb.parse_args(["--kernel-source", "fa3"])
        self.assertIn("give that CSV too", err.getvalue())
        err = io.StringIO()
        with redirect_stderr(err), self.assertRaises(SystemExit):
            self.mb.parse_args(["--attention-shapes", self.csv.name + ".missing"])
        self.assertIn("no such file", err.getvalue())

    def test_dry_run_labels_attention_rows(self):
        rows, _ = run(self.mb, ["--dry-run", "--ops", "attention_decode", "--dtypes", "bf16", "--attention",
                                "sdpa-flash", "--attention-shapes", self.csv.name])
        self.assertEqual({r["kernel_source"] for r in rows}, {"sdpa_flash"})
        self.assertEqual({r["framework"] for r in rows}, {"pytorch"})


if __name__ == "__main__":
    unittest.main()
