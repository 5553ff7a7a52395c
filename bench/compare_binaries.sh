#!/usr/bin/env bash
# CPU time of several kernelsight binaries on one bench case, run in turn so that load on the
# machine falls on all of them alike: the median, minimum and lower quartile task-clock (perf
# stat) of ROUNDS runs each. KS_PIN_CPU=N pins every run to core N (taskset).
#   bench/compare_binaries.sh CASE ROUNDS BINARY[=DATA_DIR] BINARY[=DATA_DIR] ...
# DATA_DIR (KERNELSIGHT_DATA_DIR) lets an older binary read its own calibrations.
#   bench/compare_binaries.sh 0 15 /tmp/old/build/app/kernelsight=/tmp/old/data build/app/kernelsight
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,6p' "$0" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case_no="$1" rounds="$2"
shift 2
scenario="$(ls "$root"/bench/scenarios/case"$case_no"_*.yaml 2>/dev/null | head -1)"
[ -n "$scenario" ] || { echo "no scenario for case $case_no in bench/scenarios/" >&2; exit 2; }
command -v perf >/dev/null || { echo "needs perf (Debian: linux-perf)" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for _ in $(seq "$rounds"); do
  for spec in "$@"; do
    bin="${spec%%=*}"
    data=""
    [ "$spec" != "$bin" ] && data="${spec#*=}"
    # perf's CSV on stderr; the run's own stderr goes to a file so that a failure can be shown.
    if ! env LC_ALL=C ${data:+KERNELSIGHT_DATA_DIR="$data"} ${KS_PIN_CPU:+taskset -c "$KS_PIN_CPU"} perf stat -x, -o "$out/perf" -e task-clock \
      "$bin" run "$scenario" -q --out "$out/o" >/dev/null 2>"$out/err"; then
      echo "$bin failed on $scenario:" >&2
      cat "$out/err" >&2
      exit 1
    fi
    ms="$(grep task-clock "$out/perf" | cut -d, -f1 || true)"
    [ -n "$ms" ] || { echo "perf stat gave no task-clock for $bin" >&2; exit 1; }
    echo "$bin $ms"
  done
done | python3 -c "
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in sys.stdin:
    binary, ms = line.rsplit(None, 1)
    runs[binary].append(float(ms))
for binary, v in runs.items():
    v.sort()
    # The minimum and lower quartile are the steadier figures on a machine whose load drifts.
    print(f'case $case_no  {statistics.median(v):10.1f} ms median of {len(v)}  min {v[0]:.1f}  q1 {v[(len(v) - 1) // 4]:.1f}  {binary}')
"
