#!/bin/bash
# Rank groups on a 57-VNODE program (bench/grouping/README.md): StreamIt's FMRadio at full size, run with
# one rank per instance (57 processes) and grouped by `streammap map --ranks 2` into 2 ranks, best of 3
# runs each, on this machine. Prints both times, the ratio and whether the outputs are identical.
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
