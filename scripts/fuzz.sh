#!/usr/bin/env bash
# Fuzzes every parser of user files with libFuzzer for a bounded time each:
#   ./scripts/fuzz.sh [seconds-per-target] [target...]     (default 60 s; targets: scenario trace
#                                                            calibration hf_config)
# Builds with Debian's clang into build-fuzz/ (the normal build stays g++), seeds each target
# from the repo's own data, and copies any crashing input to tests/fuzz/regressions/<target>/,
# where ctest (fuzz_replay_<target>) replays it forever after. Exit status 1 if one crashed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

SECONDS_PER_TARGET="${1:-60}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(scenario trace calibration hf_config)

KS_PACKAGES+=(clang-14 libclang-rt-14-dev)  # libFuzzer and the sanitizer runtimes for clang
ks_install_packages
KS_BUILD="${KS_FUZZ_BUILD:-$KS_ROOT/build-fuzz}"
cmake -S "$KS_ROOT" -B "$KS_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_COMPILER=clang++-14 -DKS_FUZZ=ON -DKS_BUILD_BENCH=OFF >/dev/null
cmake --build "$KS_BUILD" -j "$(nproc 2>/dev/null || echo 2)" $(printf -- '--target fuzz_%s ' "${TARGETS[@]}")

# Seeds: the repo's own inputs of each kind.
seeds() {
  case "$1" in
    scenario) echo "$KS_ROOT"/scenarios/*.yaml "$KS_ROOT"/data/gpus/*.yaml ;;
    trace) echo "$KS_ROOT"/data/traces/*.csv "$KS_ROOT"/data/traces/*.jsonl ;;
    calibration) echo "$KS_ROOT"/data/calibration/*.yaml "$KS_ROOT"/data/cpu_overheads/*.csv ;;
    hf_config) echo "$KS_ROOT"/data/models/*.json ;;
  esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
status=0
for t in "${TARGETS[@]}"; do
  work="$KS_BUILD/fuzz-work/$t"
  mkdir -p "$work/corpus" "$work/artifacts"
  for f in $(seeds "$t"); do head -c 65536 "$f" > "$work/corpus/seed_$(basename "$f")"; done
  ks_log "fuzzing $t for ${SECONDS_PER_TARGET}s"
  if ! "$KS_BUILD/tests/fuzz/fuzz_$t" "$work/corpus" -max_total_time="$SECONDS_PER_TARGET" -max_len=65536 \
      -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/" -print_final_stats=1 2>"$work/log.txt"; then
    status=1
    ks_log "fuzz_$t found a problem: $(grep -m1 -E 'ERROR|runtime error|deadly signal' "$work/log.txt" || true)"
  fi
  tail -n 12 "$work/log.txt" | grep -E "stat::number_of_executed_units|stat::peak_rss_mb" >&2 || true
  for a in "$work"/artifacts/*; do
    [ -e "$a" ] || continue
    cp "$a" "$KS_ROOT/tests/fuzz/regressions/$t/"
    ks_log "kept $(basename "$a") in tests/fuzz/regressions/$t/ (fix the bug, then commit it)"
  done
done
exit "$status"
