#!/usr/bin/env bash
# Attacks a release build of galleryd with bench/fuzz/http_fuzz.py, end to end and on loopback only:
# builds, starts a private PostgreSQL (scripts/pg.sh) with a fresh database, starts galleryd on
# 127.0.0.1 with a fresh blob directory and its log in the work directory, runs the fuzzer, stops
# the server with SIGTERM (it must exit 0) and keeps the findings.
#
#   bench/fuzz/run.sh [fuzzer options...]      e.g. bench/fuzz/run.sh --time-limit 120 --seed 7
#
# Env: GALLERYD (a built galleryd to attack instead of building this tree's), FUZZ_PORT (18195),
# PGPORT_PRIVATE (55515), FUZZ_DIR (/tmp/galleryd-fuzz), FUZZ_MAX_CONNECTIONS (256: the flood group
# goes past it), FUZZ_OPEN_FILE_CACHE (16: the bucket's open-file cache, small so that the run serves
# more blobs than it holds and its bound is checked). `run.sh --replay FILE` resends a findings file
# to a fresh server. Exit status: the fuzzer's (0 clean, 1 findings), or 3 when the server did not shut
# down cleanly.
set -euo pipefail
cd "$(dirname "$0")/../.."

port="${FUZZ_PORT:-18195}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55515}"
work="${FUZZ_DIR:-/tmp/galleryd-fuzz}"
max_connections="${FUZZ_MAX_CONNECTIONS:-256}"
open_file_cache="${FUZZ_OPEN_FILE_CACHE:-16}"
master_key="fuzz-master-key-$RANDOM$RANDOM"

binary="${GALLERYD:-}"
if [ -z "$binary" ]; then
  swift build -c release --product galleryd >&2
  binary="$(swift build -c release --show-bin-path)/galleryd"
fi

mkdir -p "$work"
# Stop the cluster at the end only if this run started it.
pg_was_running=0
scripts/pg.sh ctl "$work/pg" status >/dev/null 2>&1 && pg_was_running=1
admin_url="$(scripts/pg.sh start "$work/pg")"
database="fuzz_$RANDOM$RANDOM"
psql -XAtq "$admin_url" -c "create database $database"
url="${admin_url/\/galleryd\?//$database?}"
storage="$work/blobs-$database"
log="$work/server-$database.log"

server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill "$server_pid"; wait "$server_pid" || true; fi
  psql -XAtq "$admin_url" -c "drop database if exists $database with (force)" >/dev/null 2>&1 || true
  rm -rf "$storage"
  [ "$pg_was_running" = 1 ] || scripts/pg.sh stop "$work/pg"
}
trap cleanup EXIT INT TERM

GALLERYD_MASTER_KEY="$master_key" DATABASE_URL="$url" GALLERYD_STORAGE_DIR="$storage" GALLERYD_BUCKET_PUBLIC=true \
  GALLERYD_MAX_CONNECTIONS="$max_connections" GALLERYD_OPEN_FILE_CACHE="$open_file_cache" \
  "$binary" serve --port "$port" --host 127.0.0.1 >"$log" 2>&1 &
server_pid=$!
for _ in $(seq 50); do
  curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { echo "galleryd did not start:" >&2; tail -20 "$log" >&2; exit 3; }
  sleep 0.2
done

status=0
python3 bench/fuzz/http_fuzz.py --port "$port" --pid "$server_pid" --storage-dir "$storage" \
  --database-url "$url" --master-key "$master_key" --server-log "$log" \
  --max-connections "$max_connections" --open-file-cache "$open_file_cache" --findings "$work/findings.json" "$@" || status=$?

# A clean shutdown after all that: SIGTERM, exit 0.
kill -TERM "$server_pid"
if wait "$server_pid"; then
  server_pid=""
else
  code=$?
  server_pid=""
  echo "galleryd exited with $code after SIGTERM; log: $log" >&2
  cp "$log" "$work/server-last.log"
  exit 3
fi
cp "$log" "$work/server-last.log"
echo "findings: $work/findings.json, server log: $work/server-last.log" >&2
exit "$status"
