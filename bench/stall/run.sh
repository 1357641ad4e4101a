#!/usr/bin/env bash
# What stall detection and the heartbeat cost (docs/runtime.md, "Stalls"): bench/pipe_bandwidth and
# bench/item_ports run alternately with the watch off (DISPAR_STALL_SECONDS=0 DISPAR_HEARTBEAT_SECONDS=0:
# no watch thread, MPI_THREAD_SINGLE for a rank of one instance) and on (the default: a watch thread and
# MPI_THREAD_MULTIPLE), ROUNDS times each; prints each
# run's figures, the best of each, and the ratio on / off. The two modes cannot share one job (the thread
# level is fixed when MPI starts), so they alternate job by job to see the same machine load.
#
#   bench/stall/run.sh [BUILD_DIR] [ROUNDS]     (default build/, 5)
set -euo pipefail
# shellcheck source=../common.sh
source "$(dirname "$0")/../common.sh"
rounds=${2:-5}
best() { sort -g | tail -1; }
declare -A figures
for round in $(seq "$rounds"); do
  for mode in off on; do
    seconds=0 heartbeat=0
    [ "$mode" = on ] && seconds=10 heartbeat=30
    export DISPAR_STALL_SECONDS=$seconds DISPAR_HEARTBEAT_SECONDS=$heartbeat
    bandwidth=$("$mpiexec" -n 2 "$build/bin/pipe_bandwidth")
    items=$("$mpiexec" -n 2 "$build/bin/item_ports_bench")
    # The DISPAR column at 8 B and 64 KiB (MB/s), and items' push/pop throughput (MB/s).
    small=$(awk '$1 == "8" && $2 == "B" && $3 != "scal" { print $5 }' <<<"$bandwidth")
    large=$(awk '$1 == "64" && $2 == "KiB" { print $5 }' <<<"$bandwidth")
    pushed=$(awk '/^items \(push\/pop/ { print $(NF-3) }' <<<"$items")
    echo "round $round, detection $mode: pipe 8 B $small MB/s, pipe 64 KiB $large MB/s, items $pushed MB/s"
    figures[$mode-small]+="$small"$'\n'
    figures[$mode-large]+="$large"$'\n'
    figures[$mode-items]+="$pushed"$'\n'
  done
done
for row in small:"pipe_bandwidth 8 B" large:"pipe_bandwidth 64 KiB" items:"item_ports push/pop"; do
  key=${row%%:*} name=${row#*:}
  off=$(best <<<"${figures[off-$key]}") on=$(best <<<"${figures[on-$key]}")
  awk -v n="$name" -v a="$off" -v b="$on" \
    'BEGIN { printf "%-24s best of %s: off %9.1f MB/s   on %9.1f MB/s   ratio on/off %.3f\n", n, "'"$rounds"'", a, b, b / a }'
done
