#!/usr/bin/env bash
# Manages a private PostgreSQL cluster that listens only on a Unix socket.
#
#   scripts/pg.sh start DIR   create the cluster in DIR/postgres once, start it with its socket in DIR,
#                             and print the DATABASE_URL to use
#   scripts/pg.sh stop DIR    stop it (fast shutdown)
#   scripts/pg.sh ctl DIR ARGS... run pg_ctl on it as the cluster's owner (for tests that restart it)
#
# initdb refuses to run as root, so as root the cluster belongs to the unprivileged user
# `nobody`; as any other user it belongs to that user. The database superuser is `galleryd`
# and local connections are trusted (the socket directory is the access control).
set -euo pipefail

cmd=${1:?usage: pg.sh start|stop|ctl DIR}
dir=$(mkdir -p "${2:?usage: pg.sh start|stop|ctl DIR}" && cd "$2" && pwd)
shift 2 || true

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[ -x "$bindir/initdb" ] || { echo "pg.sh: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }
data="$dir/postgres"
port=${PGPORT_PRIVATE:-5432}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u nobody -- "$@"
  else
    "$@"
  fi
}

case "$cmd" in
start)
  if [ "$(id -u)" -eq 0 ]; then
    chown nobody "$dir"
    # nobody must be able to reach the directory.
    chmod o+x "$dir"
    p="$dir"; while [ "$p" != "/" ]; do p=$(dirname "$p"); chmod o+x "$p" 2>/dev/null || true; done
  fi
  if [ ! -s "$data/PG_VERSION" ]; then
    as_owner "$bindir/initdb" -D "$data" -U galleryd --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
  fi
  # The server options are kept in DIR/server.opts so that `ctl DIR start` after a `stop` brings the
  # server back on the same socket and port (pg_ctl start alone would use the compiled-in defaults).
  echo "-c listen_addresses='' -k '$dir' -p $port -c max_connections=200 -c fsync=${PG_FSYNC:-on} -c shared_buffers=256MB" >"$dir/server.opts"
  if ! as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    as_owner "$bindir/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 start -o "$(cat "$dir/server.opts")" >/dev/null \
      || { tail -n 30 "$dir/postgres.log" >&2; exit 1; }
  fi
  # Create the application database once.
  if ! "$bindir/psql" -h "$dir" -p "$port" -U galleryd -d postgres -tAc "select 1 from pg_database where datname='galleryd'" | grep -q 1; then
    "$bindir/psql" -h "$dir" -p "$port" -U galleryd -d postgres -qc "create database galleryd" >/dev/null
  fi
  echo "postgresql://galleryd@/galleryd?host=$dir&port=$port"
  ;;
stop)
  if [ -s "$data/PG_VERSION" ]; then
    as_owner "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  ;;
ctl)
  case "${1:-}" in
  start|restart)
    # Same options as `start` above (restart alone would reuse postmaster.opts, start would not).
    as_owner "$bindir/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 "$@" -o "$(cat "$dir/server.opts")" ;;
  *)
    as_owner "$bindir/pg_ctl" -D "$data" -l "$dir/postgres.log" -w "$@" ;;
  esac
  ;;
*)
  echo "usage: pg.sh start|stop|ctl DIR" >&2; exit 2 ;;
esac
