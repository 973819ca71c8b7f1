#!/usr/bin/env bash
# A throw-away PostgreSQL server on loopback for the tests (Debian's postgresql-15):
# a fresh data directory, trust authentication, no socket outside DIR. Prints the
# administrator's URL.   scripts/postgres.sh [PORT] [DIR]   (PORT 0: any free port)
set -euo pipefail
port=${1:-0}
if [ "$port" = 0 ]; then
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
dir=${2:-/tmp/coal-postgres}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_postgres() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$1"; else sh -c "$1"; fi; }
if [ -f "$dir/data/postmaster.pid" ]; then
  as_postgres "$bin/pg_ctl -D $dir/data -m immediate stop" >/dev/null 2>&1 || true
fi
rm -rf "$dir"
mkdir -p "$dir"
[ "$(id -u)" = 0 ] && chown postgres "$dir"
as_postgres "$bin/initdb -D $dir/data -A trust -U postgres -E UTF8 --locale=C.UTF-8" >"$dir/initdb.log"
as_postgres "$bin/pg_ctl -D $dir/data -l $dir/server.log -w -o \"-k $dir -p $port -c listen_addresses=127.0.0.1\" start" >/dev/null
echo "postgres://postgres@127.0.0.1:$port/postgres"
