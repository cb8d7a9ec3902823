#!/usr/bin/env bash
# Compares galleryd's HTTP server with nginx answering the same fixed 2 KiB body from memory
# (`return 200 "<2 KiB>"`, no file read) on loopback, both with their access logs on (to files).
# Usage: bench/http.sh [seconds] — needs wrk and nginx (scripts/deps.sh --bench).
# Env: CONNECTIONS (64), LOOPS (event loop threads for galleryd, default 1 = nginx's one worker),
#      IO_BACKEND (both: dispatch and epoll side by side; or dispatch, or epoll),
#      ROUNDS (3: each server runs this many times, alternately; medians are compared),
#      ACCESS_LOG (on: both servers log every request, buffered; off: neither does),
#      PIN (1: servers on the last core, wrk on the others; 0: no pinning; see bench/pin.sh).
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

swift build -c release --product galleryd-bench >&2
bench_bin="$(swift build -c release --show-bin-path)/galleryd-bench"

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
for backend in $backends; do
  on_server_cpus "$bench_bin" http-server --host 127.0.0.1 --port "$port" --loops "$loops" --io-backend "$backend" \
    --access-log "$( [ "${ACCESS_LOG:-on}" = off ] && echo off || echo text )" >/dev/null 2>"$tmp/galleryd-access-$backend.log" &
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

run() { # port → req/s
  on_client_cpus wrk -t1 -c"$connections" -d"${duration}s" --latency "http://127.0.0.1:$1/fixed" | tee "$tmp/wrk-$1.txt" >&2
  awk '/ 99%/ { print $2 }' "$tmp/wrk-$1.txt" >>"$tmp/p99-$1"
  awk '/Requests\/sec/ { print $2 }' "$tmp/wrk-$1.txt"
}

for port in $ports "$nginx_port"; do  # warm-up
  on_client_cpus wrk -t1 -c"$connections" -d2s "http://127.0.0.1:$port/fixed" >/dev/null
  : >"$tmp/rps-$port"
done
for round in $(seq "$rounds"); do
  set -- $backends
  for port in $ports; do
    echo "== round $round: galleryd ($1, loops=$loops)" >&2
    run "$port" >>"$tmp/rps-$port"
    shift
  done
  echo "== round $round: nginx (1 worker)" >&2
  run "$nginx_port" >>"$tmp/rps-$nginx_port"
done

theirs="$(median <"$tmp/rps-$nginx_port")"
set -- $backends
for port in $ports; do
  ours="$(median <"$tmp/rps-$port")"
  printf "galleryd %-8s %s req/s (rounds: %s), p99 %s\n" "$1:" "$ours" "$(paste -sd' ' "$tmp/rps-$port")" "$(paste -sd' ' "$tmp/p99-$port")"
  awk -v a="$ours" -v b="$theirs" -v n="$1" 'BEGIN { printf "ratio %-8s %.2f of nginx (target >= 0.90)\n", n ":", a / b }'
  echo "$ours" >"$tmp/median-$1"
  cp "$tmp/rps-$port" "$tmp/rounds-$1"
  shift
done
echo "nginx:            $theirs req/s (rounds: $(paste -sd' ' "$tmp/rps-$nginx_port")), p99 $(paste -sd' ' "$tmp/p99-$nginx_port")"
echo "access logs ${ACCESS_LOG:-on}: galleryd $(cat "$tmp"/galleryd-access-*.log 2>/dev/null | wc -l) lines, nginx $(wc -l <"$tmp/access.log" 2>/dev/null || echo 0) lines (connections: $connections)"
backend_summary
pinning_summary
