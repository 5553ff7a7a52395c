#!/usr/bin/env bash
# Measured vs predicted collectives: builds kernelsight, fits the NCCL model's parameters per source,
# setup and collective from data/collectives (checked by leaving sizes out and by leaving one system
# out) and writes docs/validation-collectives.md. The "previous model" column of the
# leave-one-system-out table comes from data/collectives/baseline/kernelsight-0cd9d45.csv
# (scripts/collectives_baseline.sh run with the build of commit 0cd9d45).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" --target kernelsight >/dev/null
build/app/kernelsight validate-collectives --data data/collectives/collectives.csv \
  --data data/collectives/aiconfigurator.csv --baseline data/collectives/baseline/kernelsight-0cd9d45.csv \
  --out docs/validation-collectives.md | sed -n '/^| left out | spec/,/^$/p;/## Summary/,/^| nccl/p'
echo "wrote docs/validation-collectives.md"
