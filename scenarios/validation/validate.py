#!/usr/bin/env python3
"""Measured vs predicted for the rows of data/e2e/ whose model we have (A100; H100, H200, L40S, B200).

Runs kernelsight on scenarios/validation/*.yaml with per-row overrides taken from the row itself
(model, lengths, rate, batch size, engine) -- nothing is tuned per row -- and prints each row's
measured and predicted values, their relative error, and the median absolute error per metric.

usage: scenarios/validation/validate.py [--tier target|cross-gen|roofline] [--hopper-tier TIER]
                                       [--only-hopper | --only-maxtput | --skip-maxtput]
                                       [--cli build/app/kernelsight] [--out results/validation]
"""
import argparse, csv, json, os, re, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = {"Llama-3.1-8B": "llama-3.1-8b", "Llama-3.1-8B-Instruct": "llama-3.1-8b", "Llama-3-8B": "llama-3-8b",
          "Llama-2-7B": "llama-2-7b", "Mistral-7B": "mistral-7b", "Llama-2-70B": "llama-2-70b",
          "Llama-3-70B": "llama-3-70b", "Llama-3.1-70B": "llama-3.1-70b", "Mixtral-8x7B": "mixtral-8x7b",
          # Llama-3.3-70B has Llama-3.1-70B's config.json (same layers, widths, heads, vocabulary, RoPE).
          "Llama-3.3-70B": "llama-3.1-70b", "Qwen3-30B-A3B": "qwen3-30b-a3b"}
# GPU column of data/e2e/trtllm_max_throughput.csv -> (catalog GPU, topology of the source's system)
MAXTPUT_GPUS = {"H100 80GB HBM3": ("h100_sxm", "dgx_h100", "H100"), "H100 SXM 80GB": ("h100_sxm", "dgx_h100", "H100"),
                "H200 141GB HBM3": ("h200", "hgx_h200", "H200"), "H200 SXM 141GB": ("h200", "hgx_h200", "H200"),
                "L40S": ("l40s", "pcie_l40s", "L40S"), "B200 180GB": ("b200", "hgx_b200", "B200")}


def engine_sets(engine, tp, offline):
    """Engine profile and launch flags of a serving row's engine column, e.g.
    "vLLM v0.6.0 (--num-scheduler-steps 10)", as the source (benchmark_vllm_060/README.md) ran it."""
    if engine.startswith("SGLang"):
        # SGLang's default mem_frac is 0.88 at TP 1 and 0.85 at TP 4; the offline TP 4 run set 0.88.
        frac = "0.88" if tp == 1 or offline else "0.85"
        return ["profile=sglang", f"cache.gpu_memory_utilization={frac}", "cache.enable_prefix_caching=false"]  # --disable-radix-cache
    if not engine.startswith("vLLM v0."):
        return ["profile=vllm"]
    sets = ["profile=vllm_v0"]
    m = re.search(r"--num-scheduler-steps (\d+)", engine)
    if m:
        sets.append(f"engine.num_scheduler_steps={m.group(1)}")
    # The source's launch command (benchmark_vllm_060/README.md) sets --max_model_len 4096: without
    # chunked prefill vLLM v0 then batches at most max(max_model_len, 2048) = 4096 tokens a step.
    sets.append("engine.max_num_batched_tokens=4096")
    return sets


INTERVALS = 0  # --intervals: samples of the kernel model's error per run (0: point predictions only)


def run(cli, scenario, sets, out, tier):
    cmd = [cli, "run", os.path.join(ROOT, "scenarios/validation", scenario), "-q", "--out", out,
           "--set", f"hardware.gpu.tier={tier}"]
    if INTERVALS:
        cmd += ["--intervals", str(INTERVALS)]
    for s in sets:
        cmd += ["--set", s]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip())
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def check_data(cli, out):
    """--check-data (ctest): every row of data/e2e/ names its source and a model and GPU validate.py maps,
    and every distinct configuration of trtllm_max_throughput.csv (model, GPU, TP, precision) runs on
    both tiers with a handful of short requests. Returns the number of problems."""
    problems = 0
    for name in sorted(os.listdir(os.path.join(ROOT, "data/e2e"))):
        if not name.endswith(".csv"):
            continue
        with open(os.path.join(ROOT, "data/e2e", name)) as f:
            for n, r in enumerate(csv.DictReader(f), start=2):
                if not r.get("source"):
                    print(f"data/e2e/{name}:{n}: no source", file=sys.stderr); problems += 1
    configs = {}
    with open(os.path.join(ROOT, "data/e2e/trtllm_max_throughput.csv")) as f:
        for n, r in enumerate(csv.DictReader(f), start=2):
            if r["model"] not in MODELS or r["gpu"] not in MAXTPUT_GPUS or r["unit"] not in ("total", "per_gpu") \
                    or float(r["throughput_tok_s"]) <= 0:
                print(f"data/e2e/trtllm_max_throughput.csv:{n}: unmapped or invalid row", file=sys.stderr)
                problems += 1
                continue
            configs.setdefault((r["model"], r["gpu"], r["tp"], r["precision"], r["kv_cache_dtype"]), n)
    for (model, gpu, tp, prec, kv), n in sorted(configs.items(), key=lambda kv: kv[1]):
        spec, topo, _ = MAXTPUT_GPUS[gpu]
        sets = [f"model.name={MODELS[model]}", f"model.dtype={prec.lower()}", f"model.kv_dtype={kv.lower()}",
                f"hardware.gpu.spec={spec}", f"hardware.topology.kind={topo}", f"parallel.tp={tp}",
                "workload.num_requests=4", "workload.prompt_tokens=64", "workload.output_tokens=4",
                "cache.kv_cache_free_memory_fraction=0.95"]
        for tier in ("target", "cross-gen"):
            try:
                run(cli, "trtllm_max_throughput.yaml", sets, os.path.join(out, f"check_{n}_{tier}"), tier)
            except RuntimeError as e:
                print(f"data/e2e/trtllm_max_throughput.csv:{n} ({model} {gpu} TP{tp} {prec}, {tier}): {e}", file=sys.stderr)
                problems += 1
    print(f"checked data/e2e: {len(configs)} max-throughput configurations x 2 tiers, {problems} problems")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build/app/kernelsight"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results/validation"))
    ap.add_argument("--tier", default="target", choices=["target", "cross-gen", "roofline"],
                    help="kernel model tier of the A100 (target: calibrated on the shipped A100 sweep)")
    ap.add_argument("--hopper-tier", default=None, choices=["target", "cross-gen", "roofline"],
                    help="tier of the H100, H200, L40S and B200 rows (default: cross-gen, roofline with --tier roofline); "
                         "cross-gen leaves every GPU of the row's generation out, target uses the shipped AIConfigurator calibrations "
                         "of the row's engine")
    ap.add_argument("--only-hopper", action="store_true",
                    help="only the rows of GPUs other than the A100 (H100, H200, L40S, B200)")
    ap.add_argument("--skip-maxtput", action="store_true",
                    help="leave out data/e2e/trtllm_max_throughput.csv (H100/H200/L40S/B200 max-throughput tables)")
    ap.add_argument("--only-maxtput", action="store_true",
                    help="only data/e2e/trtllm_max_throughput.csv")
    ap.add_argument("--intervals", type=int, default=0,
                    help="run each row with `run --intervals N` and report how many measurements fall in the 90%% band")
    ap.add_argument("--check-data", action="store_true",
                    help="check data/e2e/ and run each max-throughput configuration briefly on both tiers (ctest)")
    args = ap.parse_args()
    if args.check_data:
        return 1 if check_data(args.cli, args.out) else 0
    global INTERVALS
    INTERVALS = args.intervals
    rows = []  # (label, metric, measured, predicted, band (p5, p95) or None)

    def add(label, metric, measured, s, key):
        band = s.get("intervals", {}).get("metrics", {}).get(key)
        rows.append((label, metric, measured, s[key], (band["p5"], band["p95"]) if band else None))

    with open(os.path.join(ROOT, "data/e2e/a100_trtllm_max_throughput.csv")) as f:
        for i, r in enumerate(csv.DictReader(f)):
            if args.only_hopper or args.only_maxtput or r["model"] not in MODELS or r["pp"] != "1":
                continue
            tp = int(r["tp"])
            isl, osl = int(r["isl"]), int(r["osl"])
            static = "static" in r["trtllm_version"]
            batch = int(r["batch_size"]) if static else 0
            n = max(4 * batch, 256) if static else 1000
            # perf-overview.md: "In majority of cases, we also use a higher KV cache percentage by
            # setting --kv_cache_free_gpu_mem_fraction 0.95" (the default, 0.90, after an OOM).
            sets = [f"model.name={MODELS[r['model']]}", f"workload.prompt_tokens={isl}",
                    f"workload.output_tokens={osl}", f"workload.num_requests={n}",
                    "cache.kv_cache_free_memory_fraction=0.95"]
            if static:
                sets += ["engine.kind=static", f"engine.max_num_seqs={batch}",
                         f"engine.max_num_batched_tokens={max(65536, batch * isl)}"]
            elif isl + osl > 8192:  # without chunked context the engine must fit a whole sequence
                sets += [f"engine.max_num_batched_tokens={isl + osl}"]
            if tp > 1:  # the GPUs of one DGX A100 (NVSwitch)
                sets += [f"parallel.tp={tp}", "hardware.topology.kind=dgx_a100"]
            label = f"TRT-LLM {r['trtllm_version'].split()[0]} {r['model']}" + (f" TP{tp}" if tp > 1 else "") + \
                f" {isl}/{osl}" + (f" bs{batch}" if static else "")
            try:
                s = run(args.cli, "a100_max_throughput.yaml", sets, os.path.join(args.out, f"trtllm_{i}"), args.tier)
            except RuntimeError as e:
                print(f"skipped {label}: {e}", file=sys.stderr)
                continue
            metric = "throughput" if tp == 1 else "throughput TP"
            add(label, metric, float(r["throughput_tok_s"]), s, "output_throughput")

    # Serving benchmarks: A100 rows on the requested tier; H100 rows (no H100 sweep shipped) on
    # cross-gen unless roofline is asked for, and summarised apart.
    h100_tier = args.hopper_tier or ("roofline" if args.tier == "roofline" else "cross-gen")
    serving = (("a100_serving_latency.csv", "a100_sharegpt_serving.yaml", args.tier, ""),
               ("h100_serving_latency.csv", "h100x4_sharegpt_serving.yaml", h100_tier, "H100x4 "))
    if args.only_maxtput:
        serving = ()
    elif args.only_hopper:
        serving = serving[1:]
    for data, scenario, tier, group in serving:
        with open(os.path.join(ROOT, "data/e2e", data)) as f:
            for i, r in enumerate(csv.DictReader(f)):
                rate = r["request_rate_or_concurrency"]
                offline = "inf" in rate
                sets = engine_sets(r["engine"], int(r["tp"]), offline) + [f"workload.num_requests={r['num_prompts']}"]
                sets += ["workload.arrival=constant", "workload.rate=1000000/s"] if offline else \
                        [f"workload.rate={rate.split('=')[1].split()[0]}/s"]
                s = run(args.cli, scenario, sets, os.path.join(args.out, f"serving_{group.strip()}{i}"), tier)
                label = f"{group}{r['model'].replace('-Instruct', '')} {r['engine'].split(' (')[0]} {rate}"
                if offline:
                    add(label, group + "throughput", float(r["throughput_tok_s"]), s, "output_throughput")
                else:
                    add(label, group + "median TTFT ms", float(r["ttft_ms_p50"]), s, "median_ttft_ms")
                    add(label, group + "median TPOT ms", float(r["tpot_ms_p50"]), s, "median_tpot_ms")
                    add(label, group + "median ITL ms", float(r["itl_ms"]), s, "median_itl_ms")

    # TensorRT-LLM's online serving table (Triton backend, H100 and H200, cross-gen tier): mean TTFT
    # and ITL at every rate; output throughput only at the unlimited rate (below it, it is the rate).
    gpus = {"H100 80GB HBM3": "h100_sxm", "H200 131GB HBM3": "h200"}
    with open(os.path.join(ROOT, "data/e2e/trtllm_online_serving.csv")) as f:
        for i, r in enumerate(csv.DictReader(f)):
            if args.only_maxtput:
                break
            tp, qps = int(r["tp"]), r["qps"]
            sets = [f"model.name={MODELS[r['model']]}", f"hardware.gpu.spec={gpus[r['gpu']]}", f"parallel.tp={tp}",
                    f"workload.prompt_tokens={r['isl']}", f"workload.output_tokens={r['osl']}",
                    f"workload.num_requests={r['num_requests']}"]
            sets += ["workload.arrival=constant", "workload.rate=1000000/s"] if qps == "INF" else \
                    [f"workload.rate={qps}/s"]
            s = run(args.cli, "trtllm_online_serving.yaml", sets, os.path.join(args.out, f"trtllm_online_{i}"), h100_tier)
            group = "H100/H200 "
            label = f"{group}TRT-LLM {r['model']} TP{tp} {r['gpu'].split()[0]} {r['isl']}/{r['osl']} QPS {qps}"
            add(label, group + "mean TTFT ms", float(r["mean_ttft_ms"]), s, "mean_ttft_ms")
            add(label, group + "mean ITL ms", float(r["mean_itl_ms"]), s, "mean_itl_ms")
            if qps == "INF":
                add(label, group + "throughput", float(r["output_tok_s"]), s, "output_throughput")

    # TensorRT-LLM's max-throughput tables on H100, H200, L40S and B200 (v0.17 TRT engines with FP8,
    # v1.0 PyTorch backend with FP8 or NVFP4; FP8 KV cache throughout): output tokens/s at an
    # infinite request rate, fixed lengths, the source's request count per ISL/OSL. Tier: as the
    # Hopper rows (cross-gen leaves the row's whole generation out: Hopper, Ada or Blackwell).
    with open(os.path.join(ROOT, "data/e2e/trtllm_max_throughput.csv")) as f:
        for i, r in enumerate(csv.DictReader(f)):
            if args.skip_maxtput:
                break
            gpu, topo, short = MAXTPUT_GPUS[r["gpu"]]
            tp, isl, osl = int(r["tp"]), int(r["isl"]), int(r["osl"])
            sets = [f"model.name={MODELS[r['model']]}", f"model.dtype={r['precision'].lower()}",
                    f"model.kv_dtype={r['kv_cache_dtype'].lower()}", f"hardware.gpu.spec={gpu}",
                    f"hardware.topology.kind={topo}", f"parallel.tp={tp}",
                    f"workload.prompt_tokens={isl}", f"workload.output_tokens={osl}",
                    f"workload.num_requests={r['num_requests']}", "cache.kv_cache_free_memory_fraction=0.95"]
            if isl + osl > 8192:  # as the A100 rows: without chunked context the engine must fit a whole sequence
                sets += [f"engine.max_num_batched_tokens={isl + osl}"]
            version = r["trtllm_version"].split()[0]
            label = f"TRT-LLM {version} {r['model']} {short} TP{tp} {r['precision']} {isl}/{osl}"
            try:
                s = run(args.cli, "trtllm_max_throughput.yaml", sets, os.path.join(args.out, f"trtllm_maxtput_{i}"),
                        h100_tier)
            except RuntimeError as e:
                print(f"skipped {label}: {e}", file=sys.stderr)
                continue
            metric = f"{short} TRT-LLM {version} {r['precision']} tput" + (" TP" if tp > 1 else "")
            if r["unit"] == "per_gpu":  # the newest tables give output tokens/s per GPU
                s = dict(s, output_throughput_per_gpu=s["output_throughput"] / int(r["num_gpus"]))
                add(label + " /GPU", metric, float(r["throughput_tok_s"]), s, "output_throughput_per_gpu")
            else:
                add(label, metric, float(r["throughput_tok_s"]), s, "output_throughput")

    print(f"{'row':<58} {'metric':<22} {'measured':>10} {'predicted':>10} {'error':>8}" +
          (f" {'90% band':>21}" if args.intervals else ""))
    errors, signed_errors, inside = {}, {}, {}
    for label, metric, measured, predicted, band in rows:
        err = (predicted - measured) / measured
        errors.setdefault(metric, []).append(abs(err))
        signed_errors.setdefault(metric, []).append(err)
        line = f"{label:<58} {metric:<22} {measured:>10.2f} {predicted:>10.2f} {err:>+7.1%}"
        if band:
            hit = band[0] <= measured <= band[1]
            inside.setdefault(metric, []).append(hit)
            line += f" {band[0]:>9.2f} - {band[1]:<9.2f}{' in' if hit else ' OUT'}"
        print(line)
    print()
    width = max([22] + [len(m) for m in errors])
    pooled = {}  # max-throughput rows pooled per GPU (every version, precision and TP)
    for metric, signed in signed_errors.items():
        if " TRT-LLM " in metric and " tput" in metric:
            pooled.setdefault(f"{metric.split()[0]} TRT-LLM max throughput, all", []).extend(signed)
    for metric, signed in pooled.items():
        errors[metric] = [abs(e) for e in signed]
        signed_errors[metric] = signed
    width = max([width] + [len(m) for m in pooled])
    for metric, errs in errors.items():
        signed = signed_errors[metric]
        fast = sum(e > 0 for e in signed) if "ms" not in metric else sum(e < 0 for e in signed)
        print(f"median absolute error, {metric:<{width}}: {statistics.median(errs):6.1%} over {len(errs)} rows; "
              f"median signed {statistics.median(signed):+6.1%}; {fast}/{len(signed)} predicted too fast")
    if inside:
        print()
        hits = [h for v in inside.values() for h in v]
        for metric, v in inside.items():
            print(f"90% band holds the measurement, {metric:<22}: {sum(v)}/{len(v)} rows ({sum(v) / len(v):.0%})")
        print(f"90% band holds the measurement, all rows: {sum(hits)}/{len(hits)} ({sum(hits) / len(hits):.0%}); "
              f"{args.intervals} samples per row")
    print(f"kernel tier: {'(A100 rows skipped)' if args.only_hopper else args.tier} (H100, H200, L40S and B200 rows: {h100_tier})")


if __name__ == "__main__":
    sys.exit(main())
