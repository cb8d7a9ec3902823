#!/usr/bin/env bash
# Instructions a JavaScript SDK JSON upload costs in its handler (decision 027, session 23): galleryd
# serve under callgrind, collecting only inside `ParseRoutes.decodeJSONFile` (the body's read, parse or
# scan, the base64's decode to the spool and the store, the same function before and after the one-pass
# read), for one upload of a FILE (a PNG of noise, MB megabytes) as the SDK sends it, with the master key.
# Deterministic, unlike wall time on a loaded machine. Prints the instructions (Ir) and the answer; the
# profile stays in OUT_DIR (callgrind_annotate it). valgrind cannot read galleryd's debug information:
# give it a copy made with `strip --strip-debug` (the symbols stay).
#
#   GALLERYD_BIN=path/to/release/galleryd bench/json-upload-callgrind.sh [OUT_DIR]
# Environment: MB (8), PORT (18524), PGPORT_PRIVATE (55722), PYTHON (a python with Pillow).
set -euo pipefail
cd "$(dirname "$0")/.."

galleryd="${GALLERYD_BIN:?set GALLERYD_BIN to the galleryd binary to measure}"
out="${1:-$(mktemp -d /tmp/galleryd-json-callgrind.XXXXXX)}"
mkdir -p "$out"
port="${PORT:-18524}"
python="${PYTHON:-python3}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55722}"
master="json-memory-master-key"
# The file and body as bench/json-upload-memory.sh makes them.
MB="${MB:-8}" GALLERYD_BIN=/bin/true bench/json-upload-memory.sh --bodies-only "$out" >/dev/null

tmp="$(mktemp -d /tmp/galleryd-json-callgrind-run.XXXXXX)"
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && { kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; }
  scripts/pg.sh stop "$tmp/pg" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export DATABASE_URL="$(scripts/pg.sh start "$tmp/pg")"
export GALLERYD_STORAGE_DIR="$tmp/blobs"
export GALLERYD_MASTER_KEY="$master"
export GALLERYD_URL_SIGNING_KEY="bench-url-signing-key-0123456789abcdef"
export GALLERYD_LOG_LEVEL=warning
valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.$(basename "$galleryd").out" --toggle-collect='*decodeJSONFile*' \
  "$galleryd" serve --host 127.0.0.1 --port "$port" --workers 0 >>"$tmp/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1200); do
  curl -fs -o /dev/null "http://127.0.0.1:$port/ready" && break
  kill -0 "$serve_pid" 2>/dev/null || { tail -n 30 "$tmp/serve.log" >&2; exit 1; }
  sleep 0.1
done
status=$(curl -s -o /dev/null -w '%{http_code}' --data-binary "@$out/good.json" \
  -H "Content-Type: text/plain;charset=UTF-8" "http://127.0.0.1:$port/parse/files/photo.png")
kill "$serve_pid"
wait "$serve_pid" 2>/dev/null || true
serve_pid=""
ir=$(callgrind_annotate "$out/callgrind.$(basename "$galleryd").out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
echo "file $(stat -c %s "$out/photo.png") bytes, body $(stat -c %s "$out/good.json") bytes: $status, $ir instructions in decodeJSONFile ($galleryd)"
