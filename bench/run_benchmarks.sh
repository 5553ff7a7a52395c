#!/usr/bin/env bash
# Simulation-speed benchmark (issue 6): runs the cases in bench/scenarios/ and prints, per case,
# wall seconds, simulated seconds per wall second, engine steps and kernels per second and peak RSS.
#   bench/run_benchmarks.sh              cases 0 and 1 (seconds)
#   bench/run_benchmarks.sh 0 1 2 3      pick cases (2 and 3 are long; see docs/performance.md)
#   bench/run_benchmarks.sh --exact 0    every shortcut off (the reference: same results, slower)
#   bench/run_benchmarks.sh 1 -- --set workload.num_requests=1000   extra `kernelsight run` arguments
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/common.sh"

cases=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --exact) extra+=(--exact) ;;
    --) shift; extra+=("$@"); break ;;
    *) cases+=("$1") ;;
  esac
  shift
done
[ ${#cases[@]} -eq 0 ] && cases=(0 1)

ks_install_packages
if [ ! -x /usr/bin/time ]; then  # GNU time reports the peak RSS
  KS_PACKAGES=(time)
  ks_install_packages
fi
ks_build kernelsight >/dev/null

out_root="$(mktemp -d)"
trap 'rm -rf "$out_root"' EXIT
printf '%-5s %-28s %9s %9s %9s %12s %11s %13s %9s\n' case scenario wall_s cpu_s sim_s sim_s/wall steps/s kernels/s rss_MB
for c in "${cases[@]}"; do
  scenario="$(ls "$KS_ROOT"/bench/scenarios/case"$c"_*.yaml 2>/dev/null | head -1)"
  [ -n "$scenario" ] || { ks_log "no scenario for case $c in bench/scenarios/"; exit 2; }
  out="$out_root/case$c"
  # Wall time is the whole process; cpu_s (user + system) is steadier on a loaded machine.
  # Both cover the whole process (elaboration, trace reading, simulation, writing results).
  /usr/bin/time -v -o "$out_root/time$c" "$KS_BUILD/app/kernelsight" run "$scenario" -q --out "$out" \
    "${extra[@]}" 2>"$out_root/err$c" || { cat "$out_root/err$c" >&2; exit 1; }
  python3 - "$out/summary.json" "$out_root/time$c" "$c" "$(basename "$scenario" .yaml)" <<'PY'
import json, re, sys
summary, timing, case, name = sys.argv[1:5]
j = json.load(open(summary))
t = open(timing).read()
h, m, s = (["0", "0"] + re.search(r"Elapsed \(wall clock\) time.*: (\S+)", t).group(1).split(":"))[-3:]
wall = int(h) * 3600 + int(m) * 60 + float(s)
cpu = sum(float(re.search(rf"{k} time \(seconds\): (\S+)", t).group(1)) for k in ("User", "System"))
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) / 1024
sim = j["duration_s"]
print(f"{case:<5} {name:<28} {wall:9.2f} {cpu:9.2f} {sim:9.1f} {sim / wall:12.1f} {j['engine_steps'] / wall:11.0f} "
      f"{j['kernels_launched'] / wall:13.3e} {rss:9.0f}")
PY
done
