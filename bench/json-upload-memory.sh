#!/usr/bin/env bash
# The server's peak memory with the JavaScript SDK's JSON upload (decision 027, session 23): galleryd
# serve on a private PostgreSQL; a FILE (a PNG of noise, MB megabytes, made once) sent as the SDK sends
# it (`POST /parse/files/<name>`, `text/plain`, `{"base64": "…", "fileData": …, "_ApplicationId", …,
# "_MasterKey"}` with the keys after the base64), by curl, one at a time and AT_ONCE at a time (each on a
# fresh server, as VmHWM only grows), and as a raw upload with headers for comparison. Prints the
# server's VmHWM (peak RSS, kB) after start and after each phase, and each answer's status.
#
#   GALLERYD_BIN=path/to/galleryd bench/json-upload-memory.sh [--bodies-only] [OUT_DIR]
# (--bodies-only: make the file and the bodies in OUT_DIR and stop; bench/json-upload-callgrind.sh uses it)
# Environment: MB (60), AT_ONCE (2), PORT (18523), PGPORT_PRIVATE (55722), PYTHON (a python with Pillow).
set -euo pipefail
cd "$(dirname "$0")/.."

galleryd="${GALLERYD_BIN:?set GALLERYD_BIN to the galleryd binary to measure}"
bodies_only=""
[ "${1:-}" = --bodies-only ] && { bodies_only=1; shift; }
out="${1:-$(mktemp -d /tmp/galleryd-json-memory.XXXXXX)}"
mkdir -p "$out"
mb="${MB:-60}"
at_once="${AT_ONCE:-2}"
port="${PORT:-18523}"
python="${PYTHON:-python3}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55722}"

source bench/faults-lib.sh
faults_setup json-memory-run

# The file and its two bodies, made once per OUT_DIR.
if [ ! -f "$out/photo.png" ]; then
  "$python" - "$out/photo.png" "$mb" <<'EOF'
import math, os, sys
from PIL import Image
side = int(math.sqrt(int(sys.argv[2]) * 1_000_000 / 3))
Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(sys.argv[1], compress_level=0)
EOF
fi
master="json-memory-master-key"
for kind in good keyless; do
  [ -f "$out/$kind.json" ] && continue
  "$python" - "$out/photo.png" "$out/$kind.json" "$kind" "$master" <<'EOF'
import base64, json, sys
data = open(sys.argv[1], "rb").read()
body = {"base64": base64.b64encode(data).decode(), "fileData": {"metadata": {}, "tags": {}},
        "_ContentType": "image/png", "_ApplicationId": "gallery", "_JavaScriptKey": "",
        "_ClientVersion": "js5.3.0", "_InstallationId": "0d7e4a3c-5b1f-4c2e-9a8d-3f6b2c1e0a97"}
if sys.argv[3] == "good":
    body["_MasterKey"] = sys.argv[4]
else:
    body["_ApplicationId"] = "not-this-app"
open(sys.argv[2], "w").write(json.dumps(body))
EOF
done
echo "file: $(stat -c %s "$out/photo.png") bytes; JSON body: $(stat -c %s "$out/good.json") bytes; binary: $galleryd"
[ -n "$bodies_only" ] && exit 0

export DATABASE_URL="$(scripts/pg.sh start "$tmp/pg")"
export GALLERYD_STORAGE_DIR="$tmp/blobs"
export GALLERYD_MASTER_KEY="$master"
export GALLERYD_URL_SIGNING_KEY="bench-url-signing-key-0123456789abcdef"
export GALLERYD_LOG_LEVEL=warning

start_serve() { faults_start_serve 0; }
hwm() { awk '/VmHWM/ {print $2}' "/proc/$serve_pid/status"; }
# post BODY [HEADERS...]: the answer's status.
post() {
  local body="$1"
  shift
  curl -s -o /dev/null -w '%{http_code}' --data-binary "@$body" "$@" "http://127.0.0.1:$port/parse/files/photo.png"
}

phase() {
  local label="$1" body="$2" n="$3"
  shift 3
  faults_stop_serve
  start_serve
  local start statuses=()
  start=$(hwm)
  local posts=() i
  for i in $(seq "$n"); do
    post "$body" "$@" >"$tmp/status.$i" &
    posts+=($!)
  done
  for pid in "${posts[@]}"; do wait "$pid"; done
  for i in $(seq "$n"); do statuses+=("$(cat "$tmp/status.$i")"); done
  echo "$label: VmHWM $start kB after start, $(hwm) kB after ($(echo "${statuses[@]}"))"
}

phase "JSON upload, 1" "$out/good.json" 1 -H "Content-Type: text/plain;charset=UTF-8"
phase "JSON upload, $at_once at once" "$out/good.json" "$at_once" -H "Content-Type: text/plain;charset=UTF-8"
phase "keyless JSON upload (wrong app id), $at_once at once" "$out/keyless.json" "$at_once" \
  -H "Content-Type: text/plain;charset=UTF-8"
phase "raw upload with headers, 1" "$out/photo.png" 1 -H "Content-Type: image/png" \
  -H "X-Parse-Application-Id: gallery" -H "X-Parse-Master-Key: $master"
