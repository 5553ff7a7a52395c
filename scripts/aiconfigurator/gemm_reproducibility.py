#!/usr/bin/env python3
"""How far AIConfigurator's engine tables of one GPU disagree on the same GEMM.

vLLM's and SGLang's bf16 GEMM tables both time `torch.nn.functional.linear` (their
`kernel_source` says so) on the same GPU and the same shapes, under two engine stacks (vLLM 0.24,
SGLang 0.5.14: their PyTorch and cuBLAS builds may differ) collected in two runs. TensorRT-LLM's
table times its own GEMM path over the same shapes. Their disagreement on shapes both measured
is part stack (a median offset of a few percent) and part spread. It does not bound a model
calibrated on one table, but it bounds any claim of a few-percent accuracy for "the GPU's
GEMM": one table's times are one stack's.

Prints, per GPU and pair of tables: shapes both measured, the median time ratio, the mean
absolute relative difference (all shapes, and shapes over 50 us).

    python3 scripts/aiconfigurator/gemm_reproducibility.py [data/sweeps/aiconfigurator]
"""
import csv
import os
import statistics
import sys

GPUS = ["a100_sxm", "h100_sxm", "h200_sxm", "b200_sxm", "l40s"]
PAIRS = [("vllm", "sglang"), ("vllm", "trtllm"), ("sglang", "trtllm")]


def gemm_times(path):
    """(m, n, k) -> median time_us of the bf16 GEMM rows, and the kernel sources seen."""
    times, sources = {}, set()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["op"] == "gemm" and r["dtype"] == "bf16":
                times.setdefault((r["m"], r["n"], r["k"]), []).append(float(r["time_us"]))
                sources.add(r.get("kernel_source", ""))
    return {key: statistics.median(v) for key, v in times.items()}, sources


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "sweeps", "aiconfigurator")
    print("| GPU | tables | kernel sources | shapes | median ratio | mean abs. difference % | over 50 us % |")
    print("|---|---|---|---|---|---|---|")
    for gpu in GPUS:
        tables = {}
        for engine in {e for pair in PAIRS for e in pair}:
            path = os.path.join(folder, "{}.{}.csv".format(gpu, engine))
            if os.path.exists(path):
                tables[engine] = gemm_times(path)
        for a, b in PAIRS:
            if a not in tables or b not in tables:
                continue
            (ta, sa), (tb, sb) = tables[a], tables[b]
            both = [key for key in ta if key in tb]
            if not both:
                continue
            ratio = [ta[key] / tb[key] for key in both]
            big = [ta[key] / tb[key] for key in both if tb[key] > 50]
            big_text = "{:.1f} ({})".format(100 * statistics.mean(abs(x - 1) for x in big), len(big)) if big else "-"
            print("| {} | {} / {} | {} / {} | {} | {:.3f} | {:.1f} | {} |".format(
                gpu, a, b, ", ".join(sorted(sa)), ", ".join(sorted(sb)), len(both), statistics.median(ratio),
                100 * statistics.mean(abs(x - 1) for x in ratio), big_text))


if __name__ == "__main__":
    main()
