#!/usr/bin/env python3
"""Figures of scripts/decision_folds.sh's runs: the target protocol's folds 1 and 2, never fold 0.

  summary OUT                  held-out MAPE per table and pooled; the fold-0 calibrations' inner CV
  compare BEFORE AFTER         the same for two runs side by side, and the tables each way
  families OUT                 held-out error per shape family, pooled over the tables from the
                               `validate --families` table of each run (kernels/family_errors.hpp)
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


FAMILY_LINE = re.compile(r"^\s+([0-9.]+)%\s+([0-9.]+)%\s+([0-9.]+)\s+([0-9]+)\s+(\S.*)$")


def families(out):
    """validate's families of every scored table, pooled: summed |error| = MAPE x rows, summed
    log ratio = log(geometric-mean ratio) x rows."""
    cls, _, _ = load(out)
    sums = collections.defaultdict(lambda: [0, 0.0, 0.0])  # (gpu, engine, family) -> rows, |error|, log ratio
    for path in sorted(glob.glob(os.path.join(out, "cal", "*.validate.log"))):
        gpu, engine, _ = os.path.basename(path)[:-len(".validate.log")].split(".")
        table = False
        for line in open(path):
            if line.startswith("shape families with the largest share"):
                table = True
                continue
            m = FAMILY_LINE.match(line) if table else None
            if m:
                rows = int(m.group(4))
                s = sums[(gpu, engine, m.group(5).strip())]
                s[0] += rows
                s[1] += float(m.group(2)) / 100.0 * rows
                s[2] += math.log(float(m.group(3))) * rows
    total = sum(s[1] for s in sums.values())
    print(f"{cls}: held-out shape families of folds 1-2, by their share of the summed error")
    print("  share   MAPE  pred/meas   rows  gpu engine family")
    for key in sorted(sums, key=lambda k: (-sums[k][1], k)):
        rows, err, logs = sums[key]
        print(f"  {100 * err / total:5.1f}% {100 * err / rows:5.1f}%  {math.exp(logs / rows):9.3f}  {rows:5}"
              f"  {key[0]} {key[1]} {key[2]}")


if __name__ == "__main__":
    commands = {"summary": (summary, 1), "compare": (compare, 2), "families": (families, 1)}
    if len(sys.argv) < 2 or sys.argv[1] not in commands or len(sys.argv) != 2 + commands[sys.argv[1]][1]:
        sys.exit(__doc__)
    fn, _ = commands[sys.argv[1]]
    fn(*sys.argv[2:])
