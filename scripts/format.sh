#!/usr/bin/env bash
# Formats the project's own C++ with clang-format-19 and .clang-format, or with --check lists the files
# that are not formatted and exits 1. examples/ and test fixtures (.cu, .dsp, tests/install) are left as
# written: line numbers in them are asserted, and bench/paper counts the FIR example's lines.
# Usage: scripts/format.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
format=$(command -v clang-format-19 || true)
[ -n "$format" ] || { echo "format: clang-format-19 not found (scripts/setup.sh --tests installs it)" >&2; exit 2; }
mapfile -t files < <(git ls-files frontend runtime streammap streamcc dispar_lang tools bench fuzz tests |
  grep -E '\.(cpp|h|hpp|cc)$' | grep -v '^tests/install/')
if [ "${1:-}" = "--check" ]; then
  unformatted=()
  for f in "${files[@]}"; do
    "$format" --dry-run -Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
  done
  if [ ${#unformatted[@]} -gt 0 ]; then
    printf 'format: not formatted (run scripts/format.sh): %s\n' "${unformatted[@]}" >&2
    exit 1
  fi
  echo "format: checked ${#files[@]} files: all formatted"
else
  "$format" -i "${files[@]}"
fi
