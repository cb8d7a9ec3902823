#!/usr/bin/env bash
# Fault harness for `galleryd import` (issues #13 and #28): the folder walk with every format, put
# through what a real import meets; after each, a re-run must have imported every file exactly once
# (bench/faults-import.py check: one `files` row and one photo per good file, none for a corrupt one,
# no row of a partial read, originals on disk = rows, no temporary file left).
#   kill       ROUNDS rounds, each a new folder (IMPORT_PHOTOS made unique COPIES times, a PNG named .jpg, a HEIC
#              named .png, a .HEIC, random bytes named .heic, a PNG cut in half, and a PNG still being
#              written over WRITE_SECONDS while the walk runs): `galleryd import` killed with -9 at a
#              random moment (0.05 s to KILL_WITHIN s), twice, then run to its end; checked each round
#              (and after each kill: temporary files, `files` rows without photo, originals without row)
#   disk       the store on a small tmpfs (TMPFS, needs root) with min_free_bytes 8 MiB: a folder larger
#              than the space imported: what was imported, what failed and why, the least free space seen
#              during the import, temporary files; then space freed and the import run again
#   pgrestart  PostgreSQL `restart -m fast` RESTART_AFTER s into an import of a folder of PG_FILES
#              files: files failed and why; then the import run again
# PROCESS=1: every import is `galleryd import --process` (the photos decoded in the import's process, so a
#            kill also lands mid-decode): after a kill, the jobs the dead process held (state running, their
#            attempt); each round's last run must end with every photo ready and every job done.
# Usage: bench/faults-import.sh [SCENARIO...] (default: kill disk pgrestart). Needs PostgreSQL, python3.
# Env: PGPORT_PRIVATE (55653), GALLERYD_BIN (else a release build), IMPORT_PHOTOS (the fixtures, space
#      separated; default: samples/photos' JPEGs), ROUNDS (20), COPIES (3), KILL_WITHIN (2.0), WRITE_SECONDS (3),
#      CONCURRENCY (4), TMPFS (40m), PG_FILES (120), RESTART_AFTER (1.0), PROCESS (unset), LEASE
#      (job_lease_seconds, 30).
set -euo pipefail
cd "$(dirname "$0")/.."

scenarios="${*:-kill disk pgrestart}"
rounds="${ROUNDS:-20}"
concurrency="${CONCURRENCY:-4}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55653}"
read -r -a fixtures <<<"${IMPORT_PHOTOS:-$(ls samples/photos/*.jpg | tr '\n' ' ')}"
for i in "${!fixtures[@]}"; do fixtures[$i]="$(cd "$(dirname "${fixtures[$i]}")" && pwd)/$(basename "${fixtures[$i]}")"; done
import_flags=(--concurrency "$concurrency")
[ -n "${PROCESS:-}" ] && import_flags+=(--process)
export GALLERYD_JOB_LEASE_SECONDS="${LEASE:-30}"
png_fixture=""
for f in "${fixtures[@]}"; do [ "${f##*.}" = png ] && png_fixture="$f" && break; done

source bench/faults-lib.sh
faults_galleryd
faults_setup faults-import

export DATABASE_URL="$(scripts/pg.sh start "$tmp/pg")"
export GALLERYD_MASTER_KEY="faults-master-key-$(date +%s%N)"
export GALLERYD_LOG_LEVEL="${GALLERYD_LOG_LEVEL:-warning}"
export PSQL="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)/psql"
sql() { "$PSQL" "$DATABASE_URL" -tAc "$1"; }
# An empty, migrated database (the import then starts at once, not after the migrations).
fresh_database() {
  PGOPTIONS=--client-min-messages=warning sql "drop schema public cascade; create schema public" >/dev/null
  GALLERYD_STORAGE_DIR="$tmp/migrate-blobs" "$galleryd" migrate >/dev/null
}
# What a kill left in the store: `files` rows no photo has yet, originals no row names; with PROCESS, the
# jobs the dead import held (running, with the attempt it took) and its photos left `processing`.
half_done() {
  echo -n "$(sql "select count(*) from files f where not exists (select 1 from photos p where p.checksum = f.checksum)") rows without photo, $(($(find "$1/originals" -type f 2>/dev/null | wc -l) - $(sql "select count(*) from files"))) originals without row"
  [ -n "${PROCESS:-}" ] && echo -n ", jobs held $(sql "select count(*) || coalesce(' (attempt ' || string_agg(attempts::text, ',') || ')', '') from jobs where state = 'running'"), photos processing $(sql "select count(*) from photos where status = 'processing'")"
  echo
}
check() { helper check "$1" "$2" ${PROCESS:+processed}; }
# With PROCESS: notes the jobs a kill left held (`held`, with the kill's time); `held_report` then says what
# became of them once the round's last run ended (the attempt they were done on, seconds from the kill).
held_table() { sql "set client_min_messages = warning; create table if not exists held (job_id bigint primary key, killed_at timestamptz)" >/dev/null; }
held_note() {
  held_table
  sql "insert into held select id, now() from jobs where state = 'running' on conflict do nothing" >/dev/null
}
held_report() {
  held_table # a round whose runs all finished before their kills noted none
  sql "select count(*) || ' held by a killed run: ' || coalesce(count(*) filter (where j.state = 'done') || ' done on attempt '
         || min(j.attempts) || '-' || max(j.attempts) || ', ' || round(min(extract(epoch from j.updated_at - h.killed_at)))
         || '-' || round(max(extract(epoch from j.updated_at - h.killed_at))) || ' s after the kill', '')
       from held h join jobs j on j.id = h.job_id"
  sql "truncate held" >/dev/null
}
# The reasons files failed for in the import output $1, counted.
reasons() { grep '^  failed: ' "$1" | sed 's/^  failed: [^:]*: //; s|/[^ :]*/import-[0-9A-F-]*|<spooled copy>|' | sort | uniq -c | sort -rn | head -n 8 | sed 's/^/   /' || true; }
helper() { python3 bench/faults-import.py "$@"; }
temp_files() { find "$1/.tmp" -type f ! -name '*.lock' 2>/dev/null | wc -l; }
summary() { grep -E '^import: ' "$1" | tail -n1 | sed 's/^import: //'; }

# Runs the import of $1 into the store $2, output in $3; with $4, kill -9 it $4 seconds in.
run_import() {
  local started=$(date +%s%N)
  GALLERYD_STORAGE_DIR="$2" "$galleryd" import "${import_flags[@]}" "$1" >"$3" 2>&1 &
  local pid=$!
  pids+=("$pid")
  if [ -n "${4:-}" ]; then
    sleep "$4"
    if kill -9 "$pid" 2>/dev/null; then
      wait "$pid" 2>/dev/null || true
      echo "killed"
      return 0
    fi
  fi
  local rc=0
  wait "$pid" || rc=$?
  echo "exit $rc after $((($(date +%s%N) - started) / 1000000)) ms"
}

scenario_kill() {
  local store="$tmp/kill-blobs" manifest="$tmp/kill/manifest.jsonl"
  fresh_database
  echo "== import killed with -9 twice a round at a random moment (0.05-${KILL_WITHIN:-2.0} s), then run to its end; $rounds rounds of $(printf '%s ' "${fixtures[@]##*/}")+ mislabelled, corrupt, cut and being-written files"
  for round in $(seq "$rounds"); do
    local dir="$tmp/kill/r$round"
    for c in $(seq "${COPIES:-3}"); do helper set "$dir" "r$round-$c" "${fixtures[@]}"; done
    local writer=""
    if [ -n "$png_fixture" ]; then
      helper write "$dir" "r$round" "$png_fixture" "${WRITE_SECONDS:-3}" &
      writer=$!
      sleep 0.2
    fi
    local line="  round $round:"
    for k in 1 2; do
      local at=$(python3 -c "import random; print(round(random.uniform(0.05, ${KILL_WITHIN:-2.0}), 3))")
      local what=$(run_import "$dir" "$store" "$tmp/kill-$round-$k.log" "$at")
      if [ "$what" = killed ]; then
        what="killed at ${at}s"
        [ -n "${PROCESS:-}" ] && held_note
      else what="finished before the kill at ${at}s ($what)"; fi
      line+=" run $k $what ($(grep -c ': imported$' "$tmp/kill-$round-$k.log" || true) imported), left $(temp_files "$store") temp files, $(half_done "$store");"
    done
    [ -n "$writer" ] && wait "$writer"
    local what=$(run_import "$dir" "$store" "$tmp/kill-$round-3.log")
    echo "$line then $what: $(summary "$tmp/kill-$round-3.log")${PROCESS:+; jobs $(held_report)}"
    reasons "$tmp/kill-$round-3.log"
    check "$manifest" "$store" | sed 's/^/    /' || echo "    CHECK FAILED (round $round)"
  done
}

scenario_disk() {
  if ! faults_tmpfs "$tmp/tmpfs" "${TMPFS:-40m}"; then
    echo "== disk: skipped (needs root to mount a tmpfs)"
    return 0
  fi
  fresh_database
  local store="$tmp/tmpfs/blobs" dir="$tmp/disk/files" manifest="$tmp/disk/manifest.jsonl"
  mkdir -p "$store"
  for i in 1 2 3 4 5 6; do helper set "$dir" "d$i" "${fixtures[@]}"; done
  local total=$(du -sb "$dir" | cut -f1)
  echo "== full disk: tmpfs ${TMPFS:-40m}, min_free_bytes 8 MiB, a folder of $(ls "$dir" | wc -l) files, $((total / 1048576)) MiB"
  : >"$tmp/free.log"
  (while :; do df -B1 --output=avail "$tmp/tmpfs" | tail -n1 >>"$tmp/free.log"; sleep 0.02; done) &
  local watcher=$!
  pids+=("$watcher")
  local what=$(GALLERYD_MIN_FREE_BYTES=8388608 run_import "$dir" "$store" "$tmp/disk-1.log")
  kill "$watcher" 2>/dev/null || true
  echo "  import: $what: $(summary "$tmp/disk-1.log")"
  reasons "$tmp/disk-1.log"
  echo "  least free space during the import: $(sort -n "$tmp/free.log" | head -n1) bytes; temp files after: $(temp_files "$store"); originals $(find "$store/originals" -type f 2>/dev/null | wc -l), files rows $(sql "select count(*) from files"), photos $(sql "select count(*) from photos")"
  mount -o remount,size=400m "$tmp/tmpfs"
  what=$(GALLERYD_MIN_FREE_BYTES=8388608 run_import "$dir" "$store" "$tmp/disk-2.log")
  echo "  space freed (tmpfs 400m), import again: $what: $(summary "$tmp/disk-2.log")"
  check "$manifest" "$store" | sed 's/^/    /' || echo "    CHECK FAILED (disk)"
}

scenario_pgrestart() {
  fresh_database
  local store="$tmp/pg-blobs" dir="$tmp/pgr/files" manifest="$tmp/pgr/manifest.jsonl" n=0
  while [ "$(ls "$dir" 2>/dev/null | wc -l)" -lt "${PG_FILES:-120}" ]; do n=$((n + 1)); helper set "$dir" "p$n" "${fixtures[@]}"; done
  echo "== PostgreSQL restart -m fast ${RESTART_AFTER:-1.0} s into an import of $(ls "$dir" | wc -l) files"
  GALLERYD_STORAGE_DIR="$store" "$galleryd" import "${import_flags[@]}" "$dir" >"$tmp/pgr-1.log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  sleep "${RESTART_AFTER:-1.0}"
  local t0=$(date +%s%N)
  scripts/pg.sh ctl "$tmp/pg" restart -m fast >/dev/null 2>&1
  echo "  restart took $((($(date +%s%N) - t0) / 1000000)) ms; import still running after it: $(kill -0 "$pid" 2>/dev/null && echo yes || echo no)"
  local rc=0
  wait "$pid" || rc=$?
  echo "  import: exit $rc: $(summary "$tmp/pgr-1.log")"
  reasons "$tmp/pgr-1.log"
  local what=$(run_import "$dir" "$store" "$tmp/pgr-2.log")
  echo "  import again: $what: $(summary "$tmp/pgr-2.log")"
  check "$manifest" "$store" | sed 's/^/    /' || echo "    CHECK FAILED (pgrestart)"
}

echo "galleryd: $galleryd" >&2
for scenario in $scenarios; do
  case "$scenario" in
  kill) scenario_kill ;;
  disk) scenario_disk ;;
  pgrestart) scenario_pgrestart ;;
  *) echo "faults-import.sh: unknown scenario $scenario (kill, disk, pgrestart)" >&2; exit 2 ;;
  esac
done
