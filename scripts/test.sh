#!/usr/bin/env bash
# Sets everything up (Debian packages, build) and runs the whole test suite with ctest.
# Extra arguments go to ctest, e.g. ./scripts/test.sh -R Scheduler
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

ks_install_packages
ks_build

cd "$KS_BUILD"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 600 "$@"
