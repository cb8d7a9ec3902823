#!/usr/bin/env bash
# Fault figures for the processing queue and a full disk (issue #13, item 5 and 7), for any format the
# server takes (JPEG, PNG, WebP, HEIC, AVIF; issue #28):
#  1. kill -9 of a `galleryd worker` in the middle of a job (a random moment of its decode, ROUNDS times
#     per photo): seconds until another worker has the photo ready (the lease is short and renewed by
#     a heartbeat, so this is under one lease), its attempts, the temporary files left.
#  2. a full disk on a small tmpfs store (needs root): uploads get 507 (Parse code 1) while reads
#     keep answering 200; an upload larger than the space left above the reserve gets 507 and leaves
#     no temporary file; a job whose derivative writes meet a 100% full disk waits (transient), not
#     failed; once the filler is removed, uploads are 201 again and the photos queued during the
#     outage end `ready`, none `failed`.
# Usage: bench/faults-jobs.sh [DIR] — DIR (default PHOTOS_DIR, itself samples/photos by default; see
# bench/photos.sh) gives the default photos: its largest JPEG for the killed worker, a small one
# (60–300 KB, else the smallest) for the uploads. Each upload is a copy made unique in a way its
# format keeps valid (bench/faults.py unique).
# Env: PGPORT_PRIVATE (55614), PORT (18094), CONFIG (release|debug), GALLERYD_BIN (a galleryd to use
#      instead of building one), LEASE (job_lease_seconds, 30), KILL_PHOTOS (files for part 1, space
#      separated), ROUNDS (kills per KILL_PHOTOS file, 1), KILL_DELAY (the kill lands 0.1 s to this many
#      seconds after the photo is `processing`, 0.8), DISK_PHOTOS (files the part 2 uploads cycle
#      through), TMPFS (the tmpfs's size, 48m).
set -euo pipefail
cd "$(dirname "$0")/.."

port="${PORT:-18094}"
config="${CONFIG:-release}"
lease="${LEASE:-30}"
rounds="${ROUNDS:-1}"
. bench/photos.sh
photos="$(cd "${1:-$photos_dir}" && pwd)"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55614}"

source bench/faults-lib.sh
faults_galleryd "$config"
kill_photos="${KILL_PHOTOS:-$(find "$photos" -maxdepth 1 -iname '*.jpg' -printf '%s %p\n' | sort -n | tail -n1 | cut -d' ' -f2-)}"
if [ -z "${DISK_PHOTOS:-}" ]; then
  DISK_PHOTOS="$(find "$photos" -maxdepth 1 -iname '*.jpg' -size +60k -size -300k | sort | head -n1)"
  [ -n "$DISK_PHOTOS" ] || DISK_PHOTOS="$(find "$photos" -maxdepth 1 -iname '*.jpg' -printf '%s %p\n' | sort -n | head -n1 | cut -d' ' -f2-)"
fi
read -r -a disk_photos <<<"$DISK_PHOTOS"

faults_setup faults

export DATABASE_URL="$(scripts/pg.sh start "$tmp/pg")"
export GALLERYD_MASTER_KEY="faults-master-key-$(date +%s%N)"
export GALLERYD_URL_SIGNING_KEY="bench-url-signing-key-0123456789abcdef"
export GALLERYD_LOG_LEVEL=notice
export GALLERYD_JOB_LEASE_SECONDS="$lease"
psql_bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)/psql"
sql() { "$psql_bin" "$DATABASE_URL" -tAc "$1"; }
H=(-H "X-Parse-Application-Id: gallery" -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY")  # the app id alone reads nothing
base="http://127.0.0.1:$port/parse"

serve() {  # serve with no in-process workers; storage in $1
  GALLERYD_STORAGE_DIR="$1" "$galleryd" serve --host 127.0.0.1 --port "$port" --workers 0 2>>"$tmp/serve.log" &
  serve_pid=$!
  pids+=("$serve_pid")
  for _ in $(seq 200); do curl -fs -o /dev/null "http://127.0.0.1:$port/ready" && return; sleep 0.1; done
  cat "$tmp/serve.log" >&2; echo "faults-jobs.sh: serve did not start" >&2; exit 1
}

# unique SRC TAG: a copy of SRC made unique by TAG (valid in its format); prints its path.
unique() {
  local ext mime
  read -r ext mime < <(GALLERYD_MASTER_KEY= python3 bench/faults.py unique --photo "$1" --tag "$2" --out "$tmp/u.bin")
  mv "$tmp/u.bin" "$tmp/$2.$ext"
  echo "$tmp/$2.$ext"
}

mime_of() {
  case "${1##*.}" in jpg) echo image/jpeg ;; png) echo image/png ;; webp) echo image/webp ;; heic) echo image/heic ;; avif) echo image/avif ;; esac
}

upload() {  # upload $1 as a photo; prints "<file status> <photo status> <objectId>"
  local file status name id
  file=$(curl -s -o "$tmp/up.json" -w '%{http_code}' "${H[@]}" -H "Content-Type: $(mime_of "$1")" \
    --data-binary @"$1" "$base/files/$(basename "$1")")
  if [ "$file" != 201 ]; then echo "$file - -"; return; fi
  name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$tmp/up.json")
  status=$(curl -s -o "$tmp/photo.json" -w '%{http_code}' "${H[@]}" -H 'Content-Type: application/json' \
    -d "{\"original\":{\"__type\":\"File\",\"name\":\"$name\"}}" "$base/classes/Photo")
  id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("objectId","-"))' "$tmp/photo.json")
  echo "$file $status $id"
}

temp_files() { find "$1/.tmp" -type f ! -name '*.lock' 2>/dev/null | wc -l; }  # each live process keeps a .lock

# --- 1. kill -9 of a worker mid-job -------------------------------------------------------------
mkdir -p "$tmp/blobs"
serve "$tmp/blobs"
echo "kill -9 mid-job: job_lease_seconds=$lease, $rounds round(s) per photo, the kill 0.1-${KILL_DELAY:-0.8} s into the job" >&2
n=0
for photo in $kill_photos; do
  for round in $(seq "$rounds"); do
    n=$((n + 1))
    copy=$(unique "$photo" "kill$n")
    read -r _ _ big < <(upload "$copy")
    GALLERYD_STORAGE_DIR="$tmp/blobs" "$galleryd" worker --threads 1 2>>"$tmp/worker1.log" &
    worker1=$!
    pids+=("$worker1")
    until [ "$(sql "select status from photos where object_id = '$big'")" = processing ]; do sleep 0.02; done
    delay=$(python3 -c "import random; print(round(random.uniform(0.1, ${KILL_DELAY:-0.8}), 2))")
    sleep "$delay"
    at_kill=$(sql "select status || case when thumbnail_key is null then ' (no derivatives yet)' else ' (derivatives recorded)' end from photos where object_id = '$big'")
    cpu=$(awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$worker1/stat")
    kill -9 "$worker1"
    wait "$worker1" 2>/dev/null || true
    killed=$(date +%s.%N)
    left=$(temp_files "$tmp/blobs")
    GALLERYD_STORAGE_DIR="$tmp/blobs" "$galleryd" worker --threads 1 2>>"$tmp/worker2.log" &
    worker2=$!
    pids+=("$worker2")
    until [ "$(sql "select attempts from jobs where photo_id = '$big' and state = 'running'")" = 2 ] \
      || [ "$(sql "select status from photos where object_id = '$big'")" = ready ]; do sleep 0.05; done
    taken=$(date +%s.%N)
    until [[ "$(sql "select status from photos where object_id = '$big'")" =~ ^(ready|failed)$ ]]; do sleep 0.05; done
    ready=$(date +%s.%N)
    state=$(sql "select status from photos where object_id = '$big'")
    attempts=$(sql "select attempts from jobs where photo_id = '$big'")
    hwm=$(awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$worker2/status")
    kill "$worker2" 2>/dev/null || true
    wait "$worker2" 2>/dev/null || true
    awk -v k="$killed" -v t="$taken" -v r="$ready" -v a="$attempts" -v l="$lease" -v s="$state" -v d="$delay" \
      -v c="$cpu" -v w="$at_kill" -v f="$(basename "$photo")" -v left="$left" -v end="$(temp_files "$tmp/blobs")" -v m="$hwm" 'BEGIN {
      printf "kill -9 mid-job:  %s: killed %.2f s into the job (%s s of CPU, photo %s), taken again %.1f s after the kill, %s after %.1f s (lease %d s, attempt %d); temp files %d after the kill, %d at the end; next worker VmHWM %d MiB\n", f, d, c, w, t - k, s, r - k, l, a, left, end, m }'
  done
done
echo "kill -9 mid-job:  photos $(sql "select string_agg(status || ' ' || n, ', ') from (select status, count(*) n from photos group by 1) s"), jobs failed $(sql "select count(*) from jobs where state = 'failed'")"
kill "$serve_pid" 2>/dev/null || true
for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
wait 2>/dev/null || true
pids=()

# --- 2. a full disk on a small tmpfs store ------------------------------------------------------
if ! faults_tmpfs "$tmp/tmpfs" "${TMPFS:-48m}"; then
  echo "disk full: skipped (needs root to mount a tmpfs)"
  exit 0
fi
sql "truncate photos, files, jobs cascade" >/dev/null
reserve=$((8 * 1024 * 1024))
export GALLERYD_MIN_FREE_BYTES=$reserve
serve "$tmp/tmpfs/blobs"
GALLERYD_STORAGE_DIR="$tmp/tmpfs/blobs" "$galleryd" worker --threads 1 2>>"$tmp/worker3.log" &
pids+=("$!")
for i in $(seq 31); do p[i]=$(unique "${disk_photos[$(((i - 1) % ${#disk_photos[@]}))]}" "p$i"); done
echo "disk full: tmpfs ${TMPFS:-48m}, reserve 8 MiB, uploads cycling through $(for f in "${disk_photos[@]}"; do printf '%s (%d KiB) ' "$(basename "$f")" $(($(stat -c %s "$f") / 1024)); done)" >&2
read -r _ _ first < <(upload "${p[1]}")
until [ "$(sql "select status from photos where object_id = '$first'")" = ready ]; do sleep 0.05; done
# Fill the disk to 4 MiB free (below the 8 MiB reserve).
free=$(df -B1 --output=avail "$tmp/tmpfs" | tail -n1)
head -c $((free - 4 * 1024 * 1024)) /dev/zero >"$tmp/tmpfs/filler"
refused=0; other=0; reads_ok=0; reads=0
for i in $(seq 2 21); do
  read -r code _ _ < <(upload "${p[i]}")
  if [ "$code" = 507 ]; then refused=$((refused + 1)); else other=$((other + 1)); fi
  for url in "$base/classes/Photo?limit=20" "$base/classes/Photo/$first"; do
    reads=$((reads + 1))
    [ "$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" "$url")" = 200 ] && reads_ok=$((reads_ok + 1))
  done
done
code_body=$(curl -s "${H[@]}" -H "Content-Type: $(mime_of "${p[2]}")" --data-binary @"${p[2]}" "$base/files/$(basename "${p[2]}")")
echo "disk full:        $refused/20 uploads refused with 507 ($other other), reads $reads_ok/$reads 200: $code_body"
# The disk fills while an upload's body arrives (admitted with room to spare, then another writer takes
# the space): a chunked upload of the largest photo at 1 MiB/s, the rest of the disk filled 0.5 s in.
rm -f "$tmp/tmpfs/filler"
largest=$(for i in $(seq 2 21); do stat -c '%s %n' "${p[i]}"; done | sort -n | tail -n1 | cut -d' ' -f2-)
curl -s -o "$tmp/mid.json" -w '%{http_code}' "${H[@]}" -H "Content-Type: $(mime_of "$largest")" -H 'Transfer-Encoding: chunked' \
  --limit-rate 1M --data-binary @"$largest" "$base/files/$(basename "$largest")" >"$tmp/mid.code" &
mid_pid=$!
sleep 0.5
head -c "$(df -B1 --output=avail "$tmp/tmpfs" | tail -n1)" /dev/zero >"$tmp/tmpfs/filler" 2>/dev/null || true
wait "$mid_pid" || true
echo "disk fills mid-upload: $(basename "$largest") ($(($(stat -c %s "$largest") / 1024)) KiB, chunked at 1 MiB/s) -> $(cat "$tmp/mid.code") $(head -c 200 "$tmp/mid.json"); temp files $(temp_files "$tmp/tmpfs/blobs"), reads $(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" "$base/classes/Photo/$first")"
# A photo uploaded before the disk filled up entirely, then the last bytes go too.
rm -f "$tmp/tmpfs/filler"
kill -STOP "${pids[-1]}"   # hold the worker while the photo is uploaded and the disk fills
read -r _ _ queued < <(upload "${p[22]}")
free=$(df -B1 --output=avail "$tmp/tmpfs" | tail -n1)
head -c "$free" /dev/zero >"$tmp/tmpfs/filler" 2>/dev/null || true
kill -CONT "${pids[-1]}"
sleep "${FULL_SECONDS:-3}"
during=$(sql "select state || ' after ' || transient_failures || ' transient fault(s), attempts ' || attempts || coalesce(', last error: ' || last_error, '') from jobs where photo_id = '$queued'")
full_temp=$(temp_files "$tmp/tmpfs/blobs")
full_status=$(sql "select status from photos where object_id = '$queued'")
freed=$(date +%s.%N)
rm -f "$tmp/tmpfs/filler"
accepted=0
for i in $(seq 23 30); do read -r code _ _ < <(upload "${p[i]}"); [ "$code" = 201 ] && accepted=$((accepted + 1)); done
until [ "$(sql "select count(*) from photos where status not in ('ready', 'failed')")" = 0 ]; do sleep 0.1; done
done_at=$(date +%s.%N)
failed=$(sql "select count(*) from photos where status = 'failed'")
tmpfiles=$(temp_files "$tmp/tmpfs/blobs")
echo "disk 100% full:   job $during (photo $full_status); temp files while full $full_temp"
awk -v f="$freed" -v d="$done_at" -v a="$accepted" -v x="$failed" -v t="$tmpfiles" -v n="$(sql "select count(*) from photos")" 'BEGIN {
  printf "space freed:      %d/8 uploads 201, every photo processed %.1f s later (%d photos), %d failed, %d temporary file(s) left\n", a, d - f, n, x, t }'
