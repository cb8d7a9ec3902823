#!/usr/bin/env bash
# Revalidated manifest pages: what every app launch costs once the first page and the count are
# cached. A release galleryd over a private PostgreSQL seeded with ROWS photos (default 1,000);
# wrk asks for the first page with `If-None-Match: <its ETag>` (a 304 answered from the in-memory
# change sequences, no query), the same for the count, and the full first page for comparison;
# nginx answers a static file's 304 (`If-None-Match` with its ETag) as the anchor (issue #17:
# revalidated first page >= 0.9x nginx's static 304 rate).
#
# Usage: bench/manifest-304.sh [seconds]   (needs wrk, nginx and psql: scripts/deps.sh --bench)
# Env: ROWS (1000), CONNECTIONS (64), PORT (18094), NGINX_PORT (18095), PGPORT_PRIVATE (55516),
#      PIN (1: servers on the last core, wrk on the others; see bench/pin.sh), ROUNDS (3: the
#      galleryd and nginx 304s alternate, medians and the median of per-round ratios), KEEP=1
#      keeps the temporary directory. BASELINE=<galleryd binary> also runs that build (on PORT+2)
#      in the same alternation, e.g. main's, for a before/after on a busy machine. CPU us/req: the server process's user + system CPU time
#      (/proc/PID/stat) over the requests wrk counted.
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-10}"
rounds="${ROUNDS:-3}"
rows="${ROWS:-1000}"
connections="${CONNECTIONS:-64}"
port="${PORT:-18094}"
nginx_port="${NGINX_PORT:-18095}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55516}"

command -v wrk >/dev/null || { echo "manifest-304.sh: wrk missing (scripts/deps.sh --bench)" >&2; exit 1; }
command -v psql >/dev/null || { echo "manifest-304.sh: psql missing (scripts/deps.sh)" >&2; exit 1; }
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$nginx_bin" ] || { echo "manifest-304.sh: nginx missing (scripts/deps.sh --bench)" >&2; exit 1; }

swift build -c release --product galleryd >&2
bin="$(swift build -c release --show-bin-path)/galleryd"

tmp="$(mktemp -d /tmp/galleryd-manifest-304.XXXXXX)"
. bench/pin.sh
. bench/nginx.sh
. bench/rounds.sh
server_pid=""
nginx_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
  [ -n "$baseline_pid" ] && kill "$baseline_pid" 2>/dev/null || true
  scripts/pg.sh stop "$tmp/pg" || true
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT INT TERM

database_url="$(scripts/pg.sh start "$tmp/pg")"
export DATABASE_URL="$database_url"
export GALLERYD_MASTER_KEY="bench-master-key-0123456789"
export GALLERYD_URL_SIGNING_KEY="bench-url-signing-key-0123456789abcdef"
export GALLERYD_STORAGE_DIR="$tmp/blobs"
"$bin" migrate >&2
psql "$database_url" -q -v ON_ERROR_STOP=1 -v rows="$rows" -v owners=0 -f bench/manifest-seed.sql >&2

# One event loop, as nginx runs one worker.
export GALLERYD_EVENT_LOOPS=1
on_server_cpus "$bin" serve --port "$port" --host 127.0.0.1 --no-migrate --workers 0 2>"$tmp/serve.log" &
server_pid=$!
# BASELINE: another galleryd binary (e.g. main's release build) on PORT+2, alternated with this one.
baseline_pid=""
baseline_port=$((port + 2))
if [ -n "${BASELINE:-}" ]; then
  on_server_cpus "$BASELINE" serve --port "$baseline_port" --host 127.0.0.1 --no-migrate --workers 0 2>"$tmp/baseline.log" &
  baseline_pid=$!
fi

# nginx: a static file of about the first page's size, answered 304 for its own ETag.
# The master key: the app id alone reads nothing.
curl_page() { curl -s -H 'X-Parse-Application-Id: gallery' -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY" "$@"; }
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
page="/parse/classes/Photo?order=-createdAt&limit=20"
count="/parse/classes/Photo?count=1&limit=0"
curl_page "http://127.0.0.1:$port$page" > "$tmp/page.json"
write_nginx_conf "$tmp/nginx.conf" "$tmp" "$nginx_port" "  default_type application/json;" \
  "    root $tmp;
    location = /page.json { }"
on_server_cpus "$nginx_bin" -c "$tmp/nginx.conf" -p "$tmp" &
nginx_pid=$!
for _ in $(seq 1 50); do curl -fs -o /dev/null "http://127.0.0.1:$nginx_port/page.json" && break; sleep 0.1; done

# The tag of a URL, once the server's sequences are known (it answers 304 for it).
etag_of() { # url [curl args…] → ETag
  local url="$1" tag=""
  shift
  for _ in $(seq 1 100); do
    tag="$(curl -s -D - -o /dev/null "$@" "$url" | awk 'tolower($1) == "etag:" { sub(/\r$/, ""); print $2 }')"
    if [ -n "$tag" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$@" -H "If-None-Match: $tag" "$url")" = 304 ]; then
      echo "$tag"
      return
    fi
    sleep 0.1
  done
  echo "manifest-304.sh: $url never answered 304 (last tag: ${tag:-none})" >&2
  exit 1
}
page_tag="$(etag_of "http://127.0.0.1:$port$page" -H 'X-Parse-Application-Id: gallery' -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY")"
count_tag="$(etag_of "http://127.0.0.1:$port$count" -H 'X-Parse-Application-Id: gallery' -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY")"
nginx_tag="$(etag_of "http://127.0.0.1:$nginx_port/page.json")"
if [ -n "$baseline_pid" ]; then
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$baseline_port/health" >/dev/null 2>&1 && break; sleep 0.1; done
  baseline_tag="$(etag_of "http://127.0.0.1:$baseline_port$page" -H 'X-Parse-Application-Id: gallery' -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY")"
fi
# nginx's worker process does the serving (the master only supervises).
nginx_worker="$(pgrep -P "$nginx_pid" | head -1)"

# CPU seconds (user + system) a process has used so far, from /proc (the machine is shared, so
# CPU per request says more than the rate alone).
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.4f", ($14 + $15) / hz }' "/proc/$1/stat"; }

run() { # name pid url [header] → a result line; req/s also appended to $tmp/rates.<name>
  local name="$1" pid="$2" url="$3" header="${4:-}" args=(-t1 -c"$connections" --latency -H 'X-Parse-Application-Id: gallery'
    -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY")
  [ -n "$header" ] && args+=(-H "$header")
  on_client_cpus wrk "${args[@]}" -d2s "$url" >/dev/null  # warm-up
  local before after requests rps
  before="$(cpu_seconds "$pid")"
  on_client_cpus wrk "${args[@]}" -d"${duration}s" "$url" >"$tmp/wrk.out" 2>&1
  after="$(cpu_seconds "$pid")"
  requests="$(awk '/requests in/ {print $1}' "$tmp/wrk.out")"
  rps="$(awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk.out")"
  echo "$rps" >>"$tmp/rates.${name// /_}"
  printf '%-36s %10s %8s %8s %10s  %s\n' "$name" "$rps" \
    "$(awk '$1 == "50%" {print $2}' "$tmp/wrk.out")" "$(awk '$1 == "99%" {print $2}' "$tmp/wrk.out")" \
    "$(awk -v a="$after" -v b="$before" -v n="$requests" 'BEGIN { printf "%.2f", (a - b) * 1e6 / n }')" \
    "$(awk '/Non-2xx|Socket errors/ {print}' "$tmp/wrk.out" | tr '\n' ' ')"
}

echo
echo "revalidated manifest, $rows photos, wrk -t1 -c$connections -d${duration}s, $rounds alternating rounds ($(nproc) cores shared with PostgreSQL)"
pinning_summary
printf '%-36s %10s %8s %8s %10s\n' "request" "req/s" "p50" "p99" "CPU us/req"
for round in $(seq 1 "$rounds"); do
  run "galleryd first page, 304" "$server_pid" "http://127.0.0.1:$port$page" "If-None-Match: $page_tag"
  run "nginx static file, 304" "$nginx_worker" "http://127.0.0.1:$nginx_port/page.json" "If-None-Match: $nginx_tag"
  [ -n "$baseline_pid" ] && run "baseline first page, 304" "$baseline_pid" "http://127.0.0.1:$baseline_port$page" "If-None-Match: $baseline_tag"
done
if [ -n "$baseline_pid" ]; then
  run "baseline first page, full (200)" "$baseline_pid" "http://127.0.0.1:$baseline_port$page"
  echo "this/baseline 304: paired $(paste "$tmp/rates.galleryd_first_page,_304" "$tmp/rates.baseline_first_page,_304" | awk '{ printf "%.3f\n", $1 / $2 }' | median)"
fi
run "galleryd count, 304" "$server_pid" "http://127.0.0.1:$port$count" "If-None-Match: $count_tag"
run "galleryd first page, full (200)" "$server_pid" "http://127.0.0.1:$port$page"
paste "$tmp/rates.galleryd_first_page,_304" "$tmp/rates.nginx_static_file,_304" |
  awk '{ printf "%.3f\n", $1 / $2 }' | median >"$tmp/paired"
echo "galleryd/nginx 304: $(awk -v g="$(median <"$tmp/rates.galleryd_first_page,_304")" -v n="$(median <"$tmp/rates.nginx_static_file,_304")" 'BEGIN { printf "%.3f", g / n }') of medians, paired $(cat "$tmp/paired") (goal >= 0.9)"
echo "(wrk counts a 304 as a success; each URL was checked to answer 304 for its tag before the run)"
