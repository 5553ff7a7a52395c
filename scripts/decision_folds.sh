#!/usr/bin/env bash
# The decision protocol for target-tier modelling choices: folds 1 and 2 of the target protocol,
# whose fold 0 is the reported one (scripts/validate_kernels.sh). For every AIConfigurator GPU x
# engine table, the class's rows alone are calibrated without one fold's shape families and
# scored on them; fold 0 is calibrated too, for its inner cross-validation, and never scored.
#   ./scripts/decision_folds.sh CLASS OUT [KERNELSIGHT]
#     CLASS        gemm, attention_prefill or attention_decode
#     OUT          a new folder: rows/<gpu>.<engine>.<fold>.csv, the calibration files, their logs and
#                  validate's (with every shape family: --families)
#     KERNELSIGHT  the binary to judge (default: this tree's build)
# Then: python3 scripts/decision_folds.py summary OUT
#       python3 scripts/decision_folds.py compare OUT_BEFORE OUT_AFTER
#       python3 scripts/decision_folds.py families OUT
# About 10 minutes for an attention class, 20 for GEMM, on 2 cores (KS_JOBS parallel
# calibrations, default 2).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
if [ $# -lt 2 ]; then sed -n '2,15p' "$0" >&2; exit 2; fi
CLASS="$1" OUT="$2"
case "$CLASS" in gemm | attention_prefill | attention_decode) ;;
  *) echo "decision_folds.sh: CLASS must be gemm, attention_prefill or attention_decode, not '$CLASS'" >&2; exit 2 ;;
esac
if [ $# -ge 3 ]; then
  B="$(readlink -f "$3")"
  [ -x "$B" ] || { echo "decision_folds.sh: $3 is not an executable" >&2; exit 2; }
else
  ks_build kernelsight >/dev/null
  B="$KS_BUILD/app/kernelsight"
fi
[ -e "$OUT" ] && { echo "decision_folds.sh: $OUT exists; give a new folder" >&2; exit 2; }
mkdir -p "$OUT/rows" "$OUT/csv" "$OUT/cal"
# A copy: rebuilding the tree during the run must not swap the binary under it.
cp "$B" "$OUT/kernelsight"
B="$OUT/kernelsight"
A="$KS_ROOT/data/sweeps/aiconfigurator"

# The catalogue's GPU name : the tables' system name.
jobs=()
for pair in h100_sxm:h100_sxm h200:h200_sxm b200:b200_sxm l40s:l40s; do
  gpu="${pair%%:*}" sys="${pair##*:}"
  for e in trtllm vllm sglang; do
    awk -F, -v c="$CLASS" 'NR == 1 || $5 == c' "$A/$sys.$e.csv" >"$OUT/csv/$gpu.$e.csv"
    for f in 0 1 2; do jobs+=("$gpu $e $f"); done
  done
done

one() {
  local gpu=$1 e=$2 f=$3 out=$4 b=$5
  local name="$gpu.$e.$f"
  "$b" calibrate --gpu "$gpu" --framework "$e" --sweep "$out/csv/$gpu.$e.csv" --holdout-fold "$f/3" \
    -o "$out/cal/$name.yaml" >/dev/null 2>"$out/cal/$name.log" ||
    { echo "decision_folds.sh: calibrating $name failed (see $out/cal/$name.log)" >&2; return 1; }
  # Fold 0's held-out rows are the reported figure: not scored here.
  if [ "$f" != 0 ]; then
    "$b" validate --gpu "$gpu" --tier target --calibration "$out/cal/$name.yaml" --sweep "$out/csv/$gpu.$e.csv" \
      --fold "$f/3" --rows-out "$out/rows/$name.csv" --families 100000 >"$out/cal/$name.validate.log" 2>&1 ||
      { echo "decision_folds.sh: scoring $name failed (see $out/cal/$name.validate.log)" >&2; return 1; }
  fi
  echo "$name" >&2
}
export -f one
export KS_FOLDS_OUT="$OUT" KS_FOLDS_BIN="$B"
printf '%s\n' "${jobs[@]}" | xargs -P "${KS_JOBS:-2}" -L 1 bash -c 'one "$0" "$1" "$2" "$KS_FOLDS_OUT" "$KS_FOLDS_BIN"'
echo "$CLASS" >"$OUT/class"
python3 "$KS_ROOT/scripts/decision_folds.py" summary "$OUT"
