#!/usr/bin/env python3
"""Disaggregated vs aggregated serving against NVIDIA Dynamo's single-node 70B example.

Source: ai-dynamo/dynamo issue #402 (comment by NVIDIA, 2025-04-01): 70B DeepSeek-R1-Distill-Llama
in FP8 on one 8 x H100 node, 3000-token prompts, 150-token outputs; at ~38 output tokens/s per user
a disaggregated layout (4 prefill workers TP1 + 1 decode worker TP4) gives "around 1.6x" the
throughput per GPU of an aggregated single node. The source does not name the aggregated layout;
both layouts of 8 GPUs that vLLM would use for a 70B model are run: 2 x TP4 and 1 x TP8.

Each deployment runs scenarios/validation/pd_dynamo_llama70b_h100.yaml as a closed loop at several
concurrencies; tokens/s/user = 1000 / mean TPOT (ms), throughput per GPU = output tokens/s / 8, and
each layout is judged by the highest throughput per GPU it reaches while users still get 38
tokens/s or more (interpolated linearly between the two concurrencies that bracket 38; a layout that
never slows to 38 is judged at its plateau). Nothing is tuned to the published ratio.

usage: scenarios/validation/validate_pd.py [--cli build/app/kernelsight] [--out results/validation_pd]
                                          [--tier cross-gen|target|roofline] [--requests 300]
"""
import argparse, json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCENARIO = os.path.join(ROOT, "scenarios/validation/pd_dynamo_llama70b_h100.yaml")
TARGET = 38.0  # tokens/s/user
CONCURRENCIES = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128]


def aggregated(text, replicas, tp):
    """The scenario without its disaggregation section: `replicas` replicas of `tp` GPUs."""
    out, skip = [], False
    for line in text.splitlines():
        if line.startswith("disaggregation:"):
            skip = True
            continue
        if skip and (line.startswith(" ") or not line.strip()):
            continue
        skip = False
        out.append(line)
    out.append(f"replicas: {replicas}")
    out.append(f"parallel: {{tp: {tp}}}")
    return "\n".join(out) + "\n"


def run(cli, scenario, concurrency, requests, tier, out):
    cmd = [cli, "run", scenario, "-q", "--out", out, "--set", f"workload.concurrency={concurrency}",
           "--set", f"workload.num_requests={requests}", "--set", f"hardware.gpu.tier={tier}"]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip())
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def at_target(points):
    """The highest throughput per GPU a layout gives at TARGET tokens/s/user or faster, from
    (tokens/s/user, tput/GPU) points ordered by rising concurrency: interpolated at TARGET where the
    sweep crosses it, else the best point that stays faster (a layout whose decode never slows to
    TARGET, e.g. one bound by its prefill pool, is judged at its plateau)."""
    best = None
    for u, t in points:
        if u >= TARGET:
            best = t if best is None else max(best, t)
    for (u0, t0), (u1, t1) in zip(points, points[1:]):
        if u0 >= TARGET >= u1:
            w = (u0 - TARGET) / (u0 - u1) if u0 != u1 else 0.0
            best = max(best or 0.0, t0 + w * (t1 - t0))
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build/app/kernelsight"))
    ap.add_argument("--out", default="results/validation_pd")
    ap.add_argument("--tier", default="cross-gen")
    ap.add_argument("--requests", type=int, default=300)
    args = ap.parse_args()
    with open(SCENARIO) as f:
        text = f.read()
    tmp = tempfile.mkdtemp(prefix="ks_validate_pd_")
    layouts = {"disaggregated 4 x P TP1 + 1 x D TP4": SCENARIO}
    for name, (replicas, tp) in {"aggregated 2 x TP4": (2, 4), "aggregated 1 x TP8": (1, 8)}.items():
        path = os.path.join(tmp, f"agg_{replicas}x{tp}.yaml")
        with open(path, "w") as f:
            f.write(aggregated(text, replicas, tp))
        layouts[name] = path
    results = {}
    for name, path in layouts.items():
        points = []
        print(f"\n{name}\n  concurrency  TTFT mean (ms)  TPOT mean (ms)  tok/s/user  output tok/s  tok/s/GPU")
        for c in CONCURRENCIES:
            j = run(args.cli, path, c, max(args.requests, 4 * c), args.tier, os.path.join(args.out, name.split()[0] + f"_{os.path.basename(path)}_{c}"))
            user = 1000.0 / j["mean_tpot_ms"]
            per_gpu = j["output_throughput"] / 8
            points.append((user, per_gpu))
            print(f"  {c:11d}  {j['mean_ttft_ms']:14.1f}  {j['mean_tpot_ms']:14.2f}  {user:10.1f}  {j['output_throughput']:12.1f}  {per_gpu:9.1f}")
            if user < TARGET * 0.8:
                break
        results[name] = at_target(points)
        shown = "none" if results[name] is None else f"{results[name]:.1f}"
        print(f"  best at >= {TARGET:.0f} tok/s/user: {shown} output tok/s per GPU")
    disagg = results["disaggregated 4 x P TP1 + 1 x D TP4"]
    print(f"\nthroughput per GPU at >= {TARGET:.0f} tok/s/user, disaggregated / aggregated (published: ~1.6x):")
    for name in ("aggregated 2 x TP4", "aggregated 1 x TP8"):
        agg = results[name]
        ratio = "n/a" if disagg is None or agg is None or agg == 0 else f"{disagg / agg:.2f}x"
        print(f"  vs {name}: {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
