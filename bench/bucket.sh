#!/usr/bin/env bash
# Serves one real thumbnail from galleryd's bucket and from nginx (one worker, sendfile, keep-alive)
# reading the same file in the same storage directory, and compares requests per second.
# The two run alternately for ROUNDS rounds and each one's median is compared, so that load from
# other processes on a shared machine hits both alike.
# Plain URLs (bucket_public = true): the signature check's cost is bench/signed-urls.sh's.
# Usage: bench/bucket.sh [seconds] — needs wrk and nginx (scripts/deps.sh --bench) and PostgreSQL.
# Env: PHOTO (default PHOTOS_DIR's flower.jpg, a ~30 KB thumbnail, else its smallest JPEG; PHOTOS_DIR
#      defaults to samples/photos, see bench/photos.sh), CONNECTIONS (64), ROUNDS (3), LOOPS (1),
#      IO_BACKEND (both: a galleryd per backend, dispatch and epoll, side by side; or dispatch, or epoll),
#      PGPORT_PRIVATE (55611), OURS_PORT (18091), NGINX_PORT (18099),
#      PIN (1: servers on the last core, wrk on the others; 0: no pinning; see bench/pin.sh),
#      COMPARE (another build, run beside this one on the first backend in every round: paired CPU/req),
#      HIGH_CONNECTIONS (1000: one more round at this many connections, for p99 under a crowd; 0: none),
#      ACCESS_LOG (on: galleryd's default text access log and nginx's buffered one; off: neither),
#      SIZE (a display size, e.g. s: serve sizes/<id>/<size>.jpg, rendered by a first GET, instead of the thumbnail).
# Prints per server the median req/s and CPU µs per request (utime+stime from /proc over the run),
# every round with its p99 latency, and the ratios to nginx: of medians and paired per round.
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-10}"
connections="${CONNECTIONS:-64}"
. bench/photos.sh
photo="${PHOTO:-$(bench_photo flower.jpg smallest)}"
rounds="${ROUNDS:-3}"
backends="${IO_BACKEND:-both}"
[ "$backends" = both ] && backends="dispatch epoll"
ours_port="${OURS_PORT:-18091}"
nginx_port="${NGINX_PORT:-18099}"  # clear of the galleryd ports (one per backend from OURS_PORT)
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55611}"

command -v wrk >/dev/null || { echo "bucket.sh: wrk missing (scripts/deps.sh --bench)" >&2; exit 1; }
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$nginx_bin" ] || { echo "bucket.sh: nginx missing (scripts/deps.sh --bench)" >&2; exit 1; }
[ -f "$photo" ] || { echo "bucket.sh: no photo at $photo (set PHOTO)" >&2; exit 1; }

if [ -z "${GALLERYD:-}" ]; then swift build -c release --product galleryd >&2; fi
galleryd="${GALLERYD:-$(swift build -c release --show-bin-path)/galleryd}"  # GALLERYD: another build to compare

tmp="$(mktemp -d /tmp/galleryd-bucket-bench.XXXXXX)"
. bench/pin.sh
. bench/nginx.sh
. bench/rounds.sh
ours_pids=""
nginx_pid=""
cleanup() {
  for pid in $ours_pids; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null || true
  scripts/pg.sh stop "$tmp/pg" || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

database_url="$(scripts/pg.sh start "$tmp/pg")"
storage="$tmp/blobs"
master_key="bench-master-key-$(date +%s%N)"

# One event loop against nginx's one worker process, as bench/http.sh does (LOOPS to change it).
# One galleryd per backend on consecutive ports, sharing the database and the store; the first
# one runs the worker that makes the thumbnail.
ports=""
port="$ours_port"
workers=1
names=""
servers=""
for backend in $backends; do servers="$servers $backend:$backend:$galleryd"; done
# COMPARE: another build of the same program, run beside this one on the first backend, each round.
[ -n "${COMPARE:-}" ] && servers="$servers ${backends%% *}-compare:${backends%% *}:$COMPARE"
for server in $servers; do
  IFS=: read -r name backend binary <<<"$server"
  names="$names $name"
  GALLERYD_MASTER_KEY="$master_key" GALLERYD_BUCKET_PUBLIC=true GALLERYD_LOG_LEVEL=warning GALLERYD_ACCESS_LOG="$( [ "${ACCESS_LOG:-on}" = off ] && echo off || echo text )" GALLERYD_EVENT_LOOPS="${LOOPS:-1}" GALLERYD_IO_BACKEND="$backend" \
    on_server_cpus "$binary" serve --host 127.0.0.1 --port "$port" --database-url "$database_url" --storage-dir "$storage" \
    --public-url "http://127.0.0.1:$port" --workers "$workers" 2>"$tmp/galleryd-$name.log" &
  ours_pids="$ours_pids $!"
  for _ in $(seq 100); do
    curl -fs -o /dev/null "http://127.0.0.1:$port/health" && break
    sleep 0.1
  done
  curl -fs -o /dev/null "http://127.0.0.1:$port/health" || { cat "$tmp/galleryd-$name.log" >&2; echo "bucket.sh: galleryd ($name) did not start" >&2; exit 1; }
  ports="$ports $port"
  port=$((port + 1))
  workers=0
done

parse() { curl -fsS -H "X-Parse-Application-Id: gallery" -H "X-Parse-Master-Key: $master_key" "$@"; }
json_field() { python3 -c 'import json, sys; print(json.load(sys.stdin).get(sys.argv[1], ""))' "$1"; }

file_name="$(parse -H "Content-Type: image/jpeg" --data-binary "@$photo" "http://127.0.0.1:$ours_port/parse/files/$(basename "$photo")" | json_field name)"
photo_id="$(parse -H "Content-Type: application/json" \
  -d "{\"original\":{\"__type\":\"File\",\"name\":\"$file_name\"}}" \
  "http://127.0.0.1:$ours_port/parse/classes/Photo" | json_field objectId)"
status=""
for _ in $(seq 600); do
  status="$(parse "http://127.0.0.1:$ours_port/parse/classes/Photo/$photo_id" | json_field status)"
  [ "$status" = ready ] || [ "$status" = failed ] && break
  sleep 0.1
done
[ "$status" = ready ] || { echo "bucket.sh: photo $photo_id is '$status', not ready" >&2; exit 1; }
key="thumbnails/$photo_id.jpg"
if [ -n "${SIZE:-}" ]; then
  key="sizes/$photo_id/$SIZE.jpg"
  curl -fsS -o /dev/null "http://127.0.0.1:$ours_port/bucket/$key"  # the first GET renders it
fi
echo "served: $key, $(stat -c %s "$storage/$key") bytes" >&2

write_nginx_conf "$tmp/nginx.conf" "$tmp" "$nginx_port" \
  "  sendfile on;
  tcp_nopush on;
  open_file_cache max=1000 inactive=60s;
  open_file_cache_valid 60s;
  types { image/jpeg jpg; }" \
  "    location /bucket/ {
      alias $storage/;
      add_header Cache-Control \"public, max-age=31536000, immutable\";
    }"
on_server_cpus "$nginx_bin" -c "$tmp/nginx.conf" -p "$tmp" &
nginx_pid=$!
for _ in $(seq 50); do
  curl -fs -o /dev/null "http://127.0.0.1:$nginx_port/bucket/$key" && break
  sleep 0.1
done
for port in $ports; do
  cmp <(curl -fsS "http://127.0.0.1:$port/bucket/$key") <(curl -fsS "http://127.0.0.1:$nginx_port/bucket/$key") \
    || { echo "bucket.sh: galleryd and nginx serve different bytes" >&2; exit 1; }
done

for port in $ports "$nginx_port"; do  # warm-up
  on_client_cpus wrk -t1 -c"$connections" -d2s "http://127.0.0.1:$port/bucket/$key" >/dev/null
done
# Each server runs in turn within a round, so a round's runs share the machine's load of the moment.
set -- $ours_pids
declare -A pid_of
for port in $ports; do pid_of[$port]="$1"; shift; done
high="$(high_connections)"
for pass in "$connections" $high; do
  passes=$rounds
  [ "$pass" = "$connections" ] || passes=1
  for round in $(seq "$passes"); do
    set -- $names
    for port in $ports; do
      echo "== round $round, $pass connections: galleryd bucket ($1)" >&2
      measure "${pid_of[$port]}" "http://127.0.0.1:$port/bucket/$key" "$pass" "$duration" "$port-$pass"
      shift
    done
    echo "== round $round, $pass connections: nginx (1 worker, sendfile)" >&2
    measure "$nginx_pid" "http://127.0.0.1:$nginx_port/bucket/$key" "$pass" "$duration" "$nginx_port-$pass"
  done
done

report_passes
echo "access logs ${ACCESS_LOG:-on}: galleryd $(grep -c '/bucket/' "$tmp"/galleryd-*.log 2>/dev/null | awk -F: '{ s += $NF } END { print s + 0 }') lines, nginx $(wc -l <"$tmp/access.log" 2>/dev/null || echo 0) lines"
backend_summary
pinning_summary
