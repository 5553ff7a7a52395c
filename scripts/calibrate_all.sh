#!/usr/bin/env bash
# Regenerates the shipped kernel-model calibrations (data/calibration/) from the shipped sweeps
# (data/sweeps/, AIConfigurator's tables under data/sweeps/aiconfigurator/). Deterministic: the
# same sweeps give byte-identical files with the same build (another compiler or flags moves the
# fitted numbers in about the eighth digit). About 50 min of CPU (50 min user, 51 min wall on 2 cores
# shared with other jobs, 2026-11-28).
#   cross_gen[.<engine>].yaml                    every GPU's sweeps
#   cross_gen_without_<generation>[.<engine>].yaml  every GPU of that generation left out: what a GPU of
#                                                that generation gets in the cross-gen tier
#   target_<gpu>[.<engine>].yaml                 the target tier: fitted on the GPU's own sweep (and, for an
#                                                engine whose MoE layers were measured on it, its
#                                                expert-GEMM correction: data/moe/aiconfigurator/)
# <engine> (trtllm, vllm, sglang): attention and GEMM classes fitted on that engine's kernels
# (AIConfigurator's tables); the engine profile of a scenario picks its engine's files.
#   <file>.attention-<backend>.yaml              the attention classes of one attention backend (fa2,
#                                                fa3, fa4, flashinfer, trtllm, triton) alone, beside
#                                                an engine file whose rows pool several backends
#                                                (hardware.gpu.attention_backend picks it)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
ks_install_packages
ks_build kernelsight >/dev/null
K="$KS_BUILD/app/kernelsight"
D="$KS_ROOT/data"
C="$D/calibration"
A="$D/sweeps/aiconfigurator"
mkdir -p "$C"
rm -f "$C"/cross_gen*.yaml "$C"/target_*.yaml

ENGINES=(trtllm vllm sglang)
BACKENDS=(fa2 fa3 fa4 flashinfer trtllm triton)
declare -A GENERATION=([ampere]="a100_sxm_80gb,a40" [ada]="l40s" [hopper]="h100_sxm,h200" [blackwell]="b200" [cdna4]="mi355x")

"$K" calibrate --cross-gen -o "$C/cross_gen.yaml"
for e in "${ENGINES[@]}"; do "$K" calibrate --cross-gen --framework "$e" -o "$C/cross_gen.$e.yaml"; done
for gen in ampere ada hopper blackwell cdna4; do
  "$K" calibrate --cross-gen --leave-out "${GENERATION[$gen]}" -o "$C/cross_gen_without_$gen.yaml"
  [ "$gen" = cdna4 ] && continue
  for e in "${ENGINES[@]}"; do
    "$K" calibrate --cross-gen --leave-out "${GENERATION[$gen]}" --framework "$e" -o "$C/cross_gen_without_$gen.$e.yaml"
  done
done
# Per attention backend (cross-gen: parametric, a second or two each, from the engine's fit on the
# same GPUs): where the engine's rows that stay in have the backend.
for e in "${ENGINES[@]}"; do
  for b in "${BACKENDS[@]}"; do
    "$K" calibrate --cross-gen --framework "$e" --attention-backend "$b" -o "$C/cross_gen.$e.attention-$b.yaml" 2>/dev/null || true
    for gen in ampere ada hopper blackwell; do
      "$K" calibrate --cross-gen --leave-out "${GENERATION[$gen]}" --framework "$e" --attention-backend "$b" \
        -o "$C/cross_gen_without_$gen.$e.attention-$b.yaml" 2>/dev/null || true
    done
  done
done

"$K" calibrate --gpu a100_sxm_80gb --sweep "$D/sweeps/a100_sxm_80gb.vidur.csv" -o "$C/target_a100_sxm_80gb.yaml"
"$K" calibrate --gpu a40 --sweep "$D/sweeps/a40.vidur.csv" -o "$C/target_a40.yaml"
# catalogue name : AIConfigurator's system name
for pair in h100_sxm:h100_sxm h200:h200_sxm b200:b200_sxm l40s:l40s; do
  gpu="${pair%%:*}" sys="${pair##*:}"
  # Our own table of the GPU's elementwise kernels (Sarathi-Serve's, as Vidur's A100/A40 rows),
  # where one was measured: the engine tables have none.
  own=(); [ -f "$D/sweeps/$gpu.sarathi-fp16.csv" ] && own=(--sweep "$D/sweeps/$gpu.sarathi-fp16.csv")
  for e in "${ENGINES[@]}"; do
    # The GPU's whole MoE layers under the engine (AIConfigurator's moe_perf), where measured: the
    # expert-GEMM correction (kernels/moe_fit.hpp), kept where it cross-validates.
    moe=(); [ -f "$D/moe/aiconfigurator/$sys.$e.csv" ] && moe=(--moe "$D/moe/aiconfigurator/$sys.$e.csv")
    "$K" calibrate --gpu "$gpu" --framework "$e" --sweep "$A/$sys.$e.csv" "${own[@]}" "${moe[@]}" -o "$C/target_$gpu.$e.yaml"
    # A table that measured one attention kernel source needs no backend file (the engine file
    # records its backend); one that measured several gets a file per backend.
    sources=$(awk -F, 'NR > 1 && $5 ~ /^attention/ { print $21 }' "$A/$sys.$e.csv" | sort -u | wc -l)
    [ "$sources" -gt 1 ] || continue
    for b in "${BACKENDS[@]}"; do
      "$K" calibrate --gpu "$gpu" --framework "$e" --attention-backend "$b" --sweep "$A/$sys.$e.csv" \
        -o "$C/target_$gpu.$e.attention-$b.yaml" 2>/dev/null || true
    done
  done
done
