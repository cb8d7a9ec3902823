#!/usr/bin/env bash
# Fault figures for the processing queue and a full disk (issue #13, item 5 and 7):
#  1. kill -9 of a `galleryd worker` in the middle of a job: seconds until another worker has the
#     photo ready (the lease is short and renewed by a heartbeat, so this is under one lease).
#  2. a full disk on a small tmpfs store (needs root): uploads get 507 (Parse code 1) while reads
#     keep answering 200; once the filler is removed, uploads are 201 again and the photos queued
#     during the outage end `ready`, none `failed`.
# Usage: bench/faults-jobs.sh [DIR] — DIR (default PHOTOS_DIR, itself samples/photos by default; see
# bench/photos.sh) gives the photos: its largest for the killed worker, a small one (60–300 KB, else
# the smallest; made unique by a trailer after its end marker) for the uploads.
# Env: PGPORT_PRIVATE (55614), PORT (18094), CONFIG (release|debug), LEASE (job_lease_seconds, 30).
set -euo pipefail
cd "$(dirname "$0")/.."

port="${PORT:-18094}"
config="${CONFIG:-release}"
lease="${LEASE:-30}"
. bench/photos.sh
photos="$(cd "${1:-$photos_dir}" && pwd)"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55614}"

swift build -c "$config" --product galleryd >&2
galleryd="$(swift build -c "$config" --show-bin-path)/galleryd"

tmp="$(mktemp -d /tmp/galleryd-faults.XXXXXX)"
pids=()
mounted=""
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$mounted" ] && umount "$mounted" 2>/dev/null || true
  scripts/pg.sh stop "$tmp/pg" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

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

upload() {  # upload $1 as a photo; prints "<file status> <photo status> <objectId>"
  local file status name id
  file=$(curl -s -o "$tmp/up.json" -w '%{http_code}' "${H[@]}" -H 'Content-Type: image/jpeg' \
    --data-binary @"$1" "$base/files/$(basename "$1")")
  if [ "$file" != 201 ]; then echo "$file - -"; return; fi
  name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$tmp/up.json")
  status=$(curl -s -o "$tmp/photo.json" -w '%{http_code}' "${H[@]}" -H 'Content-Type: application/json' \
    -d "{\"original\":{\"__type\":\"File\",\"name\":\"$name\"}}" "$base/classes/Photo")
  id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("objectId","-"))' "$tmp/photo.json")
  echo "$file $status $id"
}

# --- 1. kill -9 of a worker mid-job -------------------------------------------------------------
mkdir -p "$tmp/blobs"
serve "$tmp/blobs"
cp "$(find "$photos" -maxdepth 1 -iname '*.jpg' -printf '%s %p\n' | sort -n | tail -n1 | cut -d' ' -f2-)" "$tmp/big.jpg"
read -r _ _ big < <(upload "$tmp/big.jpg")
echo "kill -9: uploaded a $(( $(stat -c %s "$tmp/big.jpg") / 1024 )) KiB photo, job_lease_seconds=$lease" >&2
GALLERYD_STORAGE_DIR="$tmp/blobs" "$galleryd" worker --threads 1 2>>"$tmp/worker1.log" &
worker1=$!
pids+=("$worker1")
until [ "$(sql "select state from jobs where photo_id = '$big'")" = running ]; do sleep 0.02; done
sleep 0.3
kill -9 "$worker1"
killed=$(date +%s.%N)
GALLERYD_STORAGE_DIR="$tmp/blobs" "$galleryd" worker --threads 1 2>>"$tmp/worker2.log" &
pids+=("$!")
until [ "$(sql "select attempts from jobs where photo_id = '$big' and state = 'running'")" = 2 ]; do sleep 0.05; done
taken=$(date +%s.%N)
until [ "$(sql "select status from photos where object_id = '$big'")" = ready ]; do sleep 0.05; done
ready=$(date +%s.%N)
attempts=$(sql "select attempts from jobs where photo_id = '$big'")
awk -v k="$killed" -v t="$taken" -v r="$ready" -v a="$attempts" -v l="$lease" 'BEGIN {
  printf "kill -9 mid-job:  job taken by another worker %.1f s after the kill, photo ready after %.1f s (lease %d s, attempt %d)\n", t - k, r - k, l, a }'
kill "$serve_pid" 2>/dev/null || true
for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
wait 2>/dev/null || true
pids=()

# --- 2. a full disk on a small tmpfs store ------------------------------------------------------
if [ "$(id -u)" -ne 0 ] || ! { mkdir -p "$tmp/tmpfs" && mount -t tmpfs -o size=48m tmpfs "$tmp/tmpfs"; }; then
  echo "disk full: skipped (needs root to mount a tmpfs)"
  exit 0
fi
mounted="$tmp/tmpfs"
sql "truncate photos, files, jobs cascade" >/dev/null
export GALLERYD_MIN_FREE_BYTES=$((8 * 1024 * 1024))
serve "$tmp/tmpfs/blobs"
GALLERYD_STORAGE_DIR="$tmp/tmpfs/blobs" "$galleryd" worker --threads 1 2>>"$tmp/worker3.log" &
pids+=("$!")
small="$(find "$photos" -maxdepth 1 -iname '*.jpg' -size +60k -size -300k | sort | head -n1)"
[ -n "$small" ] || small="$(find "$photos" -maxdepth 1 -iname '*.jpg' -printf '%s %p\n' | sort -n | head -n1 | cut -d' ' -f2-)"
for i in $(seq 30); do cp "$small" "$tmp/p$i.jpg"; printf 'trailer %d' "$i" >>"$tmp/p$i.jpg"; done
read -r _ _ first < <(upload "$tmp/p1.jpg")
until [ "$(sql "select status from photos where object_id = '$first'")" = ready ]; do sleep 0.05; done
# Fill the disk to 4 MiB free (below the 8 MiB reserve).
free=$(df -B1 --output=avail "$tmp/tmpfs" | tail -n1)
head -c $((free - 4 * 1024 * 1024)) /dev/zero >"$tmp/tmpfs/filler"
refused=0; other=0; reads_ok=0; reads=0
for i in $(seq 2 21); do
  read -r code _ _ < <(upload "$tmp/p$i.jpg")
  if [ "$code" = 507 ]; then refused=$((refused + 1)); else other=$((other + 1)); fi
  for url in "$base/classes/Photo?limit=20" "$base/classes/Photo/$first"; do
    reads=$((reads + 1))
    [ "$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" "$url")" = 200 ] && reads_ok=$((reads_ok + 1))
  done
done
code_body=$(curl -s "${H[@]}" -H 'Content-Type: image/jpeg' --data-binary @"$tmp/p2.jpg" "$base/files/p2.jpg")
echo "disk full:        $refused/20 uploads refused with 507 ($other other), reads $reads_ok/$reads 200: $code_body"
# A photo uploaded before the disk filled up entirely, then the last bytes go too.
rm -f "$tmp/tmpfs/filler"
kill -STOP "${pids[-1]}"   # hold the worker while the photo is uploaded and the disk fills
read -r _ _ queued < <(upload "$tmp/p22.jpg")
free=$(df -B1 --output=avail "$tmp/tmpfs" | tail -n1)
head -c "$free" /dev/zero >"$tmp/tmpfs/filler" 2>/dev/null || true
kill -CONT "${pids[-1]}"
sleep 3
during=$(sql "select state || ' after ' || transient_failures || ' transient fault(s), attempts ' || attempts from jobs where photo_id = '$queued'")
freed=$(date +%s.%N)
rm -f "$tmp/tmpfs/filler"
accepted=0
for i in $(seq 23 30); do read -r code _ _ < <(upload "$tmp/p$i.jpg"); [ "$code" = 201 ] && accepted=$((accepted + 1)); done
until [ "$(sql "select count(*) from photos where status not in ('ready', 'failed')")" = 0 ]; do sleep 0.1; done
done_at=$(date +%s.%N)
failed=$(sql "select count(*) from photos where status = 'failed'")
tmpfiles=$(find "$tmp/tmpfs/blobs/.tmp" -type f ! -name '*.lock' | wc -l)  # each live process keeps a .lock
echo "disk 100% full:   job $during (photo not failed)"
awk -v f="$freed" -v d="$done_at" -v a="$accepted" -v x="$failed" -v t="$tmpfiles" 'BEGIN {
  printf "space freed:      %d/8 uploads 201, every photo processed %.1f s later, %d failed, %d temporary file(s) left\n", a, d - f, x, t }'
