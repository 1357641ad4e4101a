#!/usr/bin/env bash
# The main job: discover this machine's resources, compile an example with disparcc, map it with
# streammap, and run it with mpiexec from the machinefile. Expects scripts/setup.sh to have built the
# project. Usage: scripts/demo.sh [example] (default: fir, the paper's FIR filter; see examples/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/bin
example=${1:-fir}
work=$root/build/demo/$example
mkdir -p "$work"
cd "$work"

run() { echo "+ $*" >&2; "$@"; }

# A database of its own, so the demo never touches a real cluster's (/var/lib/dispar/resources.db).
export DISPAR_RESOURCE_DB=$work/resources.db
run "$bin/streammap" --discover
case $example in
  fanout) run "$bin/disparcc" "$root/examples/fanout/fanout.dsp" -o fanout -lfftw3 -lopenblas ;;
  *) run "$bin/disparcc" "$root/examples/$example/$example.dsp" -o "$example" ;;
esac
map_flags=()
if grep -q '"type": "CG"' "$example.rtg.json" && ! "$bin/streammap" nodes --json | grep -q '"compute_capability"'; then
  echo "demo: this machine has no GPU: the GPU vnodes will run their kernels on the host" >&2
  map_flags=(--allow-host-fallback)
fi
run "$bin/streammap" map "$example.rtg.json" -o "$example.machinefile" "${map_flags[@]}"
ranks=$(grep -c '"vnode":' "$example.rtg.json")  # one vertex per rank
# Every host in this machinefile is this machine; -launcher fork starts the ranks without ssh.
run mpiexec -launcher fork -f "$example.machinefile" -n "$ranks" "./$example"
