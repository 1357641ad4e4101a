#!/bin/bash
# Rank groups on a 57-VNODE program (bench/grouping/README.md): StreamIt's FMRadio at full size, run with
# one rank per instance (57 processes) and grouped by `streammap map --ranks 2` into 2 ranks, best of 3
# runs each, on this machine. Prints both times, the ratio and whether the outputs are identical. Then
# two feedback loops (loop4.dsp, examples/streamit/fhr.dsp): `streammap map --ranks 2` against the best
# and the worst of every grouping into 2 ranks.
# Usage: bench/grouping/run.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../common.sh"
cp "$here/fmradio57.dsp" .
"$build/bin/disparcc" fmradio57.dsp -o fmradio57 >/dev/null
instances=$(python3 -c 'import json; print(len(json.load(open("fmradio57.rtg.json"))["vertices"]))')
cores=$(nproc)
# This machine as a one-node cluster description.
python3 - "$here/../../examples/clusters/paper4.json" "$cores" > cluster.json <<'PY'
import json, sys
cluster = json.load(open(sys.argv[1]))
node = cluster["nodes"][0]
node["host"] = "localhost"
node["cpu"].update(cores=int(sys.argv[2]), threads=int(sys.argv[2]), sockets=1)
node["gpus"] = []
cluster["nodes"] = [node]
print(json.dumps(cluster, indent=2))
PY
mkdir grouped
"$build/bin/streammap" map fmradio57.rtg.json --cluster cluster.json --ranks 2 -o grouped/fmradio57.machinefile >/dev/null

best() {  # best wall time of 3 runs of "$@", in seconds; the last run's output in last.out
  local best=
  for _ in 1 2 3; do
    local start end
    start=$(date +%s.%N)
    "$@" > last.out 2>&1
    end=$(date +%s.%N)
    best=$(python3 -c "s=$end-$start; b='$best'; print(s if not b else min(s, float(b)))")
  done
  echo "$best"
}
per_instance=$(best "$mpiexec" -launcher fork -n "$instances" ./fmradio57)
cp last.out per_instance.out
grouped=$(DISPAR_MAPPING=grouped/fmradio57.map.json best "$mpiexec" -launcher fork -n 2 ./fmradio57)
cp last.out grouped.out
echo "fmradio57: $instances VNODE instances on $cores cores"
printf '  one rank per instance (%d ranks): %.3f s\n' "$instances" "$per_instance"
printf '  grouped (streammap map --ranks 2): %.3f s\n' "$grouped"
python3 -c "print('  speed-up: %.2fx (target >= 3x)' % ($per_instance / $grouped))"
if diff -q per_instance.out grouped.out >/dev/null; then
  echo "  output identical: $(cat grouped.out)"
else
  echo "  OUTPUT DIFFERS:"; diff per_instance.out grouped.out; exit 1
fi

# Feedback loops (issue 38): streammap's own `--ranks 2` grouping against every grouping into 2 ranks
# (each split of the instances into two non-empty sets), best of 3 each, on this machine.
cp "$here/loop4.dsp" "$here/../../examples/streamit/fhr.dsp" .
regroup() {  # regroup MAP OUT MASK: rank 1 gets the instances whose bit is set in MASK, rank 0 the rest
  python3 - "$@" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
mask = int(sys.argv[3])
for i, e in enumerate(sorted(m["ranks"], key=lambda e: (e["vnode"], e["replica"]))):
    e["rank"] = (mask >> i) & 1
m["ranks"].sort(key=lambda e: e["rank"])
json.dump(m, open(sys.argv[2], "w"))
PY
}
members() {  # members MAP: "a,b | c,d" as the map groups them
  python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
print(" | ".join(",".join(e["vnode"] for e in m["ranks"] if e["rank"] == r) for r in sorted({e["rank"] for e in m["ranks"]})))' "$1"
}
for program in loop4 fhr; do
  "$build/bin/disparcc" "$program.dsp" -o "$program" >/dev/null
  mkdir -p "mapped_$program"
  "$build/bin/streammap" map "$program.rtg.json" --cluster cluster.json --ranks 2 \
    -o "mapped_$program/$program.machinefile" >/dev/null
  mapped=$(DISPAR_MAPPING="mapped_$program/$program.map.json" best "$mpiexec" -launcher fork -n 2 "./$program")
  cp last.out "$program.mapped.out"
  count=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["ranks"]))' "mapped_$program/$program.map.json")
  best_time= best_grouping= worst_time= worst_grouping=
  for ((mask = 1; mask < (1 << (count - 1)); ++mask)); do  # the last instance stays in rank 0: each split once
    regroup "mapped_$program/$program.map.json" split.map.json "$mask"
    seconds=$(DISPAR_MAPPING=split.map.json best "$mpiexec" -launcher fork -n 2 "./$program")
    if ! diff -q last.out "$program.mapped.out" >/dev/null; then
      echo "  $program: OUTPUT DIFFERS for $(members split.map.json):"; diff last.out "$program.mapped.out"; exit 1
    fi
    if [ -z "$best_time" ] || python3 -c "import sys; sys.exit(not $seconds < $best_time)"; then
      best_time=$seconds best_grouping=$(members split.map.json)
    fi
    if [ -z "$worst_time" ] || python3 -c "import sys; sys.exit(not $seconds > $worst_time)"; then
      worst_time=$seconds worst_grouping=$(members split.map.json)
    fi
  done
  echo "$program: $count VNODE instances, 2 ranks on $cores cores, $((2 ** (count - 1) - 1)) groupings tried"
  printf '  streammap map --ranks 2 (%s): %.3f s\n' "$(members "mapped_$program/$program.map.json")" "$mapped"
  printf '  best grouping (%s): %.3f s\n' "$best_grouping" "$best_time"
  printf '  worst grouping (%s): %.3f s\n' "$worst_grouping" "$worst_time"
  python3 -c "print('  streammap / best: %.2fx (target <= 1.2x)' % ($mapped / $best_time))"
  echo "  output identical in every grouping: $(cat "$program.mapped.out")"
done
