#!/usr/bin/env bash
# `make demo`: galleryd on :8080 (GALLERYD_PORT) with the private PostgreSQL under ./.data and the
# first admin account (as `make run`), the sample photos in samples/photos imported and processed,
# then the URLs to open, read with the admin's session.
# The server keeps running until Ctrl-C (or SIGTERM), which stops it. GALLERYD_BIN as in scripts/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${GALLERYD_PORT:-8080}
export GALLERYD_PORT=$port
base="http://localhost:$port"

scripts/run.sh &          # the private PostgreSQL and master key as `make run`; execs galleryd serve
server=$!
stop() { kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
trap stop EXIT
trap 'exit 130' INT TERM

for _ in $(seq 1 120); do
  curl -sf "$base/ready" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { echo "demo: galleryd did not start" >&2; exit 1; }
  sleep 0.5
done
curl -sf "$base/ready" >/dev/null || { echo "demo: galleryd is not ready at $base" >&2; exit 1; }

if [ -z "${DATABASE_URL:-}" ]; then
  DATABASE_URL=$(scripts/pg.sh start .data)   # already running: prints its URL
  export DATABASE_URL
fi
export GALLERYD_STORAGE_DIR=${GALLERYD_STORAGE_DIR:-$PWD/.data/blobs}
"${GALLERYD_BIN:-.build/release/galleryd}" import --wait samples/photos

app_id=${GALLERYD_APP_ID:-gallery}
# The app id alone reads nothing: log in as the first admin, whom scripts/run.sh created.
login=$(python3 -c 'import json, sys; print(json.dumps({"username": "admin", "password": open(sys.argv[1]).read().strip()}))' \
  .data/admin.password)
token=$(curl -sf -H "X-Parse-Application-Id: $app_id" -H 'Content-Type: application/json' -d "$login" "$base/parse/login" \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["sessionToken"])') \
  || { echo "demo: cannot log in as admin with .data/admin.password" >&2; exit 1; }
manifest=$(curl -sf -H "X-Parse-Application-Id: $app_id" -H "X-Parse-Session-Token: $token" \
  "$base/parse/classes/Photo?limit=20&order=-createdAt&count=1")
echo
echo "galleryd demo at $base — open these:"
python3 - "$manifest" <<'PY'
import json, sys
page = json.loads(sys.argv[1])
print(f"  {page['count']} photo(s); the newest:")
for photo in page["results"]:
    name = photo.get("filename", photo["objectId"])
    print(f"  {name:<20} {photo.get('status', '?'):<8} {photo['width']}x{photo['height']} {photo.get('dominantColor', '')}")
    for key in ("thumbnail", "preview"):
        if key in photo:
            print(f"      {key:<10} {photo[key]['url']}")
PY
echo
echo "The web gallery: $base/  (log in as admin, password in .data/admin.password)"
echo "The manifest, as an app reads it (logged in):"
echo "  curl -s -H 'X-Parse-Application-Id: $app_id' -H 'X-Parse-Session-Token: $token' '$base/parse/classes/Photo?limit=20'"
echo "Health and metrics: $base/health  $base/ready  $base/metrics"
echo "Stop with Ctrl-C."
wait "$server"
