# Sourced by the benchmarks that run galleryd over a private PostgreSQL, once `tmp` (the run's
# temporary directory) is set: that PostgreSQL with galleryd's environment, migrated; the photo
# seed; galleryd serving; and the cleanup for the script's trap.

server_pid=""

# start_database BIN [DIR]: a private PostgreSQL in DIR ($tmp/pg; scripts/pg.sh, on port
# PGPORT_PRIVATE), its URL in database_url and DATABASE_URL, the benchmark keys and
# GALLERYD_STORAGE_DIR ($tmp/blobs) exported, and the schema migrated by BIN.
start_database() {
  database_url="$(scripts/pg.sh start "${2:-$tmp/pg}")"
  export DATABASE_URL="$database_url"
  export GALLERYD_MASTER_KEY="bench-master-key-0123456789"
  export GALLERYD_URL_SIGNING_KEY="bench-url-signing-key-0123456789abcdef"
  export GALLERYD_STORAGE_DIR="$tmp/blobs"
  "$1" migrate >&2
}

# q SQL: the rows of one statement, unaligned, stopping at its error.
q() { psql "$database_url" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

# seed_photos ROWS: ROWS ownerless photos (bench/manifest-seed.sql).
seed_photos() {
  echo "seeding $1 photos…" >&2
  psql "$database_url" -Xq -v ON_ERROR_STOP=1 -v rows="$1" -v owners=0 -f bench/manifest-seed.sql >/dev/null
}

# start_galleryd BIN PORT: BIN serving on 127.0.0.1:PORT without job workers (its log in
# $tmp/serve.log, its pid in server_pid), returning once /health answers; if it exits or has not
# answered within 120 s, the script stops with the log.
start_galleryd() {
  "$1" serve --port "$2" --host 127.0.0.1 --no-migrate --workers 0 2>"$tmp/serve.log" &
  server_pid=$!
  for _ in $(seq 1 1200); do
    curl -fsS "http://127.0.0.1:$2/health" >/dev/null 2>&1 && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$tmp/serve.log" >&2
  echo "$(basename "$0"): galleryd did not start on port $2" >&2
  exit 1
}

# stop_galleryd PID: SIGTERM, up to 10 s for the clean stop (it drains connections), then SIGKILL.
stop_galleryd() {
  [ -n "$1" ] || return 0
  kill "$1" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# cleanup_run [DIR]: for the script's trap: galleryd (server_pid) and the PostgreSQL in DIR ($tmp/pg)
# stopped, $tmp removed (KEEP=1 keeps it, for a look at the logs and the database).
cleanup_run() {
  stop_galleryd "$server_pid"
  scripts/pg.sh stop "${1:-$tmp/pg}" || true
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
