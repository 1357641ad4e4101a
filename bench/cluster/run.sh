#!/bin/bash
# The mapping claims measured for real (bench/cluster/README.md, issue 42): programs run on an emulated
# heterogeneous cluster of this machine (tests/cluster/emucluster.sh; hetero4.json: one node at a full
# core with a fast link, one at half a core, two at a quarter behind a slow link), mapped by refine, paper
# and round-robin (mpiexec's placement), each mapping run for real under Open MPI, the three interleaved,
# the median of ROUNDS runs kept. Costs are measured first: each program runs once on this machine with
# a profile recorded in a fresh performance history, which every mapping then uses. Printed per program:
# each mapping's measured time (the run profile's wall_s, launch excluded) beside the model's predicted
# period, and whether the predicted order of the three is the measured one.
# Usage: bench/cluster/run.sh [BUILD_DIR] [--quick]   (needs root; --quick: 3 rounds instead of 5)
set -euo pipefail
rounds=5
args=()
for arg in "$@"; do [[ $arg == --quick ]] && rounds=3 || args+=("$arg"); done
set -- "${args[@]}"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/../common.sh"
[ "$(id -u)" -eq 0 ] || { echo "bench_cluster: needs root (the emulated cluster's namespaces and cgroups)" >&2; exit 2; }
mpirun=$(grep -m1 '^DISPAR_OPENMPI_MPIRUN:' "$build/CMakeCache.txt" | cut -d= -f2)
[ -x "$mpirun" ] || { echo "bench_cluster: needs Open MPI (MPICH over UCX's TCP hangs at the end of runs of 3+ nodes, docs/cluster.md)" >&2; exit 2; }

emu=$root/tests/cluster/emucluster.sh
cp "$here/hetero4.json" cluster.json
state=$(bash "$emu" up cluster.json --owner $$ | sed -n 's/^DISPAR_EMUCLUSTER=//p')
[ -n "$state" ] || { echo "bench_cluster: the emulated cluster did not come up" >&2; exit 1; }
trap 'bash "$emu" down "$state"; rm -rf "$work"' EXIT
export DISPAR_EMUCLUSTER=$state OMPI_MCA_plm_rsh_agent=$root/tests/cluster/emucluster-rsh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# NAME|SOURCE|ARGUMENTS|disparcc flags|map flags
programs=(
  "fir|$root/examples/fir/fir.dsp|48 65536|-DFIR_TAPS=64 -DFIR_CHECK_EVERY=8|--allow-host-fallback"
  "pipeline|$here/pipeline.dsp|96 40||"
  "fanout|$root/examples/fanout/fanout.dsp|480 16384|-lfftw3 -lopenblas|"
  "splitjoin|$here/splitjoin.dsp|48 96||"
)
algorithms=(refine paper round-robin)
db=$work/history.db

echo "bench_cluster: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds, cluster:"
jq -r '.nodes[] | "  \(.host): \(.cpu.cores) core at speed \(.cpu.speed), link \(.network.bandwidth_bytes_per_s * 8 / 1e6) Mbit/s"' cluster.json

results=$work/results.tsv  # PROGRAM ALGORITHM PREDICTED MEASURED...
: >"$results"
for entry in "${programs[@]}"; do
  IFS='|' read -r name source arguments cflags mflags <<<"$entry"
  mkdir "$work/$name" && cd "$work/$name"
  cp "$source" "$name.dsp"
  # shellcheck disable=SC2086 # the flags are words
  "$build/bin/disparcc" --mpi openmpi "$name.dsp" -o "$name" $cflags >build.log 2>&1 ||
    { echo "bench_cluster: $name does not build" >&2; cat build.log >&2; exit 1; }
  # The costs: one run on this machine, one rank per instance, profiled into the history.
  ranks=$(jq '.vertices | length' "$name.rtg.json")
  # shellcheck disable=SC2086
  DISPAR_PROFILE=$name.profile.json "$mpirun" --oversubscribe -n "$ranks" "./$name" $arguments >reference.log 2>&1 ||
    { echo "bench_cluster: $name failed on this machine" >&2; cat reference.log >&2; exit 1; }
  "$build/bin/streammap" profile add "$name.profile.json" --db "$db" >/dev/null
  reference=$(grep -m1 -E 'checksum|total|sum|checked' reference.log || true)
  # Each algorithm's mapping (deterministic), its predicted period and the line that launches it.
  for algorithm in "${algorithms[@]}"; do
    # shellcheck disable=SC2086
    "$build/bin/streammap" map "$name.rtg.json" --cluster ../cluster.json --history "$db" --algorithm "$algorithm" \
      --format openmpi -o "$algorithm.hostfile" $mflags >"$algorithm.map.log" 2>&1 ||
      { echo "bench_cluster: $name: map --algorithm $algorithm failed" >&2; cat "$algorithm.map.log" >&2; exit 1; }
    sed -n 's/^predicted period: \([0-9.e+-]*\).*/\1/p' "$algorithm.map.log" >"$algorithm.predicted"
    sed -n 's/^run: //p' "$algorithm.map.log" >"$algorithm.run"
    : >"$algorithm.times"
  done
  for ((round = 0; round < rounds; round++)); do
    for ((k = 0; k < ${#algorithms[@]}; k++)); do  # a different algorithm first in each round
      algorithm=${algorithms[$(((k + round) % ${#algorithms[@]}))]}
      line=$(cat "$algorithm.run")
      # The printed line, as a user would copy it, with the run profile passed to every rank.
      line=${line/ --hostfile / -x DISPAR_PROFILE --hostfile }
      rm -f run.profile.json
      if ! DISPAR_PROFILE=run.profile.json timeout 600 bash -c "$line $arguments" >run.log 2>&1; then
        echo "bench_cluster: $name under $algorithm failed" >&2; tail -5 run.log >&2; exit 1
      fi
      result=$(grep -m1 -E 'checksum|total|sum|checked' run.log || true)
      [ "$result" = "$reference" ] ||
        { echo "bench_cluster: $name under $algorithm printed '$result', on this machine '$reference'" >&2; exit 1; }
      jq '.wall_s' run.profile.json >>"$algorithm.times"
    done
  done
  for algorithm in "${algorithms[@]}"; do
    echo "$name $algorithm $(cat "$algorithm.predicted") $(sort -g "$algorithm.times" | tr '\n' ' ')" >>"$results"
  done
  cd "$work"
done

python3 - "$results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, algorithm, predicted, *times = line.split()
    rows.setdefault(name, {})[algorithm] = (float(predicted), statistics.median(map(float, times)))
def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    i = 0
    while i < len(order):  # ties share their mean rank
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            result[order[k]] = (i + j) / 2
        i = j + 1
    return result
def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return num / den if den else float("nan")
algorithms = ["refine", "paper", "round-robin"]
print(f"{'program':<10} " + " ".join(f"{a + ' s':>14} {'predicted':>10}" for a in algorithms) +
      f" {'rr/refine':>9} {'paper/refine':>12} {'rank corr':>9} order")
vs_rr, vs_paper, right = [], [], 0
for name, by in rows.items():
    predicted = [by[a][0] for a in algorithms]
    measured = [by[a][1] for a in algorithms]
    # Right: no pair of mappings the model orders one way and the runs, beyond 5 % noise, the other.
    wrong = any((predicted[i] - predicted[j]) * (measured[i] - measured[j]) < 0 and
                abs(measured[i] - measured[j]) > 0.05 * min(measured[i], measured[j])
                for i in range(3) for j in range(i + 1, 3))
    right += not wrong
    vs_rr.append(measured[2] / measured[0])
    vs_paper.append(measured[1] / measured[0])
    print(f"{name:<10} " + " ".join(f"{m:14.3f} {p:10.4g}" for m, p in zip(measured, predicted)) +
          f" {vs_rr[-1]:8.2f}x {vs_paper[-1]:11.2f}x {spearman(predicted, measured):9.2f} {'right' if not wrong else 'WRONG'}")
print(f"cluster: refine vs round-robin {statistics.median(vs_rr):.2f}x (median), vs paper "
      f"{statistics.median(vs_paper):.2f}x, predicted order right on {right}/{len(rows)} programs")
PY
