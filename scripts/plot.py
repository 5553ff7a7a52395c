#!/usr/bin/env python3
"""Charts from KernelSight outputs (matplotlib, Agg backend: no display needed).

  plot.py latency-throughput SWEEP_DIR|sweep.csv [--x COL] [--y COL,COL] [--group COL]
      Latency against throughput from `kernelsight sweep`: one panel per latency metric, one
      curve per value of --group (e.g. hardware.gpu.spec), points in throughput order.
  plot.py breakdown RESULT_DIR [RESULT_DIR...] [--by kernel|op] [--top N]
      GPU time by phase (prefill / decode / mixed) from each run's kernels.csv, stacked by kernel.
  plot.py roofline STEP.csv [STEP.csv...]
      Every kernel of a step (`kernelsight step ... > STEP.csv`) at its arithmetic intensity and
      achieved FLOP/s, under the GPU's compute roof per dtype and its HBM bandwidth roof.

Every subcommand takes --out FILE and --format png|svg (default: the --out suffix, else png).
Bad input (missing file, missing column, no usable row) exits with status 2 and says what.
"""
import argparse
import csv
import math
import os
import re
import sys

EXIT_BAD_INPUT = 2


class InputError(Exception):
    """Bad input: reported as one `error:` line, exit status 2."""


DEBIAN_PYTHON = "/usr/bin/python3"  # where Debian's python3-matplotlib is installed


def pyplot():
    try:
        import matplotlib
    except ImportError:
        # Another python3 first on PATH (pyenv, a venv): rerun under Debian's, which has it.
        if os.path.exists(DEBIAN_PYTHON) and os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON):
            sys.stdout.flush()
            os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
        raise InputError("matplotlib is missing: apt-get install python3-matplotlib")
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "kernelsight"  # stable SVG ids
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text (searchable, editable)
    import matplotlib.pyplot as plt
    return plt


def read_csv(path, required):
    """Rows of a CSV file as dicts; InputError unless every `required` column is present."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        missing = [c for c in required if c not in header]
        if missing:
            raise InputError(f"{path}: missing column(s) {', '.join(missing)} "
                             f"(columns: {', '.join(header) if header else 'none, the file is empty'})")
        rows = list(reader)
    if not rows:
        raise InputError(f"{path}: no data rows")
    return rows


def number(text, where):
    """The leading number of a cell ('8/s' -> 8.0); InputError if there is none."""
    m = re.match(r"\s*([-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)", text or "")
    if not m:
        raise InputError(f"{where}: expected a number, got '{text}'")
    return float(m.group(1))


def output_path(args, default_stem):
    fmt = args.format
    out = args.out
    if out is None:
        out = f"{default_stem}.{fmt or 'png'}"
    elif fmt is None:
        suffix = os.path.splitext(out)[1].lower().lstrip(".")
        fmt = suffix if suffix in ("png", "svg") else "png"
    if fmt is None:
        fmt = "png"
    return out, fmt


def save(fig, args, default_stem):
    out, fmt = output_path(args, default_stem)
    directory = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(directory):
        raise InputError(f"--out {out}: directory {directory} does not exist")
    fig.savefig(out, format=fmt, dpi=120, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
    print(f"wrote {out}", file=sys.stderr)


# ---------------------------------------------------------------- latency vs throughput

def latency_throughput(args):
    plt = pyplot()
    path = os.path.join(args.sweep, "sweep.csv") if os.path.isdir(args.sweep) else args.sweep
    ys = [c.strip() for c in args.y.split(",") if c.strip()]
    if not ys:
        raise InputError("--y: give at least one latency column")
    required = ["point", "status", args.x] + ys + ([args.group] if args.group else [])
    rows = read_csv(path, required)

    curves = {}  # group value -> [(x, {y: value})]
    skipped = 0
    for i, row in enumerate(rows, start=2):
        cells = [row[args.x]] + [row[y] for y in ys]
        failed = (row["status"] or "").strip().lower().startswith(("fail", "error"))
        if failed or any(c is None or c.strip() == "" for c in cells):
            skipped += 1  # a failed point: its metrics are blank
            continue
        where = f"{path}:{i}"
        x = number(row[args.x], f"{where}: column {args.x}")
        values = {y: number(row[y], f"{where}: column {y}") for y in ys}
        key = row[args.group] if args.group else ""
        curves.setdefault(key, []).append((x, values))
    if not curves:
        raise InputError(f"{path}: no successful point (all {len(rows)} points failed or have blank metrics)")

    fig, axes = plt.subplots(len(ys), 1, figsize=(7, 3.2 * len(ys)), sharex=True, squeeze=False)
    # Curves in the order of their group values' leading numbers (text order when not numeric).
    def group_order(g):
        try:
            return (0, number(g, ""), g)
        except InputError:
            return (1, 0.0, g)
    for ax, y in zip(axes[:, 0], ys):
        for g in sorted(curves, key=group_order):
            pts = sorted(curves[g])
            ax.plot([p[0] for p in pts], [p[1][y] for p in pts], marker="o",
                    label=f"{args.group} = {g}" if args.group else None)
        ax.set_ylabel(y)
        ax.grid(True, alpha=0.3)
        if args.group and ax is axes[0, 0]:
            ax.legend(fontsize="small")
    axes[-1, 0].set_xlabel(args.x)
    title = args.title or f"Latency vs throughput ({os.path.basename(os.path.dirname(os.path.abspath(path)))})"
    axes[0, 0].set_title(title)
    if skipped:
        print(f"skipped {skipped} failed point(s)", file=sys.stderr)
    save(fig, args, os.path.join(os.path.dirname(path) or ".", "latency_throughput"))


# ---------------------------------------------------------------- kernel-time breakdown

PHASES = ("prefill", "mixed", "decode")


def breakdown(args):
    plt = pyplot()
    label_col = "kernel" if args.by == "kernel" else "op"
    bars = []  # (label, {stack: seconds})
    for d in args.results:
        path = os.path.join(d, "kernels.csv") if os.path.isdir(d) else d
        rows = read_csv(path, [label_col, "phase", "time_s"])
        by_phase = {}
        for i, row in enumerate(rows, start=2):
            phase = row["phase"]
            if phase not in PHASES:
                raise InputError(f"{path}:{i}: phase must be prefill, decode or mixed, got '{phase}'")
            t = number(row["time_s"], f"{path}:{i}: column time_s")
            by_phase.setdefault(phase, {}).setdefault(row[label_col], 0.0)
            by_phase[phase][row[label_col]] += t
        name = os.path.basename(os.path.normpath(os.path.dirname(os.path.abspath(path))))
        for phase in PHASES:
            if phase in by_phase:
                bars.append((f"{name}\n{phase}" if len(args.results) > 1 else phase, by_phase[phase]))

    totals = {}
    for _, stacks in bars:
        for k, t in stacks.items():
            totals[k] = totals.get(k, 0.0) + t
    top = [k for k, _ in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:args.top]]
    order = top + (["other"] if len(totals) > len(top) else [])

    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(bars) + 3), 4.8))
    cmap = plt.get_cmap("tab20")
    bottoms = [0.0] * len(bars)
    xs = list(range(len(bars)))
    for j, k in enumerate(order):
        heights = []
        for _, stacks in bars:
            if k == "other":
                heights.append(sum(t for name, t in stacks.items() if name not in top))
            else:
                heights.append(stacks.get(k, 0.0))
        ax.bar(xs, heights, bottom=bottoms, label=k, color=cmap(j % 20), width=0.6)
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    ax.set_xticks(xs)
    if len(args.results) > 1:
        ax.set_xticklabels([b[0] for b in bars], rotation=30, ha="right", fontsize="small")
    else:
        ax.set_xticklabels([b[0] for b in bars])
    ax.set_ylabel("GPU time (s)")
    ax.set_title(args.title or f"GPU time by phase and {label_col}")
    ax.legend(fontsize="small", bbox_to_anchor=(1.02, 1), loc="upper left")
    ax.grid(True, axis="y", alpha=0.3)
    first = args.results[0]
    save(fig, args, os.path.join(first if os.path.isdir(first) else os.path.dirname(first) or ".", "breakdown"))


# ---------------------------------------------------------------- roofline

STEP_COLUMNS = ["kernel", "op", "dtype", "count", "intensity", "achieved_tflops", "bound", "peak_tflops", "hbm_gbps"]
BOUND_MARKERS = {"compute": "s", "memory": "o", "sm": "D", "latency": "v", "launch": "^"}


def roofline(args):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5.5))
    cmap = plt.get_cmap("tab10")
    xmin, xmax, ymax = math.inf, 0.0, 0.0
    for f_index, path in enumerate(args.steps):
        rows = read_csv(path, STEP_COLUMNS)
        label = os.path.splitext(os.path.basename(path))[0]
        color = cmap(f_index % 10)
        roofs = {}  # dtype -> peak FLOP/s
        bandwidth = None
        points = 0
        for i, row in enumerate(rows, start=2):
            if row["bound"] == "communication" or not row["intensity"]:
                continue  # collectives have no roofline position
            where = f"{path}:{i}"
            ai = number(row["intensity"], f"{where}: column intensity")
            achieved = number(row["achieved_tflops"], f"{where}: column achieved_tflops") * 1e12
            bandwidth = number(row["hbm_gbps"], f"{where}: column hbm_gbps") * 1e9
            if row["peak_tflops"]:
                roofs[row["dtype"]] = number(row["peak_tflops"], f"{where}: column peak_tflops") * 1e12
            if ai <= 0 or achieved <= 0:
                continue
            ax.scatter([ai], [achieved], marker=BOUND_MARKERS.get(row["bound"], "x"), color=color,
                       s=18 + 6 * math.log2(1 + number(row["count"], where)), alpha=0.8, edgecolors="none")
            if args.annotate:
                ax.annotate(row["kernel"], (ai, achieved), fontsize=6, xytext=(3, 2), textcoords="offset points")
            xmin, xmax, ymax = min(xmin, ai), max(xmax, ai), max(ymax, achieved)
            points += 1
        if points == 0:
            raise InputError(f"{path}: no kernel with a positive intensity and achieved FLOP/s")
        # Roofs: min(peak(dtype), intensity x bandwidth) for every dtype the step computes in.
        lo, hi = min(xmin, 0.1), max(xmax * 4, 4 * max(roofs.values()) / bandwidth)
        grid = [lo * (hi / lo) ** (t / 200) for t in range(201)]
        ax.plot(grid, [g * bandwidth for g in grid], color=color, linestyle=":", linewidth=1,
                label=f"{label}: HBM {bandwidth / 1e12:.2f} TB/s")
        for dtype, peak in sorted(roofs.items(), key=lambda kv: kv[1]):
            ax.plot(grid, [min(peak, g * bandwidth) for g in grid], color=color, linewidth=1.5)
            ax.annotate(f"{label} {dtype} {peak / 1e12:.0f} TFLOP/s", (hi, peak), fontsize=7, ha="right",
                        va="bottom", color=color)
            ymax = max(ymax, peak)
        xmax = max(xmax, hi)
    for bound, marker in BOUND_MARKERS.items():
        ax.scatter([], [], marker=marker, color="gray", label=f"{bound}-bound kernel")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(top=ymax * 2)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("achieved FLOP/s")
    ax.set_title(args.title or "Roofline: every kernel of the step")
    ax.grid(True, which="both", alpha=0.2)
    ax.legend(fontsize="small", loc="lower right")
    save(fig, args, os.path.splitext(args.steps[0])[0] + "_roofline")


def main(argv):
    parser = argparse.ArgumentParser(prog="plot.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p):
        p.add_argument("--out", "-o", help="output file (default: next to the input)")
        p.add_argument("--format", choices=("png", "svg"), help="default: the --out suffix, else png")
        p.add_argument("--title", help="chart title")

    lt = sub.add_parser("latency-throughput", help="latency vs throughput curves from a sweep")
    lt.add_argument("sweep", help="sweep folder (with sweep.csv) or a sweep.csv")
    lt.add_argument("--x", default="output_throughput", help="throughput column (default output_throughput)")
    lt.add_argument("--y", default="mean_ttft_ms,p99_ttft_ms,mean_tpot_ms",
                    help="comma-separated latency columns, one panel each")
    lt.add_argument("--group", help="one curve per value of this column (a swept key, e.g. hardware.gpu.spec)")
    common(lt)
    lt.set_defaults(run=latency_throughput)

    bd = sub.add_parser("breakdown", help="kernel-time breakdown by phase (stacked bars)")
    bd.add_argument("results", nargs="+", help="result folder(s) of `kernelsight run` (or kernels.csv files)")
    bd.add_argument("--by", choices=("kernel", "op"), default="kernel", help="what the stacks are")
    bd.add_argument("--top", type=int, default=10, help="stacks shown; the rest is 'other'")
    common(bd)
    bd.set_defaults(run=breakdown)

    rf = sub.add_parser("roofline", help="every kernel of a step on the GPU's roofline")
    rf.add_argument("steps", nargs="+", help="CSV file(s) from `kernelsight step` (one per GPU to compare)")
    rf.add_argument("--annotate", action="store_true", help="label every point with its kernel name")
    common(rf)
    rf.set_defaults(run=roofline)

    args = parser.parse_args(argv)
    if getattr(args, "top", 1) < 1:
        parser.error("--top must be >= 1")
    try:
        args.run(args)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
