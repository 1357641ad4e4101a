#!/usr/bin/env bash
# Builds the file readers' and writers' libFuzzer targets (fuzz/: the RTG, cluster-description, map-file
# and run-profile readers and the sbatch script writer, with AddressSanitizer and UBSan) through the CMake
# option DISPAR_FUZZ=ON in a build directory of its own, and runs each for SECONDS (default 60) on a seed
# corpus: fuzz/seeds/, the cluster, map and profile files under examples/ and tests/, and RTGs disparcc
# writes for the examples when a disparcc is at hand.
# Exits non-zero on a crash, leaving the input in <build>/fuzz/findings/TARGET/. Not part of
# scripts/test.sh; .ci/run runs it for 30 s per target with DISPAR_FUZZ_SEED=1. Needs clang-19 and
# libclang-rt-19-dev (scripts/setup.sh --tests installs both).
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   TARGET: rtg_fuzzer, cluster_fuzzer, map_fuzzer, profile_fuzzer, sbatch_fuzzer
# Environment: DISPAR_FUZZ_BUILD (build directory, default build-fuzz), DISPARCC (default
# build/bin/disparcc if it exists), DISPAR_FUZZ_SEED (libFuzzer's -seed: with it, and a fresh build
# directory, a run repeats a prefix of any longer run with the same seed; CI uses it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(rtg_fuzzer cluster_fuzzer map_fuzzer profile_fuzzer sbatch_fuzzer)
build=${DISPAR_FUZZ_BUILD:-$root/build-fuzz}
disparcc=${DISPARCC:-$root/build/bin/disparcc}

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[ -f "$build/CMakeCache.txt" ] && generator=()
mkdir -p "$build"
cmake -S "$root" -B "$build" "${generator[@]}" -DDISPAR_FUZZ=ON >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" --target dispar_fuzzers
bin=$build/fuzz/bin

# Seeds: committed ones, then what examples/ and tests/ hold, then fresh RTGs of the examples.
seeds=$build/fuzz/seeds
rm -rf "$seeds"
mkdir -p "$seeds/rtg_fuzzer" "$seeds/cluster_fuzzer" "$seeds/map_fuzzer" "$seeds/profile_fuzzer" "$seeds/sbatch_fuzzer"
cp "$root"/fuzz/seeds/rtg/* "$seeds/rtg_fuzzer/"
cp "$root"/fuzz/seeds/cluster/* "$seeds/cluster_fuzzer/" 2>/dev/null || true
cp "$root"/fuzz/seeds/map/* "$seeds/map_fuzzer/"
cp "$root"/fuzz/seeds/profile/* "$seeds/profile_fuzzer/"
cp "$root"/fuzz/seeds/sbatch/* "$seeds/sbatch_fuzzer/"
copy_found() {  # copy_found DIR FIND-ARGS...: files under examples/ and tests/, named by their path
  local dir=$1
  shift
  (cd "$root" && find examples tests "$@" -type f) | while read -r f; do cp "$root/$f" "$dir/${f//\//_}"; done
}
copy_found "$seeds/rtg_fuzzer" -name '*.rtg.json'
copy_found "$seeds/map_fuzzer" -name '*.map.json'
(cd "$root" && grep -rl --include='*.json' '"dispar-cluster"' examples tests || true) |
  while read -r f; do cp "$root/$f" "$seeds/cluster_fuzzer/${f//\//_}"; done
(cd "$root" && grep -rl --include='*.json' '"dispar-profile"' examples tests || true) |
  while read -r f; do cp "$root/$f" "$seeds/profile_fuzzer/${f//\//_}"; done
if [ -x "$disparcc" ]; then
  tmp=$(mktemp -d)
  for dsp in "$root"/examples/*/*.dsp; do
    name=$(basename "$dsp" .dsp)
    "$disparcc" "$dsp" -o "$tmp/$name" -lfftw3 -lopenblas >/dev/null 2>&1 &&
      cp "$tmp/$name.rtg.json" "$seeds/rtg_fuzzer/generated_$name.rtg.json" || true
  done
  rm -rf "$tmp"
fi

seed=()
[ -n "${DISPAR_FUZZ_SEED:-}" ] && seed=(-seed="$DISPAR_FUZZ_SEED")
status=0
for t in "${targets[@]}"; do
  corpus=$build/fuzz/corpus/$t
  findings=$build/fuzz/findings/$t
  log=$build/fuzz/$t.log
  mkdir -p "$corpus" "$findings"
  echo "fuzz: $t for ${seconds}s ($(ls "$seeds/$t" | wc -l) seeds, corpus $corpus)"
  if "$bin/$t" "${seed[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -dict="$root/fuzz/json.dict" \
      -artifact_prefix="$findings/" -print_final_stats=1 "$corpus" "$seeds/$t" >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$log" | sed 's/^/  /'
  else
    status=1
    echo "fuzz: $t FAILED; input in $findings/, log $log:" >&2
    grep -A30 -E 'ERROR: |runtime error|deadly signal|==ERROR' "$log" | head -60 >&2
  fi
done
exit $status
