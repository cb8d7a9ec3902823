#!/usr/bin/env bash
# Login latency at scrypt cost 15 (the former default) and 17 (the default since #25), same binary:
# GET /parse/login, 6 runs each: right password, wrong password (the sixth meets the throttle), and
# a 2^15 hash logged in at cost 17 (verify + rehash). Prints medians with min and max.
# Usage: bench/login-latency.sh — BIN (default .build/release/galleryd), PORT (18451),
#        PGPORT_PRIVATE (55442).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${BIN:-.build/release/galleryd}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55442}"
[ -x "$bin" ] || { echo "login-latency.sh: no galleryd at $bin (make release, or set BIN)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/urls-lat.XXXXXX)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; scripts/pg.sh stop "$tmp" || true; rm -rf "$tmp"; }
trap cleanup EXIT
export DATABASE_URL=$(scripts/pg.sh start "$tmp")
export GALLERYD_STORAGE_DIR="$tmp/blobs" GALLERYD_LOG_LEVEL=warning GALLERYD_ACCESS_LOG=off GALLERYD_BUCKET_PUBLIC=true
export GALLERYD_MASTER_KEY="lat-master-key-$(date +%s%N)"
port="${PORT:-18451}"
start() {
  GALLERYD_PASSWORD_HASH_COST=$1 "$bin" serve --host 127.0.0.1 --port $port --workers 0 2>"$tmp/log" &
  pid=$!
  for _ in $(seq 300); do curl -fs -o /dev/null "http://127.0.0.1:$port/health" && return; sleep 0.1; done
  cat "$tmp/log"; exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""; }
H=(-H "X-Parse-Application-Id: gallery")
signup() { curl -fsS "${H[@]}" -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY" -H 'Content-Type: application/json' \
  -d "{\"username\":\"$1\",\"password\":\"pw-$1-0123\"}" "http://127.0.0.1:$port/parse/users" >/dev/null; }
login() { curl -s -o /dev/null -w '%{time_total}\n' "${H[@]}" "http://127.0.0.1:$port/parse/login?username=$1&password=$2"; }
median() { sort -n | awk '{a[NR]=$1} END {printf "%.0f ms (min %.0f, max %.0f)", a[int((NR+1)/2)]*1000, a[1]*1000, a[NR]*1000}'; }
start 15
signup old15; signup re15
echo "cost 15: right $(for i in 1 2 3 4 5 6; do login old15 pw-old15-0123; done | median); wrong $(for i in 1 2 3 4 5 6; do login old15 nope; done | median)"
stop
start 17
signup new17
echo "cost 17: right $(for i in 1 2 3 4 5 6; do login new17 pw-new17-0123; done | median); wrong $(for i in 1 2 3 4 5 6; do login new17 nope; done | median)"
echo "cost 17, first login of a 2^15 hash (verify + rehash): $(login re15 pw-re15-0123 | median)"
psql "$DATABASE_URL" -Atc "select username, split_part(password_hash, '\$', 2) from users order by username" | tr '\n' ' '; echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
