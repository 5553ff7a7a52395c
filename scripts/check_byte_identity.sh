#!/usr/bin/env bash
# Byte-identity check of two kernelsight binaries: runs the same cases with both and compares
# summary.json, requests.csv and kernels.csv byte for byte. For refactorings that must not change
# any output (issue 18).
#   scripts/check_byte_identity.sh REF_BINARY NEW_BINARY [--long]
# Cases: every scenarios/*.yaml short (30 requests, as ctest runs them) with and without --exact,
# the full quickstart (also --exact), and bench cases 0 and 1; --long adds bench cases 2 and 3 and
# every scenario at full length. Outputs are kept per binary (keyed by its sha256) under
# ${KS_BYTE_CACHE:-/tmp/ks-byte-identity}, so the reference runs once. Exit 1 on any difference.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
ref="$(realpath "$1")"
new="$(realpath "$2")"
long=0
[ "${3:-}" = "--long" ] && long=1
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${KS_BYTE_CACHE:-/tmp/ks-byte-identity}"
jobs="${KS_JOBS:-2}"

# One case per line: name|arguments after `run`.
cases=()
for f in "$root"/scenarios/*.yaml; do
  n="$(basename "$f" .yaml)"
  cases+=("short_$n|$f --set workload.num_requests=30")
  cases+=("short_exact_$n|$f --set workload.num_requests=30 --exact")
  [ $long = 1 ] && cases+=("full_$n|$f")
done
cases+=("full_quickstart|$root/scenarios/quickstart.yaml")
cases+=("full_exact_quickstart|$root/scenarios/quickstart.yaml --exact")
cases+=("bench0|$(ls "$root"/bench/scenarios/case0_*.yaml)")
cases+=("bench1|$(ls "$root"/bench/scenarios/case1_*.yaml)")
cases+=("bench0_exact|$(ls "$root"/bench/scenarios/case0_*.yaml) --exact")
if [ $long = 1 ]; then
  cases+=("bench2|$(ls "$root"/bench/scenarios/case2_*.yaml)")
  cases+=("bench3|$(ls "$root"/bench/scenarios/case3_*.yaml)")
fi

# run_all BINARY: every case's outputs under cache/<sha>/<case>/ (skipped when already there).
run_all() {
  local bin="$1" dir
  dir="$cache/$(sha256sum "$bin" | cut -c1-16)"
  mkdir -p "$dir"
  for c in "${cases[@]}"; do
    local name="${c%%|*}" args="${c#*|}"
    [ -f "$dir/$name/.done" ] && continue
    printf '%s\0%s\0%s\0' "$bin" "$dir/$name" "$args"
  done | xargs -0 -r -n3 -P "$jobs" bash -c '
    rm -rf "$1"; mkdir -p "$1"
    # shellcheck disable=SC2086
    if "$0" run $2 -q --out "$1" >"$1/.log" 2>&1; then touch "$1/.done"; else echo "FAILED: $0 run $2 (see $1/.log)" >&2; fi'
  echo "$dir"
}

ref_dir="$(run_all "$ref")"
new_dir="$(run_all "$new")"
status=0
for c in "${cases[@]}"; do
  name="${c%%|*}"
  if [ ! -f "$ref_dir/$name/.done" ] || [ ! -f "$new_dir/$name/.done" ]; then
    echo "NOT RUN: $name"
    status=1
    continue
  fi
  for f in summary.json requests.csv kernels.csv; do
    a="$ref_dir/$name/$f" b="$new_dir/$name/$f"
    if ! cmp -s "$a" "$b"; then
      echo "DIFFERENT: $name/$f"
      status=1
    fi
  done
done
[ $status = 0 ] && echo "identical: ${#cases[@]} cases (summary.json, requests.csv, kernels.csv)"
exit $status
