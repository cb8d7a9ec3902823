#!/usr/bin/env bash
# Display sizes (issue #29): what a first request costs and what a warm one does against nginx.
#  1. cold `s` (240 px) render from a 2048 preview: galleryd's CPU (utime+stime from /proc) over one
#     GET of a size not stored yet, mean of COLD runs (the rendition and its row removed before each);
#     includes the request, the photo lookup and the cache bookkeeping, so it bounds the render from above;
#  2. 200 concurrent cold requests for one photo's `z`: how many renders galleryd_size_renders_total counts;
#  3. warm `s` GET against nginx serving the same file: bench/bucket.sh with SIZE=s (alternating rounds).
# Usage: bench/sizes.sh [seconds for the warm rounds] — needs cjpeg (libjpeg-turbo-progs: the 3000×2000
#   original), curl, psql, and for step 3 wrk and nginx (scripts/deps.sh --bench). PostgreSQL via scripts/pg.sh.
# Env: GALLERYD (a built binary; default: a release build), COLD (15), CONCURRENT (200), WARM (1: run step 3).
set -euo pipefail
cd "$(dirname "$0")/.."

cold_runs="${COLD:-15}"
concurrent="${CONCURRENT:-200}"
port="${OURS_PORT:-18121}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55621}"
command -v cjpeg >/dev/null || { echo "sizes.sh: cjpeg missing (apt-get install libjpeg-turbo-progs)" >&2; exit 1; }
if [ -z "${GALLERYD:-}" ]; then swift build -c release --product galleryd >&2; fi
galleryd="${GALLERYD:-$(swift build -c release --show-bin-path)/galleryd}"

tmp="$(mktemp -d /tmp/galleryd-sizes-bench.XXXXXX)"
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  scripts/pg.sh stop "$tmp/pg" || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

database_url="$(scripts/pg.sh start "$tmp/pg")"
storage="$tmp/blobs"
master_key="bench-master-key-$(date +%s%N)"
# No open-file cache: the bench removes renditions behind the server's back, and a kept descriptor
# would still serve the removed file (the server's own removals close it).
GALLERYD_MASTER_KEY="$master_key" GALLERYD_BUCKET_PUBLIC=true GALLERYD_LOG_LEVEL=warning GALLERYD_ACCESS_LOG=off GALLERYD_OPEN_FILE_CACHE=0 \
  "$galleryd" serve --host 127.0.0.1 --port "$port" --database-url "$database_url" --storage-dir "$storage" \
  --public-url "http://127.0.0.1:$port" --workers 1 2>"$tmp/galleryd.log" &
pid=$!
for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
curl -fs -o /dev/null "http://127.0.0.1:$port/health" || { cat "$tmp/galleryd.log" >&2; exit 1; }

parse() { curl -fsS -H "X-Parse-Application-Id: gallery" -H "X-Parse-Master-Key: $master_key" "$@"; }
json_field() { python3 -c 'import json, sys; print(json.load(sys.stdin).get(sys.argv[1], ""))' "$1"; }
sql() { psql -X -q -t -A "$database_url" -c "$1"; }
# galleryd's user+system CPU in clock ticks (threads that have exited included, unlike schedstat).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
renders() { parse "http://127.0.0.1:$port/metrics" | awk -v s="size=\"$1\"" 'index($0, "galleryd_size_renders_total{" s "}") == 1 {print $2}'; }

# A 3000×2000 photo with detail everywhere (gradients, rings and noise), so the preview is a real
# 2048×1365 JPEG with a photo's entropy.
python3 - "$tmp/original.ppm" <<'PY'
import math, random, sys
w, h = 3000, 2000
rng = random.Random(29)
rows = bytearray()
for y in range(h):
    for x in range(w):
        ring = int(60 * (1 + math.sin(math.hypot(x - 1400, y - 900) / 23)))
        n = rng.randrange(24)
        rows += bytes(((x * 255 // w + n) & 255, (y * 255 // h + ring) & 255, (ring * 2 + n) & 255))
open(sys.argv[1], "wb").write(b"P6\n%d %d\n255\n" % (w, h) + bytes(rows))
PY
cjpeg -quality 90 -optimize "$tmp/original.ppm" > "$tmp/original.jpg"
name="$(parse -H "Content-Type: image/jpeg" --data-binary "@$tmp/original.jpg" "http://127.0.0.1:$port/parse/files/original.jpg" | json_field name)"
id="$(parse -H "Content-Type: application/json" -d "{\"original\":{\"__type\":\"File\",\"name\":\"$name\"}}" \
  "http://127.0.0.1:$port/parse/classes/Photo" | json_field objectId)"
for _ in $(seq 600); do
  [ "$(parse "http://127.0.0.1:$port/parse/classes/Photo/$id" | json_field status)" = ready ] && break
  sleep 0.1
done
echo "photo $id: preview $(parse "http://127.0.0.1:$port/parse/classes/Photo/$id" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["previewWidth"], "x", r["previewHeight"])')" >&2

echo "== 1. cold s renders ($cold_runs runs): galleryd CPU ms per cold GET" >&2
url="http://127.0.0.1:$port/bucket/sizes/$id/s.jpg"
total=0
for _ in $(seq "$cold_runs"); do
  sql "delete from photo_sizes where photo_id = '$id'" >/dev/null
  rm -f "$storage/sizes/$id/s.jpg"
  before="$(cpu_ticks)"
  curl -fsS -o /dev/null "$url"
  after="$(cpu_ticks)"
  total=$((total + after - before))
done
# Ticks are 10 ms: the mean over the runs, not a per-run median, is what they resolve.
echo "cold s: mean $(( total * 1000 / $(getconf CLK_TCK) / cold_runs )) ms CPU per cold GET over $cold_runs runs (renders: $(renders s))"

echo "== 2. $concurrent concurrent cold z requests" >&2
before="$(renders z)"
seq "$concurrent" | xargs -P "$concurrent" -I{} curl -fsS -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:$port/bucket/sizes/$id/z.jpg" \
  | sort | uniq -c | sed 's/^/status /'
echo "concurrent cold z: $(( $(renders z) - before )) render(s) for $concurrent requests"

if [ "${WARM:-1}" = 1 ]; then
  echo "== 3. warm s against nginx (bench/bucket.sh, SIZE=s)" >&2
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  PHOTO="$tmp/original.jpg" SIZE=s GALLERYD="$galleryd" bench/bucket.sh "${1:-10}"
fi
