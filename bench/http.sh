#!/usr/bin/env bash
# Compares galleryd's HTTP server with nginx answering the same fixed 2 KiB body from memory
# (`return 200 "<2 KiB>"`, no file read) on loopback, both with their access logs on (to files).
# Usage: bench/http.sh [seconds] — needs wrk and nginx (scripts/deps.sh --bench).
# Env: CONNECTIONS (64), LOOPS (event loop threads for galleryd, default 1 = nginx's one worker),
#      IO_BACKEND (both: dispatch and epoll side by side; or dispatch, or epoll),
#      ROUNDS (3: each server runs this many times, alternately; medians are compared),
#      ACCESS_LOG (on: both servers log every request, buffered; off: neither does),
#      PIN (1: servers on the last core, wrk on the others; 0: no pinning; see bench/pin.sh),
#      GALLERYD_BENCH (a galleryd-bench binary to run instead of building this tree's),
#      COMPARE (another build, run beside this one on the first backend in every round: paired CPU/req),
#      HIGH_CONNECTIONS (1000: one more round at this many connections, for p99 under a crowd; 0: none).
# Prints per server the median req/s and CPU µs per request (utime+stime from /proc over the run),
# every round with its p99 latency, and the ratios to nginx: of medians and paired per round.
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-10}"
connections="${CONNECTIONS:-64}"
loops="${LOOPS:-1}"
rounds="${ROUNDS:-3}"
backends="${IO_BACKEND:-both}"
[ "$backends" = both ] && backends="dispatch epoll"
ours_port="${OURS_PORT:-18081}"
nginx_port="${NGINX_PORT:-18089}"  # clear of the galleryd ports (one per backend from OURS_PORT)

command -v wrk >/dev/null || { echo "http.sh: wrk missing (scripts/deps.sh --bench)" >&2; exit 1; }
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$nginx_bin" ] || { echo "http.sh: nginx missing (scripts/deps.sh --bench)" >&2; exit 1; }

if [ -z "${GALLERYD_BENCH:-}" ]; then swift build -c release --product galleryd-bench >&2; fi
bench_bin="${GALLERYD_BENCH:-$(swift build -c release --show-bin-path)/galleryd-bench}"  # GALLERYD_BENCH: another build

tmp="$(mktemp -d)"
. bench/pin.sh
. bench/nginx.sh
. bench/rounds.sh
ours_pids=""
nginx_pid=""
cleanup() {
  for pid in $ours_pids; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
  sleep 0.2
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# The same 2 KiB body the bench server sends (a..z repeated).
python3 -c 'import sys; sys.stdout.write("".join(chr(97 + i % 26) for i in range(2048)))' > "$tmp/fixed"

write_nginx_conf "$tmp/nginx.conf" "$tmp" "$nginx_port" \
  "  default_type application/octet-stream;" \
  "    location = /fixed { return 200 \"$(cat "$tmp/fixed")\"; }"

# One galleryd per backend, on consecutive ports.
ports=""
port="$ours_port"
names=""
servers=""
for backend in $backends; do servers="$servers $backend:$backend:$bench_bin"; done
# COMPARE: another build of the same program, run beside this one on the first backend, each round.
[ -n "${COMPARE:-}" ] && servers="$servers ${backends%% *}-compare:${backends%% *}:$COMPARE"
for server in $servers; do
  IFS=: read -r name backend binary <<<"$server"
  names="$names $name"
  on_server_cpus "$binary" http-server --host 127.0.0.1 --port "$port" --loops "$loops" --io-backend "$backend" \
    --access-log "$( [ "${ACCESS_LOG:-on}" = off ] && echo off || echo text )" >/dev/null 2>"$tmp/galleryd-access-$name.log" &
  ours_pids="$ours_pids $!"
  ports="$ports $port"
  port=$((port + 1))
done
on_server_cpus "$nginx_bin" -c "$tmp/nginx.conf" -p "$tmp" &
nginx_pid=$!

for port in $ports "$nginx_port"; do
  for _ in $(seq 50); do
    curl -fs -o /dev/null "http://127.0.0.1:$port/fixed" && break
    sleep 0.1
  done
  curl -fs -o /dev/null "http://127.0.0.1:$port/fixed" || { echo "http.sh: server on $port did not start" >&2; exit 1; }
done

for port in $ports "$nginx_port"; do  # warm-up
  on_client_cpus wrk -t1 -c"$connections" -d2s "http://127.0.0.1:$port/fixed" >/dev/null
done
# Each server runs in turn within a round, so a round's runs share the machine's load of the moment.
set -- $ours_pids
declare -A pid_of
for port in $ports; do pid_of[$port]="$1"; shift; done
pid_of[$nginx_port]="$nginx_pid"
high="$(high_connections)"
for pass in "$connections" $high; do
  passes=$rounds
  [ "$pass" = "$connections" ] || passes=1
  for round in $(seq "$passes"); do
    set -- $names
    for port in $ports; do
      echo "== round $round, $pass connections: galleryd ($1, loops=$loops)" >&2
      measure "${pid_of[$port]}" "http://127.0.0.1:$port/fixed" "$pass" "$duration" "$port-$pass"
      shift
    done
    echo "== round $round, $pass connections: nginx (1 worker)" >&2
    measure "$nginx_pid" "http://127.0.0.1:$nginx_port/fixed" "$pass" "$duration" "$nginx_port-$pass"
  done
done

report_passes
echo "access logs ${ACCESS_LOG:-on}: galleryd $(cat "$tmp"/galleryd-access-*.log 2>/dev/null | wc -l) lines, nginx $(wc -l <"$tmp/access.log" 2>/dev/null || echo 0) lines"
backend_summary
pinning_summary
