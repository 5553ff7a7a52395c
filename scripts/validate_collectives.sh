#!/usr/bin/env bash
# Measured vs predicted collectives: builds kernelsight, fits link parameters per setup from
# data/collectives (checked by leaving data out) and writes docs/validation-collectives.md.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" --target kernelsight >/dev/null
build/app/kernelsight validate-collectives --data data/collectives/collectives.csv \
  --out docs/validation-collectives.md | sed -n '/## Summary/,/in-sample/p'
echo "wrote docs/validation-collectives.md"
