#!/usr/bin/env bash
# The Flickr API against the Parse API on the same rows: one galleryd (public_read on), PHOTOS
# photos tagged "bench", all in one gallery whose ACL gives `*` read. Alternating wrk rounds of
#   - flickr.photos.search, tags=bench, per_page=100, extras=url_s,url_m, anonymous (the public
#     filter through the gallery, the total, two Flickr asset URLs a photo, JSON), and
#   - the Parse find of the same 100 rows (where tags = bench, order -createdAt, limit 100, master key),
# ROUNDS times. Prints each side's median req/s, the median of per-round ratios (flickr/parse; the
# issue's bar is 0.8), and server CPU µs per request (bench/rounds.sh's cpu_ticks).
# Usage: bench/flickr.sh [seconds] — needs wrk and PostgreSQL. BIN (default .build/debug/galleryd),
#        PHOTO (see bench/photos.sh), PHOTOS (100), CONNECTIONS (16), ROUNDS (5), PORT (18291),
#        PGPORT_PRIVATE (55447), PIN (see bench/pin.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-5}"
bin="${BIN:-.build/debug/galleryd}"
. bench/photos.sh
photo="${PHOTO:-$(bench_photo flower.jpg smallest)}"
photos="${PHOTOS:-100}"
connections="${CONNECTIONS:-16}"
rounds="${ROUNDS:-5}"
port="${PORT:-18291}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55447}"

command -v wrk >/dev/null || { echo "flickr.sh: wrk missing (scripts/deps.sh --bench)" >&2; exit 1; }
[ -x "$bin" ] || { echo "flickr.sh: no galleryd at $bin (swift build, or set BIN)" >&2; exit 1; }
[ -f "$photo" ] || { echo "flickr.sh: no photo at $photo (set PHOTO)" >&2; exit 1; }

tmp="$(mktemp -d /tmp/galleryd-flickr-bench.XXXXXX)"
. bench/pin.sh
. bench/rounds.sh
pid=""
cleanup() {
  [ -n "$pid" ] && { kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; }
  scripts/pg.sh stop "$tmp/pg" || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

database_url="$(scripts/pg.sh start "$tmp/pg")"
export DATABASE_URL="$database_url" GALLERYD_STORAGE_DIR="$tmp/blobs" GALLERYD_LOG_LEVEL=warning GALLERYD_ACCESS_LOG=off
export GALLERYD_MASTER_KEY="bench-master-key-0123456789" GALLERYD_URL_SIGNING_KEY="bench-url-signing-key-0123456789abcdef"
export GALLERYD_PUBLIC_READ=true GALLERYD_EVENT_LOOPS=1
on_server_cpus "$bin" serve --host 127.0.0.1 --port "$port" --public-url "http://127.0.0.1:$port" --workers 1 \
  2>"$tmp/galleryd.log" &
pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 200); do curl -fs -o /dev/null "$base/health" && break; sleep 0.1; done
curl -fs -o /dev/null "$base/health" || { cat "$tmp/galleryd.log" >&2; exit 1; }

parse() { curl -fsS -H "X-Parse-Application-Id: gallery" -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY" "$@"; }
json_field() { python3 -c 'import json, sys; print(json.load(sys.stdin).get(sys.argv[1], ""))' "$1"; }
gallery="$(parse -H "Content-Type: application/json" -d '{"name":"bench","ACL":{"*":{"read":true}}}' \
  "$base/parse/classes/Gallery" | json_field objectId)"
# PHOTOS distinct photos: the same JPEG with a different comment segment each (new bytes, new photo).
for i in $(seq "$photos"); do
  python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); c=("bench %s" % sys.argv[2]).encode(); sys.stdout.buffer.write(d[:2]+b"\xff\xfe"+(len(c)+2).to_bytes(2,"big")+c+d[2:])' \
    "$photo" "$i" >"$tmp/p.jpg"
  name="$(parse -H "Content-Type: image/jpeg" --data-binary "@$tmp/p.jpg" "$base/parse/files/p$i.jpg" | json_field name)"
  id="$(parse -H "Content-Type: application/json" -d "{\"original\":{\"__type\":\"File\",\"name\":\"$name\"},\"tags\":[\"bench\"]}" \
    "$base/parse/classes/Photo" | json_field objectId)"
  parse -o /dev/null -H "Content-Type: application/json" \
    -d "{\"gallery\":{\"__type\":\"Pointer\",\"className\":\"Gallery\",\"objectId\":\"$gallery\"},\"photo\":{\"__type\":\"Pointer\",\"className\":\"Photo\",\"objectId\":\"$id\"}}" \
    "$base/parse/classes/GalleryItem"
done
for _ in $(seq 600); do
  pending="$(parse "$base/parse/classes/Photo?count=1&limit=0&where=%7B%22status%22%3A%7B%22%24ne%22%3A%22ready%22%7D%7D" | json_field count)"
  [ "$pending" = 0 ] && break
  sleep 0.2
done
[ "$pending" = 0 ] || { echo "flickr.sh: $pending photos not ready" >&2; exit 1; }

flickr="$base/services/rest/?method=flickr.photos.search&api_key=gallery&tags=bench&per_page=100&extras=url_s,url_m&format=json&nojsoncallback=1"
find="$base/parse/classes/Photo?where=%7B%22tags%22%3A%22bench%22%7D&order=-createdAt&limit=100"
# The same 100 rows on both sides.
cmp <(curl -fsS "$flickr" | python3 -c 'import json,sys; print(sorted(p["id"] for p in json.load(sys.stdin)["photos"]["photo"]))') \
  <(parse "$find" | python3 -c 'import json,sys; print(sorted(p["objectId"] for p in json.load(sys.stdin)["results"]))') \
  || { echo "flickr.sh: the two answers hold different photos" >&2; exit 1; }

run() { # url → "req/s CPU-µs-per-request"
  local before after
  before="$(cpu_ticks "$pid")"
  on_client_cpus wrk -t1 -c"$connections" -d"${duration}s" -H "X-Parse-Application-Id: gallery" \
    -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY" "$1" >"$tmp/wrk.txt"
  after="$(cpu_ticks "$pid")"
  grep -q "Non-2xx" "$tmp/wrk.txt" && { cat "$tmp/wrk.txt" >&2; echo "flickr.sh: errors under load" >&2; exit 1; }
  awk -v ticks=$((after - before)) -v hz="$clock_ticks" '
    /requests in/ { requests = $1 } /Requests\/sec/ { rps = $2 }
    END { printf "%s %.2f\n", rps, ticks / hz * 1e6 / requests }' "$tmp/wrk.txt"
}
# wrk's headers go to both; the Flickr endpoint reads neither (it is anonymous: api_key only).
: >"$tmp/flickr"; : >"$tmp/parse"
run "$flickr" >/dev/null; run "$find" >/dev/null  # warm-up
for round in $(seq "$rounds"); do
  run "$flickr" >>"$tmp/flickr"
  run "$find" >>"$tmp/parse"
  echo "== round $round: flickr $(tail -n1 "$tmp/flickr"), parse $(tail -n1 "$tmp/parse") (req/s, CPU µs a request)" >&2
done
field() { cut -d' ' -f"$1" "$2"; }
f="$(field 1 "$tmp/flickr" | median)"; p="$(field 1 "$tmp/parse" | median)"
paired="$(paste <(field 1 "$tmp/flickr") <(field 1 "$tmp/parse") | awk '{ printf "%.3f\n", $1 / $2 }' | median)"
echo "flickr.photos.search (100, url_s,url_m): $f req/s ($(field 1 "$tmp/flickr" | paste -sd' ')), CPU $(field 2 "$tmp/flickr" | median) µs a request"
echo "Parse find (same 100 rows):              $p req/s ($(field 1 "$tmp/parse" | paste -sd' ')), CPU $(field 2 "$tmp/parse" | median) µs a request"
awk -v f="$f" -v p="$p" -v r="$paired" 'BEGIN { printf "flickr/parse: %.3f of medians, paired %.3f (bar: 0.8)\n", f / p, r }'
pinning_summary
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
