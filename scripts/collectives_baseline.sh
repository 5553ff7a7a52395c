#!/usr/bin/env bash
# Predictions of another kernelsight build (e.g. the release before a model change) for the NCCL
# rows of data/collectives/aiconfigurator.csv, as `validate-collectives --baseline` reads them:
#   scripts/collectives_baseline.sh /path/to/old/kernelsight > baseline.csv
# Setups map to that build's presets (h200_hgx to dgx_h100: the same NVLink 4 / NVSwitch; l40s_pcie
# has no preset there and is skipped).
set -euo pipefail
bin=${1:?usage: $0 KERNELSIGHT_BINARY}
cd "$(dirname "$0")/.."
echo "setup,collective,num_workers,size_bytes,predicted_us"
grep '^aic-nccl' data/collectives/aiconfigurator.csv | while IFS=, read -r source setup gpu coll n per_node groups bytes time; do
  case $setup in
    a100_dgx) preset=dgx_a100 ;;
    h100_dgx | h200_hgx) preset=dgx_h100 ;;
    b200_hgx) preset=hgx_b200 ;;
    *) continue ;;
  esac
  t=$("$bin" collective --topology "$preset" --kind "$coll" --gpus "$n" --bytes "$bytes" |
      awk '/^predicted time:/ {print $3}')
  echo "$setup,$coll,$n,$bytes,$t"
done
