#!/usr/bin/env bash
# Runs the whole test suite (GoogleTest units, multi-rank MPI tests, end-to-end tests) except the tests
# labelled `gpu`, which need a GPU (run those with: ctest --test-dir build -L '^gpu$').
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ctest --test-dir "$root/build" --output-on-failure -LE '^gpu$' -j "$(nproc)" "$@"
