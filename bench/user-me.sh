#!/usr/bin/env bash
# `GET /parse/users/me` (since docs/decisions/045 the account is read as a get of `_User` through
# the classes' query compiler and encoder, with the app's fields) against `GET /parse/sessions/me`
# (a row read by a repository and written by hand, as `me` was before), same server and session,
# alternating rounds: first with `_User` as it ships, then with three app fields set on the
# account. Prints the medians of wrk's req/s and their ratio.
# Usage: bench/user-me.sh   Env: BIN (default: the debug build), ROUNDS (3), SECONDS_PER_RUN (3),
#   PORT (18481), PGPORT_PRIVATE (55481).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${BIN:-$(swift build --show-bin-path)/galleryd}"
rounds="${ROUNDS:-3}"; seconds="${SECONDS_PER_RUN:-3}"; port="${PORT:-18481}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55481}"
tmp=$(mktemp -d /tmp/galleryd-user-me.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  scripts/pg.sh stop "$tmp" || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
DATABASE_URL=$(scripts/pg.sh start "$tmp")
export DATABASE_URL GALLERYD_STORAGE_DIR="$tmp/blobs" GALLERYD_LOG_LEVEL=warning GALLERYD_ACCESS_LOG=off
export GALLERYD_BUCKET_PUBLIC=true GALLERYD_PASSWORD_HASH_COST=12 GALLERYD_MASTER_KEY="bench-master-key-0123456789"
"$bin" serve --host 127.0.0.1 --port "$port" --workers 0 2>"$tmp/log" &
pid=$!
for _ in $(seq 300); do curl -fs -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
base="http://127.0.0.1:$port/parse"
H=(-H "X-Parse-Application-Id: gallery" -H 'Content-Type: application/json')
M=(-H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY")
signed=$(curl -fsS "${H[@]}" "${M[@]}" -d '{"username":"bench","password":"bench-pw-0123"}' "$base/users")
token=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["sessionToken"])' "$signed")
user=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["objectId"])' "$signed")
run() {
  wrk -t1 -c4 -d"${seconds}s" -H "X-Parse-Application-Id: gallery" -H "X-Parse-Session-Token: $token" "$base/$1" \
    | awk '/Requests\/sec/ {print $2}'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() {
  local me=() sessions=()
  for _ in $(seq "$rounds"); do me+=("$(run users/me)"); sessions+=("$(run sessions/me)"); done
  local m s
  m=$(printf '%s\n' "${me[@]}" | median); s=$(printf '%s\n' "${sessions[@]}" | median)
  echo "$1: users/me $m req/s, sessions/me $s req/s (users/me / sessions/me = $(python3 -c "print(f'{$m/$s:.3f}')"))"
}
measure "_User as it ships"
curl -fsS -o /dev/null -X PUT "${H[@]}" "${M[@]}" "$base/schemas/_User" \
  -d '{"fields":{"displayName":{"type":"String"},"age":{"type":"Number"},"prefs":{"type":"Object"}}}'
curl -fsS -o /dev/null -X PUT "${H[@]}" "${M[@]}" "$base/users/$user" \
  -d '{"displayName":"Bench","age":30,"prefs":{"theme":"dark","lang":"en"}}'
curl -fsS "${H[@]}" -H "X-Parse-Session-Token: $token" "$base/users/me" >&2; echo >&2
measure "three app fields"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
