#!/usr/bin/env bash
# Ingest throughput: `galleryd import` of a folder of real photos into a running `galleryd serve`
# (workers = cores) sharing its database and storage, then waits until every photo is ready or
# failed. Prints photos per second (import start → last photo processed) and the serve process's
# peak RSS (VmHWM).
# Usage: bench/ingest.sh [DIR] — DIR defaults to PHOTOS_DIR, itself samples/photos by default (see
# bench/photos.sh). Needs PostgreSQL.
# Env: PGPORT_PRIVATE (55612), PORT (18093), WORKERS (cores), CONCURRENCY (import concurrency, 4).
set -euo pipefail
cd "$(dirname "$0")/.."

. bench/photos.sh
photos="$(cd "${1:-$photos_dir}" && pwd)"
port="${PORT:-18093}"
workers="${WORKERS:-$(nproc)}"
concurrency="${CONCURRENCY:-4}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55612}"

swift build -c release --product galleryd >&2
galleryd="$(swift build -c release --show-bin-path)/galleryd"

tmp="$(mktemp -d /tmp/galleryd-ingest-bench.XXXXXX)"
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null || true
  scripts/pg.sh stop "$tmp/pg" || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

export DATABASE_URL="$(scripts/pg.sh start "$tmp/pg")"
export GALLERYD_STORAGE_DIR="$tmp/blobs"
export GALLERYD_MASTER_KEY="bench-master-key-$(date +%s%N)"
export GALLERYD_URL_SIGNING_KEY="bench-url-signing-key-0123456789abcdef"
export GALLERYD_LOG_LEVEL=warning
psql_bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)/psql"
sql() { "$psql_bin" "$DATABASE_URL" -tAc "$1"; }

"$galleryd" serve --host 127.0.0.1 --port "$port" --workers "$workers" 2>"$tmp/serve.log" &
serve_pid=$!
for _ in $(seq 100); do
  curl -fs -o /dev/null "http://127.0.0.1:$port/ready" && break
  sleep 0.1
done
curl -fs -o /dev/null "http://127.0.0.1:$port/ready" || { cat "$tmp/serve.log" >&2; echo "ingest.sh: serve did not start" >&2; exit 1; }

files=$(find "$photos" -type f \( -iname '*.jpg' -o -iname '*.jpeg' \) -not -path '*/.*' | wc -l)
bytes=$(find "$photos" -type f \( -iname '*.jpg' -o -iname '*.jpeg' \) -not -path '*/.*' -printf '%s\n' | awk '{ s += $1 } END { print s }')
echo "importing $files files ($((bytes / 1024 / 1024)) MiB) from $photos with $workers worker(s)" >&2

start=$(date +%s.%N)
set +e
"$galleryd" import --concurrency "$concurrency" "$photos" >"$tmp/import.out" 2>"$tmp/import.err"
import_status=$?
set -e
imported_at=$(date +%s.%N)
cat "$tmp/import.out" >&2

total=$(sql "select count(*) from photos")
while :; do
  pending=$(sql "select count(*) from photos where status not in ('ready', 'failed')")
  [ "$pending" -eq 0 ] && break
  kill -0 "$serve_pid" 2>/dev/null || { cat "$tmp/serve.log" >&2; echo "ingest.sh: serve died" >&2; exit 1; }
  sleep 0.05
done
done_at=$(date +%s.%N)
ready=$(sql "select count(*) from photos where status = 'ready'")
failed=$(sql "select count(*) from photos where status = 'failed'")
hwm_kb=$(awk '/VmHWM/ { print $2 }' "/proc/$serve_pid/status")
rss_kb=$(awk '/VmRSS/ { print $2 }' "/proc/$serve_pid/status")

sql "select status, count(*) from photos group by status" | sed 's/^/  /' >&2
[ "$failed" -eq 0 ] || sql "select filename || ': ' || coalesce(error, '') from photos where status = 'failed'" | sed 's/^/  failed: /' >&2

awk -v s="$start" -v i="$imported_at" -v d="$done_at" -v n="$total" -v r="$ready" -v f="$failed" -v b="$bytes" \
    -v hwm="$hwm_kb" -v rss="$rss_kb" -v st="$import_status" 'BEGIN {
  printf "import:      %.2f s (exit %d)\n", i - s, st
  printf "processed:   %d photos (%d ready, %d failed) in %.2f s\n", n, r, f, d - s
  printf "throughput:  %.2f photos/s, %.1f MB/s of originals\n", n / (d - s), b / 1e6 / (d - s)
  printf "serve RSS:   peak %.1f MiB (now %.1f MiB)\n", hwm / 1024, rss / 1024
}'
