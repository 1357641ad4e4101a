#!/usr/bin/env bash
# The PostgreSQL import figure (issue 36): `bench_discover --import N` against a throwaway server started
# here (initdb and pg_ctl from the PostgreSQL that CMake found, a unix socket in a scratch directory, the
# server stopped and deleted on exit), beside the same import into SQLite in the same run.
# Usage: bench/discover/postgres-import.sh [BUILD_DIR] [NODES]   (defaults: build/, 100000)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
nodes=${2:-100000}
pg_ctl=$(grep -m1 '^DISPAR_PG_CTL:' "$build/CMakeCache.txt" | cut -d= -f2 || true)
bindir=$(dirname "${pg_ctl:-/nonexistent/pg_ctl}")
[ -x "$bindir/pg_ctl" ] || { echo "postgres-import.sh: no PostgreSQL server binaries (run scripts/setup.sh --tests)" >&2; exit 1; }
run_as=()
if [ "$(id -u)" = 0 ]; then
  # The server refuses to run as root.
  chown postgres "$work" 2>/dev/null || chown nobody "$work"
  run_as=(runuser -u "$(stat -c %U "$work")" --)
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${run_as[@]}" "$bindir/initdb" -D "$work/data" -U postgres -A trust -E UTF8 --no-sync > "$work/initdb.log"
"${run_as[@]}" "$bindir/pg_ctl" -D "$work/data" -l "$work/server.log" -w -t 60 \
  -o "-p $port -k $work -c listen_addresses='' -c fsync=off -c synchronous_commit=off" start > /dev/null
trap '"${run_as[@]}" "$bindir/pg_ctl" -D "$work/data" -m fast -w stop > /dev/null; rm -rf "$work"' EXIT
"${run_as[@]}" "$bindir/psql" -h "$work" -p "$port" -U postgres -q -c 'CREATE DATABASE bench' postgres
"$build/bin/bench_discover" --import "$nodes" --postgres "postgresql://postgres@/bench?host=$work&port=$port"
