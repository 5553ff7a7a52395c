#!/usr/bin/env bash
# Sets everything up (Debian packages, build) and runs the whole test suite with ctest.
# Extra arguments go to ctest, e.g. ./scripts/test.sh -R Scheduler
#   --sanitize   the same suite built with ASan + UBSan into build-asan/ (-O1, no benchmarks);
#                .ci/run runs it after the normal suite. Why the ASan options: docs/reliability.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

if [ "${1:-}" = "--sanitize" ]; then
  shift
  KS_BUILD="${KS_ASAN_BUILD:-$KS_ROOT/build-asan}"
  KS_CMAKE_ARGS=(-DKS_SANITIZE=ON -DKS_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g")
  # SystemC threads run on QuickThreads stacks that ASan does not know: no fake stacks for
  # use-after-return, and no "stack type" warning when a coroutine switches stacks.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_stack_use_after_return=0:detect_leaks=0:abort_on_error=0:halt_on_error=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
fi

ks_install_packages
ks_build

cd "$KS_BUILD"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 600 "$@"
