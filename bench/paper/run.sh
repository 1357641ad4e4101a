#!/bin/bash
# The paper's evaluation on simulated clusters (bench/paper/README.md, docs/simulation.md):
#   Fig. 6: source lines of the three FIR versions (sloc.sh);
#   Fig. 7: simulated run time of the three on paper4 and mixed8, with the ratios:
#     DISPAR          examples/fir/fir.dsp, mapped by streammap (refine), simulated by streammap simulate;
#     hand-optimised  examples/fir/handwritten/fir_mpi_cuda.cu with the machinefile worked out by hand;
#     arbitrary       the same program with what a user without a mapping tool writes: every node once,
#                     in the description's order (mpiexec's round-robin over the hosts);
#   and DISPAR's own program under mpiexec's placement (streammap simulate --algorithm round-robin);
#   twice: FIR as the example is written (32 taps, its sink checks every output on the CPU, so the CPU
#   ranks dominate) and GPU-bound as in the paper (256 taps, one output in 1024 checked).
# Each case is simulated 3 times and its median kept (compute is simulated from real, noisy timings).
# Usage: bench/paper/run.sh [BUILD_DIR] [FRAMES FRAME_SIZE]   (default: build, 64 65536)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
source "$here/../common.sh"
frames=${2:-64}
frame_size=${3:-65536}
handwritten="$src/examples/fir/handwritten"

echo "== Fig. 6: source lines (non-blank, non-comment)"
bash "$here/sloc.sh"
echo

cp "$src/examples/fir/fir.dsp" .

# simulate NAME ARGS...: the median simulated makespan of 3 runs into $NAME.makespan; the program's
# result line into $NAME.result.
simulate() {
  local name=$1
  shift
  for run in 1 2 3; do
    "$build/bin/streammap" simulate "$@" > "$name.$run.out" 2> "$name.$run.err" ||
      { echo "bench/paper: '$name' failed:"; cat "$name.$run.out" "$name.$run.err"; exit 1; }
    sed -n 's/^simulated makespan: \([0-9.e+-]*\) s$/\1/p' "$name.$run.out" >> "$name.times"
  done
  sort -g "$name.times" | sed -n 2p > "$name.makespan"
  grep -h '^frames=' "$name.1.out" > "$name.result"
}

# figure7 LABEL TAPS CHECK_EVERY: Fig. 7 for FIR built with -DFIR_TAPS=TAPS -DFIR_CHECK_EVERY=CHECK_EVERY,
# DISPAR's version and the baseline alike; the paper4 targets into targets.
figure7() {
  local label=$1 defines=(-DFIR_TAPS="$2" -DFIR_CHECK_EVERY="$3")
  "$build/bin/disparcc" --target smpi "${defines[@]}" fir.dsp -o fir.smpi >/dev/null
  smpicxx -std=c++17 -O2 -DFIR_SIMULATED_GPU "${defines[@]}" -I"$src/runtime/include" -x c++ \
    "$handwritten/fir_mpi_cuda.cu" -o fir_mpi_cuda.smpi 2>/dev/null
  echo "-- $label"
  printf '%-8s %12s %12s %12s %12s %10s %10s\n' cluster "DISPAR" "hand-opt" "arbitrary" "DISPAR-rr" \
    "D/hand" "arb/D"
  rm -f ./*.times figures
  for cluster in paper4 mixed8; do
    description="$src/examples/clusters/$cluster.json"
    # Every node once, in the description's order: the arbitrary machinefile.
    python3 -c "import json,sys; print('\n'.join(n['host'] for n in json.load(open(sys.argv[1]))['nodes']))" \
      "$description" > "$cluster-arbitrary.machinefile"
    simulate "$cluster-dispar" --cluster "$description" ./fir.smpi "$frames" "$frame_size"
    simulate "$cluster-dispar-rr" --cluster "$description" --algorithm round-robin ./fir.smpi "$frames" "$frame_size"
    simulate "$cluster-hand" --cluster "$description" --machinefile "$handwritten/$cluster.machinefile" -n 4 \
      ./fir_mpi_cuda.smpi "$frames" "$frame_size"
    simulate "$cluster-arbitrary" --cluster "$description" --machinefile "$cluster-arbitrary.machinefile" -n 4 \
      ./fir_mpi_cuda.smpi "$frames" "$frame_size"
    # The four must compute the same thing.
    for other in dispar-rr hand arbitrary; do
      if ! cmp -s "$cluster-dispar.result" "$cluster-$other.result"; then
        echo "bench/paper: $cluster: $other printed '$(cat "$cluster-$other.result")', DISPAR '$(cat "$cluster-dispar.result")'"
        exit 1
      fi
    done
    read -r dispar < "$cluster-dispar.makespan"
    read -r hand < "$cluster-hand.makespan"
    read -r arbitrary < "$cluster-arbitrary.makespan"
    read -r dispar_rr < "$cluster-dispar-rr.makespan"
    python3 - "$cluster" "$dispar" "$hand" "$arbitrary" "$dispar_rr" <<'PY'
import sys
cluster, dispar, hand, arbitrary, rr = sys.argv[1], *map(float, sys.argv[2:])
print("%-8s %11.4fs %11.4fs %11.4fs %11.4fs %9.3fx %9.3fx" % (cluster, dispar, hand, arbitrary, rr, dispar / hand,
                                                             arbitrary / dispar))
PY
    echo "$cluster $dispar $hand $arbitrary" >> figures
  done
  echo "(every version printed: $(cat paper4-dispar.result) on paper4)"
  python3 - "$label" <<'PY' | tee -a targets
import sys
rows = {line.split()[0]: list(map(float, line.split()[1:])) for line in open("figures")}
dispar, hand, arbitrary = rows["paper4"]
print("%s, paper4: DISPAR <= 1.05x hand-optimised: %.3fx %s; arbitrary >= 1.5x DISPAR: %.3fx %s"
      % (sys.argv[1], dispar / hand, "PASS" if dispar / hand <= 1.05 else "FAIL",
         arbitrary / dispar, "PASS" if arbitrary / dispar >= 1.5 else "FAIL"))
PY
  echo
}

echo "== Fig. 7: simulated run time of FIR, $frames frames of $frame_size samples (median of 3)"
figure7 "the example as written (32 taps, every output checked)" 32 1
figure7 "GPU-bound (256 taps, one output in 1024 checked)" 256 1024
echo "targets:"
cat targets
