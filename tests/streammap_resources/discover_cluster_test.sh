#!/bin/bash
# usage: discover_cluster_test.sh MPIEXEC STREAMMAP WORKDIR
# Runs `streammap --discover --cluster` on three made-up hosts under MPICH's fork launcher and checks
# that the database holds one node per host name, then that a node which stops answering is marked down.
set -euo pipefail
mpiexec=$1 streammap=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
db=$work/resources.db
printf 'nodeA\nnodeB\nnodeC\n' > "$work/hosts"
"$mpiexec" -launcher fork -f "$work/hosts" -n 3 "$streammap" --discover --cluster --db "$db" > "$work/out.txt"
cat "$work/out.txt"
grep -q "recorded 3 nodes" "$work/out.txt"
"$streammap" nodes --db "$db" --json > "$work/nodes.json"
hosts=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(n["host"]+":"+n["status"]+":"+n["source"] for n in d["nodes"]))' "$work/nodes.json")
echo "after first run: $hosts"
[ "$hosts" = "nodeA:up:probe nodeB:up:probe nodeC:up:probe" ] || { echo "unexpected nodes: $hosts"; exit 1; }
# nodeC is gone: a second discovery over two hosts marks it down.
printf 'nodeA\nnodeB\n' > "$work/hosts2"
"$mpiexec" -launcher fork -f "$work/hosts2" -n 2 "$streammap" --discover --cluster --db "$db" > "$work/out2.txt"
grep -q "marked down (did not answer): nodeC" "$work/out2.txt"
hosts=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(n["host"]+":"+n["status"] for n in d["nodes"]))' <("$streammap" nodes --db "$db" --json))
echo "after second run: $hosts"
[ "$hosts" = "nodeA:up nodeB:up nodeC:down" ] || { echo "unexpected nodes: $hosts"; exit 1; }
echo PASS
