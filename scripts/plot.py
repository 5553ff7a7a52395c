#!/usr/bin/env python3
"""Charts and reports from KernelSight outputs (matplotlib, Agg backend: no display needed).

  plot.py latency-throughput SWEEP_DIR|sweep.csv [--stat p99] [--metrics ttft,tpot] [--slo ttft=2s,tpot=100ms]
      Latency against throughput from `kernelsight sweep`: one panel per latency metric, one line
      per deployment (each combination of the swept keys other than the rate, e.g. parallel.tp=4),
      its points in rate order (no rate swept: the points that differ in the seed, or else in the
      last key, make a line). --group KEY[,KEY] picks the keys (`none`: one line); --y COL,COL
      plots exact columns. With --slo, each panel shows its limit, the region that meets it is
      shaded, points that meet every limit are filled (hollow: they miss one) and the legend gives
      each deployment's highest throughput within the SLOs.
  plot.py capacity CAPACITY_DIR|capacity.csv [--slo ttft=2s,tpot=100ms]
      The probes of `kernelsight capacity`: each metric against the probed rate or replica count,
      meets / fails / unstable markers, probe numbers, the SLO limit (from --slo, else read from the
      probes' `why`) and the answer.
  plot.py breakdown RESULT_DIR [RESULT_DIR...] [--by kernel|op] [--top N]
      GPU time by phase (prefill / decode / mixed) from each run's kernels.csv, stacked by kernel.
  plot.py roofline STEP.csv [STEP.csv...] [--top N | --annotate]
      Every kernel of a step (`kernelsight step ... > STEP.csv`) at its arithmetic intensity and
      achieved FLOP/s, under the GPU's compute roof per dtype and its HBM bandwidth roof; the N
      kernels with the most GPU time are labelled (every kernel with --annotate), labels placed
      where they overlap no other label, roof label or point.
  plot.py report DIR [-o report.html]
      One self-contained HTML page (charts embedded as PNG, tables as HTML) of a run folder
      (summary.json, kernels.csv, requests.csv), a sweep folder (sweep.csv) or a capacity folder
      (capacity.csv).

Axes carry units; an axis whose positive values span more than 30x is logarithmic (--log x|y|xy|none
forces it). Titles name the model, GPU and engine, read from the results' config.resolved.yaml
(or the sweep.csv's model and gpu columns). --slo takes ttft=, tpot=, itl=, e2el= limits with
units (2s, 100ms, 500us; bare numbers are ms), as `kernelsight capacity --slo`.
Every chart subcommand takes --out FILE and --format png|svg (default: the --out suffix, else png);
latency-throughput and capacity also --data FILE.json: the plotted series, as numbers.
Bad input (missing file, missing column, no usable row) exits with status 2 and says what.
"""
import argparse
import base64
import csv
import glob
import html
import io
import json
import math
import os
import re
import sys

EXIT_BAD_INPUT = 2
LOG_SPAN = 30.0  # an axis whose positive values span more than this ratio is logarithmic


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


# ---------------------------------------------------------------- input helpers

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


def maybe_number(text):
    try:
        return number(text, "")
    except InputError:
        return None


def truthy(text):
    return (text or "").strip().lower() in ("true", "1", "yes", "meets")


DURATION_UNITS_MS = {"": 1.0, "ms": 1.0, "s": 1000.0, "us": 1e-3, "µs": 1e-3, "min": 60000.0}
SLO_METRICS = ("ttft", "tpot", "itl", "e2el")


def parse_slo(text):
    """'ttft=2s,tpot=100ms' -> {'ttft': 2000.0, 'tpot': 100.0} (milliseconds)."""
    limits = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        key, _, value = part.partition("=")
        key = key.strip().lower()
        m = re.fullmatch(r"\s*(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*([a-zµ]*)\s*", value)
        if key not in SLO_METRICS or not m or m.group(3) not in DURATION_UNITS_MS:
            raise InputError(f"--slo {text}: expected metric=duration pairs such as ttft=2s,tpot=100ms "
                             f"(metrics: {', '.join(SLO_METRICS)}; units: s, ms, us), got '{part}'")
        limits[key] = float(m.group(1) + (m.group(2) or "")) * DURATION_UNITS_MS[m.group(3)]
    return limits


def format_ms(ms):
    if ms >= 1000:
        return f"{ms / 1000:g} s"
    if ms >= 1:
        return f"{ms:g} ms"
    return f"{ms * 1000:g} us"


def read_simple_yaml(path):
    """Dotted key -> scalar text of a block-style YAML mapping (config.resolved.yaml); {} if absent.
    Enough for the files the simulator writes; lists and flow collections are skipped."""
    out = {}
    if not os.path.isfile(path):
        return out
    stack = []  # (indent, key)
    with open(path) as f:
        for line in f:
            if not line.strip() or line.lstrip().startswith(("#", "-")):
                continue
            m = re.match(r"^( *)([^:#]+?):(\s+(.*))?$", line.rstrip("\n"))
            if not m:
                continue
            indent = len(m.group(1))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            key = ".".join([k for _, k in stack] + [m.group(2).strip()])
            value = (m.group(4) or "").strip()
            if value:
                out[key] = value.strip('"').strip("'")
            else:
                stack.append((indent, m.group(2).strip()))
    return out


# ---------------------------------------------------------------- units, scales, titles

METRIC_RE = re.compile(r"^(mean|median|p\d+|std)_(ttft|tpot|itl|e2el)_ms$")
METRIC_NAMES = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2el": "E2E latency"}
COLUMN_LABELS = {
    "output_throughput": "output throughput (tok/s)",
    "total_token_throughput": "total throughput (tok/s)",
    "request_throughput": "request throughput (req/s)",
    "rate_per_s": "offered rate (req/s)",
    "speedup": "trace speed-up (x)",
    "replicas": "replicas",
    "duration_s": "duration (s)",
    "preemptions": "preemptions",
    "gpu_time_s": "GPU time (s)",
}
ENGINES = {"vllm": "vLLM", "vllm_v0": "vLLM v0", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}  # profiles
SCHEDULERS = {"vllm_v1": "vLLM v1 scheduler", "vllm_v0": "vLLM v0 scheduler", "sarathi": "Sarathi-Serve",
              "orca": "Orca", "static": "static batching"}  # engine.kind, named when no profile is set


def engine_name(config):
    profile = config.get("profile", "")
    if profile and profile != "none":
        return ENGINES.get(profile, profile)
    kind = config.get("engine.kind", "")
    return SCHEDULERS.get(kind, kind)


def column_label(col):
    m = METRIC_RE.match(col)
    if m:
        return f"{m.group(1)} {METRIC_NAMES[m.group(2)]} (ms)"
    if col in COLUMN_LABELS:
        return COLUMN_LABELS[col]
    if col.endswith("_ms"):
        return f"{col[:-3]} (ms)"
    if col.endswith("_s"):
        return f"{col[:-2]} (s)"
    return col


def metric_of(col):
    m = METRIC_RE.match(col)
    return m.group(2) if m else None


def spans_decades(values):
    pos = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    return len(pos) >= 2 and max(pos) / min(pos) > LOG_SPAN


def use_log(axis, values, mode):
    """Whether `axis` ('x' or 'y') is logarithmic: forced by --log, else when the values span decades."""
    if mode is not None:
        return axis in mode
    return spans_decades(values)


def forced_log(args):
    """--log: None for auto, else the axes it makes logarithmic ('' for none)."""
    mode = getattr(args, "log", "auto") or "auto"
    return None if mode == "auto" else "".join(c for c in mode if c in "xy")


def set_scale(ax, axis, log):
    if log:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
        # Plain numbers on log axes (100, 1000, 10000 rather than 10^2, ...): easier to read off;
        # where the axis spans less than two decades, 2x and 5x minor ticks are labelled too.
        from matplotlib.ticker import FuncFormatter
        which = ax.xaxis if axis == "x" else ax.yaxis

        def plain(v):
            return f"{v:g}" if 1e-3 <= v < 1e7 else f"{v:.0e}"

        def minor(v, _):
            lo, hi = sorted(which.get_view_interval())
            if lo <= 0 or hi / lo >= 100:
                return ""
            mantissa = v / 10 ** math.floor(math.log10(v) + 1e-9)
            return plain(v) if round(mantissa) in (2, 5) and abs(mantissa - round(mantissa)) < 1e-6 else ""
        which.set_major_formatter(FuncFormatter(lambda v, _: plain(v)))
        which.set_minor_formatter(FuncFormatter(minor))


def join_values(values, what):
    values = [v for v in dict.fromkeys(values) if v]
    if not values:
        return ""
    if len(values) <= 3:
        return " / ".join(values)
    return f"{len(values)} {what}"


def describe(configs, fallback=None):
    """'llama-3-70b (bf16) on h100_sxm, vLLM' from resolved configs (dotted dicts); fallback: {'model':
    [...], 'gpu': [...]} from sweep.csv columns or summary.json."""
    fallback = fallback or {}
    models = [c.get("model.name", "") for c in configs] or fallback.get("model", [])
    dtypes = [c.get("model.dtype", "") for c in configs]
    gpus = [c.get("hardware.gpu.spec", "") or os.path.splitext(os.path.basename(c.get("hardware.gpu.spec_file", "")))[0]
            for c in configs] or fallback.get("gpu", [])
    engines = [engine_name(c) for c in configs]
    model = join_values(models, "models")
    dtype = join_values(dtypes, "dtypes")
    gpu = join_values(gpus, "GPUs")
    engine = join_values(engines, "engines")
    if not model and not gpu:
        return ""
    text = model or "model ?"
    if dtype:
        text += f" ({dtype})"
    text += f" on {gpu or 'GPU ?'}"
    if engine:
        text += f", {engine}"
    return text


def sweep_configs(sweep_dir, limit=200):
    """The resolved configs of a sweep's points (the first `limit`)."""
    files = sorted(glob.glob(os.path.join(sweep_dir, "points", "*", "config.resolved.yaml")))[:limit]
    return [read_simple_yaml(f) for f in files]


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


def check_out_dir(out, option="--out"):
    directory = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(directory):
        raise InputError(f"{option} {out}: directory {directory} does not exist")


def save(fig, args, default_stem):
    out, fmt = output_path(args, default_stem)
    check_out_dir(out)
    fig.savefig(out, format=fmt, dpi=120, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
    print(f"wrote {out}", file=sys.stderr)


def write_data(args, data):
    if getattr(args, "data", None):
        check_out_dir(args.data, "--data")
        with open(args.data, "w") as f:
            json.dump(data, f, indent=1)
        print(f"wrote {args.data}", file=sys.stderr)


def png_base64(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def slo_band(ax, limit, label):
    """The limit as a dashed line and the region under it (that meets it) shaded."""
    lo, hi = ax.get_ylim()
    if limit > hi:
        hi = limit * (1.6 if ax.get_yscale() == "log" else 1.08)
    if limit < lo:
        lo = limit / (1.6 if ax.get_yscale() == "log" else 1.0) if ax.get_yscale() == "log" else min(lo, 0.0)
    ax.axhspan(lo, limit, color="tab:green", alpha=0.07, zorder=0, linewidth=0)
    ax.axhline(limit, color="tab:red", linestyle="--", linewidth=1.2, zorder=1)
    ax.set_ylim(lo, hi)


def place_slo_label(fig, ax, limit, label, taken):
    """The SLO line's label at the first of: left above, right above, left below, right below the
    line where it overlaps nothing in `taken` (display boxes); appended to `taken`."""
    from matplotlib.text import Text
    renderer = fig.canvas.get_renderer()
    candidates = [(0.0, 3, "left", "bottom"), (1.0, 3, "right", "bottom"), (0.0, -3, "left", "top"),
                  (1.0, -3, "right", "top")]
    for i, (xfrac, dy, ha, va) in enumerate(candidates):
        t = ax.annotate(label, (xfrac, limit), xycoords=("axes fraction", "data"), xytext=(3 if ha == "left" else -3, dy),
                        textcoords="offset points", ha=ha, va=va, fontsize=8, color="tab:red")
        t.update_positions(renderer)
        box = Text.get_window_extent(t, renderer)
        if not any(box.overlaps(o) for o in taken) or i == len(candidates) - 1:
            taken.append(box)
            return t
        t.remove()


# ---------------------------------------------------------------- latency vs throughput

def sweep_keys(path, header):
    """The swept keys of a sweep.csv: from the sweep.json beside it, else the dotted columns (and
    the scenario's top-level keys a sweep can set) between `status` and the metrics."""
    manifest = os.path.join(os.path.dirname(os.path.abspath(path)), "sweep.json")
    if os.path.isfile(manifest):
        try:
            with open(manifest) as f:
                keys = json.load(f).get("keys", [])
            return [k for k in keys if k in header]
        except (OSError, ValueError):
            pass
    top_level = {"replicas", "seed", "profile"}
    return [c for c in header[2:] if "." in c or c in top_level]


def is_rate_key(key):
    return key == "rate" or key.endswith(".rate")


def latency_columns(args):
    if args.y:
        ys = [c.strip() for c in args.y.split(",") if c.strip()]
        if not ys:
            raise InputError("--y: give at least one latency column")
        return ys
    metrics = [m.strip().lower() for m in args.metrics.split(",") if m.strip()]
    bad = [m for m in metrics if m not in SLO_METRICS]
    if bad or not metrics:
        raise InputError(f"--metrics {args.metrics}: expected some of {', '.join(SLO_METRICS)}")
    return [f"{args.stat}_{m}_ms" for m in metrics]


def latency_series(args):
    """The lines of a latency-throughput chart: (meta, lines, skipped) from the sweep.csv."""
    path = os.path.join(args.sweep, "sweep.csv") if os.path.isdir(args.sweep) else args.sweep
    ys = latency_columns(args)
    slo = parse_slo(args.slo)
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    with open(path, newline="") as f:
        header = next(csv.reader(f), [])
    keys = sweep_keys(path, header)
    rate_key = next((k for k in keys if is_rate_key(k)), None)
    if args.group is None:
        group_keys = [k for k in keys if k != rate_key]
        if rate_key is None and group_keys:
            # No rate swept: a line through the points that differ only in the seed (else in the
            # last key, the one a grid varies fastest), in throughput order.
            drop = "seed" if "seed" in group_keys else group_keys[-1]
            group_keys = [k for k in group_keys if k != drop]
    elif args.group.strip().lower() == "none":
        group_keys = []
    else:
        group_keys = [g.strip() for g in args.group.split(",") if g.strip()]
    # The columns that decide whether a point meets the SLOs: the chosen statistic of each metric.
    slo_cols = {m: f"{args.stat}_{m}_ms" for m in slo}
    required = ["point", "status", args.x] + ys + group_keys + ([rate_key] if rate_key else [])
    rows = read_csv(path, required)
    slo_cols = {m: c for m, c in slo_cols.items() if c in rows[0]}
    if slo and not slo_cols:
        print(f"note: {path} has none of {', '.join(f'{args.stat}_{m}_ms' for m in slo)}: no point marked as meeting "
              "the SLOs", file=sys.stderr)
    # Keys with one value in every (successful) row separate nothing: left out of the line labels.
    good = [r for r in rows if not (r["status"] or "").strip().lower().startswith(("fail", "error", "missing"))]
    varying = [k for k in group_keys if len({r[k] for r in good}) > 1]

    lines = {}
    skipped = 0
    for i, row in enumerate(rows, start=2):
        cells = [row[args.x]] + [row[y] for y in ys]
        failed = (row["status"] or "").strip().lower().startswith(("fail", "error", "missing"))
        if failed or any(c is None or c.strip() == "" for c in cells):
            skipped += 1  # a failed point: its metrics are blank
            continue
        where = f"{path}:{i}"
        x = number(row[args.x], f"{where}: column {args.x}")
        values = {y: number(row[y], f"{where}: column {y}") for y in ys}
        rate = number(row[rate_key], f"{where}: column {rate_key}") if rate_key else None
        meets = None
        if slo_cols:
            meets = all((maybe_number(row[c]) is not None and maybe_number(row[c]) <= slo[m]) for m, c in slo_cols.items())
        key = tuple(row[k] for k in varying)
        lines.setdefault(key, []).append({"point": row["point"], "rate": rate, "rate_text": row[rate_key] if rate_key else "",
                                          "x": x, "y": values, "meets": meets})
    if not lines:
        raise InputError(f"{path}: no successful point (all {len(rows)} points failed or have blank metrics)")

    def group_order(key):
        return [(0, maybe_number(v), v) if maybe_number(v) is not None else (1, 0.0, v) for v in key]
    out = []
    for key in sorted(lines, key=group_order):
        pts = sorted(lines[key], key=lambda p: (p["rate"], p["x"]) if rate_key else (p["x"],))
        label = ", ".join(f"{k}={v}" for k, v in zip(varying, key)) or "all points"
        best = max((p for p in pts if p["meets"]), key=lambda p: p["x"], default=None)
        out.append({"label": label, "group": dict(zip(varying, key)), "points": pts,
                    "best_within_slo": best["x"] if best else None})
    directory = os.path.dirname(os.path.abspath(path))
    meta = {"path": path, "x": args.x, "ys": ys, "rate_key": rate_key, "group_keys": varying, "slo_ms": slo,
            "stat": args.stat, "title_context": describe(sweep_configs(directory), {
                "model": [r.get("model", "") for r in rows], "gpu": [r.get("gpu", "") for r in rows]}),
            "name": os.path.basename(directory)}
    return meta, out, skipped


def latency_figure(plt, args):
    meta, lines, skipped = latency_series(args)
    ys, slo = meta["ys"], meta["slo_ms"]
    n = len(ys)
    fig, axes = plt.subplots(1, n, figsize=(5.4 * n, 4.4), squeeze=False)
    axes = axes[0]
    cmap = plt.get_cmap("tab10")
    markers = "osD^vP*Xh<>"
    xs = [p["x"] for line in lines for p in line["points"]]
    force = forced_log(args)
    xlog = use_log("x", xs, force)
    scales = {"x": "log" if xlog else "linear", "y": {}}
    annotate_rates = meta["rate_key"] and len(lines) <= 8 and max(len(l["points"]) for l in lines) <= 12
    unit = re.search(r"\(([^)]*)\)$", column_label(meta["x"]))
    x_unit = f" {unit.group(1)}" if unit else ""
    for ax, y in zip(axes, ys):
        for j, line in enumerate(lines):
            color = cmap(j % 10)
            pts = line["points"]
            label = line["label"]
            if slo and line["best_within_slo"] is not None:
                label += f"  (within SLO up to {line['best_within_slo']:.4g}{x_unit})"
            elif slo and any(p["meets"] is not None for p in pts):
                label += "  (no point within SLO)"
            marker = markers[j % len(markers)]
            ax.plot([p["x"] for p in pts], [p["y"][y] for p in pts], color=color, linewidth=1.5, zorder=3,
                    marker=marker, markersize=6.5, label=label if ax is axes[0] else None)
            missed = [p for p in pts if p["meets"] is False]
            if missed:  # hollow: misses an SLO
                ax.plot([p["x"] for p in missed], [p["y"][y] for p in missed], linestyle="none", marker=marker,
                        markersize=6.5, color=color, markerfacecolor="white", markeredgewidth=1.4, zorder=4)
        ylog = use_log("y", [p["y"][y] for line in lines for p in line["points"]], force)
        set_scale(ax, "y", ylog)
        set_scale(ax, "x", xlog)
        scales["y"][y] = "log" if ylog else "linear"
        metric = metric_of(y)
        if metric in slo:
            slo_band(ax, slo[metric], f"SLO {METRIC_NAMES[metric]} ≤ {format_ms(slo[metric])}")
        ax.set_ylabel(column_label(y))
        ax.set_xlabel(column_label(meta["x"]))
        ax.grid(True, which="major", alpha=0.3)
        ax.grid(True, which="minor", alpha=0.08)
        ax.set_title(f"{column_label(y).split(' (')[0]}" + (" — log scale" if ylog else ""), fontsize=10)
    title = args.title or "Latency vs throughput: " + (f"{meta['title_context']} — " if meta["title_context"] else "") + \
        f"sweep {meta['name']}"
    fig.suptitle(title, fontsize=11)
    legend_title = "one line per deployment" + (f"; points in {meta['rate_key']} order" if meta["rate_key"] else "")
    if slo:
        legend_title += "; hollow = misses an SLO"
    handles, labels = axes[0].get_legend_handles_labels()
    fig.tight_layout()
    # SLO labels and each point's rate, where they overlap no line, point or other label.
    fig.canvas.draw()
    for ax, y in zip(axes, ys):
        items = [(p["x"], p["y"][y], p["rate_text"], cmap(j % 10)) for j, line in enumerate(lines) for p in line["points"]]
        taken = point_boxes(ax, [(i[0], i[1]) for i in items], 5)
        for line in lines:
            taken += line_boxes(ax, [(p["x"], p["y"][y]) for p in line["points"]])
        metric = metric_of(y)
        if metric in slo:
            place_slo_label(fig, ax, slo[metric], f"SLO {METRIC_NAMES[metric]} ≤ {format_ms(slo[metric])}", taken)
        if annotate_rates:
            place_labels(fig, ax, items, taken, radii=(4, 8, 13),
                         directions=[(1, -1), (1, 1), (-1, 1), (-1, -1), (1, 0), (-1, 0)], leader_from=9)
    if len(lines) > 1 or slo:
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(len(lines), 3),
                   fontsize="small", title=legend_title, title_fontsize="small", frameon=False)
    if skipped:
        print(f"skipped {skipped} failed point(s)", file=sys.stderr)
    data = {"title": title, "x": meta["x"], "scales": scales, "slo_ms": slo, "stat": meta["stat"],
            "group_keys": meta["group_keys"], "rate_key": meta["rate_key"], "lines": lines, "skipped": skipped}
    return fig, data, meta


def latency_throughput(args):
    plt = pyplot()
    fig, data, meta = latency_figure(plt, args)
    write_data(args, data)
    save(fig, args, os.path.join(os.path.dirname(meta["path"]) or ".", "latency_throughput"))


# ---------------------------------------------------------------- capacity probes

WHY_RE = re.compile(r"\b(mean|median|p\d+)\s+(TTFT|TPOT|ITL|E2EL)\s+[-+\d.eE]+\s*ms\s*>\s*([-+\d.eE]+)\s*ms")


def capacity_series(args):
    path = os.path.join(args.capacity, "capacity.csv") if os.path.isdir(args.capacity) else args.capacity
    rows = read_csv(path, ["probe"])
    header = list(rows[0].keys())
    # Whether a row met the SLOs: `seed_meets` (one row per probe and seed), else `meets`.
    meets_col = next((c for c in ("seed_meets", "meets", "probe_meets") if c in header), None)
    if meets_col is None:
        raise InputError(f"{path}: missing column seed_meets or meets (columns: {', '.join(header)})")
    value_col = next((c for c in ("rate_per_s", "speedup", "replicas") if c in header), None)
    if value_col is None:
        raise InputError(f"{path}: missing column rate_per_s, speedup or replicas (columns: {', '.join(header)})")
    metric_cols = [c for c in header if METRIC_RE.match(c)]
    if not metric_cols:
        raise InputError(f"{path}: no latency column such as p99_ttft_ms (columns: {', '.join(header)})")
    stat = METRIC_RE.match(metric_cols[0]).group(1)
    # The limits: --slo, else what the failing probes' `why` says they exceeded.
    slo = parse_slo(args.slo)
    inferred = {}
    for row in rows:
        for m in WHY_RE.finditer(row.get("why", "") or ""):
            inferred.setdefault(m.group(2).lower(), float(m.group(3)))
    source = "--slo" if slo else ("the probes' why column" if inferred else None)
    slo = slo or inferred
    probes = []
    for i, row in enumerate(rows, start=2):
        where = f"{path}:{i}"
        value = number(row[value_col], f"{where}: column {value_col}")
        stable = None
        if "stable" in row and (row["stable"] or "").strip():
            stable = truthy(row["stable"])
        binding = (row.get("binding_metric") or row.get("binding") or "").strip().lower() or None
        if binding is None:
            m = WHY_RE.search(row.get("why", "") or "")
            binding = m.group(2).lower() if m else None
        metrics = {}
        for c in metric_cols:
            v = maybe_number(row[c])
            if v is not None:
                metrics[c] = v
        probes.append({"probe": row["probe"], "value": value, "meets": truthy(row[meets_col]), "stable": stable,
                       "seed": (row.get("seed") or "").strip() or None, "binding_metric": binding,
                       "metrics": metrics, "why": row.get("why", "")})
    # The answer as the search defines it: rate, the highest value met below the lowest missed;
    # replicas, the lowest met. A value counts as met when every probe (every seed) there met.
    by_value = {}
    for p in probes:
        by_value.setdefault(p["value"], []).append(p["meets"] and p["stable"] is not False)
    met = sorted(v for v, ok in by_value.items() if all(ok))
    missed = sorted(v for v, ok in by_value.items() if not all(ok))
    answer = None
    if value_col in ("rate_per_s", "speedup"):
        below = [v for v in met if not missed or v < missed[0]]
        answer = below[-1] if below else None
    elif met:
        answer = met[0]
    directory = os.path.dirname(os.path.abspath(path))
    found = sorted(glob.glob(os.path.join(directory, "probes", "*", "config.resolved.yaml")) +
                   glob.glob(os.path.join(directory, "probes", "*", "seed-*", "config.resolved.yaml")))  # one folder per seed
    configs = [read_simple_yaml(f) for f in found[:50]]
    meta = {"path": path, "value_col": value_col, "metric_cols": metric_cols, "stat": stat, "slo_ms": slo,
            "slo_source": source, "answer": answer, "title_context": describe(configs),
            "tp": sorted({r.get("tensor_parallel", "") for r in rows if r.get("tensor_parallel")})}
    return meta, probes


def capacity_figure(plt, args):
    meta, probes = capacity_series(args)
    slo = meta["slo_ms"]
    # Panels: every metric with a limit, else TTFT and TPOT (and whatever else has values).
    cols = [c for c in meta["metric_cols"] if metric_of(c) in slo or metric_of(c) in ("ttft", "tpot")] \
        or meta["metric_cols"]
    n = len(cols)
    fig, axes = plt.subplots(1, n, figsize=(5.2 * n, 4.3), squeeze=False)
    axes = axes[0]
    values = [p["value"] for p in probes]
    force = forced_log(args)
    xlog = use_log("x", values, force)
    kinds = {  # marker, colour, label
        "meets": ("o", "tab:green", "meets"),
        "fails": ("X", "tab:red", "misses"),
        "unstable": ("^", "tab:orange", "unstable (queue still growing)"),
    }
    scales = {"x": "log" if xlog else "linear", "y": {}}
    path_of = {}
    for ax, col in zip(axes, cols):
        # The search path, in value order (the mean over seeds when a value was probed more than once).
        per_value = {}
        for p in probes:
            if col in p["metrics"]:
                per_value.setdefault(p["value"], []).append(p["metrics"][col])
        vs = sorted(per_value)
        path_of[col] = [(v, sum(per_value[v]) / len(per_value[v])) for v in vs]
        ax.plot(vs, [m for _, m in path_of[col]], color="0.6", linewidth=1, zorder=2)
        seen = set()
        for p in probes:
            if col not in p["metrics"]:
                continue
            kind = "unstable" if p["stable"] is False else "meets" if p["meets"] else "fails"
            marker, color, label = kinds[kind]
            binds = kind != "meets" and p["binding_metric"] == metric_of(col)
            ax.scatter([p["value"]], [p["metrics"][col]], marker=marker, color=color, s=70 if binds else 42, zorder=4,
                       edgecolors="black" if binds else "none", linewidths=0.8,
                       label=label if kind not in seen and ax is axes[0] else None)
            seen.add(kind)
        ylog = use_log("y", [v for vals in per_value.values() for v in vals], force)
        set_scale(ax, "x", xlog)
        set_scale(ax, "y", ylog)
        scales["y"][col] = "log" if ylog else "linear"
        metric = metric_of(col)
        if metric in slo:
            slo_band(ax, slo[metric], f"SLO {METRIC_NAMES[metric]} ≤ {format_ms(slo[metric])}")
        if meta["answer"] is not None:
            ax.axvline(meta["answer"], color="tab:blue", linestyle=":", linewidth=1.3, zorder=1)
        if meta["value_col"] == "replicas":
            from matplotlib.ticker import MaxNLocator
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(column_label(meta["value_col"]))
        ax.set_ylabel(column_label(col))
        ax.set_title(column_label(col).split(" (")[0] + (" — log scale" if ylog else ""), fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.grid(True, which="minor", alpha=0.08)
    what = {"rate_per_s": "rate", "speedup": "speed-up"}.get(meta["value_col"], "replicas")
    tp = f", tp={'/'.join(meta['tp'])}" if meta["tp"] else ""
    title = args.title or f"Capacity search ({what})" + (f": {meta['title_context']}" if meta["title_context"] else "") + tp
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    # Probe numbers and the answer's label, where they overlap no point or other label.
    fig.canvas.draw()
    for ax, col in zip(axes, cols):
        pts = [(p["value"], p["metrics"][col]) for p in probes if col in p["metrics"]]
        taken = point_boxes(ax, pts, 5) + line_boxes(ax, path_of[col])
        if metric_of(col) in slo:
            place_slo_label(fig, ax, slo[metric_of(col)], f"SLO {METRIC_NAMES[metric_of(col)]} ≤ "
                            f"{format_ms(slo[metric_of(col)])}", taken)
        if meta["answer"] is not None:
            unit = {"rate_per_s": " req/s", "speedup": "x"}.get(meta["value_col"], " replicas")
            renderer = fig.canvas.get_renderer()
            for yfrac, va in ((0.98, "top"), (0.02, "bottom"), (0.5, "center")):
                for dx, ha in ((3, "left"), (-3, "right")):
                    t = ax.annotate(f"answer {meta['answer']:g}{unit}", (meta["answer"], yfrac),
                                    xycoords=("data", "axes fraction"), xytext=(dx, 0), textcoords="offset points",
                                    ha=ha, va=va, fontsize=8, color="tab:blue", rotation=90)
                    box = t.get_window_extent(renderer)
                    frame = ax.get_window_extent(renderer)
                    if box.x0 >= frame.x0 and box.x1 <= frame.x1 and not any(box.overlaps(o) for o in taken):
                        taken.append(box)
                        break
                    t.remove()
                else:
                    continue
                break
        items = {}  # one number per probe (its seeds share it)
        for p in probes:
            if col in p["metrics"]:
                items.setdefault((p["probe"], p["value"]), (p["value"], p["metrics"][col], p["probe"], "0.3"))
        items = list(items.values())
        place_labels(fig, ax, items, taken, radii=(4, 8, 13), directions=[(1, 1), (-1, 1), (1, -1), (-1, -1), (1, 0),
                                                                          (-1, 0)], leader_from=9)
    order = [kinds[k][2] for k in ("meets", "fails", "unstable")]
    handles, labels = axes[0].get_legend_handles_labels()
    pairs = sorted(zip(handles, labels), key=lambda hl: order.index(hl[1]) if hl[1] in order else 9)
    handles, labels = [h for h, _ in pairs], [l for _, l in pairs]
    note = "numbers: probe order"
    if meta["slo_source"]:
        note += f"; SLO from {meta['slo_source']}"
    if any(p["binding_metric"] for p in probes):
        note += "; outlined: the metric that failed"
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(handles) or 1,
               fontsize="small", title=note, title_fontsize="small", frameon=False)
    if not slo:
        print("note: no SLO limit given (--slo) and none in the probes' why column: no SLO line drawn", file=sys.stderr)
    data = {"title": title, "value_column": meta["value_col"], "answer": meta["answer"], "slo_ms": slo,
            "slo_source": meta["slo_source"], "scales": scales, "probes": probes}
    return fig, data, meta


def capacity(args):
    plt = pyplot()
    fig, data, meta = capacity_figure(plt, args)
    write_data(args, data)
    save(fig, args, os.path.join(os.path.dirname(meta["path"]) or ".", "capacity"))


# ---------------------------------------------------------------- kernel-time breakdown

PHASES = ("prefill", "mixed", "decode")


def breakdown_figure(plt, results, by="kernel", top=10, title=None):
    label_col = "kernel" if by == "kernel" else "op"
    bars = []  # (label, {stack: seconds})
    configs = []
    for d in results:
        path = os.path.join(d, "kernels.csv") if os.path.isdir(d) else d
        rows = read_csv(path, [label_col, "phase", "time_s"])
        configs.append(read_simple_yaml(os.path.join(os.path.dirname(os.path.abspath(path)), "config.resolved.yaml")))
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
                bars.append((f"{name}\n{phase}" if len(results) > 1 else phase, by_phase[phase]))

    totals = {}
    for _, stacks in bars:
        for k, t in stacks.items():
            totals[k] = totals.get(k, 0.0) + t
    top_keys = [k for k, _ in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]
    order = top_keys + (["other"] if len(totals) > len(top_keys) else [])

    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(bars) + 3), 4.8))
    cmap = plt.get_cmap("tab20")
    bottoms = [0.0] * len(bars)
    xs = list(range(len(bars)))
    for j, k in enumerate(order):
        heights = []
        for _, stacks in bars:
            if k == "other":
                heights.append(sum(t for name, t in stacks.items() if name not in top_keys))
            else:
                heights.append(stacks.get(k, 0.0))
        ax.bar(xs, heights, bottom=bottoms, label=k, color=cmap(j % 20) if k != "other" else "0.75", width=0.6)
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    for x, total in zip(xs, bottoms):
        ax.annotate(f"{total:.3g} s", (x, total), xytext=(0, 3), textcoords="offset points", ha="center", fontsize=8)
    ax.set_xticks(xs)
    if len(results) > 1:
        ax.set_xticklabels([b[0] for b in bars], rotation=30, ha="right", fontsize="small")
    else:
        ax.set_xticklabels([b[0] for b in bars])
    ax.set_ylabel("GPU time (s)")
    ax.set_ylim(top=max(bottoms) * 1.08)
    context = describe([c for c in configs if c]) if any(configs) else ""
    ax.set_title(title or f"GPU time by phase and {label_col}" + (f"\n{context}" if context else ""), fontsize=10)
    ax.legend(fontsize="small", bbox_to_anchor=(1.02, 1), loc="upper left")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def breakdown(args):
    plt = pyplot()
    fig = breakdown_figure(plt, args.results, args.by, args.top, args.title)
    first = args.results[0]
    save(fig, args, os.path.join(first if os.path.isdir(first) else os.path.dirname(first) or ".", "breakdown"))


# ---------------------------------------------------------------- roofline

STEP_COLUMNS = ["kernel", "op", "dtype", "count", "intensity", "achieved_tflops", "bound", "peak_tflops", "hbm_gbps"]
BOUND_MARKERS = {"compute": "s", "memory": "o", "sm": "D", "latency": "v", "launch": "^"}
# Label offsets tried around a point (points), nearest first: right, left, up, down, then diagonals.
LABEL_DIRECTIONS = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1)]
LABEL_RADII = [5, 12, 22, 34, 48, 64, 82, 104, 130]


def place_labels(fig, ax, items, obstacles, radii=LABEL_RADII, directions=LABEL_DIRECTIONS, leader_from=2,
                 fontsize=7):
    """Annotates `items` [(x, y, text, color)] in order, each at the nearest offset around its point
    where its box overlaps no earlier label, no obstacle (display-space boxes: points, roof labels)
    and stays inside the axes; a thin leader line joins far labels (radius index >= leader_from) to
    their point. Returns the number of labels that found no free place (left out)."""
    from matplotlib.text import Text
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    taken = list(obstacles)
    left_out = 0
    for x, y, text, color in items:
        placed = False
        for ri, r in enumerate(radii):
            for dx, dy in directions:
                ha = "left" if dx > 0 else "right" if dx < 0 else "center"
                va = "bottom" if dy > 0 else "top" if dy < 0 else "center"
                t = ax.annotate(text, (x, y), xytext=(dx * r, dy * r), textcoords="offset points", ha=ha, va=va,
                                fontsize=fontsize, color=color,
                                arrowprops=dict(arrowstyle="-", color=color, lw=0.5, alpha=0.7, shrinkA=0, shrinkB=2)
                                if ri >= leader_from else None)
                # The text's own box (an Annotation's includes its leader line, which may cross points).
                t.update_positions(renderer)
                box = Text.get_window_extent(t, renderer).expanded(1.04, 1.15)
                inside = box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
                if inside and not any(box.overlaps(o) for o in taken):
                    taken.append(box)
                    placed = True
                    break
                t.remove()
            if placed:
                break
        left_out += not placed
    return left_out


def line_boxes(ax, xy, step=3.0):
    """Display-space boxes every `step` pixels along a polyline through data points `xy`."""
    from matplotlib.transforms import Bbox
    pts = [ax.transData.transform(p) for p in xy]
    out = []
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        n = max(1, int(math.hypot(x1 - x0, y1 - y0) / step))
        for k in range(n + 1):
            x, y = x0 + (x1 - x0) * k / n, y0 + (y1 - y0) * k / n
            out.append(Bbox.from_extents(x - 1, y - 1, x + 1, y + 1))
    return out


def point_boxes(ax, xy, half=4):
    """Display-space boxes around data points: obstacles for labels."""
    from matplotlib.transforms import Bbox
    out = []
    for x, y in xy:
        px, py = ax.transData.transform((x, y))
        out.append(Bbox.from_extents(px - half, py - half, px + half, py + half))
    return out


def roofline_figure(plt, steps, top=8, annotate_all=False, title=None):
    fig, ax = plt.subplots(figsize=(9, 6))
    cmap = plt.get_cmap("tab10")
    xmin, xmax, ymin, ymax = math.inf, 0.0, math.inf, 0.0
    points = []  # (ai, flops, kernel, color, time)
    roof_labels = []  # (x, y, text, color)
    roof_points = []  # samples of every roof line: labels keep off them
    gpus = []
    for f_index, path in enumerate(steps):
        rows = read_csv(path, STEP_COLUMNS)
        label = os.path.splitext(os.path.basename(path))[0]
        color = cmap(f_index % 10)
        roofs = {}  # dtype -> peak FLOP/s
        bandwidth = None
        n = 0
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
            time = maybe_number(row.get("total_us", "")) or 0.0
            ax.scatter([ai], [achieved], marker=BOUND_MARKERS.get(row["bound"], "x"), color=color,
                       s=18 + 6 * math.log2(1 + number(row["count"], where)), alpha=0.8, edgecolors="none", zorder=3)
            points.append((ai, achieved, row["kernel"], color, time))
            xmin, xmax = min(xmin, ai), max(xmax, ai)
            ymin, ymax = min(ymin, achieved), max(ymax, achieved)
            n += 1
        if n == 0:
            raise InputError(f"{path}: no kernel with a positive intensity and achieved FLOP/s")
        # Roofs: min(peak(dtype), intensity x bandwidth) for every dtype the step computes in.
        lo, hi = min(xmin, 0.1), max(xmax * 4, 4 * max(roofs.values()) / bandwidth)
        grid = [lo * (hi / lo) ** (t / 200) for t in range(201)]
        ax.plot(grid, [g * bandwidth for g in grid], color=color, linestyle=":", linewidth=1,
                label=f"{label}: HBM {bandwidth / 1e12:.2f} TB/s")
        for dtype, peak in sorted(roofs.items(), key=lambda kv: kv[1]):
            roof = [min(peak, g * bandwidth) for g in grid]
            ax.plot(grid, roof, color=color, linewidth=1.5, zorder=2)
            roof_points += list(zip(grid, roof))
            roof_labels.append((hi, peak, f"{label} {dtype} {peak / 1e12:.0f} TFLOP/s", color))
            ymax = max(ymax, peak)
        gpus.append(f"{label} ({'/'.join(f'{d} {p / 1e12:.0f}' for d, p in sorted(roofs.items()))} TFLOP/s, "
                    f"{bandwidth / 1e12:.2f} TB/s)")
        xmax = max(xmax, hi)
    for bound, marker in BOUND_MARKERS.items():
        ax.scatter([], [], marker=marker, color="gray", label=f"{bound}-bound kernel")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(min(xmin, 0.1) / 1.5, xmax * 1.2)
    ax.set_ylim(ymin / 4, ymax * 3)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("achieved FLOP/s")
    ax.set_title(title or "Roofline: every kernel of the step\n" + "; ".join(gpus), fontsize=10)
    ax.grid(True, which="both", alpha=0.2)
    legend = ax.legend(fontsize="small", loc="lower right")

    # Labels: roof labels first (right-aligned at the roof's end, moved up past each other), then
    # the kernels, most GPU time first, wherever they overlap nothing.
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    taken = [legend.get_window_extent(renderer)]
    for x, y, text, color in sorted(roof_labels, key=lambda r: r[1]):
        for dy in range(2, 80, 9):
            t = ax.annotate(text, (x, y), xytext=(-4, dy), textcoords="offset points", ha="right", va="bottom",
                            fontsize=7, color=color)
            box = t.get_window_extent(renderer)
            if not any(box.overlaps(o) for o in taken):
                taken.append(box)
                break
            t.remove()
    taken += point_boxes(ax, [(p[0], p[1]) for p in points], 3)
    # The roof lines, densely sampled in display space (a line crossing a label makes it unreadable).
    dense = []
    for (x0, y0), (x1, y1) in zip(roof_points, roof_points[1:]):
        if x1 > x0:
            dense += [(x0 * (x1 / x0) ** (k / 4), y0 * (y1 / y0) ** (k / 4)) for k in range(4)]
    taken += point_boxes(ax, dense, 1)
    chosen = sorted(points, key=lambda p: -p[4])
    if not annotate_all:
        chosen = chosen[:top]
    left_out = place_labels(fig, ax, [(p[0], p[1], p[2], p[3]) for p in chosen], taken)
    if left_out:
        print(f"note: {left_out} kernel label(s) found no free place and were left out", file=sys.stderr)
    return fig


def roofline(args):
    plt = pyplot()
    fig = roofline_figure(plt, args.steps, args.top, args.annotate, args.title)
    save(fig, args, os.path.splitext(args.steps[0])[0] + "_roofline")


# ---------------------------------------------------------------- HTML report

def fmt_cell(value):
    v = maybe_number(value) if isinstance(value, str) else value
    if isinstance(value, str) and (v is None or not re.fullmatch(r"\s*[-+]?[\d.]+([eE][-+]?\d+)?\s*", value)):
        return value
    if isinstance(v, bool) or v is None:
        return str(value)
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return f"{int(v):d}"
    if abs(v) >= 1e9:
        return f"{v:.4e}"
    return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.4g}"


def html_table(header, rows, caption=None):
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    out.append("<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header) + "</tr>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(fmt_cell(c))}</td>" for c in row) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def html_figure(fig, caption):
    data = png_base64(fig)
    return (f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def requests_figure(plt, path, slo, title):
    rows = read_csv(path, ["ttft_ms", "tpot_ms", "e2el_ms"])
    cols = ["ttft_ms", "tpot_ms", "e2el_ms"]
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for ax, col in zip(axes, cols):
        vals = sorted(v for v in (maybe_number(r[col]) for r in rows) if v is not None and v > 0)
        if not vals:
            ax.set_visible(False)
            continue
        n = len(vals)
        ax.step(vals, [(i + 1) / n for i in range(n)], where="post", color="tab:blue")
        metric = col[:-3]
        set_scale(ax, "x", spans_decades(vals + ([slo[metric]] if metric in slo else [])))
        for q, style in ((0.5, ":"), (0.99, "--")):
            v = vals[min(n - 1, int(math.ceil(q * n)) - 1)]
            ax.axvline(v, color="0.4", linestyle=style, linewidth=0.8)
            ax.annotate(f"p{int(q * 100)} {fmt_cell(v)}", (v, q), xytext=(3, -10), textcoords="offset points", fontsize=7)
        if metric in slo:
            ax.axvline(slo[metric], color="tab:red", linestyle="--", linewidth=1.2)
            ax.annotate(f"SLO {format_ms(slo[metric])}", (slo[metric], 0.05), xytext=(-3, 0), textcoords="offset points",
                        ha="right", fontsize=8, color="tab:red")
        ax.set_xlabel(f"{METRIC_NAMES[metric]} (ms)")
        ax.set_ylabel("fraction of requests")
        ax.set_ylim(0, 1.02)
        ax.grid(True, alpha=0.3)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig, len(rows)


SUMMARY_SECTIONS = [
    ("Throughput", ["completed", "submitted", "duration_s", "request_throughput", "output_throughput",
                    "total_token_throughput", "goodput"]),
    ("Deployment", ["model", "gpu", "tensor_parallel", "pipeline_parallel", "topology", "scenario", "seed",
                    "kv_cache_tokens_per_replica", "preemptions", "prefix_cache_hit_rate"]),
]


def report(args):
    plt = pyplot()
    d = args.dir
    if not os.path.isdir(d):
        raise InputError(f"{d}: no such folder")
    slo = parse_slo(args.slo)
    parts = []
    found = []
    name = os.path.basename(os.path.normpath(os.path.abspath(d)))
    heading = None

    sweep_csv = os.path.join(d, "sweep.csv")
    if os.path.isfile(sweep_csv):
        found.append("sweep.csv")
        lt_args = argparse.Namespace(sweep=d, x="output_throughput", y=None, metrics="ttft,tpot", stat=args.stat,
                                     group=None, slo=args.slo, log="auto", title=None)
        fig, data, meta = latency_figure(plt, lt_args)
        heading = heading or meta["title_context"]
        parts.append(f"<h2>Sweep {html.escape(meta['name'])}: latency vs throughput</h2>")
        parts.append(html_figure(fig, data["title"]))
        plt.close(fig)
        with open(sweep_csv, newline="") as f:
            rows = list(csv.DictReader(f))
        keys = sweep_keys(sweep_csv, list(rows[0].keys()) if rows else [])
        if slo:  # each deployment's best point within the SLOs
            best = []
            for line in data["lines"]:
                ok = [p for p in line["points"] if p["meets"]]
                top = max(ok, key=lambda p: p["x"]) if ok else None
                best.append([line["label"], fmt_cell(top["x"]) if top else "none", top["rate_text"] if top else ""])
            parts.append(html_table(["deployment", f"highest {column_label(data['x'])} within the SLOs", "at"], best,
                                    f"within the SLOs ({args.stat}, {args.slo})"))
        metrics = [c for c in ("request_throughput", "output_throughput", f"{args.stat}_ttft_ms", f"{args.stat}_tpot_ms",
                               f"{args.stat}_e2el_ms", "completed", "preemptions") if rows and c in rows[0]]
        header = ["point", "status"] + keys + metrics
        table = [[r.get(h, "") for h in header] for r in rows]
        shown = header[:2] + keys + [column_label(m) for m in metrics]
        if slo:
            meets = {p["point"]: p["meets"] for line in data["lines"] for p in line["points"]}
            shown.append("meets the SLOs")
            for r, cells in zip(rows, table):
                m = meets.get(r["point"])
                cells.append("" if m is None else "yes" if m else "no")
        parts.append(html_table(shown, table, f"sweep.csv: {len(rows)} points (every column in {sweep_csv})"))

    capacity_csv = os.path.join(d, "capacity.csv")
    if os.path.isfile(capacity_csv):
        found.append("capacity.csv")
        cap_args = argparse.Namespace(capacity=d, slo=args.slo, log="auto", title=None)
        fig, data, meta = capacity_figure(plt, cap_args)
        heading = heading or meta["title_context"]
        answer = data["answer"]
        parts.append("<h2>Capacity search</h2>")
        if answer is not None:
            unit = {"rate_per_s": "req/s", "speedup": "x"}.get(meta["value_col"], "replicas")
            parts.append(f"<p class=answer>Answer: <b>{answer:g} {unit}</b></p>")
        parts.append(html_figure(fig, data["title"]))
        plt.close(fig)
        with open(capacity_csv, newline="") as f:
            rows = list(csv.DictReader(f))
        header = list(rows[0].keys()) if rows else []
        parts.append(html_table(header, [[r.get(h, "") for h in header] for r in rows], "capacity.csv: every probe"))

    summary_json = os.path.join(d, "summary.json")
    if os.path.isfile(summary_json):
        found.append("summary.json")
        try:
            with open(summary_json) as f:
                summary = json.load(f)
        except ValueError as e:
            raise InputError(f"{summary_json}: not JSON ({e})")
        config = read_simple_yaml(os.path.join(d, "config.resolved.yaml"))
        heading = heading or describe([config] if config else [], {"model": [summary.get("model", "")],
                                                                    "gpu": [summary.get("gpu", "")]})
        parts.append("<h2>Run summary</h2>")
        if summary.get("partial"):
            parts.append("<p class=warn>Partial results: the run was interrupted.</p>")
        rows = []
        for metric in ("ttft", "tpot", "itl", "e2el"):
            stats = [summary.get(f"{s}_{metric}_ms", "") for s in ("mean", "median", "p90", "p99", "std")]
            if any(s != "" for s in stats):
                limit = format_ms(slo[metric]) if metric in slo else ""
                rows.append([f"{METRIC_NAMES[metric]} (ms)"] + stats + [limit])
        parts.append(html_table(["latency", "mean", "median", "p90", "p99", "std", "SLO"], rows, "latency per request"))
        for section, keys in SUMMARY_SECTIONS:
            rows = [[column_label(k), summary[k]] for k in keys if k in summary]
            if rows:
                parts.append(html_table(["metric", "value"], rows, section))
        other = [[k, v] for k, v in sorted(summary.items())
                 if not any(k in keys for _, keys in SUMMARY_SECTIONS) and not METRIC_RE.match(k)
                 and isinstance(v, (int, float, str)) and not isinstance(v, bool)]
        if other:
            parts.append("<details><summary>every other value of summary.json</summary>" +
                         html_table(["metric", "value"], other) + "</details>")

    requests_csv = os.path.join(d, "requests.csv")
    if os.path.isfile(requests_csv):
        found.append("requests.csv")
        fig, n = requests_figure(plt, requests_csv, slo, "Latency distributions over requests (CDF)")
        parts.append("<h2>Requests</h2>")
        parts.append(html_figure(fig, f"TTFT, TPOT and E2E latency of the {n} requests of requests.csv"))
        plt.close(fig)

    kernels_csv = os.path.join(d, "kernels.csv")
    if os.path.isfile(kernels_csv):
        found.append("kernels.csv")
        fig = breakdown_figure(plt, [d])
        parts.append("<h2>GPU time by kernel</h2>")
        parts.append(html_figure(fig, "GPU time by phase and kernel (kernels.csv)"))
        plt.close(fig)
        rows = read_csv(kernels_csv, ["kernel", "phase", "time_s"])
        rows.sort(key=lambda r: -(maybe_number(r["time_s"]) or 0.0))
        header = [c for c in ("kernel", "op", "phase", "launches", "time_s", "share", "mean_us", "achieved_tflops",
                              "achieved_gbps", "bound", "efficiency") if c in rows[0]]
        parts.append(html_table(header, [[r[h] for h in header] for r in rows[:args.top]],
                                f"the {min(args.top, len(rows))} kernels with the most GPU time (of {len(rows)})"))

    if not found:
        raise InputError(f"{d}: none of sweep.csv, capacity.csv, summary.json, requests.csv, kernels.csv: "
                         "give a folder written by `kernelsight run`, `sweep` or `capacity`")
    title = args.title or f"KernelSight report: {name}" + (f" — {heading}" if heading else "")
    css = ("body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222}"
           "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}"
           "table{border-collapse:collapse;margin:0.8em 0;font-size:0.85em}"
           "th,td{border:1px solid #ddd;padding:2px 8px;text-align:right}th{background:#f3f3f3}"
           "td:first-child,th:first-child{text-align:left}caption{text-align:left;font-weight:bold;padding:4px 0}"
           "img{max-width:100%}figure{margin:1em 0}figcaption{font-size:0.85em;color:#555}"
           ".answer{font-size:1.1em}.warn{color:#a00}")
    page = ["<!DOCTYPE html>", "<html lang=en><head><meta charset=utf-8>", f"<title>{html.escape(title)}</title>",
            f"<style>{css}</style></head><body>", f"<h1>{html.escape(title)}</h1>",
            f"<p>{html.escape(heading or '')}</p>",
            f"<p>From {html.escape(os.path.abspath(d))}: {html.escape(', '.join(found))}"
            + (f"; SLO {html.escape(args.slo)}" if args.slo else "") + "</p>"]
    page += parts
    page.append("</body></html>")
    out = args.out or os.path.join(d, "report.html")
    check_out_dir(out)
    with open(out, "w") as f:
        f.write("\n".join(page) + "\n")
    print(f"wrote {out}", file=sys.stderr)


def main(argv):
    parser = argparse.ArgumentParser(prog="plot.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p):
        p.add_argument("--out", "-o", help="output file (default: next to the input)")
        p.add_argument("--format", choices=("png", "svg"), help="default: the --out suffix, else png")
        p.add_argument("--title", help="chart title")

    def scaled(p):
        p.add_argument("--log", default="auto", choices=("auto", "x", "y", "xy", "none"),
                       help="logarithmic axes (default auto: where the values span more than 30x)")
        p.add_argument("--slo", help="limits, e.g. ttft=2s,tpot=100ms (itl=, e2el= too; bare numbers are ms)")
        p.add_argument("--data", help="also write the plotted series to this JSON file")

    lt = sub.add_parser("latency-throughput", help="latency vs throughput curves from a sweep")
    lt.add_argument("sweep", help="sweep folder (with sweep.csv) or a sweep.csv")
    lt.add_argument("--x", default="output_throughput", help="throughput column (default output_throughput)")
    lt.add_argument("--stat", default="p99", choices=("mean", "median", "p90", "p99"),
                    help="latency statistic (default p99)")
    lt.add_argument("--metrics", default="ttft,tpot", help="latency metrics, one panel each (ttft,tpot,itl,e2el)")
    lt.add_argument("--y", help="exact latency columns instead of --stat/--metrics, e.g. mean_ttft_ms,p99_ttft_ms")
    lt.add_argument("--group", help="one line per combination of these columns (default: every swept key but "
                                    "the rate; `none`: one line)")
    scaled(lt)
    common(lt)
    lt.set_defaults(run=latency_throughput)

    cp = sub.add_parser("capacity", help="the probes of a capacity search against the SLO")
    cp.add_argument("capacity", help="capacity folder (with capacity.csv) or a capacity.csv")
    scaled(cp)
    common(cp)
    cp.set_defaults(run=capacity)

    bd = sub.add_parser("breakdown", help="kernel-time breakdown by phase (stacked bars)")
    bd.add_argument("results", nargs="+", help="result folder(s) of `kernelsight run` (or kernels.csv files)")
    bd.add_argument("--by", choices=("kernel", "op"), default="kernel", help="what the stacks are")
    bd.add_argument("--top", type=int, default=10, help="stacks shown; the rest is 'other'")
    common(bd)
    bd.set_defaults(run=breakdown)

    rf = sub.add_parser("roofline", help="every kernel of a step on the GPU's roofline")
    rf.add_argument("steps", nargs="+", help="CSV file(s) from `kernelsight step` (one per GPU to compare)")
    rf.add_argument("--top", type=int, default=8, help="label the N kernels with the most GPU time (default 8)")
    rf.add_argument("--annotate", action="store_true", help="label every kernel (where there is room)")
    common(rf)
    rf.set_defaults(run=roofline)

    rp = sub.add_parser("report", help="one self-contained HTML page of a run, sweep or capacity folder")
    rp.add_argument("dir", help="a folder written by `kernelsight run`, `sweep` or `capacity`")
    rp.add_argument("--out", "-o", help="output HTML file (default DIR/report.html)")
    rp.add_argument("--title", help="page title")
    rp.add_argument("--slo", help="limits drawn on the charts, e.g. ttft=2s,tpot=100ms")
    rp.add_argument("--stat", default="p99", choices=("mean", "median", "p90", "p99"), help="latency statistic")
    rp.add_argument("--top", type=int, default=15, help="kernels listed (default 15)")
    rp.set_defaults(run=report)

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
