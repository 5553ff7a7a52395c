# The GPU generations of the shipped sweeps, for the leave-one-generation-out protocol
# (sourced by validate_transfer.sh and fit_uncertainty.sh; needs $S = data/sweeps).
# generation: the catalogue GPUs left out together | sweeps of that generation (engine:gpu:file)
declare -A GPUS=(
  [ampere]="a100_sxm_80gb,a40"
  [ada]="l40s"
  [hopper]="h100_sxm,h200"
  [blackwell]="b200"
  [cdna4]="mi355x"
)
declare -A SWEEPS=(
  [ampere]="trtllm:a100_sxm_80gb:$S/aiconfigurator/a100_sxm.trtllm.csv vllm:a100_sxm_80gb:$S/aiconfigurator/a100_sxm.vllm.csv sglang:a100_sxm_80gb:$S/aiconfigurator/a100_sxm.sglang.csv -:a100_sxm_80gb:$S/a100_sxm_80gb.vidur.csv -:a40:$S/a40.vidur.csv"
  [ada]="trtllm:l40s:$S/aiconfigurator/l40s.trtllm.csv vllm:l40s:$S/aiconfigurator/l40s.vllm.csv sglang:l40s:$S/aiconfigurator/l40s.sglang.csv"
  [hopper]="trtllm:h100_sxm:$S/aiconfigurator/h100_sxm.trtllm.csv vllm:h100_sxm:$S/aiconfigurator/h100_sxm.vllm.csv sglang:h100_sxm:$S/aiconfigurator/h100_sxm.sglang.csv trtllm:h200:$S/aiconfigurator/h200_sxm.trtllm.csv vllm:h200:$S/aiconfigurator/h200_sxm.vllm.csv sglang:h200:$S/aiconfigurator/h200_sxm.sglang.csv -:h200:$S/h200.sarathi-fp16.csv"
  [blackwell]="trtllm:b200:$S/aiconfigurator/b200_sxm.trtllm.csv vllm:b200:$S/aiconfigurator/b200_sxm.vllm.csv sglang:b200:$S/aiconfigurator/b200_sxm.sglang.csv -:b200:$S/xla_gemm.csv"
  [cdna4]="-:mi355x:$S/xla_gemm.csv"
)
# Whole MoE layers of that generation (engine:gpu:file; kernels/moe_layer.hpp): scored, never fitted.
M="$(dirname "$S")/moe/aiconfigurator"
declare -A MOE=(
  [ampere]="sglang:a100_sxm_80gb:$M/a100_sxm.sglang.csv"
  [ada]="trtllm:l40s:$M/l40s.trtllm.csv vllm:l40s:$M/l40s.vllm.csv sglang:l40s:$M/l40s.sglang.csv"
  [hopper]="trtllm:h100_sxm:$M/h100_sxm.trtllm.csv vllm:h100_sxm:$M/h100_sxm.vllm.csv sglang:h100_sxm:$M/h100_sxm.sglang.csv trtllm:h200:$M/h200_sxm.trtllm.csv vllm:h200:$M/h200_sxm.vllm.csv sglang:h200:$M/h200_sxm.sglang.csv"
  [blackwell]="vllm:b200:$M/b200_sxm.vllm.csv sglang:b200:$M/b200_sxm.sglang.csv"
  [cdna4]=""
)
GENERATIONS=(ampere ada hopper blackwell cdna4)
