#!/bin/bash
# Demand-driven distribution (bench/demand/README.md), every figure against its baseline from the same run:
#  1. a real run here: two replicas whose speeds differ 1:4 (unequal.dsp), split(rr) and split(demand),
#     one rank per instance; throughput at the sink against the sum of the replicas' own rates;
#  2. the same shape simulated (gpu.dsp, SMPI) on one node with a fast and a slow GPU (fast_slow.json),
#     one replica on each: makespans with split(rr) and split(demand) against the makespan the two GPUs'
#     rates alone (one replica on each GPU, simulated too) allow;
#  3. equal replicas at bench/pipe_bandwidth's sizes (demand_equal): split(demand) against split(rr).
# Usage: bench/demand/run.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../common.sh"
rounds=${DEMAND_ROUNDS:-3}

echo "1. real run: two replicas, device time 1 ms and 4 ms per job (a sleep), one rank per instance, $rounds rounds"
for ints in 1 16384; do
  for split in rr demand; do
    sed "s/split(rr)/split($split)/" "$here/unequal.dsp" > "unequal_$split.dsp"
    "$build/bin/disparcc" -DMESSAGE_INTS=$ints "unequal_$split.dsp" -o "unequal_${split}_$ints" >/dev/null
  done
done
for round in $(seq "$rounds"); do
  for ints in 1 16384; do
    for split in rr demand; do
      "$mpiexec" -launcher fork -n 4 "./unequal_${split}_$ints" > "unequal_${split}_$ints.$round.out"
    done
  done
done
python3 - "$rounds" <<'PY'
import re, statistics, sys
rounds = int(sys.argv[1])
for ints, size in ((1, "4 B"), (16384, "64 KiB")):
    print(f"  messages of {size}:")
    for split in ("rr", "demand"):
        ratios, rates = [], []
        for r in range(1, rounds + 1):
            text = open(f"unequal_{split}_{ints}.{r}.out").read()
            sink = re.search(r"sink: (\d+) jobs ordered (\d) first-to-last ([0-9.]+) s", text)
            if not sink or sink.group(2) != "1":
                sys.exit(f"unequal_{split}_{ints} round {r}: results missing or out of order:\n{text}")
            workers = re.findall(r"worker (\d): (\d+) jobs busy ([0-9.]+) s", text)
            jobs = {int(w): int(n) for w, n, _ in workers}
            own = sum(int(n) / float(busy) for _, n, busy in workers)  # jobs per second, each replica alone
            throughput = (int(sink.group(1)) - 1) / float(sink.group(3))
            ratios.append(throughput / own)
            rates.append((throughput, own, jobs))
        t, own, jobs = rates[ratios.index(statistics.median_low(ratios))]
        print(f"    split({split}): {t:7.1f} jobs/s; replicas alone {own:7.1f} jobs/s together; "
              f"ratio {statistics.median(ratios):.3f} (median; rounds {', '.join('%.3f' % x for x in ratios)}); "
              f"jobs per replica {jobs[0]} : {jobs[1]}")
print("  target: split(demand) >= 0.9 of the replicas' summed rates (split(rr) is bounded by 2 x the slower: 0.4)")
PY

echo "2. simulated: one node, GPUs of 108 and 27 multiprocessors (speeds 1 : 0.25), one worker replica on each"
cluster="$here/fast_slow.json"
simulate_on() {  # simulate_on NAME DEVICES...: the makespan of NAME.smpi, worker replica r on GPU DEVICES[r]
  local name=$1
  shift
  "$build/bin/streammap" map "$name.smpi.rtg.json" --cluster "$cluster" --rank-per-instance \
    -o "$name.machinefile" >/dev/null
  python3 - "$name.map.json" "$@" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for rank in m["ranks"]:
    if rank["vnode"] == "worker":
        rank["device"] = int(sys.argv[2 + rank["replica"]])
json.dump(m, open(sys.argv[1], "w"), indent=1)
PY
  "$build/bin/streammap" simulate --cluster "$cluster" --mapping "$name.map.json" "./$name.smpi" > "$name.sim.out"
  grep -q "ordered 1" "$name.sim.out" || { echo "$name: results missing or out of order"; cat "$name.sim.out"; exit 1; }
  sed -n 's/^simulated makespan: \([0-9.e+-]*\) s$/\1/p' "$name.sim.out"
}
for split in rr demand; do
  sed "s/split(rr)/split($split)/" "$here/gpu.dsp" > "gpu_$split.dsp"
  "$build/bin/disparcc" --target smpi "gpu_$split.dsp" -o "gpu_$split.smpi" >/dev/null
done
sed "s/replicas(2)/replicas(1)/" "$here/gpu.dsp" > gpu_alone.dsp
"$build/bin/disparcc" --target smpi gpu_alone.dsp -o gpu_alone.smpi >/dev/null
sim_rounds=${DEMAND_SIM_ROUNDS:-5}
# Each kernel's simulated time is its host clone's measured time, so separate simulations differ by the
# machine's noise (10-15 % here): the four runs are interleaved, round after round, and compared per round.
for round in $(seq "$sim_rounds"); do
  fast=$(simulate_on gpu_alone 0)  # an assignment, so that a failed simulation ends the script (set -e)
  slow=$(simulate_on gpu_alone 1)
  rr=$(simulate_on gpu_rr 0 1)
  demand=$(simulate_on gpu_demand 0 1)
  echo "$fast $slow $rr $demand" >> makespans.txt
done
python3 - makespans.txt <<'PY'
import statistics, sys
rounds = [list(map(float, line.split())) for line in open(sys.argv[1])]
def median(values): return statistics.median(values)
best = [1 / (1 / fast + 1 / slow) for fast, slow, _, _ in rounds]  # both GPUs busy to the end: the summed rates
fast, slow = median(r[0] for r in rounds), median(r[1] for r in rounds)
print(f"  one replica alone: fast GPU {fast * 1e3:.3f} ms, slow GPU {slow * 1e3:.3f} ms (ratio {slow / fast:.2f});"
      f" summed rates allow {median(best) * 1e3:.3f} ms (medians of {len(rounds)} rounds)")
for column, name in ((2, "rr"), (3, "demand")):
    ratios = [b / r[column] for b, r in zip(best, rounds)]
    print(f"  split({name}): {median(r[column] for r in rounds) * 1e3:.3f} ms, {median(ratios):.3f} of the summed rates"
          f" (median; rounds {', '.join('%.3f' % x for x in ratios)})")
print("  target: split(demand) >= 0.9")
PY

echo "3. equal replicas, split(demand) against split(rr) at bench/pipe_bandwidth's sizes (4 ranks)"
"$mpiexec" -n 4 "$build/bin/demand_equal"
