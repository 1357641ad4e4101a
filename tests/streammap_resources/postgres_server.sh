#!/usr/bin/env bash
# A throw-away PostgreSQL server for the tests, the one recipe for all of them: the resource database's
# PostgreSQL tests (PostgresServer.h: a unix socket only) and the emulated cluster's (tests/cluster: also
# on the cluster's bridge, so that every node's `streammap daemon` reaches it over the network).
#   postgres_server.sh start BINDIR DIR [ADDRESS]   initdb in DIR (made if missing) and start the server,
#                        listening on a unix socket in DIR and, with ADDRESS, on that address too, letting
#                        its /24 in without a password; prints the connection string of database postgres
#   postgres_server.sh restart BINDIR DIR           pg_ctl restart -m fast: every client connection is cut
#   postgres_server.sh stop BINDIR DIR              stops it (idempotent) and removes DIR
# BINDIR: the server's binaries (initdb, pg_ctl), e.g. /usr/lib/postgresql/15/bin. The server refuses to
# run as root: under root it runs as the `postgres` user (else `nobody`), which owns DIR. Durability is
# not under test, speed is (no fsync).
set -euo pipefail
usage="usage: postgres_server.sh start|restart|stop BINDIR DIR [ADDRESS]"
action=${1:?$usage}
bindir=${2:?$usage}
dir=${3:?$usage}
run_as=()
if [ "$(id -u)" -eq 0 ]; then
  user=postgres
  id -u "$user" >/dev/null 2>&1 || user=nobody
  run_as=(runuser -u "$user" --)
fi
pg_ctl() { (cd "$dir" && "${run_as[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 "$@"); }

case $action in
  stop)
    [ -d "$dir/data" ] && pg_ctl -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    exit 0 ;;
  restart)
    pg_ctl -m fast restart >/dev/null || { echo "postgres_server.sh: restart failed" >&2; tail -5 "$dir/server.log" >&2; exit 1; }
    exit 0 ;;
  start) ;;
  *) echo "postgres_server.sh: unknown action '$action'; $usage" >&2; exit 2 ;;
esac
address=${4:-}
[ -x "$bindir/initdb" ] && [ -x "$bindir/pg_ctl" ] ||
  { echo "postgres_server.sh: no initdb and pg_ctl in '$bindir' (apt-get install postgresql; scripts/setup.sh does)" >&2; exit 2; }
mkdir -p "$dir"
[ ${#run_as[@]} -eq 0 ] || chown "$user" "$dir"
(cd "$dir" && "${run_as[@]}" "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1) ||
  { echo "postgres_server.sh: initdb failed" >&2; cat "$dir/initdb.log" >&2; exit 1; }
[ -z "$address" ] || echo "host all all ${address%.*}.0/24 trust" >>"$dir/data/pg_hba.conf"
# A port free now on the address it listens on (the unix socket's name has one too).
port=$(perl -MIO::Socket::INET -e '
  for (1 .. 200) {
    my $port = 20000 + int(rand(20000));
    if (IO::Socket::INET->new(Listen => 1, LocalAddr => $ARGV[0], LocalPort => $port, ReuseAddr => 0)) { print $port; exit 0 }
  }
  die "no free port\n";' "${address:-127.0.0.1}")
pg_ctl -o "-p $port -k $dir -c listen_addresses='$address' -c fsync=off -c synchronous_commit=off \
  -c full_page_writes=off -c max_connections=300" start >/dev/null ||
  { echo "postgres_server.sh: the server did not start" >&2; cat "$dir/server.log" >&2; exit 1; }
if [ -n "$address" ]; then
  echo "postgresql://postgres@$address:$port/postgres"
else
  echo "postgresql://postgres@/postgres?host=$dir&port=$port"
fi
