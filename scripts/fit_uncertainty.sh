#!/usr/bin/env bash
# The kernel model's uncertainty, per tier and kernel class, from its errors on kernels left out
# of its fit; writes data/calibration/uncertainty.yaml (what `run --intervals` samples) and
# docs/validation-intervals.md (how often the bands hold measurements of a GPU left out of them).
#   cross-gen  every generation predicted by a model fitted without it (scripts/lib/generations.sh)
#   target     AIConfigurator's GPUs x engines calibrated on 2/3 of the shape families, scored on the
#              third (fold 0/3, as scripts/validate_kernels.sh); A100 calibrated on two Vidur models,
#              scored on the six others
#   roofline   the roofline on every row above
# No choice here is tuned on the reported coverage: the probabilities, the equal weight of every
# GPU x engine sweep and the independent draw per class were fixed before the first run.
#   ./scripts/fit_uncertainty.sh            (about 15 minutes on 2 cores)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
ks_build kernelsight >/dev/null
B="$KS_BUILD/app/kernelsight"
S="$KS_ROOT/data/sweeps"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/rows"

source "$KS_ROOT/scripts/lib/generations.sh"
for gen in "${GENERATIONS[@]}"; do
  for item in ${SWEEPS[$gen]}; do
    IFS=: read -r fw gpu file <<<"$item"
    fwopt=(); [ "$fw" != "-" ] && fwopt=(--framework "$fw")
    cal="$WORK/cg_${gen}_${fw}.yaml"
    [ -f "$cal" ] || "$B" calibrate --cross-gen --leave-out "${GPUS[$gen]}" "${fwopt[@]}" -o "$cal" >/dev/null 2>&1
    "$B" validate --gpu "$gpu" --tier cross-gen --calibration "$cal" --sweep "$file" \
      --rows-out "$WORK/rows/cross-gen.$gen.$fw.$gpu.csv" >/dev/null 2>&1
    echo "cross-gen $gen $fw $gpu" >&2
  done
done

A="$S/aiconfigurator"
for item in ampere:a100_sxm_80gb:a100_sxm ada:l40s:l40s hopper:h100_sxm:h100_sxm hopper:h200:h200_sxm blackwell:b200:b200_sxm; do
  IFS=: read -r gen gpu sys <<<"$item"
  for e in trtllm vllm sglang; do
    "$B" calibrate --gpu "$gpu" --framework "$e" --sweep "$A/$sys.$e.csv" --holdout-fold 0/3 -o "$WORK/t.yaml" >/dev/null 2>&1
    "$B" validate --gpu "$gpu" --tier target --calibration "$WORK/t.yaml" --sweep "$A/$sys.$e.csv" --fold 0/3 \
      --rows-out "$WORK/rows/target.$gen.$e.$gpu.csv" >/dev/null 2>&1
    echo "target $gen $e $gpu" >&2
  done
done
"$B" calibrate --gpu a100_sxm_80gb --sweep "$S/a100_sxm_80gb.vidur.csv" --models llama-2-7b-hf,llama-2-70b-hf \
  -o "$WORK/a100.yaml" >/dev/null 2>&1
"$B" validate --gpu a100_sxm_80gb --tier target --calibration "$WORK/a100.yaml" --sweep "$S/a100_sxm_80gb.vidur.csv" \
  --exclude-models llama-2-7b-hf,llama-2-70b-hf --rows-out "$WORK/rows/target.ampere.-.a100_sxm_80gb.csv" >/dev/null 2>&1

python3 "$KS_ROOT/scripts/fit_uncertainty.py" "$WORK/rows" "$KS_ROOT/data/calibration/uncertainty.yaml" \
  "$KS_ROOT/docs/validation-intervals.md"
