#!/usr/bin/env bash
# How a simulation's cost grows (issue 6): wall and CPU seconds of `kernelsight run` while one
# dimension grows and the rest stay at benchmark case 1 (Llama-3-8B, H100, ShareGPT-like lengths):
#   requests   1k .. 40k requests at 8 req/s
#   replicas   1 .. 16 replicas, each at 8 req/s (rate and requests scale with them)
#   layers     8 .. 64 decoder layers (Llama-3-8B's config.json with num_hidden_layers changed)
#   batch      max_num_seqs 8 .. 256 under a saturating load (bigger batches, fewer steps)
# Writes bench/results/scaling.csv (dimension,value,wall_s,cpu_s,steps,kernels,sim_s) and, when
# python3-matplotlib is installed, bench/results/scaling.png|svg.
#   bench/scaling.sh            all dimensions
#   bench/scaling.sh requests   one of them
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/common.sh"
ks_install_packages
if [ ! -x /usr/bin/time ]; then KS_PACKAGES=(time); ks_install_packages; fi
ks_build kernelsight >/dev/null

dims=("$@")
[ ${#dims[@]} -eq 0 ] && dims=(requests replicas layers batch)
out_dir="$KS_ROOT/bench/results"
mkdir -p "$out_dir"
csv="$out_dir/scaling.csv"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
base="$KS_ROOT/bench/scenarios/case1_sharegpt_h100.yaml"
echo "dimension,value,wall_s,cpu_s,steps,kernels,sim_s" > "$tmp/scaling.csv"

measure() {  # dimension value kernelsight-run-args...
  local dim="$1" value="$2"
  shift 2
  /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$KS_BUILD/app/kernelsight" run "$@" -q --out "$tmp/run" \
    2>"$tmp/err" >/dev/null || { cat "$tmp/err" >&2; exit 1; }
  python3 - "$dim" "$value" "$tmp/time" "$tmp/run/summary.json" >> "$tmp/scaling.csv" <<'PY'
import json, sys
dim, value, timing, summary = sys.argv[1:5]
wall, user, system = (float(x) for x in open(timing).read().split()[-3:])
j = json.load(open(summary))
print(f"{dim},{value},{wall:.3f},{user + system:.3f},{j['engine_steps']},{j['kernels_launched']},{j['duration_s']:.1f}")
PY
  tail -1 "$tmp/scaling.csv" >&2
}

for dim in "${dims[@]}"; do
  case "$dim" in
    requests)
      for n in 1000 2500 5000 10000 20000 40000; do
        measure requests "$n" "$base" --set workload.num_requests="$n"
      done ;;
    replicas)
      for r in 1 2 4 8 16; do
        measure replicas "$r" "$base" --set replicas="$r" --set workload.rate="$((8 * r))/s" \
          --set workload.num_requests="$((2500 * r))" --set hardware.topology.nodes="$(((r + 7) / 8))"
      done ;;
    layers)
      for l in 8 16 32 64; do
        python3 - "$KS_ROOT/data/models/llama-3-8b.json" "$l" > "$tmp/layers$l.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["num_hidden_layers"] = int(sys.argv[2]); print(json.dumps(c))
PY
        measure layers "$l" "$base" --set model.config="$tmp/layers$l.json" --set model.name= \
          --set workload.num_requests=5000
      done ;;
    batch)
      for b in 8 16 32 64 128 256; do
        measure batch "$b" "$base" --set engine.max_num_seqs="$b" --set workload.rate=40/s \
          --set workload.num_requests=5000
      done ;;
    *) ks_log "unknown dimension '$dim' (requests, replicas, layers, batch)"; exit 2 ;;
  esac
done
mv "$tmp/scaling.csv" "$csv"
ks_log "wrote $csv"

# Debian's interpreter, where python3-matplotlib lives (a user's PATH may put another python3 first).
plot_python=/usr/bin/python3
[ -x "$plot_python" ] || plot_python=python3
if "$plot_python" -c "import matplotlib" 2>/dev/null; then
  "$plot_python" - "$csv" "$out_dir" <<'PY'
import csv, sys, collections
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = collections.defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    rows[r["dimension"]].append(r)
labels = {"requests": "requests", "replicas": "replicas (8 req/s each)", "layers": "decoder layers",
          "batch": "max_num_seqs (saturated)"}
fig, axes = plt.subplots(1, len(rows), figsize=(4 * len(rows), 3.4), squeeze=False)
for ax, (dim, rs) in zip(axes[0], rows.items()):
    x = [float(r["value"]) for r in rs]
    ax.plot(x, [float(r["cpu_s"]) for r in rs], "o-", label="CPU s")
    ax2 = ax.twinx()
    ax2.plot(x, [float(r["steps"]) / max(float(r["cpu_s"]), 1e-3) / 1e3 for r in rs], "s--", color="tab:orange",
             label="k steps / CPU s")
    ax.set_xscale("log", base=2)
    ax.set_xlabel(labels.get(dim, dim))
    ax.set_ylabel("CPU seconds")
    ax2.set_ylabel("thousand engine steps per CPU second", color="tab:orange")
    ax.grid(alpha=0.3)
fig.suptitle("kernelsight run: cost vs size (benchmark case 1 as the base)")
fig.tight_layout()
for ext in ("png", "svg"):
    fig.savefig(f"{sys.argv[2]}/scaling.{ext}", dpi=110)
PY
  ks_log "wrote $out_dir/scaling.png and .svg"
else
  ks_log "python3-matplotlib not installed: no plot (apt-get install python3-matplotlib)"
fi
