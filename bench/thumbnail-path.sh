#!/usr/bin/env bash
# Issue #30's comparison, runnable on any machine (`make bench-thumbnail`): galleryd in its default
# configuration (signed asset URLs, the text access log on, one event loop) against nginx (one
# worker, its access log on, buffered, sendfile and open_file_cache), both pinned (bench/pin.sh):
#   - the signed thumbnail GET (`/<bucket>/s/<expires>/<sig>/thumbnails/<id>.jpg`, the URL the API
#     hands out) against nginx serving the same file at the same path (a regex location that skips
#     the signature segment, so both read the same request line);
#   - `/health` against nginx's `return 200` of the same body and type.
# Every server runs once per round, in turn (alternating rounds), at CONNECTIONS, then one round at
# HIGH_CONNECTIONS for p99 under a crowd. Prints per server and URL the median req/s, the CPU µs per
# request (utime+stime from /proc/<pid>/stat over the run, divided by wrk's request count), every
# round with its p99, the ratios to nginx of medians and paired per round, and dispatch/epoll.
# Usage: bench/thumbnail-path.sh [seconds] — needs wrk, nginx and PostgreSQL (scripts/deps.sh --bench).
# Env: ROUNDS (3), CONNECTIONS (64), HIGH_CONNECTIONS (1000; 0: none), IO_BACKEND (both, dispatch or
#      epoll), GALLERYD (a release galleryd to run instead of building this tree's), COMPARE (another
#      build, run beside this one on the first backend in every round: paired before/after),
#      PHOTO (see bench/photos.sh), OURS_PORT (18301, and the next ones), NGINX_PORT (18309),
#      PGPORT_PRIVATE (55615), PIN (see bench/pin.sh), PATHS ("thumbnail health": which comparisons;
#      "size" adds the signed URL of the photo's `s` display size (#29), rendered by a first GET),
#      SAME_HEAD=1: nginx sends galleryd's extra head fields too (same head bytes for wrk to parse),
#      COUNTS=1: instead of the rounds, per-request counts of every server (system calls by name,
#      allocations, context switches, CPU; and the kernel side at CONNECTIONS and HIGH_CONNECTIONS:
#      instructions and cycles user/kernel where the machine has PMU counters, system calls and
#      epoll_wait's events per call from tracepoints, user/system CPU, segments and pure ACKs per
#      request from `ss -ti`, the socket options and epoll registrations; KERNEL_ONLY=1: only
#      those; bench/counts.sh: strace, perf, ss, root); with PERF=1 also a
#      `perf record -g` profile of each (reports in PERF_OUT, default /tmp); CALLGRIND=1: instead,
#      user-space instructions per request of each under valgrind's callgrind (CALLGRIND_REQUESTS, 2000);
#      CLIENT (wrk, loadgen or h2load: the load generator, bench/rounds.sh; loadgen is bench/loadgen.c,
#      built with cc, whose counts are checked against each server's access log every run).
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-4}"
connections="${CONNECTIONS:-64}"
rounds="${ROUNDS:-3}"
backends="${IO_BACKEND:-both}"
[ "$backends" = both ] && backends="dispatch epoll"
paths="${PATHS:-thumbnail health}"
ours_port="${OURS_PORT:-18301}"
nginx_port="${NGINX_PORT:-18309}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55615}"
. bench/photos.sh
photo="${PHOTO:-$(bench_photo flower.jpg smallest)}"

command -v wrk >/dev/null || { echo "thumbnail-path.sh: wrk missing (scripts/deps.sh --bench)" >&2; exit 1; }
command -v cc >/dev/null || [ "${CLIENT:-wrk}" != loadgen ] || { echo "thumbnail-path.sh: cc missing (CLIENT=loadgen)" >&2; exit 1; }
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$nginx_bin" ] || { echo "thumbnail-path.sh: nginx missing (scripts/deps.sh --bench)" >&2; exit 1; }
[ -f "$photo" ] || { echo "thumbnail-path.sh: no photo at $photo (set PHOTO)" >&2; exit 1; }
# The crowded pass needs a descriptor per connection on both sides.
[ "${HIGH_CONNECTIONS:-1000}" -gt 0 ] && ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

if [ -z "${GALLERYD:-}" ]; then swift build -c release --product galleryd >&2; fi
galleryd="${GALLERYD:-$(swift build -c release --show-bin-path)/galleryd}"

tmp="$(mktemp -d /tmp/galleryd-thumbnail-bench.XXXXXX)"
. bench/pin.sh
. bench/nginx.sh
. bench/rounds.sh
client_setup
ours_pids=""
nginx_pid=""
cleanup() {
  for pid in $ours_pids; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null || true
  scripts/pg.sh stop "$tmp/pg" || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

database_url="$(scripts/pg.sh start "$tmp/pg")"
storage="$tmp/blobs"
master_key="bench-master-key-$(date +%s%N)"
signing_key="bench-url-signing-key-0123456789abcdef"

# The default configuration: bucket_public false (signed URLs), access log text, one event loop.
ports=""
port="$ours_port"
workers=1
names=""
servers=""
for backend in $backends; do servers="$servers $backend:$backend:$galleryd"; done
[ -n "${COMPARE:-}" ] && servers="$servers ${backends%% *}-compare:${backends%% *}:$COMPARE"
for server in $servers; do
  IFS=: read -r name backend binary <<<"$server"
  names="$names $name"
  GALLERYD_MASTER_KEY="$master_key" GALLERYD_URL_SIGNING_KEY="$signing_key" GALLERYD_LOG_LEVEL=warning \
    GALLERYD_EVENT_LOOPS=1 GALLERYD_IO_BACKEND="$backend" \
    on_server_cpus "$binary" serve --host 127.0.0.1 --port "$port" --database-url "$database_url" \
    --storage-dir "$storage" --public-url "http://127.0.0.1:$ours_port" --workers "$workers" \
    2>"$tmp/galleryd-$name.log" &
  ours_pids="$ours_pids $!"
  for _ in $(seq 100); do
    curl -fs -o /dev/null "http://127.0.0.1:$port/health" && break
    sleep 0.1
  done
  curl -fs -o /dev/null "http://127.0.0.1:$port/health" || { cat "$tmp/galleryd-$name.log" >&2; exit 1; }
  ports="$ports $port"
  port=$((port + 1))
  workers=0
done

parse() { curl -fsS -H "X-Parse-Application-Id: gallery" -H "X-Parse-Master-Key: $master_key" "$@"; }
json_field() { python3 -c 'import json, sys; print(json.load(sys.stdin).get(sys.argv[1], ""))' "$1"; }
file_name="$(parse -H "Content-Type: image/jpeg" --data-binary "@$photo" \
  "http://127.0.0.1:$ours_port/parse/files/$(basename "$photo")" | json_field name)"
photo_id="$(parse -H "Content-Type: application/json" -d "{\"original\":{\"__type\":\"File\",\"name\":\"$file_name\"}}" \
  "http://127.0.0.1:$ours_port/parse/classes/Photo" | json_field objectId)"
status=""
for _ in $(seq 600); do
  status="$(parse "http://127.0.0.1:$ours_port/parse/classes/Photo/$photo_id" | json_field status)"
  [ "$status" = ready ] || [ "$status" = failed ] && break
  sleep 0.1
done
[ "$status" = ready ] || { echo "thumbnail-path.sh: photo $photo_id is '$status', not ready" >&2; exit 1; }
# The signed thumbnail URL exactly as the API hands it out; its path is what every server gets.
thumbnail_url="$(parse "http://127.0.0.1:$ours_port/parse/classes/Photo/$photo_id" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["thumbnail"]["url"])')"
thumbnail_path="/${thumbnail_url#http://*/}"
case "$thumbnail_path" in */s/*) ;; *) echo "thumbnail-path.sh: $thumbnail_path is not signed" >&2; exit 1 ;; esac
key="thumbnails/$photo_id.jpg"
echo "served: $thumbnail_path, $(stat -c %s "$storage/$key") bytes" >&2
size_path=""
case " $paths " in
  *" size "*)
    # The `s` display size's signed URL as the API hands it out; the first GET renders it.
    size_url="$(parse "http://127.0.0.1:$ours_port/parse/classes/Photo/$photo_id?keys=sizes" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["sizes"]["s"]["url"])')"
    size_path="/${size_url#http://*/}"
    curl -fsS -o /dev/null "http://127.0.0.1:$ours_port$size_path"
    echo "served: $size_path, $(stat -c %s "$storage/sizes/$photo_id/s.jpg") bytes" >&2
    ;;
esac
health_body='{"status":"ok"}'
# SAME_HEAD=1: nginx also sends the fields galleryd adds to a file's head (CORS, security, request
# id), so wrk reads and parses as many head bytes from both; the comparison is then of the servers
# alone, not of how long a head the client parses (wrk is pinned to one core too).
same_head=""
same_head_health=""
# The fields of galleryd's head at $1 that nginx does not send by itself, as add_header lines.
extra_fields() {
  curl -fsS -D - -o /dev/null "http://127.0.0.1:$ours_port$1" | tr -d '\r' | awk '
    NR > 1 && index($0, ": ") {
      name = substr($0, 1, index($0, ": ") - 1); value = substr($0, length(name) + 3)
      if (tolower(name) ~ /^(server|date|content-type|content-length|last-modified|etag|accept-ranges|cache-control|connection)$/) next
      gsub(/"/, "\\\"", value); printf "      add_header %s \"%s\";\n", name, value }'
}
if [ "${SAME_HEAD:-0}" = 1 ]; then
  same_head="$(extra_fields "$thumbnail_path")"
  same_head_health="$(extra_fields /health)"
  echo "nginx adds galleryd's head fields (thumbnail, then /health):" >&2
  echo "$same_head" >&2
  echo "$same_head_health" >&2
fi

write_nginx_conf "$tmp/nginx.conf" "$tmp" "$nginx_port" \
  "  sendfile on;
  tcp_nopush on;
  open_file_cache max=1000 inactive=60s;
  open_file_cache_valid 60s;
  types { image/jpeg jpg; }" \
  "    location ~ ^/[^/]+/s/[0-9]+/[A-Za-z0-9_-]+/(.+)\$ {
      alias $storage/\$1;
      add_header Cache-Control \"private, max-age=600000\";
$same_head
    }
    location = /health {
      default_type application/json;
$same_head_health
      return 200 '$health_body';
    }"
on_server_cpus "$nginx_bin" -c "$tmp/nginx.conf" -p "$tmp" &
nginx_pid=$!
for _ in $(seq 50); do
  curl -fs -o /dev/null "http://127.0.0.1:$nginx_port/health" && break
  sleep 0.1
done
for port in $ports; do
  for served in "$thumbnail_path" $size_path; do
    cmp <(curl -fsS "http://127.0.0.1:$port$served") <(curl -fsS "http://127.0.0.1:$nginx_port$served") \
      || { echo "thumbnail-path.sh: galleryd ($port) and nginx serve different bytes at $served" >&2; exit 1; }
  done
  [ "$(curl -fsS "http://127.0.0.1:$port/health")" = "$(curl -fsS "http://127.0.0.1:$nginx_port/health")" ] \
    || { echo "thumbnail-path.sh: galleryd ($port) and nginx answer /health differently" >&2; exit 1; }
done

# Lines a server's access log has dropped (galleryd's counter at /metrics: it drops rather than stall a
# request when its log writer is behind; nginx's buffered log drops none), for the client's count check.
access_log_dropped() {
  if [ "$1" = "$nginx_port" ]; then echo 0; return; fi
  parse "http://127.0.0.1:$1/metrics" | awk '/^galleryd_access_log_dropped_total / { print $2 + 0 }'
}
path_of() { case "$1" in thumbnail) echo "$thumbnail_path" ;; size) echo "$size_path" ;; *) echo /health ;; esac; }
# The head bytes each client reads per answer (the client's parse grows with them; decision 041, round 10).
head_bytes() { curl -fsS -D - -o /dev/null "$@" | wc -c; }
for what in $paths; do
  echo "head bytes, $what: galleryd $(head_bytes "http://127.0.0.1:$ours_port$(path_of "$what")")" \
    "(with an Origin: $(head_bytes -H "Origin: http://photos.example" "http://127.0.0.1:$ours_port$(path_of "$what")"))," \
    "nginx $(head_bytes "http://127.0.0.1:$nginx_port$(path_of "$what")")" >&2
done
set -- $ours_pids
declare -A pid_of log_of
for port in $ports; do pid_of[$port]="$1"; shift; done
pid_of[$nginx_port]="$nginx_pid"
set -- $names
for port in $ports; do log_of[$port]="$tmp/galleryd-$1.log"; shift; done
log_of[$nginx_port]="$tmp/access.log"
for what in $paths; do  # warm-up
  for port in $ports "$nginx_port"; do
    load "http://127.0.0.1:$port$(path_of "$what")" "$connections" 2 >/dev/null
  done
done
if [ "${CALLGRIND:-0}" = 1 ]; then
  # Instructions per request (user space) under callgrind, exact whatever the load: one more galleryd
  # (each backend) and one more nginx (no master process), each on its own port, same store and files.
  . bench/counts.sh
  n="${CALLGRIND_REQUESTS:-2000}"
  # valgrind 3.19 gives up on the Swift toolchain's DWARF: a copy without it (symbols kept) runs.
  objcopy --strip-debug "$galleryd" "$tmp/galleryd-callgrind"
  cg_port=$((nginx_port + 1))
  sed -e "s/listen 127.0.0.1:$nginx_port;/listen 127.0.0.1:$cg_port;/" -e 's/^worker_processes 1;/master_process off;/' \
    -e "s#pid $tmp/nginx.pid#pid $tmp/nginx-cg.pid#" "$tmp/nginx.conf" >"$tmp/nginx-cg.conf"
  valgrind -q --tool=callgrind --instr-atstart=no --callgrind-out-file="$tmp/cg-nginx" \
    "$nginx_bin" -c "$tmp/nginx-cg.conf" -p "$tmp" 2>"$tmp/valgrind-nginx.log" &
  ours_pids="$ours_pids $!"
  cg_pids="$!:nginx:$cg_port"
  for backend in $backends; do
    cg_port=$((cg_port + 1))
    GALLERYD_MASTER_KEY="$master_key" GALLERYD_URL_SIGNING_KEY="$signing_key" GALLERYD_LOG_LEVEL=warning \
      GALLERYD_EVENT_LOOPS=1 GALLERYD_IO_BACKEND="$backend" \
      valgrind -q --tool=callgrind --instr-atstart=no --callgrind-out-file="$tmp/cg-galleryd-$backend" \
      "$tmp/galleryd-callgrind" serve --host 127.0.0.1 --port "$cg_port" --database-url "$database_url" \
      --storage-dir "$storage" --public-url "http://127.0.0.1:$ours_port" --workers 0 \
      2>"$tmp/valgrind-$backend.log" &
    ours_pids="$ours_pids $!"
    cg_pids="$cg_pids $!:galleryd-$backend:$cg_port"
  done
  for entry in $cg_pids; do
    IFS=: read -r pid name port <<<"$entry"
    for _ in $(seq 600); do curl -fs -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.5; done
    for what in $paths; do
      callgrind_requests "$pid" "$tmp/cg-$name" "${PERF_OUT:-/tmp}/callgrind-$what-$name.txt" \
        "http://127.0.0.1:$port$(path_of "$what")" "$n"
    done
  done
  exit 0
fi
if [ "${COUNTS:-0}" = 1 ]; then
  # Per-request counts instead of rounds: system calls, allocations, context switches (bench/counts.sh).
  . bench/counts.sh
  counts_setup
  for what in $paths; do
    set -- $names
    for port in $ports "$nginx_port"; do
      label=nginx
      [ "$port" = "$nginx_port" ] || { label="galleryd-$1"; shift; }
      url="http://127.0.0.1:$port$(path_of "$what")"
      [ "${KERNEL_ONLY:-0}" = 1 ] || count_per_request "${pid_of[$port]}" "$url" "$connections" "$duration" "$what:$label"
      # The kernel side (decision 041, round 10): at CONNECTIONS and at HIGH_CONNECTIONS.
      for pass in "$connections" $(high_connections); do
        kernel_per_request "${pid_of[$port]}" "$port" "$url" "$pass" "$duration" "$what:$label:$pass"
      done
      socket_options "${pid_of[$port]}" "$url" "$what:$label"
      [ "${PERF:-0}" = 1 ] && profile_server "${pid_of[$port]}" "http://127.0.0.1:$port$(path_of "$what")" \
        "$connections" "$duration" "$what:$label"
    done
  done
  pinning_summary
  exit 0
fi
high="$(high_connections)"
for what in $paths; do
  for pass in "$connections" $high; do
    passes=$rounds
    [ "$pass" = "$connections" ] || passes=1
    for round in $(seq "$passes"); do
      set -- $names
      for port in $ports "$nginx_port"; do
        label="nginx"
        [ "$port" = "$nginx_port" ] || { label="galleryd $1"; shift; }
        echo "== $what, round $round, $pass connections: $label" >&2
        measure "${pid_of[$port]}" "http://127.0.0.1:$port$(path_of "$what")" "$pass" "$duration" "$what-$port-$pass" \
          "${log_of[$port]}"
      done
    done
  done
done

# One summary per comparison: each galleryd against nginx, COMPARE against this build, and the backends.
for what in $paths; do
  echo "=== $what ($(path_of "$what" | cut -c1-60)…), nginx: $( [ "$what" = health ] && echo "return 200" || echo "sendfile, open_file_cache")"
  for pass in "$connections" $high; do
    echo "-- $pass connections$( [ "$pass" = "$connections" ] && echo ", $rounds rounds" || echo ", 1 round")"
    set -- $names
    for port in $ports; do
      report "galleryd $1" "$what-$port-$pass" "$what-$nginx_port-$pass"
      if [ "$pass" = "$connections" ]; then
        median <"$tmp/rps-$what-$port-$pass" >"$tmp/median-$1"
        cp "$tmp/rps-$what-$port-$pass" "$tmp/rounds-$1"
      fi
      shift
    done
    report "nginx" "$what-$nginx_port-$pass"
    if [ -n "${COMPARE:-}" ]; then
      set -- $ports
      compare_report "$what-$1-$pass" "$what-${!#}-$pass"
    fi
  done
  backend_summary
done
echo "access logs: galleryd $(cat "$tmp"/galleryd-*.log | grep -c ' "GET ' || true) lines, nginx $(wc -l <"$tmp/access.log") lines"
echo "client: $client"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
pinning_summary
