#!/usr/bin/env python3
"""Model-agnostic kernel sweep for KernelSight calibration (run it on the GPU you want to model).

Measures GEMMs over an M/N/K grid and dtypes, attention prefill and decode shapes (--attention:
the flash-attn package when installed, else torch SDPA's own choice, or a backend named) and the
memory-bound ops of a decoder layer (rmsnorm, layernorm, silu_mul, gelu, add, embedding, rope), and
writes one CSV row per shape:

    gpu,source,op,dtype,m,n,k,batch,tokens,hidden,heads,kv_heads,head_dim,q_len,kv_len,time_us,
    framework,version,kernel_source,kv_dtype

framework is "pytorch", version torch's; kernel_source names the attention kernels of attention
rows (sdpa_cudnn, sdpa_flash = PyTorch's FlashAttention-2, sdpa_efficient, fa3, fa4, flash_attn):
SDPA picks its backend per GPU and shape (PyTorch 2.11 on H100/H200 runs cuDNN's fused attention,
about twice as fast as its FlashAttention-2 at long prompts), so under SDPA's own choice each row's
label is read off the kernels its own call launches (profiled once, before the timed runs; the
source column names the choice of one probe prefill). kernelsight maps fa2/fa3/fa4 labels to its
attention backends.

Columns that do not apply to an op are blank. time_us is the median over --repeats timed runs
(CUDA events around the op only), after --warmup untimed runs; with --flush-l2 read (the default) the L2
cache is evicted before every timed run (by reading a buffer twice its size) so weights come from
HBM as in serving.

Column use per op:
  gemm                 m = tokens (rows), n = output features, k = input features  (y = x W^T)
  attention_prefill    batch, heads, kv_heads, head_dim, q_len = kv_len = prompt length (causal),
                       tokens = batch * q_len
  attention_decode     batch, heads, kv_heads, head_dim, q_len = 1, kv_len = context length,
                       tokens = batch
  rmsnorm, layernorm, add, gelu   tokens, hidden (row width)
  silu_mul             tokens, hidden = output width (input is 2 * hidden)
  embedding            tokens, hidden, n = vocabulary rows of the table
  rope                 tokens, heads, kv_heads, head_dim (neox-style, whole head rotated)

Usage (see docs/calibration.md, "Measuring your GPU"):
    python3 scripts/microbench/microbench.py --gpu h100_sxm --out h100_sweep.csv
    python3 scripts/microbench/microbench.py --gpu a100_sxm_80gb --quick --out a100_quick.csv
    python3 scripts/microbench/microbench.py --dry-run --quick   # print the plan; no torch needed
    # FlashAttention-3 on the attention shapes of an imported table of the same GPU:
    python3 scripts/microbench/microbench.py --gpu h200 --ops attention_prefill,attention_decode \
        --dtypes bf16 --attention fa3 --attention-shapes data/sweeps/aiconfigurator/h200_sxm.vllm.csv
"""
import argparse
import csv
import itertools
import os
import statistics
import sys
import time

COLUMNS = ["gpu", "source", "op", "dtype", "m", "n", "k", "batch", "tokens", "hidden", "heads",
           "kv_heads", "head_dim", "q_len", "kv_len", "time_us", "framework", "version", "kernel_source",
           "kv_dtype"]
ATTENTION_CHOICES = ["auto", "sdpa", "sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "fa3", "fa4"]

# Shapes: a model-agnostic grid plus the (N, K) pairs of common decoder layers (QKV, O, gate/up,
# down of Llama-2/3, Mistral, Mixtral experts, Qwen-72B, phi-2), so both tiers have data near
# real shapes without the sweep being tied to one model.
M_FULL = [1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096, 8192]
M_QUICK = [1, 8, 32, 128, 512, 2048, 8192]
NK_GRID = [1024, 2048, 4096, 8192, 16384]
NK_MODELS = [(6144, 4096), (12288, 4096), (4096, 4096), (28672, 4096), (4096, 14336),
             (22016, 4096), (4096, 11008), (10240, 8192), (8192, 8192), (57344, 8192),
             (8192, 28672), (7680, 2560), (10240, 2560), (2560, 10240), (24576, 8192)]
ATTN_HEADS = [(32, 32, 128), (32, 8, 128), (64, 8, 128), (40, 40, 128), (32, 32, 80)]
PREFILL_LENS = [128, 256, 512, 1024, 2048, 4096, 8192]
DECODE_BATCH = [1, 4, 16, 64, 256]
DECODE_CTX = [128, 512, 1024, 2048, 4096, 8192, 16384]
TOKENS = [1, 16, 64, 256, 1024, 4096, 16384]
HIDDEN = [2560, 4096, 5120, 8192]
INTER = [10240, 11008, 14336, 28672]
VOCAB = 128256


def plan(args):
    """Every measurement as a dict of CSV columns (without gpu/source/time_us)."""
    quick = args.quick
    ms = M_QUICK if quick else M_FULL
    nk = ([(n, k) for n, k in itertools.product(NK_GRID[1:4], NK_GRID[1:4])] + NK_MODELS[:4]
          if quick else [(n, k) for n, k in itertools.product(NK_GRID, NK_GRID)] + NK_MODELS)
    rows = []
    ops = set(args.ops)
    for dtype in args.dtypes:
        if "gemm" in ops:
            for (n, k), m in itertools.product(dict.fromkeys(nk), ms):
                rows.append(dict(op="gemm", dtype=dtype, m=m, n=n, k=k))
        if dtype == "fp8":
            continue  # attention and elementwise ops run in 16-bit activations
        heads = ATTN_HEADS[:2] if quick else ATTN_HEADS
        if args.attention_shapes:
            rows += [dict(r, dtype=dtype) for r in attention_shapes(args) if r["op"] in ops]
        elif "attention_prefill" in ops:
            for (h, kvh, d), q in itertools.product(heads, PREFILL_LENS[::2] if quick else PREFILL_LENS):
                for b in ([1] if q >= 2048 else [1, 4]):
                    rows.append(dict(op="attention_prefill", dtype=dtype, batch=b, tokens=b * q, heads=h,
                                     kv_heads=kvh, head_dim=d, q_len=q, kv_len=q))
        if "attention_decode" in ops and not args.attention_shapes:
            for (h, kvh, d), b, ctx in itertools.product(heads, DECODE_BATCH[::2] if quick else DECODE_BATCH,
                                                          DECODE_CTX[::2] if quick else DECODE_CTX):
                if b * ctx > 256 * 8192:
                    continue  # keep the KV cache of one measurement under ~8 GiB
                rows.append(dict(op="attention_decode", dtype=dtype, batch=b, tokens=b, heads=h,
                                 kv_heads=kvh, head_dim=d, q_len=1, kv_len=ctx))
        tokens = TOKENS[::2] if quick else TOKENS
        for t in tokens:
            for h in (HIDDEN[1:3] if quick else HIDDEN):
                for op in ("rmsnorm", "layernorm", "add", "gelu"):
                    if op in ops:
                        rows.append(dict(op=op, dtype=dtype, tokens=t, hidden=h))
                if "embedding" in ops:
                    rows.append(dict(op="embedding", dtype=dtype, tokens=t, hidden=h, n=VOCAB))
            if "silu_mul" in ops:
                for inter in (INTER[1:3] if quick else INTER):
                    rows.append(dict(op="silu_mul", dtype=dtype, tokens=t, hidden=inter))
            if "rope" in ops:
                for h, kvh, d in heads:
                    rows.append(dict(op="rope", dtype=dtype, tokens=t, heads=h, kv_heads=kvh, head_dim=d))
    return rows


def attention_shapes(args):
    """The distinct attention shapes of a sweep CSV (16-bit KV cache, head_dim a multiple of 8, KV
    cache of one measurement under ~8 GiB), optionally of one kernel_source, thinned evenly to
    --max-shapes. Prefill rows over a cached prefix (q_len < kv_len) are left out: SDPA's causal
    mask aligns queries to the first key, an engine's to the last, so the work would differ."""
    seen = {}
    with open(args.attention_shapes, newline="") as f:
        for r in csv.DictReader(f):
            if r.get("op") not in ("attention_prefill", "attention_decode"):
                continue
            if r.get("kv_dtype") not in (None, "", "bf16", "fp16") or r.get("dtype") not in ("bf16", "fp16"):
                continue
            if args.kernel_source and r.get("kernel_source") != args.kernel_source:
                continue
            b, h, kvh, d = (int(r[c]) for c in ("batch", "heads", "kv_heads", "head_dim"))
            kv = int(r["kv_len"])
            q = int(r["q_len"] or 1)  # decode rows leave q_len blank: one query per sequence
            if d % 8 or h % kvh or b * kv * kvh * d * 2 * 2 > 8 << 30:
                continue
            prefill = r["op"] == "attention_prefill"
            if prefill and q != kv:
                continue
            key = (r["op"], b, h, kvh, d, q, kv)
            seen.setdefault(key, dict(op=r["op"], batch=b, tokens=b * (q if prefill else 1), heads=h, kv_heads=kvh,
                                      head_dim=d, q_len=q if prefill else 1, kv_len=kv))
    shapes = list(seen.values())
    if args.max_shapes and len(shapes) > args.max_shapes:
        step = len(shapes) / args.max_shapes
        shapes = [shapes[int(i * step)] for i in range(args.max_shapes)]
    return shapes


class Bench:
    """Builds the tensors of one measurement and times it; all torch use lives here."""

    def __init__(self, args):
        import torch  # imported here so --dry-run and the syntax check need no torch
        self.torch = torch
        self.args = args
        if not torch.cuda.is_available():
            sys.exit("microbench: no CUDA/ROCm device visible to PyTorch")
        self.dev = torch.device("cuda")
        props = torch.cuda.get_device_properties(self.dev)
        l2 = getattr(props, "L2_cache_size", 0) or 256 << 20
        # Reading twice the L2 (at least 512 MiB, for AMD's Infinity Cache, which props do not
        # report) evicts whatever the previous run left there. A read, not a write (zero_()):
        # a written buffer leaves the L2 full of dirty lines, whose write-back then slows the
        # timed kernel's reads (measured on H100/H200: +7-10 us on a 64 MiB weight, 30%).
        self.flush_buf = torch.ones(max(2 * l2, 512 << 20) // 4, dtype=torch.float32, device=self.dev)
        # Each shape compiles its own kernel; dynamo's default limit (8 per function) would
        # silently fall back to eager after a few shapes.
        dynamo = getattr(getattr(torch, "_dynamo", None), "config", None)
        for knob in ("cache_size_limit", "accumulated_cache_size_limit", "recompile_limit"):
            if dynamo is not None and hasattr(dynamo, knob):
                setattr(dynamo, knob, 100000)
        # ~200 us of spinning at the GPU's clock (clock_rate is in kHz; 1.5 GHz where not reported).
        self.spin_cycles = (int(200e-6 * 1e3 * (getattr(props, "clock_rate", 0) or 1.5e6))
                            if hasattr(torch.cuda, "_sleep") else 0)
        self.dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
        self.flash = self._try_import("flash_attn") if args.attention == "auto" else None
        self.sdpa_backends = self._sdpa_backends(args.attention)
        self.fused = self._elementwise_impl(args.elementwise)
        self._attention_label = None

    @staticmethod
    def _try_import(name):
        try:
            return __import__(name)
        except ImportError:
            return None

    def _sdpa_backends(self, choice):
        """The SDPA backends to allow (None: SDPA's own choice). fa3/fa4 activate PyTorch's
        registered FlashAttention-3/4 implementation behind SDPA's flash backend."""
        if choice in ("auto", "sdpa"):
            return None
        attn = getattr(self.torch.nn, "attention", None)
        if attn is None or not hasattr(attn, "sdpa_kernel"):
            sys.exit("microbench: --attention {} needs torch.nn.attention.sdpa_kernel (PyTorch >= 2.3)".format(choice))
        if choice in ("fa3", "fa4"):
            impl = choice.upper()
            known = list(attn.list_flash_attention_impls()) if hasattr(attn, "list_flash_attention_impls") else []
            if impl not in known:
                sys.exit("microbench: --attention {}: this PyTorch registers no {} implementation (it has: {})".format(
                    choice, impl, ", ".join(known) or "none"))
            try:
                attn.activate_flash_attention_impl(impl)
            except Exception as e:  # noqa: BLE001 - the provider's import or its GPU check
                sys.exit("microbench: --attention {}: activating {} failed: {}: {}".format(
                    choice, impl, type(e).__name__, e))
            return [attn.SDPBackend.FLASH_ATTENTION]
        name = {"sdpa-flash": "FLASH_ATTENTION", "sdpa-cudnn": "CUDNN_ATTENTION",
                "sdpa-efficient": "EFFICIENT_ATTENTION"}[choice]
        return [getattr(attn.SDPBackend, name)]

    def attention_label(self):
        """The kernel_source of attention rows: the backend asked for, else the one SDPA ran for a
        probe prefill (read off the launched kernels' names)."""
        if self._attention_label is None:
            if self.flash is not None:
                self._attention_label = "flash_attn" + self.flash.__version__
            elif self.args.attention not in ("auto", "sdpa"):
                self._attention_label = self.args.attention.replace("-", "_")
            else:
                self._attention_label = self._probe_sdpa()
        return self._attention_label

    def row_attention_label(self, fn):
        """The kernel_source of one attention row: under SDPA's own choice, the backend its call
        runs (SDPA chooses per shape); else the run's label."""
        if self.flash is not None or self.args.attention not in ("auto", "sdpa"):
            return self.attention_label()
        return self._sdpa_label_of(fn)

    def _probe_sdpa(self):
        try:
            row = dict(op="attention_prefill", dtype="bf16", batch=1, tokens=1024, heads=32, kv_heads=8,
                       head_dim=128, q_len=1024, kv_len=1024)
            return self._sdpa_label_of(self.make(row))
        except Exception:  # noqa: BLE001 - the probe shape rejected: the label stays generic
            return "sdpa"

    def _sdpa_label_of(self, fn):
        """Which SDPA backend one call of fn runs, from the names of the kernels it launches."""
        torch = self.torch
        try:
            fn()
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
            names = " ".join(e.name for e in prof.events())
        except Exception:  # noqa: BLE001 - no profiler: the label stays generic
            return "sdpa"
        for marker, label in (("cudnn", "sdpa_cudnn"), ("pytorch_flash", "sdpa_flash"), ("fmha_cutlass", "sdpa_efficient")):
            if marker in names:
                return label
        return "sdpa"

    def _elementwise_impl(self, choice):
        """'compile' fuses each op into one kernel as vLLM's custom ops are; 'eager' does not."""
        if choice == "auto":
            choice = "compile" if hasattr(self.torch, "compile") else "eager"
        return choice

    def source(self):
        torch = self.torch
        backend = "rocm" + str(torch.version.hip) if getattr(torch.version, "hip", None) else "cu" + str(torch.version.cuda)
        wants_attention = any(o.startswith("attention") for o in self.args.ops)
        attn = self.attention_label() if wants_attention else "sdpa"
        flush = "" if self.args.flush_l2 == "read" else "/flush-" + self.args.flush_l2
        return "pytorch{}+{}/{}/{}{}".format(torch.__version__.split("+")[0], backend, attn, self.fused, flush)

    def time_us(self, fn):
        torch = self.torch
        for _ in range(self.args.warmup):
            fn()
        times = []
        for _ in range(self.args.repeats):
            if self.args.flush_l2 == "read":
                self.flush_buf.sum()
            elif self.args.flush_l2 == "write":
                self.flush_buf.zero_()
            # Keep the GPU busy while the host dispatches the op, so the timed region holds GPU
            # work only: a compiled op's host dispatch (guards, launch) can outlast the flush, and
            # the start event would then time the idle gap too (seen on H200: a 4 us rmsnorm
            # measured at 17-38 us when the flush alone stood before it).
            if self.spin_cycles:
                torch.cuda._sleep(self.spin_cycles)
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1000.0)  # ms -> us
        return statistics.median(times)

    def _maybe_compile(self, fn):
        if self.fused == "compile":
            return self.torch.compile(fn, dynamic=False)
        return fn

    def make(self, row):
        """Returns a zero-argument callable running the op once, or None if unsupported."""
        torch = self.torch
        F = torch.nn.functional
        op, dtype = row["op"], row["dtype"]
        if op == "gemm":
            m, n, k = row["m"], row["n"], row["k"]
            if dtype == "fp8":
                if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
                    return None
                a = torch.randn(m, k, device=self.dev).to(torch.float8_e4m3fn)
                b = torch.randn(n, k, device=self.dev).to(torch.float8_e4m3fn).t()  # column-major
                one = torch.ones((), device=self.dev)
                fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
                try:
                    fn()
                except RuntimeError:
                    return None  # no fp8 tensor cores (pre-Ada/Hopper), or m not a multiple of 16
                return fn
            x = torch.randn(m, k, device=self.dev, dtype=self.dt[dtype])
            w = torch.randn(n, k, device=self.dev, dtype=self.dt[dtype])
            return lambda: F.linear(x, w)
        dt = self.dt[dtype]
        if op in ("attention_prefill", "attention_decode"):
            b, h, kvh, d = row["batch"], row["heads"], row["kv_heads"], row["head_dim"]
            q_len, kv_len = row["q_len"], row["kv_len"]
            causal = op == "attention_prefill"
            if self.flash is not None and d % 8 == 0:
                q = torch.randn(b, q_len, h, d, device=self.dev, dtype=dt)
                k = torch.randn(b, kv_len, kvh, d, device=self.dev, dtype=dt)
                v = torch.randn_like(k)
                if causal:
                    return lambda: self.flash.flash_attn_func(q, k, v, causal=True)
                return lambda: self.flash.flash_attn_with_kvcache(q, k, v)
            q = torch.randn(b, h, q_len, d, device=self.dev, dtype=dt)
            k = torch.randn(b, kvh, kv_len, d, device=self.dev, dtype=dt)
            v = torch.randn_like(k)
            gqa = dict(enable_gqa=True)
            try:
                F.scaled_dot_product_attention(q[:, :, :1], k[:, :, :1], v[:, :, :1], enable_gqa=True)
            except TypeError:  # torch < 2.5: expand KV heads outside the timed region
                k = k.repeat_interleave(h // kvh, dim=1)
                v = v.repeat_interleave(h // kvh, dim=1)
                gqa = {}
            if self.sdpa_backends is None:
                return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa)
            sdpa_kernel, allowed = torch.nn.attention.sdpa_kernel, self.sdpa_backends

            def run():
                with sdpa_kernel(allowed):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa)
            run()  # a backend that cannot run the shape raises here, costing the row
            return run
        t = row["tokens"]
        if op in ("rmsnorm", "layernorm", "add", "gelu", "embedding"):
            hdim = row["hidden"]
            x = torch.randn(t, hdim, device=self.dev, dtype=dt)
            w = torch.randn(hdim, device=self.dev, dtype=dt)
            if op == "rmsnorm":
                def rms(x, w):
                    var = x.float().pow(2).mean(-1, keepdim=True)
                    return (x.float() * torch.rsqrt(var + 1e-6)).to(x.dtype) * w
                f = self._maybe_compile(rms)
                return lambda: f(x, w)
            if op == "layernorm":
                f = self._maybe_compile(lambda x, w: F.layer_norm(x, (hdim,), w, w))
                return lambda: f(x, w)
            if op == "add":
                y = torch.randn_like(x)
                return lambda: torch.add(x, y)
            if op == "gelu":
                f = self._maybe_compile(lambda x: F.gelu(x, approximate="tanh"))
                return lambda: f(x)
            table = torch.randn(row["n"], hdim, device=self.dev, dtype=dt)
            ids = torch.randint(0, row["n"], (t,), device=self.dev)
            return lambda: F.embedding(ids, table)
        if op == "silu_mul":
            inter = row["hidden"]
            x = torch.randn(t, 2 * inter, device=self.dev, dtype=dt)
            f = self._maybe_compile(lambda x: F.silu(x[:, :inter]) * x[:, inter:])
            return lambda: f(x)
        if op == "rope":
            h, kvh, d = row["heads"], row["kv_heads"], row["head_dim"]
            q = torch.randn(t, h, d, device=self.dev, dtype=dt)
            k = torch.randn(t, kvh, d, device=self.dev, dtype=dt)
            cos = torch.randn(t, 1, d // 2, device=self.dev, dtype=dt)
            sin = torch.randn_like(cos)

            def rope(q, k, cos, sin):
                def rot(x):
                    x1, x2 = x[..., : d // 2], x[..., d // 2:]
                    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
                return rot(q), rot(k)
            f = self._maybe_compile(rope)
            return lambda: f(q, k, cos, sin)
        raise ValueError("unknown op " + op)


def parse_args(argv):
    all_ops = ["gemm", "attention_prefill", "attention_decode", "rmsnorm", "layernorm", "silu_mul",
               "gelu", "add", "embedding", "rope"]
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpu", default="unknown", help="catalog name of this GPU (kernelsight list), e.g. h100_sxm")
    p.add_argument("--source", default=None, help="label of the measuring stack (default: torch/CUDA/attention versions)")
    p.add_argument("--out", default="-", help="CSV file to write ('-' = stdout)")
    p.add_argument("--dtypes", default="bf16,fp16,fp8", help="comma list of bf16, fp16, fp32, fp8 (fp8: GEMMs only)")
    p.add_argument("--ops", default=",".join(all_ops), help="comma list of ops to measure")
    p.add_argument("--quick", action="store_true", help="coarser grid (~10x fewer shapes)")
    p.add_argument("--repeats", type=int, default=30, help="timed runs per shape (median reported)")
    p.add_argument("--warmup", type=int, default=5, help="untimed runs per shape first")
    p.add_argument("--flush-l2", dest="flush_l2", choices=["read", "write", "none"], default="read",
                   help="evict the L2 before every timed run by reading a buffer twice its size (default), "
                        "by writing it (leaves dirty lines whose write-back slows the timed kernel), or not at all")
    p.add_argument("--no-flush-l2", dest="flush_l2", action="store_const", const="none",
                   help="keep the L2 warm between runs (same as --flush-l2 none): what a benchmark that replays "
                        "one kernel measures; data that fits in the L2 is read from it")
    p.add_argument("--elementwise", choices=["auto", "compile", "eager"], default="auto",
                   help="compile: one fused kernel per op (like vLLM's custom ops); eager: PyTorch's kernels")
    p.add_argument("--attention", choices=ATTENTION_CHOICES, default="auto",
                   help="attention kernels: auto (flash-attn package if installed, else SDPA's choice), sdpa, "
                        "sdpa-flash (PyTorch's FlashAttention-2), sdpa-cudnn, sdpa-efficient, fa3/fa4 (PyTorch's "
                        "FlashAttention-3/4 behind SDPA)")
    p.add_argument("--attention-shapes", default=None, metavar="CSV",
                   help="measure the attention shapes of this sweep CSV (e.g. an imported table of the same GPU) "
                        "instead of the built-in grid")
    p.add_argument("--kernel-source", default=None, help="with --attention-shapes: only rows of this kernel_source")
    p.add_argument("--max-shapes", type=int, default=0, help="with --attention-shapes: at most this many, evenly spread")
    p.add_argument("--dry-run", action="store_true", help="write the planned rows with empty time_us; no GPU needed")
    p.add_argument("--max-seconds", type=float, default=0,
                   help="stop measuring after this many seconds (0 = no limit); the rows so far stay a valid CSV")
    args = p.parse_args(argv)
    args.dtypes = [d for d in args.dtypes.split(",") if d]
    args.ops = [o for o in args.ops.split(",") if o]
    for d in args.dtypes:
        if d not in ("bf16", "fp16", "fp32", "fp8"):
            p.error("unknown dtype " + d)
    for o in args.ops:
        if o not in all_ops:
            p.error("unknown op {} (known: {})".format(o, ", ".join(all_ops)))
    if args.repeats < 1 or args.warmup < 0:
        p.error("--repeats must be >= 1 and --warmup >= 0")
    if not args.attention_shapes and (args.kernel_source or args.max_shapes):
        p.error("--kernel-source and --max-shapes select among --attention-shapes; give that CSV too")
    if args.attention_shapes and not os.path.isfile(args.attention_shapes):
        p.error("--attention-shapes: no such file: " + args.attention_shapes)
    if args.max_shapes < 0:
        p.error("--max-shapes must be >= 0")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    rows = plan(args)
    bench = None if args.dry_run else Bench(args)
    source = args.source or (bench.source() if bench else "dry-run")
    version = bench.torch.__version__.split("+")[0] if bench else ""
    out = sys.stdout if args.out == "-" else open(args.out, "w", newline="")
    writer = csv.DictWriter(out, fieldnames=COLUMNS, restval="", lineterminator="\n")
    writer.writeheader()
    skipped = failed = written = 0
    started = time.monotonic()
    for i, row in enumerate(rows):
        if args.max_seconds > 0 and time.monotonic() - started > args.max_seconds:
            print("microbench: --max-seconds {:g} reached after {}/{} shapes".format(
                args.max_seconds, i, len(rows)), file=sys.stderr)
            break
        record = dict(row, gpu=args.gpu, source=source, framework="pytorch", version=version)
        if row["op"].startswith("attention") and bench is None:
            record["kernel_source"] = args.attention.replace("-", "_")
        if bench is not None:
            # One shape that the stack rejects (out of memory, an unsupported layout, a compiler
            # error) costs that row, not the sweep: report it and go on.
            try:
                fn = bench.make(row)
                if fn is None:
                    skipped += 1
                    continue
                if row["op"].startswith("attention"):
                    record["kernel_source"] = bench.row_attention_label(fn)
                record["time_us"] = "{:.3f}".format(bench.time_us(fn))
            except Exception as e:  # noqa: BLE001 - any backend error is per shape
                failed += 1
                print("microbench: {} {} failed: {}: {}".format(
                    row["op"], {k: v for k, v in row.items() if k not in ("op", "dtype")},
                    type(e).__name__, str(e).splitlines()[0] if str(e) else ""), file=sys.stderr)
                continue
            finally:
                fn = None
                bench.torch.cuda.empty_cache()
            if out is not sys.stdout and (i + 1) % 100 == 0:
                print("microbench: {}/{} shapes, {:.0f} s".format(i + 1, len(rows), time.monotonic() - started),
                      file=sys.stderr)
        writer.writerow(record)
        written += 1
        out.flush()
    if out is not sys.stdout:
        out.close()
    notes = []
    if skipped:
        notes.append("{} unsupported shapes skipped".format(skipped))
    if failed:
        notes.append("{} shapes failed".format(failed))
    print("microbench: {} rows{}".format(written, (", " + ", ".join(notes)) if notes else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
