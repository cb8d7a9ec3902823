#!/usr/bin/env bash
# Serves one real thumbnail from galleryd's bucket and from nginx (one worker, sendfile, keep-alive)
# reading the same file in the same storage directory, and compares requests per second.
# The two run alternately for ROUNDS rounds and each one's median is compared, so that load from
# other processes on a shared machine hits both alike.
# Usage: bench/bucket.sh [seconds] — needs wrk and nginx (scripts/deps.sh --bench) and PostgreSQL.
# Env: PHOTO (default ../shared/photos/flower.jpg, a ~30 KB thumbnail), CONNECTIONS (64), ROUNDS (3), LOOPS (1),
#      PGPORT_PRIVATE (55611), OURS_PORT (18091), NGINX_PORT (18092),
#      PIN (1: servers on the last core, wrk on the others; 0: no pinning; see bench/pin.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-10}"
connections="${CONNECTIONS:-64}"
photo="${PHOTO:-../shared/photos/flower.jpg}"
rounds="${ROUNDS:-3}"
ours_port="${OURS_PORT:-18091}"
nginx_port="${NGINX_PORT:-18092}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55611}"

command -v wrk >/dev/null || { echo "bucket.sh: wrk missing (scripts/deps.sh --bench)" >&2; exit 1; }
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$nginx_bin" ] || { echo "bucket.sh: nginx missing (scripts/deps.sh --bench)" >&2; exit 1; }
[ -f "$photo" ] || { echo "bucket.sh: no photo at $photo (set PHOTO)" >&2; exit 1; }

swift build -c release --product galleryd >&2
galleryd="$(swift build -c release --show-bin-path)/galleryd"

tmp="$(mktemp -d /tmp/galleryd-bucket-bench.XXXXXX)"
. bench/pin.sh
. bench/nginx.sh
ours_pid=""
nginx_pid=""
cleanup() {
  [ -n "$ours_pid" ] && kill "$ours_pid" 2>/dev/null && wait "$ours_pid" 2>/dev/null || true
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null || true
  scripts/pg.sh stop "$tmp/pg" || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

database_url="$(scripts/pg.sh start "$tmp/pg")"
storage="$tmp/blobs"
master_key="bench-master-key-$(date +%s%N)"

# One event loop against nginx's one worker process, as bench/http.sh does (LOOPS to change it).
GALLERYD_MASTER_KEY="$master_key" GALLERYD_LOG_LEVEL=warning GALLERYD_EVENT_LOOPS="${LOOPS:-1}" \
  on_server_cpus "$galleryd" serve --host 127.0.0.1 --port "$ours_port" --database-url "$database_url" --storage-dir "$storage" \
  --public-url "http://127.0.0.1:$ours_port" --workers 1 2>"$tmp/galleryd.log" &
ours_pid=$!
for _ in $(seq 100); do
  curl -fs -o /dev/null "http://127.0.0.1:$ours_port/health" && break
  sleep 0.1
done
curl -fs -o /dev/null "http://127.0.0.1:$ours_port/health" || { cat "$tmp/galleryd.log" >&2; echo "bucket.sh: galleryd did not start" >&2; exit 1; }

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
echo "thumbnail: $key, $(stat -c %s "$storage/$key") bytes" >&2

write_nginx_conf "$tmp/nginx.conf" "$tmp" "$nginx_port" \
  "  sendfile on;
  tcp_nopush on;
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
cmp <(curl -fsS "http://127.0.0.1:$ours_port/bucket/$key") <(curl -fsS "http://127.0.0.1:$nginx_port/bucket/$key") \
  || { echo "bucket.sh: galleryd and nginx serve different bytes" >&2; exit 1; }

run() { # port → req/s
  on_client_cpus wrk -t1 -c"$connections" -d"${duration}s" "http://127.0.0.1:$1/bucket/$key" | tee "$tmp/wrk-$1.txt" >&2
  awk '/Requests\/sec/ { print $2 }' "$tmp/wrk-$1.txt"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for port in "$ours_port" "$nginx_port"; do  # warm-up
  on_client_cpus wrk -t1 -c"$connections" -d2s "http://127.0.0.1:$port/bucket/$key" >/dev/null
done
: >"$tmp/ours" && : >"$tmp/theirs"
for round in $(seq "$rounds"); do
  echo "== round $round: galleryd bucket" >&2
  run "$ours_port" >>"$tmp/ours"
  echo "== round $round: nginx (1 worker, sendfile)" >&2
  run "$nginx_port" >>"$tmp/theirs"
done
ours="$(median <"$tmp/ours")"
theirs="$(median <"$tmp/theirs")"

# Each round's two runs are back to back, so their ratio shares the machine's mood of the moment;
# the median of those ratios is the steadier figure on a shared machine.
paired="$(paste "$tmp/ours" "$tmp/theirs" | awk '{ printf "%.3f\n", $1 / $2 }' | median)"

echo "galleryd: $ours req/s (median of $(paste -sd' ' "$tmp/ours"))"
echo "nginx:    $theirs req/s (median of $(paste -sd' ' "$tmp/theirs"))"
pinning_summary
awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "ratio:    %.2f of medians (target >= 0.90)\n", a / b }'
awk -v p="$paired" 'BEGIN { printf "paired:   %.2f, the median of the per-round ratios\n", p }'
