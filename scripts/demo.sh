#!/usr/bin/env bash
# The main job: discover this machine's resources, compile an example with disparcc, map it with
# streammap, and run it with `streammap run`, which launches mpiexec with the rank count the mapping
# chose (never one computed here). Expects scripts/setup.sh to have built the project.
# Usage: scripts/demo.sh [EXAMPLE] [ARGS...]   (default: fir, the paper's FIR filter)
#        scripts/demo.sh --list                (the examples, from examples/examples.tsv)
# DISPAR_DEMO_CLUSTER=FILE.json maps onto that cluster description instead of this machine's resources
# (its hosts all run here: the fork launcher starts every rank on this machine). DISPAR_DEMO_DIR=DIR
# works in DIR instead of build/demo/EXAMPLE.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/bin
table=$root/examples/examples.tsv

if [ "${1:-}" = "--list" ]; then
  grep -v '^#' "$table" | cut -f1
  exit 0
fi
example=${1:-fir}
[ $# -gt 0 ] && shift
line=$(awk -F'\t' -v name="$example" '!/^#/ && $1 == name' "$table")
if [ -z "$line" ]; then
  echo "demo: no example '$example'; the examples are: $(grep -v '^#' "$table" | cut -f1 | tr '\n' ' ')" >&2
  exit 2
fi
source_file=$root/examples/$(cut -f2 <<<"$line")
read -r -a libraries <<<"$(cut -f3 <<<"$line" | sed 's/^-$//')"
for tool in disparcc streammap; do
  if [ ! -x "$bin/$tool" ]; then
    echo "demo: $bin/$tool is not built; run scripts/setup.sh first" >&2
    exit 1
  fi
done

work=${DISPAR_DEMO_DIR:-$root/build/demo/$example}
mkdir -p "$work"
cd "$work"
run() { echo "+ $*" >&2; "$@"; }

source_flags=()
if [ -n "${DISPAR_DEMO_CLUSTER:-}" ]; then
  source_flags=(--cluster "$DISPAR_DEMO_CLUSTER")
else
  # A database of its own, so the demo never touches a real cluster's (/var/lib/dispar/resources.db).
  export DISPAR_RESOURCE_DB=$work/resources.db
  run "$bin/streammap" --discover
fi
run "$bin/disparcc" "$source_file" -o "$example" "${libraries[@]}"
# map prints where each instance runs and the rank count; on a machine without a GPU it says that the
# GPU vnodes run their kernels on the host.
run "$bin/streammap" map "$example.rtg.json" "${source_flags[@]}"
# Every host in the machinefile runs on this machine: MPICH's fork launcher starts the ranks without ssh.
run "$bin/streammap" run --launcher fork "${source_flags[@]}" "./$example" "$@"
