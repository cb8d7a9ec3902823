#!/usr/bin/env bash
# Compares galleryd's HTTP server with nginx serving the same fixed 2 KiB body on loopback.
# Usage: bench/http.sh [seconds] — needs wrk and nginx (scripts/deps.sh --bench).
# Env: CONNECTIONS (64), LOOPS (event loop threads for galleryd, default 1 = nginx's one worker),
#      PIN (1: servers on the last core, wrk on the others; 0: no pinning; see bench/pin.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-10}"
connections="${CONNECTIONS:-64}"
loops="${LOOPS:-1}"
ours_port="${OURS_PORT:-18081}"
nginx_port="${NGINX_PORT:-18082}"

command -v wrk >/dev/null || { echo "http.sh: wrk missing (scripts/deps.sh --bench)" >&2; exit 1; }
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$nginx_bin" ] || { echo "http.sh: nginx missing (scripts/deps.sh --bench)" >&2; exit 1; }

swift build -c release --product galleryd-bench >&2
bench_bin="$(swift build -c release --show-bin-path)/galleryd-bench"

tmp="$(mktemp -d)"
. bench/pin.sh
. bench/nginx.sh
ours_pid=""
nginx_pid=""
cleanup() {
  [ -n "$ours_pid" ] && kill "$ours_pid" 2>/dev/null && wait "$ours_pid" 2>/dev/null || true
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
  sleep 0.2
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# The same 2 KiB body the bench server sends (a..z repeated).
python3 -c 'import sys; sys.stdout.write("".join(chr(97 + i % 26) for i in range(2048)))' > "$tmp/fixed"

write_nginx_conf "$tmp/nginx.conf" "$tmp" "$nginx_port" \
  "  default_type application/octet-stream;" \
  "    root $tmp;
    location = /fixed { }"

on_server_cpus "$bench_bin" http-server --host 127.0.0.1 --port "$ours_port" --loops "$loops" >/dev/null &
ours_pid=$!
on_server_cpus "$nginx_bin" -c "$tmp/nginx.conf" -p "$tmp" &
nginx_pid=$!

for port in "$ours_port" "$nginx_port"; do
  for _ in $(seq 50); do
    curl -fs -o /dev/null "http://127.0.0.1:$port/fixed" && break
    sleep 0.1
  done
  curl -fs -o /dev/null "http://127.0.0.1:$port/fixed" || { echo "http.sh: server on $port did not start" >&2; exit 1; }
done

run() { # port → req/s
  on_client_cpus wrk -t1 -c"$connections" -d2s "http://127.0.0.1:$1/fixed" >/dev/null  # warm-up
  on_client_cpus wrk -t1 -c"$connections" -d"${duration}s" "http://127.0.0.1:$1/fixed" | tee "$tmp/wrk-$1.txt" >&2
  awk '/Requests\/sec/ { print $2 }' "$tmp/wrk-$1.txt"
}

echo "== galleryd (loops=$loops)" >&2
ours="$(run "$ours_port")"
echo "== nginx (1 worker)" >&2
theirs="$(run "$nginx_port")"

echo "galleryd: $ours req/s"
echo "nginx:    $theirs req/s"
pinning_summary
awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "ratio:    %.2f (target >= 0.90)\n", a / b }'
