#!/usr/bin/env bash
# Regenerates the shipped kernel-model calibrations (data/calibration/) from the shipped sweeps
# (data/sweeps/). Deterministic: the same sweeps give byte-identical files.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
ks_install_packages
ks_build kernelsight >/dev/null
K="$KS_BUILD/app/kernelsight"
D="$KS_ROOT/data"
mkdir -p "$D/calibration"

"$K" calibrate --cross-gen -o "$D/calibration/cross_gen.yaml"
for gpu in a100_sxm_80gb a40 b200 mi355x; do
  "$K" calibrate --cross-gen --gpu "$gpu" -o "$D/calibration/cross_gen_without_$gpu.yaml"
done
"$K" calibrate --gpu a100_sxm_80gb --sweep "$D/sweeps/a100_sxm_80gb.vidur.csv" -o "$D/calibration/target_a100_sxm_80gb.yaml"
"$K" calibrate --gpu a40 --sweep "$D/sweeps/a40.vidur.csv" -o "$D/calibration/target_a40.yaml"
