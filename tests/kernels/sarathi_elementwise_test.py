#!/usr/bin/env python3
"""scripts/microbench/sarathi_elementwise.py without a GPU: the blocks it rebuilds from a Vidur
sweep, its reading of a profiler trace (Vidur's: kernels whose launches lie in an op's range) and
the rows it writes."""
import importlib.util
import json
import os
import sys
import tempfile
import unittest

SCRIPT, SHAPES = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("sarathi_elementwise", SCRIPT)
se = importlib.util.module_from_spec(spec)
spec.loader.exec_module(se)


class Plan(unittest.TestCase):
    def test_blocks_pair_heads_and_widths_by_degree(self):
        blocks, skipped = se.read_plan(SHAPES, 4, 1 << 30, set())
        self.assertIn("phi-2", skipped)  # LayerNorm + GELU: not rebuilt
        by = {(b["model"], b["tp"]): b for b in blocks}
        self.assertEqual(len(blocks), 28)
        # Llama-2-70B: 64 query / 8 KV heads and a 28672-wide SwiGLU on one GPU, an eighth on eight.
        one, eight = by[("llama-2-70b-hf", 1)], by[("llama-2-70b-hf", 8)]
        self.assertEqual((one["heads"], one["kv_heads"], one["width"], one["hidden"]), (64, 8, 28672, 8192))
        self.assertEqual((eight["heads"], eight["kv_heads"], eight["width"], eight["hidden"]), (8, 1, 3584, 8192))
        tokens = one["tokens"]
        self.assertEqual(tokens[:4], [1, 2, 4, 8])
        self.assertTrue(all(t in tokens for t in range(8, 129, 8)))  # every count up to 128
        self.assertEqual(tokens[-1], 4096)  # the largest is always kept
        self.assertEqual(tokens, sorted(set(tokens)))

    def test_a_bad_shapes_file_is_a_plan_error(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write("gpu,time_us\nx,1\n")
        with self.assertRaises(se.PlanError) as e:
            se.read_plan(f.name, 4, 1 << 30, set())
        self.assertIn(f.name, str(e.exception))
        self.assertIn("expected a sweep CSV", str(e.exception))
        os.remove(f.name)


class Trace(unittest.TestCase):
    def test_kernels_are_summed_by_the_range_their_launch_lies_in(self):
        events = [
            {"cat": "user_annotation", "name": "ks#add#64#0", "ts": 100.0, "dur": 20.0},
            {"cat": "user_annotation", "name": "ks#add#64#1", "ts": 200.0, "dur": 20.0},
            {"cat": "user_annotation", "name": "other", "ts": 0.0, "dur": 1000.0},
            {"cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 105.0, "args": {"correlation": 1}},
            {"cat": "cuda_driver", "name": "cuLaunchKernel", "ts": 110.0, "args": {"correlation": 2}},
            {"cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 150.0, "args": {"correlation": 3}},
            {"cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 210.0, "args": {"correlation": 4}},
            # Kernels run later than their launch, outside the range: matched by correlation.
            {"cat": "kernel", "name": "a", "ts": 400.0, "dur": 3.0, "args": {"correlation": 1}},
            {"cat": "kernel", "name": "b", "ts": 410.0, "dur": 4.5, "args": {"correlation": 2}},
            {"cat": "kernel", "name": "c", "ts": 420.0, "dur": 100.0, "args": {"correlation": 3}},
            {"cat": "kernel", "name": "d", "ts": 530.0, "dur": 9.0, "args": {"correlation": 4}},
        ]
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"traceEvents": events}, f)
        times = se.kernel_times(f.name)
        os.remove(f.name)
        self.assertEqual(dict(times), {"add#64": [7.5, 9.0]})


class Rows(unittest.TestCase):
    block = {"model": "m", "tp": 2, "hidden": 4096, "heads": 16, "kv_heads": 4, "head_dim": 128, "width": 7168,
             "tokens": [8], "dtype": "fp16"}

    def test_rows_carry_the_vidur_columns_of_each_op(self):
        times = {f"{label}#8": 1.0 + i for i, label in enumerate(se.LABELS)}
        rows = {r["label"]: r for r in se.rows_of(self.block, times, "h200", "sarathi-fp16")}
        self.assertEqual(set(rows), set(se.LABELS))
        self.assertEqual((rows["attn_rope"]["op"], rows["attn_rope"]["heads"], rows["attn_rope"]["kv_heads"],
                          rows["attn_rope"]["head_dim"], rows["attn_rope"]["hidden"]), ("rope", 16, 4, 128, ""))
        self.assertEqual((rows["mlp_act"]["op"], rows["mlp_act"]["hidden"]), ("silu_mul", 7168))
        self.assertEqual((rows["post_attention_layernorm"]["op"], rows["post_attention_layernorm"]["hidden"]),
                         ("rmsnorm", 4096))
        self.assertEqual(rows["add"]["time_us"], f"{times['add#8']:.3f}")
        self.assertTrue(all(list(r) == se.COLUMNS for r in rows.values()))

    def test_an_op_without_kernel_time_is_an_error(self):
        times = {f"{label}#8": 1.0 for label in se.LABELS if label != "mlp_act"}
        with self.assertRaises(RuntimeError) as e:
            se.rows_of(self.block, times, "h200", "sarathi-fp16")
        self.assertIn("mlp_act at 8 tokens", str(e.exception))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
