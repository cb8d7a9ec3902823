#!/usr/bin/env bash
# The full manifest page against a Hummingbird 2 + PostgresNIO anchor (issue #17: galleryd's full
# first page >= 2x a Hummingbird + PostgresNIO server with a hand-written JSON writer). Both serve
# `GET /parse/classes/Photo?order=-createdAt&limit=N` (and the count) from the same private
# PostgreSQL seeded with ROWS photos; the anchor is the bench-only package in
# bench/anchors/hummingbird/manifest-anchor (never part of galleryd's build or tests; its first
# release build takes several minutes). galleryd runs twice: with its kept answers
# (manifest_cache_bytes, the default) and with them off, so both the cache and the query path
# are compared. File URLs are plain on both sides (bucket_public; the anchor signs nothing), and
# the bodies are checked to be the same JSON before timing (but for the `ACL` of each record, which only galleryd
# has had since per-object ACLs, decision 032).
#
# Servers pinned to the last core, wrk to the others (bench/pin.sh), ROUNDS alternating rounds of
# each server in turn per request, medians and the median of per-round ratios.
#
# Usage: bench/manifest-anchor.sh [seconds per round]   (needs wrk, jq and psql: scripts/deps.sh --bench)
# Env: ROWS (1000), LIMIT (20), CONNECTIONS (64), ROUNDS (3), PORT (18130; +1 cache off, +2 anchor),
#      PGPORT_PRIVATE (55414), POOL (10: galleryd's pool_size and the anchor's connections),
#      PIN (1), KEEP=1 keeps the temporary directory,
#      ANCHOR (1; 0: no Hummingbird anchor, so no anchor build: galleryd against COMPARE only),
#      COMPARE (another galleryd build, e.g. an older main's, served beside this one from the same database,
#      with and without its kept answers, in every round: the ratio columns then compare this build to it),
#      REQUESTS ("page count": which requests are timed; e.g. REQUESTS=count times only the count).
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-4}"
rows="${ROWS:-1000}"
limit="${LIMIT:-20}"
connections="${CONNECTIONS:-64}"
rounds="${ROUNDS:-3}"
port="${PORT:-18130}"
nocache_port=$((port + 1))
anchor_port=$((port + 2))
compare_port=$((port + 3))
compare_off_port=$((port + 4))
use_anchor="${ANCHOR:-1}"
compare="${COMPARE:-}"
[ "$use_anchor" = 1 ] || [ -n "$compare" ] || { echo "manifest-anchor.sh: ANCHOR=0 needs COMPARE" >&2; exit 1; }
pool="${POOL:-10}"
requests="${REQUESTS:-page count}"
for name in $requests; do
  case "$name" in page | count) ;; *) echo "manifest-anchor.sh: REQUESTS takes page and/or count, not $name" >&2; exit 1 ;; esac
done
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55414}"

for tool in wrk jq psql; do
  command -v "$tool" >/dev/null || { echo "manifest-anchor.sh: $tool missing (scripts/deps.sh --bench)" >&2; exit 1; }
done

swift build -c release --product galleryd >&2
bin="$(swift build -c release --show-bin-path)/galleryd"
anchor_dir=bench/anchors/hummingbird/manifest-anchor
if [ "$use_anchor" = 1 ]; then
  (cd "$anchor_dir" && swift build -c release >&2)
  anchor="$(cd "$anchor_dir" && swift build -c release --show-bin-path)/ManifestAnchor"
fi

tmp="$(mktemp -d /tmp/galleryd-manifest-anchor.XXXXXX)"
. bench/pin.sh
. bench/rounds.sh
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  scripts/pg.sh stop "$tmp/pg" || true
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT INT TERM

database_url="$(scripts/pg.sh start "$tmp/pg")"
export DATABASE_URL="$database_url"
export GALLERYD_MASTER_KEY="bench-master-key-0123456789"
export GALLERYD_STORAGE_DIR="$tmp/blobs"
export GALLERYD_BUCKET_PUBLIC=true
export GALLERYD_PUBLIC_URL="http://bench.example"
export GALLERYD_POOL_SIZE="$pool"
export GALLERYD_LOG_LEVEL=warning
"$bin" migrate >&2
psql "$database_url" -q -v ON_ERROR_STOP=1 -v rows="$rows" -v owners=0 -f bench/manifest-seed.sql >&2

on_server_cpus "$bin" serve --port "$port" --host 127.0.0.1 --no-migrate --workers 0 2>"$tmp/serve.log" &
pids+=($!)
GALLERYD_MANIFEST_CACHE_BYTES=0 on_server_cpus "$bin" serve --port "$nocache_port" --host 127.0.0.1 --no-migrate \
  --workers 0 2>"$tmp/serve-nocache.log" &
pids+=($!)
ports=("$port" "$nocache_port")
if [ "$use_anchor" = 1 ]; then
  PORT="$anchor_port" PG_SOCKET="$tmp/pg/.s.PGSQL.$PGPORT_PRIVATE" PG_USER=galleryd PG_DATABASE=galleryd POOL="$pool" \
    PUBLIC_URL="http://bench.example" BUCKET=bucket on_server_cpus "$anchor" 2>"$tmp/anchor.log" &
  pids+=($!)
  ports+=("$anchor_port")
fi
if [ -n "$compare" ]; then
  compare_index="${#pids[@]}"
  on_server_cpus "$compare" serve --port "$compare_port" --host 127.0.0.1 --no-migrate --workers 0 \
    2>"$tmp/compare.log" &
  pids+=($!)
  GALLERYD_MANIFEST_CACHE_BYTES=0 on_server_cpus "$compare" serve --port "$compare_off_port" --host 127.0.0.1 \
    --no-migrate --workers 0 2>"$tmp/compare-nocache.log" &
  pids+=($!)
  ports+=("$compare_port" "$compare_off_port")
fi
for p in "${ports[@]}"; do
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$p/health" >/dev/null 2>&1 && break; sleep 0.1; done
done

page="/parse/classes/Photo?order=-createdAt&limit=$limit"
count="/parse/classes/Photo?count=1&limit=0"
for path in "$page" "$count"; do
  for p in "${ports[@]}"; do
    curl -fsS -H 'X-Parse-Application-Id: gallery' -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY" "http://127.0.0.1:$p$path" | jq -S "del(.. | .ACL?)" >"$tmp/body.$p" \
      || { echo "manifest-anchor.sh: $p$path failed: $(tail -5 "$tmp"/*.log)" >&2; exit 1; }
  done
  for p in "${ports[@]}"; do
    cmp -s "$tmp/body.$port" "$tmp/body.$p" \
      || { echo "manifest-anchor.sh: $path: galleryd on $port and the server on $p answer differently:" >&2
           diff "$tmp/body.$port" "$tmp/body.$p" | head -20 >&2; exit 1; }
  done
done
echo "bodies: the same JSON from all ${#ports[@]} ($(curl -s -H 'X-Parse-Application-Id: gallery' -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY" "http://127.0.0.1:$port$page" | wc -c) bytes for the page)" >&2

rate() { # url [server pid] → req/s (after a 1 s warm-up); with a pid, also appends the server's CPU
  # microseconds per request (utime + stime from /proc, bench/rounds.sh) to $tmp/cpu.last
  local before=0 after=0
  on_client_cpus wrk -t1 -c"$connections" -d1s -H 'X-Parse-Application-Id: gallery' -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY" "$1" >/dev/null
  [ -n "${2:-}" ] && before="$(cpu_ticks "$2")"
  on_client_cpus wrk -t1 -c"$connections" -d"${duration}s" -H 'X-Parse-Application-Id: gallery' -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY" "$1" >"$tmp/wrk.out" 2>&1
  [ -n "${2:-}" ] && after="$(cpu_ticks "$2")"
  if grep -q "Non-2xx\|Socket errors" "$tmp/wrk.out"; then echo "manifest-anchor.sh: $(cat "$tmp/wrk.out")" >&2; exit 1; fi
  if [ -n "${2:-}" ]; then
    awk -v t=$((after - before)) -v hz="$clock_ticks" '/requests in/ { printf "%.2f\n", ($1 > 0 ? t / hz * 1e6 / $1 : 0) }' \
      "$tmp/wrk.out" >"$tmp/cpu.last"
  fi
  awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk.out"
}

if [ -n "$compare" ]; then
  echo
  echo "this build vs COMPARE ($compare), $rows photos, limit=$limit, wrk -t1 -c$connections, $rounds x ${duration}s alternating"
  pinning_summary
  printf '%-24s %12s %12s %8s %12s %12s %8s\n' request galleryd compare ratio "off" "compare off" "ratio"
  for name in $requests; do
    path="$page"; [ "$name" = count ] && path="$count"
    : >"$tmp/c.cache"; : >"$tmp/c.cmp"; : >"$tmp/c.off"; : >"$tmp/c.cmpoff"
    for kind in cache cmp off cmpoff; do : >"$tmp/u.$kind"; done
    for _ in $(seq 1 "$rounds"); do
      rate "http://127.0.0.1:$port$path" "${pids[0]}" >>"$tmp/c.cache"; cat "$tmp/cpu.last" >>"$tmp/u.cache"
      rate "http://127.0.0.1:$compare_port$path" "${pids[$compare_index]}" >>"$tmp/c.cmp"; cat "$tmp/cpu.last" >>"$tmp/u.cmp"
      rate "http://127.0.0.1:$nocache_port$path" "${pids[1]}" >>"$tmp/c.off"; cat "$tmp/cpu.last" >>"$tmp/u.off"
      rate "http://127.0.0.1:$compare_off_port$path" "${pids[$((compare_index + 1))]}" >>"$tmp/c.cmpoff"
      cat "$tmp/cpu.last" >>"$tmp/u.cmpoff"
    done
    printf '%-24s %12.0f %12.0f %8s %12.0f %12.0f %8s\n' "$name" "$(median <"$tmp/c.cache")" "$(median <"$tmp/c.cmp")" \
      "$(paste "$tmp/c.cache" "$tmp/c.cmp" | awk '{ printf "%.3f\n", $1 / $2 }' | median)" \
      "$(median <"$tmp/c.off")" "$(median <"$tmp/c.cmpoff")" \
      "$(paste "$tmp/c.off" "$tmp/c.cmpoff" | awk '{ printf "%.3f\n", $1 / $2 }' | median)"
    printf '%-24s %12s %12s %8s %12s %12s %8s\n' "  CPU µs/request" "$(median <"$tmp/u.cache")" "$(median <"$tmp/u.cmp")" \
      "$(paste "$tmp/u.cmp" "$tmp/u.cache" | awk '{ printf "%.3f\n", $1 / $2 }' | median)" \
      "$(median <"$tmp/u.off")" "$(median <"$tmp/u.cmpoff")" \
      "$(paste "$tmp/u.cmpoff" "$tmp/u.off" | awk '{ printf "%.3f\n", $1 / $2 }' | median)"
    echo "  rounds: $(tr '\n' ' ' <"$tmp/c.cache")| compare $(tr '\n' ' ' <"$tmp/c.cmp")| off $(tr '\n' ' ' <"$tmp/c.off")| compare off $(tr '\n' ' ' <"$tmp/c.cmpoff")"
  done
  echo "(ratio: median of per-round this/compare, with kept answers and with them off; for CPU per request,"
  echo " compare/this, so above 1 means this build spends less CPU per request)"
fi
[ "$use_anchor" = 1 ] || exit 0

echo
echo "manifest page vs Hummingbird 2 + PostgresNIO, $rows photos, limit=$limit, wrk -t1 -c$connections, $rounds x ${duration}s alternating ($(nproc) cores; PostgreSQL unpinned)"
pinning_summary
printf '%-24s %12s %14s %12s %10s %10s\n' "request" "galleryd" "cache off" "hummingbird" "ratio" "off ratio"
for name in $requests; do
  path="$page"; [ "$name" = count ] && path="$count"
  : >"$tmp/r.cache"; : >"$tmp/r.off"; : >"$tmp/r.anchor"
  for _ in $(seq 1 "$rounds"); do
    rate "http://127.0.0.1:$port$path" >>"$tmp/r.cache"
    rate "http://127.0.0.1:$nocache_port$path" >>"$tmp/r.off"
    rate "http://127.0.0.1:$anchor_port$path" >>"$tmp/r.anchor"
  done
  paired="$(paste "$tmp/r.cache" "$tmp/r.anchor" | awk '{ printf "%.3f\n", $1 / $2 }' | median)"
  paired_off="$(paste "$tmp/r.off" "$tmp/r.anchor" | awk '{ printf "%.3f\n", $1 / $2 }' | median)"
  printf '%-24s %12.0f %14.0f %12.0f %10s %10s\n' "$name ($path)" "$(median <"$tmp/r.cache")" "$(median <"$tmp/r.off")" \
    "$(median <"$tmp/r.anchor")" "$paired" "$paired_off"
  echo "  rounds: galleryd $(tr '\n' ' ' <"$tmp/r.cache")| off $(tr '\n' ' ' <"$tmp/r.off")| hummingbird $(tr '\n' ' ' <"$tmp/r.anchor")"
done
echo "(ratio: median of per-round galleryd/hummingbird; galleryd keeps rendered answers by ETag unless 'cache off')"
