#!/usr/bin/env bash
# Installs the built tree into a temporary prefix, builds examples/cosim against it with
# find_package(KernelSight) and runs it: an out-of-tree SystemC module bound to our GPU module.
set -euo pipefail
build_dir="$1"; source_dir="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
cmake -S "$source_dir/examples/cosim" -B "$tmp/cosim" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cosim" -j 2 >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/cosim/cosim"
