#!/usr/bin/env bash
# Sets everything up (Debian packages, build) and simulates a scenario.
#   ./scripts/run.sh                                  the default scenario (scenarios/quickstart.yaml)
#   ./scripts/run.sh scenarios/x.yaml --set workload.rate=4/s --out /tmp/x
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

ks_install_packages
ks_build kernelsight >/dev/null

cd "$KS_ROOT"
if [ $# -eq 0 ] || [[ "$1" == -* ]]; then
  set -- scenarios/quickstart.yaml "$@"
fi
exec "$KS_BUILD/app/kernelsight" run "$@"
