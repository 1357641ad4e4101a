#!/usr/bin/env bash
# A real Slurm 22.05 cluster on this one machine, for the Slurm tests (needs root).
#   slurm_cluster.sh start DIR [--emucluster STATE]
#                                configures and starts slurmctld and one slurmd per node under DIR,
#                                waits until every node answers, prints "SLURM_CONF=DIR/slurm.conf"
#   slurm_cluster.sh stop DIR    stops every daemon started from DIR (idempotent)
# Nodes: gpu1 (4 CPUs, 2x gpu:a100), gpu2 (4 CPUs, 1x gpu:v100), cpu1 and cpu2 (2 CPUs each, no GPU), every
# slurmd at 127.0.0.1 on a port of its own. With --emucluster, the nodes of that emulated cluster
# (tests/cluster/emucluster.sh) instead: each slurmd runs on its node (its namespace, host name and CPU
# quota) at the node's own address (NodeAddr), with as many CPUs as the node's quota rounded up (what
# `streammap cluster probe --discover` sees there), and slurmctld on the bridge's address.
# What makes Debian 12's Slurm work this way (issue 10): the normal daemons run through symlinks named
# exactly slurmctld/slurmd/slurmstepd (under their -wlm names Slurm drops Gres=), auth/none and cred/none
# (no munge), every node at 127.0.0.1 on its own port, `slurmd -N name`, fake GPUs as character devices.
set -euo pipefail

action=${1:?usage: slurm_cluster.sh start|stop DIR [--emucluster STATE]}
dir=${2:?usage: slurm_cluster.sh start|stop DIR [--emucluster STATE]}
emucluster_state=
if [ "${3:-}" = --emucluster ]; then
  emucluster_state=${4:?usage: slurm_cluster.sh start DIR --emucluster STATE}
  [ -f "$emucluster_state/nodes" ] || { echo "slurm_cluster.sh: $emucluster_state is not an emulated cluster" >&2; exit 2; }
fi
emucluster=$(dirname "$0")/../cluster/emucluster.sh
if [ -n "$emucluster_state" ]; then
  # The state's node table: host, address, index, CPUs (the quota), link rate.
  mapfile -t nodes < <(awk '{ print $1 }' "$emucluster_state/nodes")
else
  nodes=(gpu1 gpu2 cpu1 cpu2)
fi

stop() {
  for pidfile in "$dir"/run/*.pid; do
    [ -e "$pidfile" ] || continue
    pid=$(cat "$pidfile" 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  # slurmd forks slurmstepd per step; they end with their steps. Wait for the daemons themselves.
  for _ in $(seq 50); do
    alive=0
    for pidfile in "$dir"/run/*.pid; do
      [ -e "$pidfile" ] || continue
      pid=$(cat "$pidfile" 2>/dev/null || true)
      [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && alive=1
    done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for pidfile in "$dir"/run/*.pid; do
    [ -e "$pidfile" ] || continue
    pid=$(cat "$pidfile" 2>/dev/null || true)
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

# A port free now, below the kernel's ephemeral range: a port the kernel picked (LocalPort => 0) comes
# from that range, where any process's outgoing connection (MPI's launchers, in the tests running beside
# this one) can take it before the daemon binds it. Never one of the ports given (taken already by this
# cluster, not yet bound). perl-base is on every Debian system.
free_port() {
  perl -MIO::Socket::INET -e '
    my %taken = map { $_ => 1 } @ARGV;
    open(my $range, "<", "/proc/sys/net/ipv4/ip_local_port_range") or die "no ip_local_port_range\n";
    my ($ephemeral) = split " ", scalar <$range>;
    my $low = $ephemeral > 11024 ? $ephemeral - 10000 : 1024;
    for (1 .. 1000) {
      my $port = $low + int(rand($ephemeral - $low));
      next if $taken{$port};
      if (IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1", LocalPort => $port, ReuseAddr => 0)) {
        print $port;
        exit 0;
      }
    }
    die "no free port below $ephemeral\n";' "$@"
}

if [ "$action" = stop ]; then
  stop
  exit 0
fi
[ "$action" = start ] || { echo "slurm_cluster.sh: unknown action '$action'" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "slurm_cluster.sh: needs root (slurmd runs jobs as their users)" >&2; exit 2; }
sbin=/usr/sbin
for daemon in slurmctld slurmd slurmstepd; do
  [ -x "$sbin/$daemon-wlm" ] || [ -x "$sbin/$daemon" ] || {
    echo "slurm_cluster.sh: $daemon not installed (apt-get install slurmctld slurmd slurm-client)" >&2; exit 2; }
done

mkdir -p "$dir"/{bin,run,log,state,spool,dev}
# Symlinks under the plain names: Slurm derives behaviour from argv[0].
for daemon in slurmctld slurmd slurmstepd; do
  target=$(readlink -f "$sbin/$daemon")
  ln -sf "$target" "$dir/bin/$daemon"
done
for i in 0 1 2; do
  [ -e "$dir/dev/gpu$i" ] || mknod "$dir/dev/gpu$i" c 1 3
done

ctl_port=$(free_port)
declare -A node_port
for n in "${nodes[@]}"; do node_port[$n]=$(free_port "$ctl_port" "${node_port[@]}"); done
host=$(hostname -s)
ctl_address=127.0.0.1
[ -n "$emucluster_state" ] && ctl_address=$(bash "$emucluster" address "$emucluster_state")
{
  echo "ClusterName=dispartest"
  echo "SlurmctldHost=$host($ctl_address)"
  echo "SlurmctldPort=$ctl_port"
  echo "SlurmUser=root"
  echo "SlurmdUser=root"
  echo "AuthType=auth/none"
  echo "CredType=cred/none"
  echo "MpiDefault=none"
  echo "ProctrackType=proctrack/pgid"
  echo "TaskPlugin=task/none"
  echo "SelectType=select/cons_tres"
  echo "SelectTypeParameters=CR_Core"
  echo "SlurmdParameters=config_overrides"
  echo "GresTypes=gpu"
  echo "ReturnToService=2"
  echo "SchedulerType=sched/backfill"
  echo "StateSaveLocation=$dir/state"
  echo "SlurmctldPidFile=$dir/run/slurmctld.pid"
  echo "SlurmctldLogFile=$dir/log/slurmctld.log"
  echo "SlurmdSpoolDir=$dir/spool/%n"
  echo "SlurmdPidFile=$dir/run/slurmd-%n.pid"
  echo "SlurmdLogFile=$dir/log/slurmd-%n.log"
  # Per node: PMIx (srun --mpi=pmix, Open MPI) puts its client directories here; one /tmp for every
  # emulated node would make them collide.
  echo "TmpFS=$dir/tmp/%n"
  echo "JobCompType=jobcomp/none"
  echo "AccountingStorageType=accounting_storage/none"
  echo "JobAcctGatherType=jobacct_gather/none"
  echo "InactiveLimit=0"
  echo "KillWait=2"
  echo "MinJobAge=300"
  echo "SlurmctldTimeout=30"
  echo "SlurmdTimeout=30"
  echo "Waittime=0"
  if [ -n "$emucluster_state" ]; then
    awk -v ports="${node_port[*]}" -v names="${nodes[*]}" 'BEGIN { n = split(names, name, " "); split(ports, port, " ")
        for (i = 1; i <= n; i++) portOf[name[i]] = port[i] }
      { cpus = int($4); if (cpus < $4) cpus++
        printf "NodeName=%s NodeAddr=%s NodeHostname=%s Port=%s CPUs=%d RealMemory=2000 State=UNKNOWN\n", $1, $2, $1, portOf[$1], cpus }' \
      "$emucluster_state/nodes"
  else
    echo "NodeName=gpu1 NodeAddr=127.0.0.1 NodeHostname=$host Port=${node_port[gpu1]} CPUs=4 RealMemory=8000 Gres=gpu:a100:2 State=UNKNOWN"
    echo "NodeName=gpu2 NodeAddr=127.0.0.1 NodeHostname=$host Port=${node_port[gpu2]} CPUs=4 RealMemory=8000 Gres=gpu:v100:1 State=UNKNOWN"
    echo "NodeName=cpu1 NodeAddr=127.0.0.1 NodeHostname=$host Port=${node_port[cpu1]} CPUs=2 RealMemory=4000 State=UNKNOWN"
    echo "NodeName=cpu2 NodeAddr=127.0.0.1 NodeHostname=$host Port=${node_port[cpu2]} CPUs=2 RealMemory=4000 State=UNKNOWN"
  fi
  echo "PartitionName=main Nodes=$(IFS=,; echo "${nodes[*]}") Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
} > "$dir/slurm.conf"
{
  echo "AutoDetect=off"
  if [ -z "$emucluster_state" ]; then
    echo "NodeName=gpu1 Name=gpu Type=a100 File=$dir/dev/gpu0"
    echo "NodeName=gpu1 Name=gpu Type=a100 File=$dir/dev/gpu1"
    echo "NodeName=gpu2 Name=gpu Type=v100 File=$dir/dev/gpu2"
  fi
} > "$dir/gres.conf"
# An emulated node mounts only the cgroup cpu hierarchy (its quota): Slurm's autodetection looks for
# /sys/fs/cgroup/systemd and fails without it. Named, the v1 plugin starts (proctrack/pgid and task/none
# use no controller of it).
if [ -n "$emucluster_state" ]; then echo "CgroupPlugin=cgroup/v1" >"$dir/cgroup.conf"; else rm -f "$dir/cgroup.conf"; fi

fail() {
  echo "slurm_cluster.sh: $1" >&2
  for log in "$dir"/log/*.log; do echo "== $log" >&2; tail -n 15 "$log" >&2; done
  stop
  exit 1
}

export SLURM_CONF="$dir/slurm.conf"
"$dir/bin/slurmctld" -i -f "$SLURM_CONF" || fail "slurmctld did not start"
for n in "${nodes[@]}"; do
  mkdir -p "$dir/spool/$n" "$dir/tmp/$n"
  if [ -n "$emucluster_state" ]; then
    bash "$emucluster" exec "$emucluster_state" "$n" "$dir/bin/slurmd" -N "$n" -f "$SLURM_CONF" ||
      fail "slurmd -N $n did not start on its node"
  else
    "$dir/bin/slurmd" -N "$n" -f "$SLURM_CONF" || fail "slurmd -N $n did not start"
  fi
done

for _ in $(seq 100); do
  states=$(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u || true)
  ready=$(echo "$states" | grep -cE ' (idle|mixed|allocated)$' || true)
  [ "$ready" = ${#nodes[@]} ] && { echo "SLURM_CONF=$SLURM_CONF"; exit 0; }
  sleep 0.2
done
fail "the cluster did not come up; node states: $(echo $states)"
