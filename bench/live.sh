#!/usr/bin/env bash
# LiveQuery benchmark: a galleryd over a private PostgreSQL with one photo, SUBSCRIBERS WebSocket
# clients (PyPI websockets, bench/live.py) subscribed to every Photo, and EVENTS committed updates
# (one per transaction, PACE seconds apart) whose title is the clock at commit. Reports deliveries/s
# to all subscribers, commit-to-delivery latency p50/p99 and server RSS per idle subscriber.
#
# Usage: bench/live.sh   Env: SUBSCRIBERS (1000), EVENTS (200), PACE (0.005), PORT (18092),
#        PGPORT_PRIVATE (55514), CONFIG (release; debug to skip the release build), KEEP=1.
# The client runs on the same 2 cores as the server: on this machine it is part of what is measured.
set -euo pipefail
cd "$(dirname "$0")/.."

subscribers="${SUBSCRIBERS:-1000}"
events="${EVENTS:-200}"
pace="${PACE:-0.005}"
port="${PORT:-18092}"
config="${CONFIG:-release}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55514}"

swift build -c "$config" --product galleryd >&2
bin="$(swift build -c "$config" --show-bin-path)/galleryd"
venv="${GALLERYD_TEST_VENV:-$PWD/.build-venv}"
if ! "$venv/bin/python" -c 'import websockets' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'websockets>=12'
fi

tmp="$(mktemp -d /tmp/galleryd-live-bench.XXXXXX)"
. bench/galleryd.sh
trap cleanup_run EXIT INT TERM
ulimit -n 8192 2>/dev/null || true

# Every subscriber comes from 127.0.0.1: no cap on sockets per address here.
export GALLERYD_LIVE_QUERY_MAX_SOCKETS_PER_ADDRESS=0
start_database "$bin"
seed_photos 1
id="$(q "select object_id from photos limit 1")"

start_galleryd "$bin" "$port"

"$venv/bin/python" bench/live.py "ws://127.0.0.1:$port/parse" "${GALLERYD_APP_ID:-gallery}" "$subscribers" "$events" \
  "$server_pid" "$tmp/ready" &
client=$!
while [ ! -f "$tmp/ready" ]; do
  kill -0 "$client" 2>/dev/null || { echo "live.sh: client failed" >&2; exit 1; }
  sleep 0.2
done
q "do \$\$ begin for i in 1..$events loop
     update photos set title = extract(epoch from clock_timestamp())::text where object_id = '$id';
     commit; perform pg_sleep($pace); end loop; end \$\$"
wait "$client"
