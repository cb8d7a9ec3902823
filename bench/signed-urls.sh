#!/usr/bin/env bash
# What signed asset URLs cost, paired: two galleryd on one database and one store, the same
# binary, one with bucket_public = true (plain URLs, no check) and one signing its URLs and
# checking them (the default). Alternating wrk rounds against each, ROUNDS times:
#   - bucket GET of one thumbnail (plain path against its signed URL, the signature in the path:
#     the check per request), and the public instance given the signed URL's path too (what the
#     longer target costs alone: the segment is skipped, not checked),
#   - the manifest's first page of PAGE photos (plain URLs against signed ones: 3 URLs a photo).
# Prints each side's median and the median of per-round ratios (signed/public; the issue's bar
# for the bucket is a cost under 5%, i.e. a ratio of 0.95 or more), and each side's server CPU time
# per request (utime + stime from /proc/<pid>/stat over the run, divided by wrk's request count):
# on a machine others load too, CPU per request moves far less than req/s does.
# Usage: bench/signed-urls.sh [seconds] — needs wrk and PostgreSQL. BIN (default: the debug build,
#        .build/debug/galleryd; set it to a release build for absolute figures), PHOTO
#        (PHOTOS_DIR's flower.jpg, else its smallest JPEG; PHOTOS_DIR defaults to samples/photos,
#        see bench/photos.sh), PHOTOS (30, photos seeded), PAGE (30), CONNECTIONS (32),
#        ROUNDS (5), PORT (18191, and the next), PGPORT_PRIVATE (55613), PIN (see bench/pin.sh),
#        PERF=1: afterwards, `perf record -g` of the signed instance over one more signed bucket run,
#        and the share of its CPU samples inside the check (BucketRoutes.authorize and what it calls)
#        and in the HMAC, with the report kept in PERF_OUT (default /tmp/signed-urls.perf.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-5}"
bin="${BIN:-.build/debug/galleryd}"
. bench/photos.sh
photo="${PHOTO:-$(bench_photo flower.jpg smallest)}"
photos="${PHOTOS:-30}"
page="${PAGE:-30}"
connections="${CONNECTIONS:-32}"
rounds="${ROUNDS:-5}"
public_port="${PORT:-18191}"
signed_port=$((public_port + 1))
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55613}"

command -v wrk >/dev/null || { echo "signed-urls.sh: wrk missing (scripts/deps.sh --bench)" >&2; exit 1; }
[ -x "$bin" ] || { echo "signed-urls.sh: no galleryd at $bin (swift build, or set BIN)" >&2; exit 1; }
[ -f "$photo" ] || { echo "signed-urls.sh: no photo at $photo (set PHOTO)" >&2; exit 1; }

tmp="$(mktemp -d /tmp/galleryd-signed-bench.XXXXXX)"
. bench/pin.sh
. bench/rounds.sh
pids=""
server_pid=()  # [0] the public instance, [1] the signed one
cleanup() {
  for pid in $pids; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  scripts/pg.sh stop "$tmp/pg" || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

database_url="$(scripts/pg.sh start "$tmp/pg")"
export DATABASE_URL="$database_url" GALLERYD_STORAGE_DIR="$tmp/blobs" GALLERYD_LOG_LEVEL=warning GALLERYD_ACCESS_LOG=off
export GALLERYD_MASTER_KEY="bench-master-key-0123456789" GALLERYD_URL_SIGNING_KEY="bench-url-signing-key-0123456789abcdef"
export GALLERYD_EVENT_LOOPS=1
workers=1
for side in public signed; do
  port=$public_port; public=true
  [ "$side" = signed ] && { port=$signed_port; public=false; }
  GALLERYD_BUCKET_PUBLIC=$public on_server_cpus "$bin" serve --host 127.0.0.1 --port "$port" \
    --public-url "http://127.0.0.1:$port" --workers "$workers" 2>"$tmp/galleryd-$side.log" &
  pids="$pids $!"
  server_pid+=("$!")
  workers=0
  for _ in $(seq 200); do curl -fs -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
  curl -fs -o /dev/null "http://127.0.0.1:$port/health" || { cat "$tmp/galleryd-$side.log" >&2; exit 1; }
done

parse() { curl -fsS -H "X-Parse-Application-Id: gallery" -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY" "$@"; }
json_field() { python3 -c 'import json, sys; print(json.load(sys.stdin).get(sys.argv[1], ""))' "$1"; }
# PHOTOS distinct photos: the same JPEG with a different comment segment each (new bytes, new photo).
for i in $(seq "$photos"); do
  python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); c=("bench %s" % sys.argv[2]).encode(); sys.stdout.buffer.write(d[:2]+b"\xff\xfe"+(len(c)+2).to_bytes(2,"big")+c+d[2:])' \
    "$photo" "$i" >"$tmp/p.jpg"
  name="$(parse -H "Content-Type: image/jpeg" --data-binary "@$tmp/p.jpg" "http://127.0.0.1:$public_port/parse/files/p$i.jpg" | json_field name)"
  id="$(parse -H "Content-Type: application/json" -d "{\"original\":{\"__type\":\"File\",\"name\":\"$name\"}}" \
    "http://127.0.0.1:$public_port/parse/classes/Photo" | json_field objectId)"
done
for _ in $(seq 600); do
  pending="$(parse "http://127.0.0.1:$public_port/parse/classes/Photo?count=1&limit=0&where=%7B%22status%22%3A%7B%22%24ne%22%3A%22ready%22%7D%7D" | json_field count)"
  [ "$pending" = 0 ] && break
  sleep 0.2
done
[ "$pending" = 0 ] || { echo "signed-urls.sh: $pending photos not ready" >&2; exit 1; }
thumb() { parse "http://127.0.0.1:$1/parse/classes/Photo/$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["thumbnail"]["url"])'; }
public_url="$(thumb "$public_port")"
signed_url="$(thumb "$signed_port")"
echo "public: $public_url" >&2
echo "signed: $signed_url" >&2
cmp <(curl -fsS "$public_url") <(curl -fsS "$signed_url") || { echo "signed-urls.sh: different bytes" >&2; exit 1; }
unsigned_url="$(echo "$signed_url" | sed -E 's#/s/[0-9]+/[A-Za-z0-9_-]{43}/#/#')"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$unsigned_url")" = 403 ] || { echo "signed-urls.sh: unsigned URL not refused" >&2; exit 1; }

run() { # url, server pid → "req/s CPU-µs-per-request" (cpu_ticks and clock_ticks: bench/rounds.sh)
  local before after
  before="$(cpu_ticks "$2")"
  # The master key for the manifest (the app id alone reads nothing); the bucket ignores both.
  on_client_cpus wrk -t1 -c"$connections" -d"${duration}s" -H "X-Parse-Application-Id: gallery" \
    -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY" "$1" >"$tmp/wrk.txt"
  after="$(cpu_ticks "$2")"
  grep -q "Non-2xx" "$tmp/wrk.txt" && { cat "$tmp/wrk.txt" >&2; echo "signed-urls.sh: errors under load" >&2; exit 1; }
  awk -v ticks=$((after - before)) -v hz="$clock_ticks" '
    /requests in/ { requests = $1 } /Requests\/sec/ { rps = $2 }
    END { printf "%s %.2f\n", rps, ticks / hz * 1e6 / requests }' "$tmp/wrk.txt"
}
manifest="/parse/classes/Photo?order=-createdAt&limit=$page"
: >"$tmp/bucket-public"; : >"$tmp/bucket-signed"; : >"$tmp/bucket-query"; : >"$tmp/manifest-public"; : >"$tmp/manifest-signed"
public_pid="${server_pid[0]}" signed_pid="${server_pid[1]}"
run "$public_url" "$public_pid" >/dev/null; run "$signed_url" "$signed_pid" >/dev/null  # warm-up
for round in $(seq "$rounds"); do
  echo "== round $round" >&2
  run "$public_url" "$public_pid" >>"$tmp/bucket-public"
  run "$signed_url" "$signed_pid" >>"$tmp/bucket-signed"
  run "http://127.0.0.1:$public_port${signed_url#http://127.0.0.1:$signed_port}" "$public_pid" >>"$tmp/bucket-query"
  run "http://127.0.0.1:$public_port$manifest" "$public_pid" >>"$tmp/manifest-public"
  run "http://127.0.0.1:$signed_port$manifest" "$signed_pid" >>"$tmp/manifest-signed"
  tail -qn1 "$tmp/bucket-public" "$tmp/bucket-signed" "$tmp/bucket-query" | paste -sd' ' | sed 's/^/   bucket req\/s, CPU µs: public /' >&2
done
field() { cut -d' ' -f"$1" "$2"; }  # 1: req/s, 2: CPU µs per request
ratios() { paste <(field "$1" "$2") <(field "$1" "$3") | awk '{ printf "%.3f\n", $1 / $2 }' | median; }
for what in bucket manifest; do
  p="$(field 1 "$tmp/$what-public" | median)"; s="$(field 1 "$tmp/$what-signed" | median)"
  printf "%-9s public %s req/s (%s)\n" "$what" "$p" "$(field 1 "$tmp/$what-public" | paste -sd' ')"
  printf "%-9s signed %s req/s (%s)\n" "$what" "$s" "$(field 1 "$tmp/$what-signed" | paste -sd' ')"
  awk -v p="$p" -v s="$s" -v r="$(ratios 1 "$tmp/$what-signed" "$tmp/$what-public")" -v w="$what" \
    'BEGIN { printf "%-9s signed/public %.3f of medians, paired %.3f\n", w, s / p, r }'
  p="$(field 2 "$tmp/$what-public" | median)"; s="$(field 2 "$tmp/$what-signed" | median)"
  printf "%-9s CPU per request: public %s µs (%s), signed %s µs (%s), signed/public paired %s\n" "$what" \
    "$p" "$(field 2 "$tmp/$what-public" | paste -sd' ')" "$s" "$(field 2 "$tmp/$what-signed" | paste -sd' ')" \
    "$(ratios 2 "$tmp/$what-signed" "$tmp/$what-public")"
done
q="$(field 1 "$tmp/bucket-query" | median)"
printf "%-9s public, signed URL's path segment ignored: %s req/s (%s), paired %s of plain; CPU %s µs a request, paired %s of plain\n" \
  bucket "$q" "$(field 1 "$tmp/bucket-query" | paste -sd' ')" "$(ratios 1 "$tmp/bucket-query" "$tmp/bucket-public")" \
  "$(field 2 "$tmp/bucket-query" | median)" "$(ratios 2 "$tmp/bucket-query" "$tmp/bucket-public")"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "${PERF:-0}" = 1 ]; then
  command -v perf >/dev/null || { echo "signed-urls.sh: PERF=1 needs perf" >&2; exit 1; }
  perf record -q -g -F 2000 -o "$tmp/perf.data" -p "$signed_pid" -- sleep "$duration" 2>/dev/null &
  perf_pid=$!
  run "$signed_url" "$signed_pid" >/dev/null
  wait "$perf_pid" || true
  report="${PERF_OUT:-/tmp/signed-urls.perf.txt}"
  perf report -i "$tmp/perf.data" --children --sort symbol --stdio -g none --percent-limit 0.01 2>/dev/null >"$report" || true
  # Children (inclusive) percentages of the server's samples; Swift symbols are mangled, so match on
  # the type and method names inside them.
  # "none": no sample (inlined into its caller in a release build, or not called: a cached signature
  # needs no HMAC).
  share() { awk -v pattern="$1" '$1 ~ /%$/ && $0 ~ pattern { print $1; found = 1; exit } END { if (!found) print "none" }' "$report"; }
  echo "perf (signed instance, ${duration} s of signed bucket GETs; inclusive share of its CPU samples, report in $report):"
  echo "   the check (BucketRoutes.authorize): $(share 'BucketRoutes.*authorize'), AssetURLSigner.verify: $(share 'AssetURLSigner.*verify'), HMAC: $(share 'HMAC')"
fi
pinning_summary
