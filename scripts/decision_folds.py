#!/usr/bin/env python3
"""Figures of scripts/decision_folds.sh's runs: the target protocol's folds 1 and 2, never fold 0.

  summary OUT                  held-out MAPE per table and pooled; the fold-0 calibrations' inner CV
  compare BEFORE AFTER         the same for two runs side by side, and the tables each way
  families OUT                 held-out error per shape family (heads, KV heads, head_dim or N x K)
"""
import collections
import csv
import glob
import math
import os
import re
import sys

MOVED = 0.1  # points: a table whose figure moves less counts as unchanged


def load(out):
    """{(gpu, engine, fold): (rows, MAPE %)} for folds 1-2 and {(gpu, engine, fold): inner CV %}."""
    cls = open(os.path.join(out, "class")).read().strip()
    heldout, inner = {}, {}
    for path in sorted(glob.glob(os.path.join(out, "rows", "*.csv"))):
        gpu, engine, fold = os.path.basename(path)[:-4].split(".")
        errors = [abs(float(r["predicted_us"]) / float(r["measured_us"]) - 1.0)
                  for r in csv.DictReader(open(path)) if r["class"] == cls]
        if errors:
            heldout[(gpu, engine, int(fold))] = (len(errors), 100.0 * sum(errors) / len(errors))
    pattern = re.compile(re.escape(cls) + r" residual:.*: ([0-9.]+)%\)")
    for path in sorted(glob.glob(os.path.join(out, "cal", "*.log"))):
        parts = os.path.basename(path)[:-4].split(".")
        if len(parts) != 3:  # validate's logs
            continue
        gpu, engine, fold = parts
        for line in open(path):
            m = pattern.search(line)
            if m:
                inner[(gpu, engine, int(fold))] = float(m.group(1))
    return cls, heldout, inner


def pooled(heldout, keys):
    rows = sum(heldout[k][0] for k in keys)
    return sum(heldout[k][0] * heldout[k][1] for k in keys) / rows if rows else float("nan")


def mean(values):
    return sum(values) / len(values) if values else float("nan")


def summary(out):
    cls, heldout, inner = load(out)
    print(f"{cls}: held-out MAPE of folds 1-2 (rows)")
    for k in sorted(heldout):
        print(f"  {k[0]:9} {k[1]:7} fold {k[2]}  {heldout[k][1]:6.2f}%  ({heldout[k][0]})")
    print(f"pooled over {len(heldout)} tables: {pooled(heldout, list(heldout)):.2f}%")
    fold0 = [v for k, v in inner.items() if k[2] == 0]
    print(f"inner CV, mean of {len(fold0)} fold-0 calibrations: {mean(fold0):.2f}%")


def compare(before, after):
    cls, a, ia = load(before)
    cls_b, b, ib = load(after)
    if cls != cls_b:
        sys.exit(f"decision_folds.py: {before} is {cls}, {after} is {cls_b}")
    keys = sorted(set(a) & set(b))
    if len(keys) != len(a) or len(keys) != len(b):
        print(f"warning: the runs share {len(keys)} tables of {len(a)} and {len(b)}", file=sys.stderr)
    better = [k for k in keys if b[k][1] < a[k][1] - MOVED]
    worse = [k for k in keys if b[k][1] > a[k][1] + MOVED]
    print(f"{cls}, folds 1-2 held-out MAPE, pooled over {len(keys)} tables: "
          f"{pooled(a, keys):.2f}% -> {pooled(b, keys):.2f}%")
    print(f"tables better / worse by more than {MOVED} point: {len(better)} / {len(worse)}")
    for k in better + worse:
        print(f"  {k[0]:9} {k[1]:7} fold {k[2]}  {a[k][1]:6.2f} -> {b[k][1]:6.2f}%  ({a[k][0]} rows)")
    shared = sorted(set(ia) & set(ib))
    fold0 = [k for k in shared if k[2] == 0]
    print(f"inner CV, mean of {len(fold0)} fold-0 calibrations: "
          f"{mean([ia[k] for k in fold0]):.2f}% -> {mean([ib[k] for k in fold0]):.2f}%")


def families(out):
    cls, _, _ = load(out)
    groups = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(out, "rows", "*.csv"))):
        gpu, engine, _ = os.path.basename(path)[:-4].split(".")
        for r in csv.DictReader(open(path)):
            if r["class"] != cls:
                continue
            shape = (f"N={r['n']} K={r['k']} {r['dtype']}" if cls == "gemm" else
                     f"heads {r['heads']}/{r['kv_heads']} head_dim {r['head_dim']} {r['dtype']}")
            groups[(gpu, engine, shape)].append(float(r["predicted_us"]) / float(r["measured_us"]))
    total = sum(abs(x - 1) for v in groups.values() for x in v)
    print(f"{cls}: held-out shape families of folds 1-2, by their share of the summed error")
    print("  share  MAPE  mean log(pred/meas)  rows  gpu engine family")
    for key in sorted(groups, key=lambda k: -sum(abs(x - 1) for x in groups[k])):
        v = groups[key]
        err = sum(abs(x - 1) for x in v)
        print(f"  {100 * err / total:5.1f}% {100 * err / len(v):5.1f}% {mean([math.log(x) for x in v]):+8.2f}"
              f"  {len(v):5}  {key[0]} {key[1]} {key[2]}")


if __name__ == "__main__":
    commands = {"summary": (summary, 1), "compare": (compare, 2), "families": (families, 1)}
    if len(sys.argv) < 2 or sys.argv[1] not in commands or len(sys.argv) != 2 + commands[sys.argv[1]][1]:
        sys.exit(__doc__)
    fn, _ = commands[sys.argv[1]]
    fn(*sys.argv[2:])
