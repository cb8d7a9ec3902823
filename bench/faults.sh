#!/usr/bin/env bash
# Fault harness (issue #13): galleryd serve on a private PostgreSQL, put through the faults a real
# deployment meets, printing figures for each:
#   kill       kill -9 of the server (and its in-process worker, decoding) at a random moment during 50
#              concurrent uploads and photo creates, ROUNDS times: every acknowledged (201) original is on
#              disk with its SHA-256; temp files after restart; every photo ends ready, one per original;
#              every upload retried gives the same name and the same photo and adds no row
#   pgrestart  PostgreSQL `restart -m fast` under first-page queries and uploads (their photos processed
#              meanwhile): failed requests, recovery time, galleryd still the same process, photos' end state
#   slowloris  1,000 connections trickling header bytes: /health and first page p50/p99 (bench/faults-http.py)
#   memory     100k requests of several kinds (pages, 404s, 400s): VmHWM and VmRSS before and after
#   bodies     (not in the default list) the server's memory with large photos (bench/faults-bodies.py):
#              BODIES concurrent uploads of PHOTO, BODIES_SLOW of them trickled at BODY_RATE bytes/s, then
#              their photos created and decoded by SERVE_WORKERS workers: peak VmRSS of each phase, VmHWM
#   jsondisk   (not in the default list; needs root) the JavaScript SDK's JSON uploads of PHOTO (bench/faults_json.py)
#              into a store on a TMPFS tmpfs with min_free_bytes 8 MiB, DISK_UPLOADS one after another: statuses
#              (507 at the head or while the base64 is decoded), temp files, originals against new rows; then
#              space freed and every upload sent again: all 201, the same names, each original with its SHA-256
# JSON_EVERY=N (kill, pgrestart): every Nth upload is sent as the JavaScript SDK's JSON body, not raw bytes.
# Usage: bench/faults.sh [SCENARIO...] (default: kill pgrestart slowloris memory, in that order). Needs
#        PostgreSQL and python3.
# Env: PGPORT_PRIVATE (55643), PORT (18443), BUILD (release; debug skips the release build),
#      ROUNDS (5), PHOTO (a JPEG, PNG, WebP, HEIC or AVIF; default PHOTOS_DIR's dune_canon_1680x1050.jpg, else
#      its largest JPEG; PHOTOS_DIR defaults to samples/photos, see bench/photos.sh), PHOTO_EVERY (kill: the
#      photo of 1 upload in this many is created, 1; 10 keeps a 12 MP HEIC's backlog short), SETTLE (seconds to
#      wait for the photos to be processed, 600), SLOW_CONNECTIONS (1000),
#      REQUESTS (100000), GALLERYD_BIN (a galleryd binary to use instead of building one), SERVE_WORKERS
#      (serve's --workers, 1), BODIES (8), BODIES_SLOW (4), BODY_RATE (1048576), JSON_EVERY (0: none),
#      TMPFS (64m), DISK_UPLOADS (30), MAX_DELAY (kill: uploads start within it and the kill lands 0.2-1.0 times it
#      in, 1.5 s; a little longer lets more large uploads finish before the kill).
set -euo pipefail
cd "$(dirname "$0")/.."

scenarios="${*:-kill pgrestart slowloris memory}"
port="${PORT:-18443}"
rounds="${ROUNDS:-5}"
build="${BUILD:-release}"
. bench/photos.sh
photo="${PHOTO:-$(bench_photo dune_canon_1680x1050.jpg largest)}"
photo="$(cd "$(dirname "$photo")" && pwd)/$(basename "$photo")"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55643}"

source bench/faults-lib.sh
faults_galleryd "$build"
[ -z "${GALLERYD_BIN:-}" ] || build="given ($GALLERYD_BIN)"
faults_setup faults
trap 'faults_stop_serve; faults_cleanup' EXIT

export DATABASE_URL="$(scripts/pg.sh start "$tmp/pg")"
export GALLERYD_STORAGE_DIR="$tmp/blobs"
export GALLERYD_MASTER_KEY="faults-master-key-$(date +%s%N)"
export GALLERYD_URL_SIGNING_KEY="bench-url-signing-key-0123456789abcdef"
export GALLERYD_LOG_LEVEL="${GALLERYD_LOG_LEVEL:-warning}"
psql_bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)/psql"
sql() { "$psql_bin" "$DATABASE_URL" -tAc "$1"; }

start_serve() { faults_start_serve "${SERVE_WORKERS:-1}"; }

# Spooled and staged files; each store's `<dir>.lock` beside its temporary directory (its flock) is not one.
# With a pid, that live process's own directory (`<host>-<pid>-<random>`) is left out: the restarted
# server's worker stages the derivatives of the backlog there at once.
temp_files() {
  local own=()
  [ -n "${1:-}" ] && own=(! -path "*-$1-*")
  find "$GALLERYD_STORAGE_DIR/.tmp" -type f ! -name '*.lock' "${own[@]}" 2>/dev/null | wc -l
}

# Waits (up to SETTLE seconds) until no photo is pending or processing, then prints the end state:
# photos by status, photos per stored checksum, jobs not done, originals on disk against `files` rows.
settle() {
  local waited=0
  while [ "$(sql "select count(*) from photos where status in ('pending', 'processing')")" != 0 ] \
    && [ "$waited" -lt "${SETTLE:-600}" ]; do sleep 1; waited=$((waited + 1)); done
  echo "  photos: $(sql "select coalesce(string_agg(status || ' ' || n, ', '), 'none') from (select status, count(*) n from photos group by 1 order by 1) s") (settled after ${waited} s)"
  echo "  photos per original: at most $(sql "select coalesce(max(n), 0) from (select count(*) n from photos group by checksum) s"); most attempts a job used: $(sql "select coalesce(max(attempts), 0) from jobs"); jobs not done: $(sql "select count(*) from jobs where state <> 'done'"), failed: $(sql "select count(*) from jobs where state = 'failed'"); photos with an error: $(sql "select count(*) from photos where error is not null")"
  echo "  originals on disk: $(find "$GALLERYD_STORAGE_DIR/originals" -type f 2>/dev/null | wc -l), files rows: $(sql "select count(*) from files")"
}

scenario_kill() {
  echo "== kill -9 during 50 concurrent uploads and the photo creates of 1 in ${PHOTO_EVERY:-1}, $rounds rounds (photo $(basename "$photo"), $(($(stat -c %s "$photo") / 1024)) KiB; the in-process worker decoding)"
  : >"$tmp/acked"
  local leftover=0
  for round in $(seq "$rounds"); do
    [ -n "$serve_pid" ] || start_serve
    python3 bench/faults.py uploads --port "$port" --pid "$serve_pid" --photo "$photo" --acked "$tmp/acked" \
      --round "$round" --photo-every "${PHOTO_EVERY:-1}" --json-every "${JSON_EVERY:-0}" --max-delay "${MAX_DELAY:-1.5}"
    wait "$serve_pid" 2>/dev/null || true
    serve_pid=""
    local before=$(temp_files)
    start_serve
    local after=$(temp_files "$serve_pid") own=$(($(temp_files) - $(temp_files "$serve_pid")))
    echo "  temp files: $before left by the kill, $after after restart (and $own the restarted server's worker is writing)"
    leftover=$((leftover + after))
  done
  python3 bench/faults.py verify --storage "$GALLERYD_STORAGE_DIR" --acked "$tmp/acked" | sed 's/^/  /'
  echo "  files rows: $(sql "select count(*) from files"); temp files after restarts (sum over rounds): $leftover"
  settle
  local files=$(sql "select count(*) from files") photos=$(sql "select count(*) from photos")
  python3 bench/faults.py retry --port "$port" --photo "$photo" --acked "$tmp/acked" | sed 's/^/  /'
  echo "  after the retries: files rows $files -> $(sql "select count(*) from files"), photos $photos -> $(sql "select count(*) from photos")"
  settle
  echo "  temp files at the end: $(temp_files)"
}

scenario_pgrestart() {
  echo "== PostgreSQL restart -m fast under first-page queries and uploads"
  [ -n "$serve_pid" ] || start_serve
  local pid_before=$serve_pid
  python3 bench/faults.py load --port "$port" --photo "$photo" --json-every "${JSON_EVERY:-0}" \
    --restart "scripts/pg.sh ctl $tmp/pg restart -m fast" | sed 's/^/  /'
  if kill -0 "$pid_before" 2>/dev/null; then
    echo "  galleryd: same process (pid $pid_before), not restarted"
  else
    echo "  galleryd: DIED during the restart"
    serve_pid=""
  fi
  curl -fs -o /dev/null -w "  /ready after: %{http_code}\n" "http://127.0.0.1:$port/ready" || echo "  /ready after: failed"
  [ -n "$serve_pid" ] && settle
}

scenario_slowloris() {
  echo "== slowloris: ${SLOW_CONNECTIONS:-1000} connections trickling headers"
  [ -n "$serve_pid" ] || start_serve
  (ulimit -n 8192 2>/dev/null || true
   python3 bench/faults-http.py slowloris --port "$port" --connections "${SLOW_CONNECTIONS:-1000}") | sed 's/^/  /'
}

scenario_memory() {
  echo "== memory over ${REQUESTS:-100000} requests"
  [ -n "$serve_pid" ] || start_serve
  python3 bench/faults-http.py memory --port "$port" --pid "$serve_pid" --requests "${REQUESTS:-100000}" | sed 's/^/  /'
}

scenario_bodies() {
  echo "== memory with large bodies: ${BODIES:-8} uploads of $(basename "$photo"), ${BODIES_SLOW:-4} trickled, then their photos decoded by ${SERVE_WORKERS:-1} worker(s)"
  [ -n "$serve_pid" ] || start_serve
  PSQL="$psql_bin" python3 bench/faults-bodies.py --port "$port" --pid "$serve_pid" --photo "$photo" \
    --uploads "${BODIES:-8}" --slow "${BODIES_SLOW:-4}" --rate "${BODY_RATE:-1048576}" --settle "${SETTLE:-600}" | sed 's/^/  /'
  echo "  temp files after: $(temp_files)"
}

scenario_jsondisk() {
  echo "== full disk: ${DISK_UPLOADS:-30} JSON uploads of $(basename "$photo") into a ${TMPFS:-64m} tmpfs store, min_free_bytes 8 MiB"
  if ! faults_tmpfs "$tmp/tmpfs" "${TMPFS:-64m}"; then echo "  skipped (needs root to mount a tmpfs)"; return 0; fi
  faults_stop_serve
  local blobs="$GALLERYD_STORAGE_DIR"
  export GALLERYD_STORAGE_DIR="$tmp/tmpfs/blobs" GALLERYD_MIN_FREE_BYTES=8388608
  start_serve
  local rows=$(sql "select count(*) from files")
  : >"$tmp/disk-acked"
  python3 bench/faults_json.py disk --port "$port" --photo "$photo" --acked "$tmp/disk-acked" \
    --count "${DISK_UPLOADS:-30}" | sed 's/^/  /'
  echo "  then: $(df -B1 --output=avail "$tmp/tmpfs" | tail -n1) bytes free, temp files $(temp_files), originals $(find "$GALLERYD_STORAGE_DIR/originals" -type f | wc -l), new files rows $(($(sql "select count(*) from files") - rows))"
  mount -o remount,size=400m "$tmp/tmpfs"
  echo "  space freed (tmpfs 400m), every upload sent again:"
  python3 bench/faults.py retry --port "$port" --photo "$photo" --acked "$tmp/disk-acked" | sed 's/^/    /'
  python3 bench/faults.py verify --storage "$GALLERYD_STORAGE_DIR" --acked "$tmp/disk-acked" | sed 's/^/    /'
  echo "    temp files $(temp_files), originals $(find "$GALLERYD_STORAGE_DIR/originals" -type f | wc -l), new files rows $(($(sql "select count(*) from files") - rows))"
  faults_stop_serve
  export GALLERYD_STORAGE_DIR="$blobs"
  unset GALLERYD_MIN_FREE_BYTES
}

echo "galleryd $build build; photos in the database are whatever earlier scenarios uploaded" >&2
for scenario in $scenarios; do
  case "$scenario" in
  kill) scenario_kill ;;
  pgrestart) scenario_pgrestart ;;
  slowloris) scenario_slowloris ;;
  memory) scenario_memory ;;
  bodies) scenario_bodies ;;
  jsondisk) scenario_jsondisk ;;
  *) echo "faults.sh: unknown scenario $scenario (kill, pgrestart, slowloris, memory, bodies, jsondisk)" >&2; exit 2 ;;
  esac
done
