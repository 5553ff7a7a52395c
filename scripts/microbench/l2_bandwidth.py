#!/usr/bin/env python3
"""How fast a GPU reads a working set of each size: from its L2 while it fits, from DRAM beyond.

Reads buffers of 1 MiB to 2 GiB with one streaming kernel (a Triton kernel of --ctas-per-sm CTAs
per SM that sums 16-byte loads; `x.sum()` where Triton is missing), each size timed twice:
*warm*, read again and again so what fits stays in the L2 (what a benchmark that replays one kernel
sees), and *cold*, after reading a buffer twice the L2's size (what a serving step sees, where the
other layers' weights pass through the L2 between two reads of the same data). The warm rate of a
buffer well inside the L2 is the L2's read bandwidth as such a kernel reaches it; the cold rate of a
large buffer is the DRAM's. One CSV row per size:

    gpu,bytes,warm_us,cold_us,warm_tbps,cold_tbps

Usage:  python3 scripts/microbench/l2_bandwidth.py --gpu h200 --out h200_l2.csv
        python3 scripts/microbench/l2_bandwidth.py --dry-run     # the planned sizes; no torch
"""
import argparse
import statistics
import sys

HEADER = "gpu,bytes,warm_us,cold_us,warm_tbps,cold_tbps\n"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpu", default="unknown", help="catalog name of this GPU (kernelsight list)")
    p.add_argument("--out", default="-", help="CSV file to write ('-' = stdout)")
    p.add_argument("--min-mib", type=float, default=1, help="smallest buffer, MiB")
    p.add_argument("--max-mib", type=float, default=2048, help="largest buffer, MiB")
    p.add_argument("--steps-per-octave", type=int, default=2, help="sizes per doubling")
    p.add_argument("--ctas-per-sm", type=int, default=8, help="the Triton reader's CTAs per SM")
    p.add_argument("--repeats", type=int, default=30, help="timed runs per size and mode (median reported)")
    p.add_argument("--dry-run", action="store_true", help="write the planned sizes with empty times; no GPU needed")
    args = p.parse_args(argv)
    if not 0 < args.min_mib <= args.max_mib:
        p.error("need 0 < --min-mib <= --max-mib")
    if args.steps_per_octave < 1 or args.repeats < 1 or args.ctas_per_sm < 1:
        p.error("--steps-per-octave, --ctas-per-sm and --repeats must be >= 1")
    return args


def sizes(args):
    out, s = [], args.min_mib
    while s <= args.max_mib * 1.0001:
        out.append(int(s * (1 << 20)) // 4096 * 4096)
        s *= 2 ** (1.0 / args.steps_per_octave)
    return out


def make_reader(torch, ctas_per_sm):
    """A function reading a whole bf16 buffer once, as one kernel: a persistent Triton kernel
    (ctas_per_sm CTAs per SM, each striding over 8 KiB blocks), else torch's reduction."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return lambda x, out: x.sum(), "torch.sum"

    @triton.jit
    def read_all(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(pid * BLOCK, n, tl.num_programs(0) * BLOCK):
            offs = start + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
        tl.store(out_ptr + pid, tl.sum(acc, axis=0))

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    grid = (ctas_per_sm * sms,)

    def run(x, out):
        read_all[grid](x, out, x.numel(), BLOCK=4096, num_warps=8)
    return run, "triton"


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.dry_run:
        out = sys.stdout if args.out == "-" else open(args.out, "w")
        out.write(HEADER)
        for n in sizes(args):
            out.write("{},{},,,,\n".format(args.gpu, n))
        return
    import torch  # here, so the dry run and the syntax check need no torch
    if not torch.cuda.is_available():
        sys.exit("l2_bandwidth: no CUDA/ROCm device visible to PyTorch")
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or 256 << 20
    flush = torch.ones(max(2 * l2, 512 << 20) // 4, dtype=torch.float32, device="cuda")
    spin = int(100e-6 * 1e3 * (getattr(props, "clock_rate", 0) or 1.5e6)) if hasattr(torch.cuda, "_sleep") else 0
    read, how = make_reader(torch, args.ctas_per_sm)
    partials = torch.empty(args.ctas_per_sm * props.multi_processor_count, dtype=torch.float32, device="cuda")
    out = sys.stdout if args.out == "-" else open(args.out, "w")
    out.write(HEADER)
    for n in sizes(args):
        x = torch.ones(n // 2, dtype=torch.bfloat16, device="cuda")
        res = {}
        for mode in ("warm", "cold"):
            for _ in range(3):
                read(x, partials)
            times = []
            for _ in range(args.repeats):
                if mode == "cold":
                    flush.sum()
                else:
                    read(x, partials)  # the buffer itself last touched the L2
                if spin:
                    torch.cuda._sleep(spin)  # the GPU stays busy while the host dispatches
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                read(x, partials)
                b.record()
                b.synchronize()
                times.append(a.elapsed_time(b) * 1000.0)
            res[mode] = statistics.median(times)
        out.write("{},{},{:.3f},{:.3f},{:.3f},{:.3f}\n".format(
            args.gpu, n, res["warm"], res["cold"], n / res["warm"] / 1e6, n / res["cold"] / 1e6))
        out.flush()
        del x
    print("l2_bandwidth: {} (L2 {} MiB, {} SMs), read by {}".format(
        props.name, l2 >> 20, props.multi_processor_count, how), file=sys.stderr)


if __name__ == "__main__":
    main()
