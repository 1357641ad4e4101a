#!/bin/bash
# Cost prediction from code features, measured (bench/prediction/README.md): every program of a corpus
# (the examples, the StreamIt ports, the external CUDA corpus, bench/profile's known work) is built
# host-only, run once with profiling, one rank per instance, and recorded in a fresh performance history;
# then bench_prediction predicts each VNODE's cost from all the others (leave-one-out k-nearest
# neighbours on the RTG's code features) against its measured cost, beside the corpus median's error.
# Then the error that matters (issue 38): each program is built for SimGrid and simulated on heterogeneous
# clusters twice, mapped from its measured costs and from the costs predicted for it (the history without
# its own runs), and the makespans compared; for programs with replicated readers, once more with
# their pipes dealt on demand.
# Usage: bench/prediction/run.sh [BUILD_DIR] [--no-makespan]   (default: build)
set -euo pipefail
makespan=1
args=()
for arg in "$@"; do [[ $arg == --no-makespan ]] && makespan=0 || args+=("$arg"); done
set -- "${args[@]}"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/../common.sh"

db=$work/history.db
corpus=("$root"/examples/*/*.dsp "$root"/tests/external/*.dsp "$root/bench/profile/known_work.dsp")
recorded=0
programs=()  # DIR/NAME of each recorded program
for i in "${!corpus[@]}"; do
  dsp=${corpus[$i]}
  name=$(basename "$dsp" .dsp)
  mkdir "$i" && cd "$i"
  cp "$dsp" "$name.dsp"
  # The host libraries a program calls are linked by name, as its README says (-lfftw3 -lopenblas).
  libraries=()
  grep -q 'fftw_' "$name.dsp" && libraries+=(-lfftw3)
  grep -q 'fftwf_' "$name.dsp" && libraries+=(-lfftw3f)
  grep -q 'cblas_' "$name.dsp" && libraries+=(-lopenblas)
  if ! DISPAR_CUDA_PATH=/nonexistent "$build/bin/disparcc" "$name.dsp" -o "$name" "${libraries[@]}" >build.log 2>&1; then
    echo "bench_prediction: $name does not build host-only; left out" >&2
    cd .. && continue
  fi
  ranks=$(python3 -c "import json; print(len(json.load(open('$name.rtg.json'))['vertices']))")
  if ! DISPAR_PROFILE=$name.profile.json timeout 300 "$mpiexec" -launcher fork -n "$ranks" "./$name" >run.log 2>&1; then
    echo "bench_prediction: $name failed to run; left out" >&2
    cd .. && continue
  fi
  "$build/bin/streammap" profile add "$name.profile.json" --db "$db" >/dev/null 2>&1
  recorded=$((recorded + 1))
  programs+=("$i/$name")
  cd ..
done
echo "recorded $recorded of ${#corpus[@]} programs"
"$build/bin/bench_prediction" "$db" cpu

[[ $makespan == 1 ]] || exit 0

# Makespans (issue 38: prediction judged by the run it gives). Per program and cluster, the median of 3
# simulated runs of each mapping, the two interleaved (simulations are timed on this machine's CPU).
# simulate ARGS...: the makespan of one `streammap simulate ARGS ./NAME.smpi`, empty when it failed (a
# simulation of many polling ranks can take minutes: one beyond 60 s leaves the program out)
simulate() {
  timeout 60 "$build/bin/streammap" simulate "$@" "./$name.smpi" 2>/dev/null |
    sed -n 's/^simulated makespan: \([0-9.e+-]*\) s$/\1/p' || true
}
simulated() {  # simulated DB CLUSTER: the makespan of one simulated run, mapped from DB's history
  simulate --cluster "$2" --history "$1"
}
# simulated_on_demand DB CLUSTER: as simulated, with every pipe that may be dealt on demand (the RTG's
# "may_deal_on_demand" edges: replicated readers, no split clause) dealt on demand, as split(demand) would
# deal them, where the mapping would deal them so only when it put the replicas 1.5x apart.
simulated_on_demand() {
  "$build/bin/streammap" map "$name.smpi.rtg.json" --cluster "$2" --history "$1" --rank-per-instance \
    -o on_demand.machinefile >/dev/null 2>&1 || return 0
  python3 - "$name.smpi.rtg.json" on_demand.map.json <<'PY'
import json, sys
rtg, path = json.load(open(sys.argv[1])), sys.argv[2]
mapping = json.load(open(path))
mapping["demand_pipes"] = sorted({e["pipe"] for e in rtg["edges"] if e.get("may_deal_on_demand")})
json.dump(mapping, open(path, "w"), indent=1)
PY
  simulate --cluster "$2" --mapping on_demand.map.json
}
median3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
# compare SIMULATED LABEL CLUSTER: the median of 3 runs of SIMULATED (simulated or simulated_on_demand)
# with the measured history and 3 with the predicted one, interleaved; prints their row and sets `ratio`
# (predicted / measured), empty when a run did not simulate.
compare() {
  local simulated=$1 label=$2 cluster=$3 m p
  local -a measured=() predicted=()
  ratio=
  for _ in 1 2 3; do
    m=$("$simulated" "$db" "$cluster")
    p=$("$simulated" predicted.db "$cluster")
    if [[ -z $m || -z $p ]]; then
      echo "bench_prediction: $label did not simulate on $(basename "$cluster") within 60 s; left out" >&2
      return 0
    fi
    measured+=("$m") predicted+=("$p")
  done
  m=$(median3 "${measured[@]}") p=$(median3 "${predicted[@]}")
  ratio=$(python3 -c "print('%.3f' % ($p / $m))")
  printf '%-22s %-12s %12.6g %12.6g %7s\n' "$label" "$(basename "$cluster" .json)" "$m" "$p" "$ratio"
}
clusters=("$here/hetero4.json" "$here/fastslow2.json")
echo
echo "makespan, mapped from predicted costs / from measured costs (median of 3 simulated runs each):"
printf '%-22s %-12s %12s %12s %7s\n' program cluster measured predicted ratio
ratios=() demand_ratios=()
for entry in "${programs[@]}"; do
  dir=${entry%/*} name=${entry#*/}
  cd "$dir"
  libraries=()
  grep -q 'fftw_' "$name.dsp" && libraries+=(-lfftw3)
  grep -q 'fftwf_' "$name.dsp" && libraries+=(-lfftw3f)
  grep -q 'cblas_' "$name.dsp" && libraries+=(-lopenblas)
  if ! "$build/bin/disparcc" --target smpi "$name.dsp" -o "$name.smpi" "${libraries[@]}" >smpi.log 2>&1; then
    echo "bench_prediction: $name does not build for SMPI; left out of the makespans" >&2
    cd .. && continue
  fi
  program=$(python3 -c "import json; print(json.load(open('$name.rtg.json'))['program'])")
  cp "$db" predicted.db
  "$build/bin/streammap" profile remove --program "$program" --db predicted.db >/dev/null
  for cluster in "${clusters[@]}"; do
    compare simulated "$name" "$cluster"
    [[ -n $ratio ]] || continue
    ratios+=("$ratio")
    # Replicated readers: the same pair with every such pipe dealt on demand.
    grep -q '"may_deal_on_demand": true' "$name.smpi.rtg.json" || continue
    compare simulated_on_demand "$name (demand)" "$cluster"
    if [[ -n $ratio ]]; then demand_ratios+=("$ratio"); fi
  done
  cd ..
done
python3 - "${#ratios[@]}" "${ratios[@]}" "${demand_ratios[@]}" <<'PY'
import statistics, sys
count = int(sys.argv[1])
r = sorted(float(x) for x in sys.argv[2:2 + count])
d = sorted(float(x) for x in sys.argv[2 + count:])
if not r:
    sys.exit("bench_prediction: no program simulated")
print("median makespan predicted / measured over %d program-cluster pairs: %.3f (target <= 1.25); "
      "worst %.3f; within 1.1: %d" % (len(r), statistics.median(r), r[-1], sum(x <= 1.1 for x in r)))
if d:
    print("with the replicated readers' pipes dealt on demand, over %d pairs: median %.3f (target <= 1.1); "
          "worst %.3f; within 1.1: %d" % (len(d), statistics.median(d), d[-1], sum(x <= 1.1 for x in d)))
else:
    print("with the replicated readers' pipes dealt on demand: no program of the corpus has such a pipe")
PY
