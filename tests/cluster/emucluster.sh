#!/usr/bin/env bash
# An emulated cluster on this one machine (needs root): each node of a dispar-cluster description becomes
# a network namespace with its own address on a private bridge, its own host name, /etc/hosts
# (ip-netns's /etc/netns/NS/hosts), /dev/shm and boot ID (mount and UTS namespaces kept by one holder
# process per node), a CPU quota (cgroup v1 cpu) and a shaped link (tc tbf), so that ranks on different
# nodes talk over TCP at the link's rate and run at the node's speed (docs/cluster.md, "Trying the
# cluster path on one machine").
#
#   emucluster.sh up CLUSTER.json [--owner PID]
#       builds the cluster and prints "DISPAR_EMUCLUSTER=DIR": DIR holds the run's state, its hosts file
#       and the address of each node. From the description, per node: host (its host name), cpu.cores x
#       cpu.speed (its CPU quota, in CPUs) and network.bandwidth_bytes_per_s (its link's rate; null: not
#       shaped). The run belongs to PID (default: the caller); once PID is gone a later `up` or `sweep`
#       takes it down.
#   emucluster.sh down DIR         ends every process of its nodes and removes everything it made
#   emucluster.sh exec DIR NODE CMD [ARG...]
#                                  runs CMD on NODE (its namespace, host name, hosts file and cgroup)
#   emucluster.sh kill DIR NODE    ends every process of NODE (a node failure)
#   emucluster.sh link DIR NODE up|down
#                                  brings NODE's link up or down (a partition)
#   emucluster.sh address DIR NODE prints NODE's address; `address DIR` the bridge's (the host's)
#   emucluster.sh sweep            takes down every run whose owner is gone and any piece of one left
#                                  without its state (a killed run)
#   emucluster.sh list             prints every live run's DIR
#
# Launchers enter the nodes through emucluster-rsh (beside this script): MPICH's
# HYDRA_LAUNCHER=ssh HYDRA_LAUNCHER_EXEC=emucluster-rsh, Open MPI's OMPI_MCA_plm_rsh_agent=emucluster-rsh,
# with DISPAR_EMUCLUSTER=DIR in the environment. Nothing outside the bridge is contacted: the nodes have
# no route but the bridge's subnet.
set -euo pipefail

state_root=/run/dispar-emucluster
# The cgroup v1 hierarchy with the cpu controller: where it is mounted and its controllers ("cpu", or
# "cpu,cpuacct" where they are mounted together); each node mounts it again inside its namespace.
read -r cgroup_cpu cgroup_cpu_controllers < <(awk '$3 == "cgroup" {
    n = split($4, o, ","); c = ""
    for (i = 1; i <= n; i++) if (o[i] ~ /^(cpu|cpuacct|cpuset|memory|devices|freezer|blkio|pids|perf_event|net_cls|net_prio|hugetlb|rdma|misc)$/) c = c (c == "" ? "" : ",") o[i]
    if (c ~ /(^|,)cpu(,|$)/) { print $2, c; exit } }' /proc/mounts) || true
prefix=dspe # every namespace, link and cgroup of a run is named dspe<ID>...; ID is 6 hex digits

die() {
  echo "emucluster.sh: $*" >&2
  exit 1
}

need_root() {
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, bridges and cgroups)"
  command -v ip >/dev/null || die "ip not installed (apt-get install iproute2)"
  command -v tc >/dev/null || die "tc not installed (apt-get install iproute2)"
  command -v jq >/dev/null || die "jq not installed (apt-get install jq)"
  [ -n "${cgroup_cpu:-}" ] && [ -d "$cgroup_cpu" ] || die "no cgroup v1 hierarchy with the cpu controller is mounted"
}

# Removes every piece of run ID, found by its names (so also those of a run whose state is gone).
teardown() {
  local id=$1 dir=$state_root/$1 ns pid
  for ns in $(ip netns list | awk '{print $1}' | grep "^$prefix$id-" || true); do
    # Every process of the node, then the namespace; a process that outlives SIGKILL (in D state) keeps
    # the namespace alive but not its name.
    for pid in $(ip netns pids "$ns" 2>/dev/null || true); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  local link
  for link in $(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep "^$prefix$id" || true); do
    ip link del "$link" 2>/dev/null || true
  done
  if [ -d "$cgroup_cpu/$prefix$id" ]; then
    local group
    for group in "$cgroup_cpu/$prefix$id"/*/; do
      [ -d "$group" ] || continue
      for pid in $(cat "$group/cgroup.procs" 2>/dev/null || true); do kill -9 "$pid" 2>/dev/null || true; done
      for _ in $(seq 50); do rmdir "$group" 2>/dev/null && break; sleep 0.1; done
    done
    rmdir "$cgroup_cpu/$prefix$id" 2>/dev/null || true
  fi
  rm -rf "$dir"
}

owner_alive() {
  local dir=$1 pid start
  [ -f "$dir/owner" ] || return 1
  read -r pid start <"$dir/owner"
  [ -d "/proc/$pid" ] || return 1
  # The same process, not a later one given its number.
  [ "$(awk '{print $22}' "/proc/$pid/stat" 2>/dev/null)" = "$start" ]
}

sweep() {
  local dir id
  # Claims a killed `up` left (their runs made nothing yet); a minute old, not one being written now.
  for dir in "$state_root"/.claim.*/; do
    [ -d "$dir" ] && [ -n "$(find "$dir" -maxdepth 0 -mmin +1)" ] || continue
    owner_alive "$dir" || rm -rf "$dir"
  done
  for dir in "$state_root"/*/; do
    [ -d "$dir" ] || continue
    owner_alive "$dir" || teardown "$(basename "$dir")"
  done
  # Pieces whose run has no state at all (killed between creating them and writing it, or state lost).
  for id in $( (ip netns list | awk '{print $1}'; ip -o link show | awk -F': ' '{print $2}'; ls "$cgroup_cpu") |
    grep -oE "^$prefix[0-9a-f]{6}" | sed "s/^$prefix//" | sort -u); do
    [ -d "$state_root/$id" ] || teardown "$id"
  done
}

node_field() { # DIR NODE FIELD: from the state's node table
  awk -v n="$2" -v f="$3" '$1 == n { print $f; found = 1 } END { exit !found }' "$1/nodes" ||
    die "no node '$2' in the emulated cluster $1"
}

# The node's holder: a process that keeps the node's mount and UTS namespaces, entered by everything the
# node runs. In them the node has its host name, its own /dev/shm and its own boot ID, as a separate
# machine has: UCX (MPICH's transport) takes two processes with one boot ID and one /dev/shm for one
# machine and would pass their messages through shared memory instead of the network.
start_node() {
  local dir=$1 host=$2 id ns group
  id=$(basename "$dir")
  ns=$prefix$id-$host
  group=$cgroup_cpu/$prefix$id/$host
  cat /proc/sys/kernel/random/uuid >"$dir/$host.boot_id"
  rm -f "$dir/$host.holder"
  setsid /bin/sh -c 'echo $$ >"$1/cgroup.procs" && exec ip netns exec "$2" unshare --uts -- /bin/sh -c "$3" emucluster "$4" "$5" "$6" "$7"' \
    emucluster "$group" "$ns" \
    'hostname "$1" && mount -t tmpfs -o size=50% tmpfs /dev/shm &&
     mount -t tmpfs -o mode=755 cgroup_root "${4%/*}" && mkdir -p "$4" && mount -t cgroup -o "$3" cgroup "$4" &&
     mount --bind "$2/$1.boot_id" /proc/sys/kernel/random/boot_id && echo $$ >"$2/$1.holder.new" &&
     mv "$2/$1.holder.new" "$2/$1.holder" && exec sleep infinity' \
    "$host" "$dir" "$cgroup_cpu_controllers" "$cgroup_cpu" </dev/null >/dev/null 2>"$dir/$host.holder.log" &
  for _ in $(seq 100); do
    [ -s "$dir/$host.holder" ] && return 0
    kill -0 $! 2>/dev/null || break
    sleep 0.05
  done
  die "node $host did not start: $(cat "$dir/$host.holder.log")"
}

cmd_up() {
  local description=${1:?usage: emucluster.sh up CLUSTER.json [--owner PID]}
  shift
  local owner=$PPID
  while [ $# -gt 0 ]; do
    case $1 in
      --owner) owner=${2:?--owner needs a PID}; shift 2 ;;
      *) die "up: unknown option '$1'" ;;
    esac
  done
  need_root
  [ -r "$description" ] || die "cannot read $description"
  local table
  table=$(jq -r '.nodes[] | [.host, ((.cpu.cores // 0) * (.cpu.speed // 1)), (.network.bandwidth_bytes_per_s // "none")] | @tsv' \
    "$description" 2>/dev/null) || die "$description: not a dispar-cluster description (streammap map --cluster says what is wrong)"
  [ -n "$table" ] || die "$description: no nodes"
  [ -d "/proc/$owner" ] || die "owner $owner is not running"
  # The whole description is checked before anything is made.
  local host cpus rate seen=" " count=0
  while IFS=$'\t' read -r host cpus rate; do
    [[ $host =~ ^[A-Za-z0-9][A-Za-z0-9.-]{0,40}$ ]] || die "$description: host '$host' cannot be an emulated node's name"
    [ "$host" != "$(hostname)" ] || die "$description: host '$host' is this machine's own name"
    [[ $seen == *" $host "* ]] && die "$description: duplicate host '$host'"
    awk -v c="$cpus" 'BEGIN { exit !(c > 0) }' || die "$description: host '$host' has no CPU (cpu.cores x cpu.speed = $cpus)"
    [ "$rate" = none ] || awk -v r="$rate" 'BEGIN { exit !(r >= 1000) }' ||
      die "$description: host '$host': network.bandwidth_bytes_per_s $rate is below what tc can shape (1000)"
    seen+="$host "
    count=$((count + 1))
  done <<<"$table"
  [ $count -le 253 ] || die "$description: $count nodes, at most 253"
  sweep

  local id subnet dir
  mkdir -p "$state_root"
  for _ in $(seq 100); do
    id=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
    # 10.X.Y.0/24 from the ID; never one an interface of this machine already has.
    subnet="10.$((16#${id:0:2} % 200 + 50)).$((16#${id:2:2})).0"
    ip -4 -o addr show | grep -q " ${subnet%.0}\." && continue
    [ -e "$state_root/$id" ] && continue
    # The state appears whole, its owner in it: another run's sweep must never see it without one (it
    # would take this run down as a dead one's). The ID is claimed by the rename (a second claimant's
    # rename onto the non-empty directory fails).
    local claim
    claim=$(mktemp -d "$state_root/.claim.XXXXXX")
    echo "$owner $(awk '{print $22}' "/proc/$owner/stat")" >"$claim/owner"
    readlink -f "$description" >"$claim/description"
    mv -T "$claim" "$state_root/$id" 2>/dev/null && break
    rm -rf "$claim"
  done
  dir=$state_root/$id
  [ -f "$dir/owner" ] || die "no free run ID"
  # From here on a failure or a signal takes down what was made (the ID expanded now: the trap runs
  # after this function's locals are gone).
  trap "teardown '$id'" EXIT
  trap 'exit 1' INT TERM HUP

  local bridge=$prefix${id}b base=${subnet%.0}
  ip link add "$bridge" type bridge
  ip link set "$bridge" up
  ip addr add "$base.1/24" dev "$bridge"
  echo "$base.1" >"$dir/bridge_address"
  mkdir -p "$cgroup_cpu/$prefix$id"

  {
    echo "127.0.0.1 localhost"
    echo "$base.1 $(hostname)"
  } >"$dir/hosts"
  local i=1
  while IFS=$'\t' read -r host cpus rate; do
    i=$((i + 1))
    echo "$base.$i $host" >>"$dir/hosts"
    echo "$host $base.$i $((i - 1)) $cpus $rate" >>"$dir/nodes"
  done <<<"$table"

  local ns veth peer index quota
  while read -r host address index cpus rate; do
    ns=$prefix$id-$host
    veth=$prefix${id}v$index
    peer=$prefix${id}p$index
    ip netns add "$ns"
    mkdir -p "/etc/netns/$ns"
    cp "$dir/hosts" "/etc/netns/$ns/hosts"
    ip link add "$veth" type veth peer name "$peer"
    ip link set "$peer" netns "$ns"
    ip link set "$veth" master "$bridge"
    ip link set "$veth" up
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "$peer" name eth0
    ip -n "$ns" addr add "$address/24" dev eth0
    ip -n "$ns" link set eth0 up
    if [ "$rate" != none ]; then
      # Both directions: the bridge's side shapes what the node receives, the node's side what it sends.
      # A burst of 64 KiB (at least one rate-tick) and 50 ms of queue, as a switch port's buffer.
      local bytes=${rate%.*}
      tc qdisc add dev "$veth" root tbf rate "${bytes}bps" burst 65536 latency 50ms
      tc -n "$ns" qdisc add dev eth0 root tbf rate "${bytes}bps" burst 65536 latency 50ms
    fi
    mkdir "$cgroup_cpu/$prefix$id/$host"
    quota=$(awk -v c="$cpus" 'BEGIN { q = int(c * 100000 + 0.5); if (q < 1000) q = 1000; print q }')
    echo 100000 >"$cgroup_cpu/$prefix$id/$host/cpu.cfs_period_us"
    echo "$quota" >"$cgroup_cpu/$prefix$id/$host/cpu.cfs_quota_us"
    start_node "$dir" "$host"
  done <"$dir/nodes"
  trap - EXIT INT TERM HUP
  echo "DISPAR_EMUCLUSTER=$dir"
}

resolve_dir() {
  local dir=${1:?usage: emucluster.sh ACTION DIR ..., DIR as up printed it}
  [ -f "$dir/nodes" ] || die "$dir is not an emulated cluster's state (no nodes table)"
  echo "$dir"
}

cmd_exec() {
  local dir node
  dir=$(resolve_dir "${1:-}")
  node=${2:?usage: emucluster.sh exec DIR NODE CMD [ARG...]}
  shift 2
  [ $# -gt 0 ] || die "exec: no command"
  node_field "$dir" "$node" 1 >/dev/null
  local id ns group
  id=$(basename "$dir")
  ns=$prefix$id-$node
  group=$cgroup_cpu/$prefix$id/$node
  local holder
  holder=$(cat "$dir/$node.holder" 2>/dev/null || true)
  [ -n "$holder" ] && [ "$(ip netns identify "$holder" 2>/dev/null)" = "$ns" ] ||
    die "node $node is down (its processes were ended)"
  # The process joins the node's cgroup before it enters the namespaces (whose /sys, mounted by ip-netns,
  # hides the cgroup tree), so that everything it starts runs within the node's quota.
  echo $$ >"$group/cgroup.procs"
  exec nsenter -t "$holder" -n -m -u --wd="$PWD" -- "$@"
}

cmd_kill() {
  local dir node id pid
  dir=$(resolve_dir "${1:-}")
  node=${2:?usage: emucluster.sh kill DIR NODE}
  node_field "$dir" "$node" 1 >/dev/null
  id=$(basename "$dir")
  for pid in $(ip netns pids "$prefix$id-$node"); do kill -9 "$pid" 2>/dev/null || true; done
}

cmd_link() {
  local dir node state id
  dir=$(resolve_dir "${1:-}")
  node=${2:?usage: emucluster.sh link DIR NODE up|down}
  state=${3:?usage: emucluster.sh link DIR NODE up|down}
  [[ $state == up || $state == down ]] || die "link: '$state' is neither up nor down"
  id=$(basename "$dir")
  ip link set "$prefix${id}v$(node_field "$dir" "$node" 3)" "$state"
}

action=${1:-}
[ $# -gt 0 ] && shift
case $action in
  up) cmd_up "$@" ;;
  down) need_root; teardown "$(basename "$(resolve_dir "${1:-}")")" ;;
  exec) cmd_exec "$@" ;;
  kill) cmd_kill "$@" ;;
  link) cmd_link "$@" ;;
  address)
    dir=$(resolve_dir "${1:-}")
    if [ $# -ge 2 ]; then node_field "$dir" "$2" 2; else cat "$dir/bridge_address"; fi ;;
  sweep) need_root; sweep ;;
  list) for d in "$state_root"/*/; do [ -f "$d/nodes" ] && echo "${d%/}"; done; true ;;
  *) die "usage: emucluster.sh up|down|exec|kill|link|address|sweep|list ... (see the comment at its top)" ;;
esac
