#!/usr/bin/env bash
# Login flood benchmark (issue #25, item 3): a galleryd over a private PostgreSQL with one account
# and some photos. Reports, as one JSON line (bench/login-flood.py), a logged-in find's p50/p90
# while FLOODERS clients flood logins with over-long usernames (goal: p90 < 200 ms), and how many of
# 30 parallel wrong passwords for one account, by username and email mixed, pass one throttle
# window (goal: at most 6, the 5 free failures and the one that blocks).
#
# Usage: bench/login-flood.sh   Env: FLOODERS (24), DURATION (20 s), ROUNDS (5), PORT (18093),
#        PGPORT_PRIVATE (55515), CONFIG (release; debug to skip the release build), KEEP=1.
# The clients run on the same 2 cores as the server: on this machine they are part of what is measured.
set -euo pipefail
cd "$(dirname "$0")/.."

port="${PORT:-18093}"
config="${CONFIG:-release}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55515}"

swift build -c "$config" --product galleryd >&2
bin="$(swift build -c "$config" --show-bin-path)/galleryd"

tmp="$(mktemp -d /tmp/galleryd-login-bench.XXXXXX)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  scripts/pg.sh stop "$tmp/pg" || true
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT INT TERM

database_url="$(scripts/pg.sh start "$tmp/pg")"
export DATABASE_URL="$database_url"
export GALLERYD_STORAGE_DIR="$tmp/blobs"
export GALLERYD_MASTER_KEY="bench-master-key-0123456789"
export GALLERYD_URL_SIGNING_KEY="bench-url-signing-key-0123456789abcdef"
"$bin" migrate >&2
psql "$database_url" -q -v ON_ERROR_STOP=1 -v rows=200 -v owners=0 -f bench/manifest-seed.sql >&2
"$bin" users create bench --email bench@example.org --admin --password-stdin <<<'bench passphrase' >&2

"$bin" serve --port "$port" --host 127.0.0.1 --no-migrate --workers 0 2>"$tmp/serve.log" &
server_pid=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  sleep 0.1
done
kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/serve.log" >&2; echo "login-flood.sh: galleryd did not start" >&2; exit 1; }

python3 bench/login-flood.py "$port" gallery bench bench@example.org 'bench passphrase' "$database_url"
