#!/usr/bin/env bash
# Installs what the tests need and builds everything (scripts/setup.sh --tests), then runs the whole
# test suite (GoogleTest units, multi-rank MPI tests, end-to-end tests, the documentation's commands)
# except the tests labelled `gpu`, which need a GPU (run those with: ctest --test-dir build -L '^gpu$').
# Arguments go to ctest (e.g. -R Docs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" --tests
ctest --test-dir "$root/build" --output-on-failure -LE '^gpu$' -j "$(nproc)" "$@"
