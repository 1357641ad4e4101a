#!/usr/bin/env bash
# A throw-away PostgreSQL server for the emulated cluster (emucluster.sh): it listens on one address only
# (the cluster's bridge, the host's side) and lets the cluster's subnet in without a password, so that
# every node's `streammap daemon` can reach it over the network as on a real cluster. Needs root.
#   postgres_on_bridge.sh start BINDIR DIR ADDRESS   initdb in DIR, start, print the connection string
#   postgres_on_bridge.sh stop BINDIR DIR            stop it (idempotent) and remove DIR
# BINDIR: the server's binaries (initdb, pg_ctl), e.g. /usr/lib/postgresql/15/bin. The server runs as the
# `postgres` user (else `nobody`), which owns DIR; it refuses to run as root.
set -euo pipefail
action=${1:?usage: postgres_on_bridge.sh start|stop BINDIR DIR [ADDRESS]}
bindir=${2:?the server binaries directory}
dir=${3:?the server directory}
user=postgres
id -u "$user" >/dev/null 2>&1 || user=nobody

if [ "$action" = stop ]; then
  [ -d "$dir/data" ] && runuser -u "$user" -- "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  exit 0
fi
[ "$action" = start ] || { echo "postgres_on_bridge.sh: unknown action '$action'" >&2; exit 2; }
address=${4:?the address to listen on}
[ "$(id -u)" -eq 0 ] || { echo "postgres_on_bridge.sh: needs root" >&2; exit 2; }
[ -x "$bindir/initdb" ] && [ -x "$bindir/pg_ctl" ] ||
  { echo "postgres_on_bridge.sh: no initdb and pg_ctl in '$bindir' (apt-get install postgresql)" >&2; exit 2; }
mkdir -p "$dir"
chown "$user" "$dir"
runuser -u "$user" -- "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
  { echo "postgres_on_bridge.sh: initdb failed" >&2; cat "$dir/initdb.log" >&2; exit 1; }
echo "host all all ${address%.*}.0/24 trust" >>"$dir/data/pg_hba.conf"
# A port free on that address now (the bridge is the run's own: nothing else binds there).
port=$(perl -MIO::Socket::INET -e '
  for (1 .. 200) {
    my $port = 20000 + int(rand(20000));
    if (IO::Socket::INET->new(Listen => 1, LocalAddr => $ARGV[0], LocalPort => $port, ReuseAddr => 0)) { print $port; exit 0 }
  }
  die "no free port\n";' "$address")
runuser -u "$user" -- "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
  -o "-p $port -k $dir -c listen_addresses='$address' -c fsync=off -c synchronous_commit=off" start >/dev/null ||
  { echo "postgres_on_bridge.sh: the server did not start" >&2; cat "$dir/server.log" >&2; exit 1; }
echo "postgresql://postgres@$address:$port/postgres"
