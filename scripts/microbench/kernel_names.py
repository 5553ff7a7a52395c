#!/usr/bin/env python3
"""Which GPU kernels microbench.py's ops run on this GPU, and how fast each attention backend is.

A sweep's times belong to the kernels the stack picked: PyTorch's scaled_dot_product_attention
(SDPA) chooses among FlashAttention-2 code, cuDNN's fused attention, memory-efficient attention and
plain math, and cuBLAS picks a GEMM kernel per shape. Validation must compare the sweep with a
model of the same kernels (kernelsight's attention backends: fa2, fa3, flashinfer, ...), so this
script names them. For a few representative shapes of each op it:
  * builds the op exactly as microbench.py does (its Bench class) and records, with
    torch.profiler, the CUDA kernels one call launches;
  * for attention, times the op under every SDPA backend PyTorch can run it with (median of
    --repeats, L2 evicted before each run, as microbench.py times), the default choice first.
Prints a table and writes JSON (--out).

    python3 scripts/microbench/kernel_names.py --gpu h200 --out h200_kernels.json
"""
import argparse
import json
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import microbench  # noqa: E402

SHAPES = [
    dict(op="attention_prefill", dtype="bf16", batch=1, tokens=2048, heads=32, kv_heads=8, head_dim=128,
         q_len=2048, kv_len=2048),
    dict(op="attention_prefill", dtype="bf16", batch=1, tokens=8192, heads=32, kv_heads=8, head_dim=128,
         q_len=8192, kv_len=8192),
    dict(op="attention_prefill", dtype="bf16", batch=4, tokens=2048, heads=32, kv_heads=32, head_dim=128,
         q_len=512, kv_len=512),
    dict(op="attention_decode", dtype="bf16", batch=16, tokens=16, heads=32, kv_heads=8, head_dim=128,
         q_len=1, kv_len=4096),
    dict(op="attention_decode", dtype="bf16", batch=256, tokens=256, heads=32, kv_heads=32, head_dim=128,
         q_len=1, kv_len=1024),
    dict(op="attention_decode", dtype="bf16", batch=1, tokens=1, heads=32, kv_heads=8, head_dim=128,
         q_len=1, kv_len=16384),
    dict(op="gemm", dtype="bf16", m=16, n=4096, k=4096),
    dict(op="gemm", dtype="bf16", m=4096, n=4096, k=4096),
    dict(op="gemm", dtype="fp8", m=16, n=4096, k=4096),
    dict(op="gemm", dtype="fp8", m=4096, n=4096, k=4096),
    dict(op="rmsnorm", dtype="bf16", tokens=256, hidden=4096),
    dict(op="silu_mul", dtype="bf16", tokens=256, hidden=14336),
]


def kernels_of(torch, fn):
    """Names of the CUDA kernels one call of fn launches (after a warm-up call)."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = []
    for e in prof.events():
        if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA and e.name not in names:
            names.append(e.name)
    return names


def sdpa_backends(torch):
    attn = getattr(torch.nn, "attention", None)
    if attn is None or not hasattr(attn, "sdpa_kernel"):
        return None, []
    B = attn.SDPBackend
    names = ["FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION", "MATH"]
    return attn, [(n, getattr(B, n)) for n in names if hasattr(B, n)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpu", default="unknown")
    p.add_argument("--out", default=None)
    p.add_argument("--repeats", type=int, default=30)
    args = p.parse_args()
    # SDPA's own choice (not the flash-attn package, even where installed): the backends below are
    # SDPA's, selected with sdpa_kernel.
    mb_args = microbench.parse_args(["--gpu", args.gpu, "--repeats", str(args.repeats), "--attention", "sdpa"])
    bench = microbench.Bench(mb_args)
    torch = bench.torch
    props = torch.cuda.get_device_properties(bench.dev)
    report = dict(gpu=args.gpu, device=props.name, sms=props.multi_processor_count,
                  torch=torch.__version__, cuda=str(torch.version.cuda), source=bench.source(), shapes=[])
    attn, backends = sdpa_backends(torch)
    if attn is not None and hasattr(attn, "list_flash_attention_impls"):
        report["flash_attention_impls"] = list(attn.list_flash_attention_impls())
    for row in SHAPES:
        entry = dict(row)
        fn = bench.make(row)
        if fn is None:
            entry["skipped"] = True
            report["shapes"].append(entry)
            continue
        entry["kernels"] = kernels_of(torch, fn)
        entry["default_us"] = bench.time_us(fn)
        if row["op"].startswith("attention") and attn is not None:
            entry["backends"] = {}
            for name, b in backends:
                try:
                    with attn.sdpa_kernel([b]):
                        fb = bench.make(row)
                        ks = kernels_of(torch, fb)
                        t = bench.time_us(fb)
                    entry["backends"][name] = dict(us=t, kernels=ks)
                except Exception as e:  # noqa: BLE001 - a backend that rejects the shape
                    entry["backends"][name] = dict(error=type(e).__name__ + ": " + str(e).splitlines()[0][:160])
        report["shapes"].append(entry)
        fn = None
        torch.cuda.empty_cache()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    print("{} ({} SMs), torch {}, CUDA {}, source {}, flash-attention impls {}".format(
        report["device"], report["sms"], report["torch"], report["cuda"], report["source"],
        report.get("flash_attention_impls", "n/a")))
    for e in report["shapes"]:
        shape = {k: v for k, v in e.items() if k not in ("op", "dtype", "kernels", "default_us", "backends", "skipped")}
        print("\n{} {} {}".format(e["op"], e["dtype"], shape))
        if e.get("skipped"):
            print("  skipped (unsupported here)")
            continue
        print("  default {:.2f} us: {}".format(e["default_us"], "; ".join(k[:110] for k in e["kernels"])))
        for name, b in e.get("backends", {}).items():
            if "error" in b:
                print("  {:<20} {}".format(name, b["error"]))
            else:
                print("  {:<20} {:8.2f} us: {}".format(name, b["us"], "; ".join(k[:90] for k in b["kernels"])))


if __name__ == "__main__":
    main()
