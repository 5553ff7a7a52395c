#!/usr/bin/env python3
"""Sarathi-Serve's elementwise kernels, timed the way microsoft/vidur profiles them, on this GPU.

Vidur's A100 and A40 profiles (shipped as data/sweeps/<gpu>.vidur.csv) time a decoder block built
from Sarathi-Serve's layers. Their elementwise rows are what the kernel model's norm, activation,
rotary, add and embedding classes learn from, and until a table of another generation measures
the same kernels, nothing tells how those classes transfer. This script rebuilds that block for
every (model, tensor-parallel degree) of a shipped Vidur sweep, runs it at the sweep's token
counts, and times each op as Vidur's RecordFunctionTracer does: the summed durations of the GPU
kernels launched inside the op's profiler range (kernel time, no launch gaps), the median of
--repeats forwards after an untimed one, each op reading what the op before it wrote (the L2
state of a forward pass). It writes the sweep's own rows (label, op, dtype, tokens, hidden,
heads, kv_heads, head_dim) with this GPU's times, in the sweep format.

    emb                        F.embedding (PyTorch's gather, as Vidur)
    input_layernorm,
    post_attention_layernorm   Sarathi rms_norm
    attn_rope                  Sarathi rotary_embedding (neox style, in place on q and k)
    mlp_act                    Sarathi silu_and_mul
    add                        the residual add (PyTorch)

The kernels are compiled from sarathi_kernels/ (copied from microsoft/sarathi-serve, Apache-2.0)
by PyTorch's extension builder on first use (needs nvcc and ninja; a minute or two). Models whose
block is not RMSNorm + SwiGLU (phi-2: LayerNorm, GELU, a three-way add) are skipped and counted.
The GEMMs between the ops run (so the L2 holds what a forward leaves there) but are not written.

Usage:
    python3 scripts/microbench/sarathi_elementwise.py --gpu h200 --out h200.sarathi.csv
    python3 scripts/microbench/sarathi_elementwise.py --dry-run    # the plan; no torch needed
"""
import argparse
import bisect
import collections
import csv
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_SHAPES = os.path.join(ROOT, "data", "sweeps", "a100_sxm_80gb.vidur.csv")
COLUMNS = ["gpu", "source", "model", "label", "op", "dtype", "m", "n", "k", "batch", "tokens", "hidden", "heads",
           "kv_heads", "head_dim", "q_len", "kv_len", "time_us"]
# Vidur's label -> the sweep's op, for the labels this script measures.
LABELS = {"emb": "embedding", "input_layernorm": "rmsnorm", "post_attention_layernorm": "rmsnorm",
          "attn_rope": "rope", "mlp_act": "silu_mul", "add": "add"}


class PlanError(Exception):
    pass


def read_plan(shapes_csv, stride, max_tokens, models):
    """One block per (model, tensor-parallel degree) of the sweep: hidden, heads, KV heads,
    head_dim and the SwiGLU width per degree, and the sweep's token counts (every count up to 128,
    then every stride-th and the largest). Returns (blocks, skipped models)."""
    try:
        rows = list(csv.DictReader(open(shapes_csv, newline="")))
    except OSError as e:
        raise PlanError(f"{shapes_csv}: cannot read the shapes sweep ({e.strerror})")
    need = {"model", "label", "op", "dtype", "tokens", "hidden", "heads", "kv_heads", "head_dim"}
    if not rows or not need <= set(rows[0]):
        raise PlanError(f"{shapes_csv}: expected a sweep CSV with columns {', '.join(sorted(need))}")
    per_model = collections.defaultdict(lambda: collections.defaultdict(set))
    for line, r in enumerate(rows, start=2):
        if models and r["model"] not in models:
            continue
        if r["label"] not in LABELS:
            continue
        m = per_model[r["model"]]
        try:
            if r["label"] == "emb":
                m["hidden"].add(int(r["hidden"]))
            elif r["label"] == "attn_rope":
                m["rope"].add((int(r["heads"]), int(r["kv_heads"]), int(r["head_dim"])))
            elif r["label"] == "mlp_act":
                m["act"].add((r["op"], int(r["hidden"])))
            elif r["label"] == "input_layernorm":
                m["norm"].add(r["op"])
            elif r["label"] == "add":
                m["tokens"].add(int(r["tokens"]))
            m["dtype"].add(r["dtype"])
        except ValueError:
            raise PlanError(f"{shapes_csv}:{line}: label {r['label']}: expected integer shape columns")
    blocks, skipped = [], {}
    for model in sorted(per_model):
        m = per_model[model]
        if m["norm"] != {"rmsnorm"} or {op for op, _ in m["act"]} != {"silu_mul"}:
            skipped[model] = "not an RMSNorm + SwiGLU block"
            continue
        if len(m["hidden"]) != 1 or not m["rope"] or not m["tokens"] or len(m["dtype"]) != 1:
            skipped[model] = "incomplete rows (needs emb, attn_rope, mlp_act, add)"
            continue
        ropes = sorted(m["rope"], reverse=True)  # heads per GPU fall with the degree
        widths = sorted((w for _, w in m["act"]), reverse=True)
        if len(ropes) != len(widths):
            skipped[model] = f"{len(ropes)} rotary shapes but {len(widths)} SwiGLU widths"
            continue
        all_tokens = sorted(t for t in m["tokens"] if t <= max_tokens)
        tokens = [t for t in all_tokens if t <= 128]
        rest = [t for t in all_tokens if t > 128]
        tokens += rest[stride - 1::stride]
        if rest and rest[-1] not in tokens:
            tokens.append(rest[-1])
        for degree, ((heads, kv_heads, head_dim), width) in enumerate(zip(ropes, widths)):
            blocks.append({"model": model, "tp": 2 ** degree, "hidden": next(iter(m["hidden"])), "heads": heads,
                           "kv_heads": kv_heads, "head_dim": head_dim, "width": width, "tokens": tokens,
                           "dtype": next(iter(m["dtype"]))})
    return blocks, skipped


def build_ops(build_dir):
    from torch.utils import cpp_extension
    src = os.path.join(HERE, "sarathi_kernels")
    sources = [os.path.join(src, f) for f in ("ops.cpp", "layernorm_kernels.cu", "activation_kernels.cu",
                                              "pos_encoding_kernels.cu")]
    os.makedirs(build_dir, exist_ok=True)
    return cpp_extension.load(name="ks_sarathi_ops", sources=sources, build_directory=build_dir,
                              extra_cflags=["-O3"], extra_cuda_cflags=["-O3"], verbose=False)


def kernel_times(trace_path):
    """Vidur's RecordFunctionTracer reading: per profiler range, the durations of the GPU kernels
    whose launches (runtime or driver calls) lie inside it. {range name: [us per call]}."""
    events = json.load(open(trace_path))["traceEvents"]
    kernel_us = collections.defaultdict(float)
    launches, ranges = [], []
    for e in events:
        cat = e.get("cat", "")
        if cat in ("kernel", "gpu_memcpy", "gpu_memset") and "correlation" in e.get("args", {}):
            kernel_us[e["args"]["correlation"]] += float(e.get("dur", 0.0))
        elif cat in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launches.append((float(e["ts"]), e["args"]["correlation"]))
        elif cat == "user_annotation" and str(e.get("name", "")).startswith("ks#"):
            ranges.append((float(e["ts"]), float(e.get("dur", 0.0)), e["name"]))
    launches.sort()
    starts = [ts for ts, _ in launches]
    out = collections.defaultdict(list)
    for ts, dur, name in ranges:
        i = bisect.bisect_left(starts, ts)
        total = 0.0
        while i < len(launches) and launches[i][0] <= ts + dur:
            total += kernel_us.get(launches[i][1], 0.0)
            i += 1
        _, label, tokens, _ = name.split("#", 3)
        out[f"{label}#{tokens}"].append(total)
    return out


def measure_block(torch, ops, block, repeats, trace_dir):
    import torch.nn.functional as F
    dev, dt = "cuda", {"fp16": torch.float16, "bf16": torch.bfloat16}[block["dtype"]]
    H, h, kv, hd, d = block["hidden"], block["heads"], block["kv_heads"], block["head_dim"], block["width"]
    vocab = max(32000 // block["tp"], 1024)
    g = torch.Generator(device=dev).manual_seed(0)
    w = lambda *shape: (torch.randn(*shape, device=dev, generator=g) * 0.02).to(dt)
    emb_w, norm_w = w(vocab, H), torch.ones(H, device=dev, dtype=dt)
    qkv_w, o_w, up_w, down_w = w((h + 2 * kv) * hd, H), w(H, h * hd), w(2 * d, H), w(H, d)
    cos_sin = w(max(block["tokens"]) + 1, hd)
    rf = torch.profiler.record_function

    def forward(T, tag):
        ids = torch.randint(0, vocab, (T,), device=dev)
        pos = torch.arange(T, device=dev, dtype=torch.long)
        with rf(f"ks#emb#{T}#{tag}"):
            x = F.embedding(ids, emb_w)
        residual = x
        with rf(f"ks#input_layernorm#{T}#{tag}"):
            n1 = torch.empty_like(x)
            ops.rms_norm(n1, x, norm_w, 1e-6)
        q, k, _ = F.linear(n1, qkv_w).split([h * hd, kv * hd, kv * hd], dim=-1)
        with rf(f"ks#attn_rope#{T}#{tag}"):
            ops.rotary_embedding(pos, q, k, hd, cos_sin, True)
        x = residual + F.linear(torch.randn_like(q), o_w)
        residual = x
        with rf(f"ks#post_attention_layernorm#{T}#{tag}"):
            n2 = torch.empty_like(x)
            ops.rms_norm(n2, x, norm_w, 1e-6)
        up = F.linear(n2, up_w)
        with rf(f"ks#mlp_act#{T}#{tag}"):
            act = torch.empty(T, d, device=dev, dtype=dt)
            ops.silu_and_mul(act, up)
        down = F.linear(act, down_w)
        with rf(f"ks#add#{T}#{tag}"):
            return residual + down

    for T in block["tokens"]:
        forward(T, "warm")
    torch.cuda.synchronize()
    trace = os.path.join(trace_dir, f"{block['model']}.tp{block['tp']}.json")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]) as prof:
        for r in range(repeats):
            for T in block["tokens"]:
                forward(T, r)
        torch.cuda.synchronize()
    prof.export_chrome_trace(trace)
    times = kernel_times(trace)
    os.remove(trace)
    return {key: statistics.median(v) for key, v in times.items()}


def rows_of(block, times, gpu, source):
    out = []
    for T in block["tokens"]:
        for label, op in LABELS.items():
            t = times.get(f"{label}#{T}")
            if t is None or t <= 0:
                raise RuntimeError(f"{block['model']} tp{block['tp']} {label} at {T} tokens: no kernel time in the "
                                   "profiler trace (a kernel launched outside its range?)")
            row = dict.fromkeys(COLUMNS, "")
            row.update(gpu=gpu, source=source, model=block["model"], label=label, op=op, dtype=block["dtype"],
                       batch=1, tokens=T, time_us=f"{t:.3f}")
            if label == "attn_rope":
                row.update(heads=block["heads"], kv_heads=block["kv_heads"], head_dim=block["head_dim"])
            else:
                row.update(hidden=block["width"] if label == "mlp_act" else block["hidden"])
            out.append(row)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpu", help="catalog name of this GPU (kernelsight list), e.g. h200")
    p.add_argument("--shapes", default=DEFAULT_SHAPES, help="Vidur sweep whose shapes to measure (default: A100's)")
    p.add_argument("--models", default="", help="comma list: only these models of the shapes sweep")
    p.add_argument("--stride", type=int, default=4, help="above 128 tokens, every stride-th token count (default 4)")
    p.add_argument("--max-tokens", type=int, default=1 << 30, help="largest token count measured")
    p.add_argument("--repeats", type=int, default=5, help="timed forwards per shape; the median is written")
    p.add_argument("--source", default="sarathi-fp16", help="source column (default sarathi-fp16)")
    p.add_argument("--out", default="-", help="CSV to write ('-' = stdout)")
    p.add_argument("--build-dir", default=os.path.join(tempfile.gettempdir(), "ks_sarathi_build"))
    p.add_argument("--dry-run", action="store_true", help="print the plan and exit (no torch needed)")
    a = p.parse_args(argv)
    if a.stride < 1 or a.repeats < 1:
        p.error("--stride and --repeats must be at least 1")
    models = {m for m in a.models.split(",") if m}
    try:
        blocks, skipped = read_plan(a.shapes, a.stride, a.max_tokens, models)
    except PlanError as e:
        print(f"sarathi_elementwise: {e}", file=sys.stderr)
        return 2
    if models - {b["model"] for b in blocks} - set(skipped):
        print(f"sarathi_elementwise: --models: not in {a.shapes}: "
              f"{', '.join(sorted(models - {b['model'] for b in blocks} - set(skipped)))}", file=sys.stderr)
        return 2
    n_rows = sum(len(b["tokens"]) * len(LABELS) for b in blocks)
    for model, why in skipped.items():
        print(f"skipped {model}: {why}", file=sys.stderr)
    print(f"{len(blocks)} blocks, {n_rows} rows", file=sys.stderr)
    if a.dry_run:
        for b in blocks:
            print(f"{b['model']} tp{b['tp']}: hidden {b['hidden']}, heads {b['heads']}/{b['kv_heads']} x "
                  f"{b['head_dim']}, SwiGLU {b['width']}, {len(b['tokens'])} token counts "
                  f"{b['tokens'][0]}..{b['tokens'][-1]}")
        return 0
    if not a.gpu:
        p.error("--gpu is required (the catalog name of this GPU)")
    import torch
    if not torch.cuda.is_available():
        print("sarathi_elementwise: no CUDA GPU visible", file=sys.stderr)
        return 2
    start = time.time()
    ops = build_ops(a.build_dir)
    print(f"built the kernels in {time.time() - start:.0f} s on {torch.cuda.get_device_name()}", file=sys.stderr)
    # Rows are written block by block: a run cut short leaves a valid CSV of the blocks it finished.
    out = sys.stdout if a.out == "-" else open(a.out, "w", newline="")
    writer = csv.DictWriter(out, fieldnames=COLUMNS)
    writer.writeheader()
    written = 0
    with tempfile.TemporaryDirectory() as trace_dir:
        for b in blocks:
            t0 = time.time()
            rows = rows_of(b, measure_block(torch, ops, b, a.repeats, trace_dir), a.gpu, a.source)
            writer.writerows(rows)
            out.flush()
            written += len(rows)
            print(f"{b['model']} tp{b['tp']}: {len(b['tokens'])} token counts in {time.time() - t0:.1f} s",
                  file=sys.stderr)
            torch.cuda.empty_cache()
    if out is not sys.stdout:
        out.close()
    print(f"wrote {written} rows in {time.time() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
