#!/usr/bin/env bash
# A find through a view over photos against the same find on Photo, same server, same rows
# (issue #27 item 5, goal >= 0.9x; docs/decisions/038). One galleryd with public_read on and the
# issue's Resource view; ROWS photo rows (SQL, no blobs: a find reads rows and signs keys), all
# readable by anyone (ACL `*` read). Alternating wrk rounds, ROUNDS times, of the first page
# ToyPhotoGallery asks for, anonymous (the app id alone, the public filter):
#   - view:  GET /parse/classes/Resource?limit=20&order=-createdAt
#   - photo: GET /parse/classes/Photo?limit=20&order=-createdAt&keys=filename,thumbnail,preview
#            (the same columns; signed thumbnail and preview URLs)
# The manifest cache is off (manifest_cache_bytes = 0) unless CACHE=1: with it, Photo's repeated
# find is answered from memory (ETag-keyed bodies) while a view's never is (decision 038).
# Prints each side's median req/s, the median of per-round ratios (view/photo) and server CPU µs
# a request (bench/rounds.sh's cpu_ticks).
# Usage: bench/views.sh [seconds] — needs wrk and psql. BIN (default .build/debug/galleryd),
#        ROWS (1000), CONNECTIONS (8), ROUNDS (5), PORT (18293), PGPORT_PRIVATE (55449), CACHE (0),
#        PIN (see bench/pin.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-5}"
bin="${BIN:-.build/debug/galleryd}"
rows="${ROWS:-1000}"
connections="${CONNECTIONS:-8}"
rounds="${ROUNDS:-5}"
port="${PORT:-18293}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55449}"

command -v wrk >/dev/null || { echo "views.sh: wrk missing (scripts/deps.sh --bench)" >&2; exit 1; }
command -v psql >/dev/null || { echo "views.sh: psql missing (scripts/deps.sh)" >&2; exit 1; }
[ -x "$bin" ] || { echo "views.sh: no galleryd at $bin (swift build, or set BIN)" >&2; exit 1; }

tmp="$(mktemp -d /tmp/galleryd-views-bench.XXXXXX)"
. bench/pin.sh
. bench/rounds.sh
pid=""
cleanup() {
  [ -n "$pid" ] && { kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; }
  scripts/pg.sh stop "$tmp/pg" || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

cat >"$tmp/galleryd.toml" <<TOML
public_read = true
manifest_cache_bytes = $([ "${CACHE:-0}" = 1 ] && echo 33554432 || echo 0)
[[views]]
class = "Resource"
source = "Photo"
[views.fields]
filename = "filename"
thumbnailURLString = "thumbnail.url"
fileURLString = "preview.url"
TOML
database_url="$(scripts/pg.sh start "$tmp/pg")"
export DATABASE_URL="$database_url" GALLERYD_STORAGE_DIR="$tmp/blobs" GALLERYD_LOG_LEVEL=warning GALLERYD_ACCESS_LOG=off
export GALLERYD_MASTER_KEY="bench-master-key-0123456789" GALLERYD_URL_SIGNING_KEY="bench-url-signing-key-0123456789abcdef"
export GALLERYD_CONFIG="$tmp/galleryd.toml" GALLERYD_EVENT_LOOPS=1
on_server_cpus "$bin" serve --host 127.0.0.1 --port "$port" --public-url "http://127.0.0.1:$port" --workers 0 \
  2>"$tmp/galleryd.log" &
pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 200); do curl -fs -o /dev/null "$base/health" && break; sleep 0.1; done
curl -fs -o /dev/null "$base/health" || { cat "$tmp/galleryd.log" >&2; exit 1; }

# ROWS ready, public photos with a thumbnail and a preview key (a find signs keys; no blob is read).
psql "$database_url" -Xq -v ON_ERROR_STOP=1 <<SQL
insert into photos (object_id, filename, byte_size, checksum, width, height, aspect_ratio, original_key,
                    thumbnail_key, preview_key, status, acl, created_at)
select 'v' || lpad(n::text, 9, '0'), 'image' || n || '.jpg', 1000, md5(n::text) || md5('x' || n), 640, 480, 1.3333,
       'originals/' || n || '.jpg', 'thumbnails/' || n || '.jpg', 'previews/' || n || '.jpg', 'ready',
       '{"*":{"read":true}}', now() - n * interval '1 second'
  from generate_series(1, $rows) n;
analyze photos;
SQL

view="$base/parse/classes/Resource?limit=20&order=-createdAt"
photo="$base/parse/classes/Photo?limit=20&order=-createdAt&keys=filename,thumbnail,preview"
app=(-H "X-Parse-Application-Id: gallery" -H "X-Parse-Client-Version: i1.17.3")
# The same 20 photos, the same URLs, on both sides.
cmp <(curl -fsS "${app[@]}" "$view" | python3 -c 'import json,sys; print([(r["objectId"], r["thumbnailURLString"], r["fileURLString"]) for r in json.load(sys.stdin)["results"]])') \
  <(curl -fsS "${app[@]}" "$photo" | python3 -c 'import json,sys; print([(r["objectId"], r["thumbnail"]["url"], r["preview"]["url"]) for r in json.load(sys.stdin)["results"]])') \
  || { echo "views.sh: the two answers differ" >&2; exit 1; }

run() { # url → "req/s CPU-µs-per-request"
  local before after
  before="$(cpu_ticks "$pid")"
  on_client_cpus wrk -t1 -c"$connections" -d"${duration}s" "${app[@]}" "$1" >"$tmp/wrk.txt"
  after="$(cpu_ticks "$pid")"
  grep -q "Non-2xx" "$tmp/wrk.txt" && { cat "$tmp/wrk.txt" >&2; echo "views.sh: errors under load" >&2; exit 1; }
  awk -v ticks=$((after - before)) -v hz="$clock_ticks" '
    /requests in/ { requests = $1 } /Requests\/sec/ { rps = $2 }
    END { printf "%s %.2f\n", rps, ticks / hz * 1e6 / requests }' "$tmp/wrk.txt"
}
: >"$tmp/view"; : >"$tmp/photo"
run "$view" >/dev/null; run "$photo" >/dev/null  # warm-up
for round in $(seq "$rounds"); do
  run "$view" >>"$tmp/view"
  run "$photo" >>"$tmp/photo"
  echo "== round $round: view $(tail -n1 "$tmp/view"), photo $(tail -n1 "$tmp/photo") (req/s, CPU µs a request)" >&2
done
field() { cut -d' ' -f"$1" "$2"; }
v="$(field 1 "$tmp/view" | median)"; p="$(field 1 "$tmp/photo" | median)"
paired="$(paste <(field 1 "$tmp/view") <(field 1 "$tmp/photo") | awk '{ printf "%.3f\n", $1 / $2 }' | median)"
echo "view Resource (20, -createdAt):      $v req/s ($(field 1 "$tmp/view" | paste -sd' ')), CPU $(field 2 "$tmp/view" | median) µs a request"
echo "Photo, same columns (20, -createdAt): $p req/s ($(field 1 "$tmp/photo" | paste -sd' ')), CPU $(field 2 "$tmp/photo" | median) µs a request"
awk -v v="$v" -v p="$p" -v r="$paired" 'BEGIN { printf "view/photo: %.3f of medians, paired %.3f (goal: 0.9)\n", v / p, r }'
echo "manifest cache: $([ "${CACHE:-0}" = 1 ] && echo on || echo off); rows: $rows"
pinning_summary
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
